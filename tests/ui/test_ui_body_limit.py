"""`BodyLimit`: the example apps under uvicorn refuse big bodies over real sockets, and the helper on its own."""

from __future__ import annotations

import json
import socket
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from ui_support import Served
from waits import WAIT

from pydantic_ai_ask_user.ui import DEFAULT_BODY_LIMIT_BYTES, BodyLimit

pytestmark = pytest.mark.anyio

ROUTES = [pytest.param('ag_ui_app', '/agent', id='ag-ui'), pytest.param('vercel_ai_app', '/chat', id='vercel-ai')]


def _exchange(served: Served, head: bytes, chunks: int = 0, chunk: bytes = b'') -> tuple[bytes, int]:
    """Send `head`, then up to `chunks` chunked-encoding chunks of `chunk`; what came back, and how many went."""
    base = httpx.URL(served.base)
    with socket.create_connection((base.host, base.port), timeout=WAIT) as sock:
        sock.sendall(head)
        sent = 0
        try:
            for _ in range(chunks):
                sock.sendall(b'%x\r\n%s\r\n' % (len(chunk), chunk))
                sent += 1
        except OSError:  # the server answered and closed: what it said is read below
            pass
        answer = b''
        try:
            while data := sock.recv(65536):
                answer += data
        except ConnectionResetError:
            pass
    return answer, sent


def _status_and_body(answer: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = answer.partition(b'\r\n\r\n')
    return int(head.split(b' ')[1]), json.loads(body)


@pytest.mark.parametrize(('app', 'path'), ROUTES)
def test_an_example_app_refuses_a_declared_body_over_the_limit_before_it_is_sent(
    app: str, path: str, request: pytest.FixtureRequest
) -> None:
    served: Served = request.getfixturevalue(app)
    head = f'POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n'
    answer, _ = _exchange(served, head.encode())
    status, body = _status_and_body(answer)
    assert status == 413
    assert body == {
        'error': 'too_large',
        'message': f'the request body is larger than {DEFAULT_BODY_LIMIT_BYTES} bytes',
    }


@pytest.mark.parametrize(('app', 'path'), ROUTES)
def test_an_example_app_counts_a_chunked_body_and_stops_reading_past_the_limit(
    app: str, path: str, request: pytest.FixtureRequest
) -> None:
    served: Served = request.getfixturevalue(app)
    head = f'POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
    chunk = b' ' * 65536
    answer, sent = _exchange(served, head.encode(), chunks=100 * 16, chunk=chunk)  # up to 100 MiB
    status, body = _status_and_body(answer)
    assert status == 413
    assert body['error'] == 'too_large'
    assert b'connection: close' in answer.lower()
    # The server closed the connection soon after the limit: nowhere near the 100 MiB offered was taken.
    assert sent * len(chunk) < 40 * DEFAULT_BODY_LIMIT_BYTES


async def _echo_size(request: Request) -> Response:
    return JSONResponse({'size': len(await request.body())})


def _client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url='http://test')


@pytest.mark.parametrize(
    'place', [pytest.param('inside', id='starlette-middleware'), pytest.param('around', id='wrapping-the-app')]
)
async def test_a_streamed_body_over_the_limit_is_413_wherever_the_limit_is_placed(place: str) -> None:
    routes = [Route('/', _echo_size, methods=['POST'])]
    if place == 'inside':
        app: Any = Starlette(routes=routes, middleware=[Middleware(BodyLimit, max_bytes=1000)])
    else:  # Starlette's error middleware answers 500 to an exception; the refusal must go out first
        app = BodyLimit(Starlette(routes=routes), max_bytes=1000)

    async def body(size: int) -> Any:
        for _ in range(size // 100):
            yield b'x' * 100

    async with _client(app) as client:
        small = await client.post('/', content=body(1000))
        big = await client.post('/', content=body(5000))
        declared = await client.post('/', content=b'x' * 1001)
        garbage = await client.post('/', content=b'{}', headers={'content-length': '٣'.encode()})
    assert small.json() == {'size': 1000}
    assert big.status_code == 413
    assert big.json() == {'error': 'too_large', 'message': 'the request body is larger than 1000 bytes'}
    assert declared.status_code == 413
    assert garbage.status_code == 413


async def test_a_body_that_does_not_arrive_in_time_is_408() -> None:
    sent: list[dict[str, Any]] = []
    messages = [{'type': 'http.request', 'body': b'{', 'more_body': True}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    app = BodyLimit(Starlette(routes=[Route('/', _echo_size, methods=['POST'])]), seconds=0.2)
    scope = {
        'type': 'http',
        'method': 'POST',
        'path': '/',
        'headers': [(b'transfer-encoding', b'chunked')],
        'query_string': b'',
    }
    with anyio.fail_after(WAIT):
        await app(scope, receive, send)
    assert sent[0]['status'] == 408
    assert json.loads(sent[1]['body'])['error'] == 'timeout'
    assert len(sent) == 2  # the app's own 500 for the failed read was dropped


def test_a_limit_that_cannot_work_is_refused() -> None:
    with pytest.raises(ValueError, match='BodyLimit needs max_bytes >= 0 and seconds > 0'):
        BodyLimit(_echo_size, seconds=0)  # type: ignore[arg-type]
