"""The answerer conformance kit, passed by `MCPElicitationAnswerer` through a real MCP client's elicitation.

The kit calls an answerer that calls a tool of an in-process `MCPServer`; the tool puts the request to
the client with `MCPElicitationAnswerer`, and the client's elicitation callback is the front end the
driver fills in, as a person would fill in the form the client shows: each `qN` with a label (or labels),
`qN_own` with their own words, `qN_note` with a note. Cancelling the kit's wait cancels the tool call.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitResult, ErrorData
from waits import WAIT

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.json import response_from_json, response_to_json
from pydantic_ai_ask_user.mcp import MCPElicitationAnswerer
from pydantic_ai_ask_user.testing import CONFORMANCE_SCENARIOS, ConformanceScenario, run_conformance

pytestmark = pytest.mark.anyio


class Forms:
    """The client's side: each form shown, by the header of its first question, until the driver fills it in."""

    def __init__(self) -> None:
        self.shown: dict[str, anyio.Event] = {}
        self.filled: dict[str, ElicitResult] = {}
        self.changed = anyio.Event()

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def callback(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        header = params.requested_schema['properties']['q1']['title']  # type: ignore[union-attr]
        done = self.shown[header] = anyio.Event()
        self._notify()
        try:
            await done.wait()
            return self.filled.pop(header)
        finally:
            del self.shown[header]

    async def wait_shown(self, header: str) -> None:
        with anyio.fail_after(WAIT):
            while header not in self.shown:
                await self.changed.wait()

    def fill(self, header: str, result: ElicitResult) -> None:
        self.filled[header] = result
        self.shown[header].set()


def form_content(request: AskUserRequest, response: AskUserResponse) -> dict[str, Any]:
    """What a person types into the form for `response`."""
    by_header = {answer.header: answer for answer in response.answers}
    content: dict[str, Any] = {}
    for index, question in enumerate(request.questions, start=1):
        answer = by_header[question.header]
        if answer.custom_answer is not None:
            content[f'q{index}_own'] = answer.custom_answer
        elif question.multi_select:
            content[f'q{index}'] = list(answer.selected)
        else:
            content[f'q{index}'] = answer.selected[0]
        if answer.note is not None:
            content[f'q{index}_note'] = answer.note
    return content


@pytest.fixture
async def client_and_forms() -> AsyncIterator[tuple[Client, Forms]]:
    asked: dict[str, AskUserRequest] = {}
    server = MCPServer('conformance')

    @server.tool()
    async def ask(request_id: str, ctx: Context) -> str:
        request = asked.pop(request_id)
        response = await MCPElicitationAnswerer.from_context(ctx)(request)
        return json.dumps(response_to_json(response))

    forms = Forms()
    async with Client(server, mode='legacy', elicitation_callback=forms.callback) as client:
        client.asked = asked  # type: ignore[attr-defined]
        yield client, forms


@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda s: s.name)
async def test_the_mcp_elicitation_answerer_passes_the_conformance_kit(
    scenario: ConformanceScenario, client_and_forms: tuple[Client, Forms]
) -> None:
    client, forms = client_and_forms
    asked: dict[str, AskUserRequest] = client.asked  # type: ignore[attr-defined]

    async def answerer(request: AskUserRequest, /) -> AskUserResponse:
        asked[request.id] = request
        result = await client.call_tool('ask', {'request_id': request.id})
        assert not result.is_error, result.content
        return response_from_json(json.loads(result.content[0].text))  # type: ignore[union-attr]

    async def driver(request: AskUserRequest, response: AskUserResponse | None) -> None:
        header = request.questions[0].header
        await forms.wait_shown(header)
        if response is None:
            return
        if response.cancelled:
            forms.fill(header, ElicitResult(action='decline'))
        else:
            forms.fill(header, ElicitResult(action='accept', content=form_content(request, response)))

    await run_conformance(scenario, answerer, driver)
