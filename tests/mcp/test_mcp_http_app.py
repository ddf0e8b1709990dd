"""`ask_user_http_app` in-process under uvicorn, and `ask_user_server`'s own limit: sessions and waiting calls."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
import waits
from mcp import Client

from pydantic_ai_ask_user import TOOL_NAME, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.mcp import DEFAULT_MAX_WAITING_PER_SESSION, ask_user_http_app, ask_user_server, new_token
from pydantic_ai_ask_user.testing import ScriptedAnswerer

pytestmark = pytest.mark.anyio

QUESTIONS = {'questions': [{'header': 'Go', 'question': 'Go on?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]}
ACCEPT = {'accept': 'application/json, text/event-stream'}


class _Server(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Generator[None]:  # the test's signals stay the test's
        yield


@asynccontextmanager
async def running(app: Any) -> AsyncIterator[str]:
    """`app` under uvicorn (lifespan on, as the SDK's session manager needs) on a free port; its MCP URL."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    server = _Server(uvicorn.Config(app, log_level='warning', lifespan='on'))
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: server.serve(sockets=[sock]))
        with anyio.fail_after(waits.WAIT):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f'http://127.0.0.1:{sock.getsockname()[1]}/mcp'
        finally:
            server.should_exit = True
    sock.close()


def _initialize(request_id: int = 1) -> dict[str, Any]:
    params = {'protocolVersion': '2025-11-25', 'capabilities': {}, 'clientInfo': {'name': 'x', 'version': '1'}}
    return {'jsonrpc': '2.0', 'id': request_id, 'method': 'initialize', 'params': params}


async def test_at_the_session_cap_the_session_idle_longest_makes_room_and_busy_ones_never_do() -> None:
    token = new_token()
    app = ask_user_http_app(ask_user_server(ScriptedAnswerer({'Go': 'Yes'})), token=token, max_sessions=2)
    auth = {'authorization': f'Bearer {token}', **ACCEPT}
    async with running(app) as url, httpx.AsyncClient(headers=auth, timeout=waits.WAIT) as client:

        async def open_session() -> httpx.Response:
            return await client.post(url, json=_initialize())

        def ping(session: str) -> Any:
            body = {'jsonrpc': '2.0', 'id': 2, 'method': 'ping'}
            return client.post(
                url, json=body, headers={'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25'}
            )

        first, second = [(await open_session()).headers['mcp-session-id'] for _ in range(2)]
        assert (await ping(first)).status_code == 200  # the first is now the more recently used
        third = (await open_session()).headers['mcp-session-id']
        assert (await ping(second)).status_code == 404  # idle longest: closed for the third
        assert (await ping(first)).status_code == 200
        assert (await ping(third)).status_code == 200
        # A session with a request open (here its event stream) is never closed to make room.
        streams = [
            client.stream('GET', url, headers={'mcp-session-id': s, 'mcp-protocol-version': '2025-11-25'})
            for s in (first, third)
        ]
        async with streams[0] as one, streams[1] as other:
            assert one.status_code == other.status_code == 200
            refused = await open_session()
            assert refused.status_code == 503
        with anyio.fail_after(waits.WAIT):  # the streams ended: the next one makes room again
            while (await open_session()).status_code != 200:
                await anyio.sleep(0.05)


async def test_a_session_has_at_most_four_calls_waiting_and_the_next_gets_a_tool_error() -> None:
    release = anyio.Event()
    waiting: list[AskUserRequest] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        waiting.append(request)
        await release.wait()
        return AskUserResponse(answers=(AskUserAnswer(header='Go', selected=('Yes',)),))

    results: list[Any] = []
    async with Client(ask_user_server(answerer), mode='legacy') as client, anyio.create_task_group() as group:

        async def call() -> None:
            results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

        for _ in range(DEFAULT_MAX_WAITING_PER_SESSION):
            group.start_soon(call)
        with anyio.fail_after(waits.WAIT):
            while len(waiting) < DEFAULT_MAX_WAITING_PER_SESSION:
                await anyio.sleep(0.01)
        one_more = await client.call_tool(TOOL_NAME, QUESTIONS)
        assert one_more.is_error
        assert one_more.content[0].text.startswith('This session already has 4 questions waiting')  # type: ignore[union-attr]
        release.set()
    assert len(waiting) == DEFAULT_MAX_WAITING_PER_SESSION
    assert [r.content[0].text for r in results] == ['{"Go": ["Yes"]}'] * DEFAULT_MAX_WAITING_PER_SESSION
    async with Client(ask_user_server(answerer), mode='legacy') as client:
        assert not (await client.call_tool(TOOL_NAME, QUESTIONS)).is_error  # room again


def test_a_weak_token_is_refused_when_the_app_is_made() -> None:
    with pytest.raises(ValueError, match='the token must be 16 to 512 characters'):
        ask_user_http_app(ask_user_server(ScriptedAnswerer({})), token='short')
