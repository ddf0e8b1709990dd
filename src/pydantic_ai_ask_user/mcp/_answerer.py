"""Ask through the MCP client of the current request: a form elicitation, or an input-required result and its retry."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.session import ServerSession
from mcp.shared.exceptions import NoBackChannelError
from mcp_types import (
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    RequestId,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import ModelMessagesTypeAdapter

from .._answers import (
    MAX_CUSTOM_ANSWER_LENGTH,
    TOOL_NAME,
    AskUserRequest,
    AskUserResponse,
    CannotAskError,
    check_answered_by,
    deferred_answer,
)
from .._capability import AskUser
from .._text import printable
from ._form import RefusedAnswerError, elicitation_form

__all__ = (
    'MCPElicitationAnswerer',
    'run_agent_in_tool',
    'can_elicit_directly',
    'NoBackChannelAskError',
    'ClientCannotElicitError',
    'client_answered_by',
    'CLIENT_PREFIX',
)


class NoBackChannelAskError(ToolError, CannotAskError):
    """The session has no back-channel to ask on (2026-07-28); in a tool, the call fails with this message."""


class ClientCannotElicitError(ToolError, CannotAskError):
    """The MCP client did not declare the elicitation capability: it has no way to put a form to a person."""


def _check_client(capabilities: ClientCapabilities | None) -> None:
    if capabilities is None or capabilities.elicitation is None:
        raise ClientCannotElicitError(
            'the MCP client did not declare the elicitation capability, so it cannot show questions to a person'
        )


def can_elicit_directly(protocol_version: str | None) -> bool:
    """Whether a session of this protocol version lets the server send `elicitation/create` mid-request.

    2025-06-18 and 2025-11-25 do (the handshake-era back-channel); 2026-07-28 has no back-channel, and a
    tool asks by returning an input-required result the client answers on its retry. Older versions
    (2024-11-05, 2025-03-26) predate elicitation: the client will not have declared it.
    """
    return protocol_version not in MODERN_PROTOCOL_VERSIONS


CLIENT_PREFIX = 'mcp-client:'
"""What `answered_by` starts with for an answer given through an MCP client: `mcp-client:<client name>`."""


def client_answered_by(client_name: object) -> str | None:
    """`mcp-client:<name>` for the name an MCP client gave in its `initialize` request, or `None`.

    The name is the client's own claim about its software (`clientInfo.name`: "claude-code", "cursor"), not an
    authenticated person: it says through which client the answer came. `None` when the client sent no name, or
    one that cannot be drawn on one line (control characters, too long).
    """
    if not isinstance(client_name, str):
        return None
    answered_by = CLIENT_PREFIX + client_name
    return answered_by if check_answered_by(answered_by) is None else None


@dataclass
class MCPElicitationAnswerer:
    """An `Answerer` that puts each request to the MCP client of one server request, as one form elicitation.

    Use it inside a tool of an MCP server built with the `mcp` SDK, on sessions that have the back-channel
    (protocol 2025-06-18 and 2025-11-25). The client's `decline` and `cancel` come back as a declined
    response; an accepted form is checked field by field and with `check_response`, and a form that does
    not fit fails the call with a `ValueError` naming the problem. On a 2026-07-28 session the server cannot
    send a request of its own, and this raises `CannotAskError`: use `run_agent_in_tool`, which takes the
    input-required path there.

    A request with `notes` gets an optional note field per question; a recommended option is marked
    "(recommended)" in its title, never made a default. The response's `answered_by` is
    `mcp-client:<name>` with the name the client gave in its `initialize` request (`client_answered_by`),
    or `None` when it gave none: the client's word about its software, not proof of a person.
    """

    session: ServerSession
    """The server session of the request being handled (`ctx.session` in a tool)."""

    related_request_id: RequestId | None = None
    """The id of the request the questions belong to, so the client shows them with that tool call."""

    allow_custom_answers: bool = True
    """Give each question an optional field for an answer in the person's own words."""

    max_custom_answer_length: int = MAX_CUSTOM_ANSWER_LENGTH
    """The longest own answer the form accepts (its `maxLength`)."""

    def __post_init__(self) -> None:
        if not 1 <= self.max_custom_answer_length <= MAX_CUSTOM_ANSWER_LENGTH:
            raise ValueError(
                f'MCPElicitationAnswerer.max_custom_answer_length must be 1 to {MAX_CUSTOM_ANSWER_LENGTH}, '
                f'not {self.max_custom_answer_length}'
            )

    @classmethod
    def from_context(cls, ctx: Context[Any, Any], **options: Any) -> MCPElicitationAnswerer:
        """The answerer for the tool call `ctx` (an `mcp.server.mcpserver.Context`) belongs to."""
        return cls(ctx.session, ctx.request_id, **options)

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Ask the client, and return what it answered, checked."""
        _check_client(self.session.client_capabilities)
        form = elicitation_form(
            request,
            allow_custom_answers=self.allow_custom_answers,
            max_custom_answer_length=self.max_custom_answer_length,
        )
        try:
            result = await self.session.elicit_form(
                message=form.message, requested_schema=form.schema, related_request_id=self.related_request_id
            )
        except NoBackChannelError:
            raise NoBackChannelAskError(
                'this MCP session has no back-channel for the server to ask on (protocol 2026-07-28); '
                'ask with run_agent_in_tool, which returns an input-required result there'
            ) from None
        response = form.read(result.action, result.content)
        params = self.session.client_params
        answered_by = client_answered_by(params.client_info.name if params is not None else None)
        return response if answered_by is None else replace(response, answered_by=answered_by)


async def run_agent_in_tool(
    agent: AbstractAgent[Any, Any],
    ctx: Context[Any, Any],
    user_prompt: str | None,
    *,
    deps: Any = None,
    allow_custom_answers: bool = True,
    notes: bool = False,
    recommended_options: bool = False,
) -> Any:
    """Run `agent` inside an MCP tool call, its `ask_user_question` answered by the MCP client of that call.

    This adds an `AskUser` for the run, so `agent` must not have one of its own: that would be a second `AskUser`,
    refused when the run starts. Return what this returns from the
    tool. On sessions with a back-channel (2025-06-18, 2025-11-25) each question is a form elicitation
    sent mid-run, and the result is the run's output. On 2026-07-28 sessions the run is deferred
    (`AskUser(answerer=None)`): the result is an `InputRequiredResult` holding one form per question call
    and the run's messages as its `request_state` (sealed by `MCPServer`, which authenticates every echo),
    and the client's retry resumes the run with the answers (`ask_user_result`), as many rounds as it asks.
    `notes` and `recommended_options` are those of `AskUser`.
    """
    options: dict[str, Any] = {'notes': notes, 'recommended_options': recommended_options}
    if can_elicit_directly(ctx.protocol_version):
        answerer = MCPElicitationAnswerer.from_context(ctx, allow_custom_answers=allow_custom_answers)
        result = await agent.run(user_prompt, deps=deps, capabilities=[AskUser(answerer, **options)])
        return result.output
    history = None
    results = None
    if ctx.request_state is not None:
        state = json.loads(ctx.request_state)
        history = ModelMessagesTypeAdapter.validate_python(state['messages'])
        pending = [
            AskUserRequest.from_tool_args(args, id=call_id, notes=notes) for call_id, args in state['calls'].items()
        ]
        params = ctx.session.client_params
        answered_by = client_answered_by(params.client_info.name if params is not None else None)
        results = _answers(
            pending, ctx.input_responses or {}, allow_custom_answers=allow_custom_answers, answered_by=answered_by
        )
        user_prompt = None
    output_type: Any = [agent.output_type, DeferredToolRequests]
    result = await agent.run(
        user_prompt,
        deps=deps,
        message_history=history,
        deferred_tool_results=results,
        output_type=output_type,
        capabilities=[AskUser(None, **options)],
    )
    output = result.output
    if not isinstance(output, DeferredToolRequests):
        return output
    _check_client(ctx.client_capabilities)
    others = [call.tool_name for call in output.calls + output.approvals if call.tool_name != TOOL_NAME]
    if others:
        raise CannotAskError(f'the run deferred calls this tool cannot resume: {printable(", ".join(others))}')
    requests = [AskUserRequest.from_tool_call(call, notes=notes) for call in output.calls]
    state = {
        'messages': ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode='json'),
        'calls': {call.tool_call_id: call.args_as_dict() for call in output.calls},
    }
    return InputRequiredResult(
        input_requests={request.id: _elicit_request(request, allow_custom_answers) for request in requests},
        request_state=json.dumps(state),
    )


def _elicit_request(request: AskUserRequest, allow_custom_answers: bool) -> ElicitRequest:
    form = elicitation_form(request, allow_custom_answers=allow_custom_answers)
    return ElicitRequest(params=ElicitRequestFormParams(message=form.message, requested_schema=form.schema))


def _answers(
    requests: Sequence[AskUserRequest],
    responses: dict[str, Any],
    *,
    allow_custom_answers: bool,
    answered_by: str | None = None,
) -> DeferredToolResults:
    """Each pending call's result for the model, from the client's input responses; `ValueError` if one is missing."""
    results = DeferredToolResults()
    for request in requests:
        result = responses.get(request.id)
        if not isinstance(result, ElicitResult):
            raise RefusedAnswerError(
                f'the retry carries no elicitation result for the question call {printable(request.id)}'
            )
        form = elicitation_form(request, allow_custom_answers=allow_custom_answers)
        response = replace(form.read(result.action, result.content), answered_by=answered_by)
        results.update(deferred_answer(request, response))
    return results
