"""`serve`: accepted connections send at once (TCP_NODELAY), so a kept-alive connection is not held by delayed ACKs."""

from __future__ import annotations

import gc
import socket
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager

import anyio
import pytest
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol
from web_support import WAIT

from pydantic_ai_ask_user.web import serve

pytestmark = pytest.mark.anyio


async def _hello(scope: Scope, receive: Receive, send: Send) -> None:
    assert scope['type'] == 'http'
    await send({'type': 'http.response.start', 'status': 200, 'headers': [(b'content-length', b'2')]})
    await send({'type': 'http.response.body', 'body': b'ok'})


class _Quiet(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


@asynccontextmanager
async def _plain_uvicorn(app: ASGIApp) -> AsyncGenerator[str]:
    """The control: uvicorn on a listening socket made with protocol 0, as `serve` made it before."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    server = _Quiet(uvicorn.Config(app, log_level='warning', lifespan='off'))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(WAIT):
                while not server.started:
                    await anyio.sleep(0.01)
            yield f'http://127.0.0.1:{sock.getsockname()[1]}/'
            server.should_exit = True
    finally:
        sock.close()


async def _nodelay_of_accepted(base: str) -> int:
    """Open a kept-alive connection to `base`, make one request, and read TCP_NODELAY off the server's end of it."""
    port = int(base.rstrip('/').rsplit(':', 1)[1])
    async with await anyio.connect_tcp('127.0.0.1', port) as stream:
        await stream.send(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        received = b''
        with anyio.fail_after(WAIT):
            while not received.endswith(b'ok'):
                received += await stream.receive()
        client_port = stream.extra(anyio.abc.SocketAttribute.local_port)
        # The server's protocol objects for this connection: the real accepted socket, found by its peer's port.
        for item in gc.get_objects():
            if isinstance(item, H11Protocol) and item.client is not None and item.client[1] == client_port:
                accepted = item.transport.get_extra_info('socket')
                return accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    raise AssertionError('the server has no connection from this client')


@pytest.mark.parametrize(
    ('server', 'nodelay'),
    [
        pytest.param(serve, True, id='serve'),
        pytest.param(_plain_uvicorn, False, id='control-protocol-0'),
    ],
)
async def test_accepted_connections_have_tcp_nodelay(
    server: Callable[[ASGIApp], AbstractAsyncContextManager[str]], nodelay: bool
) -> None:
    async with server(_hello) as base:
        assert bool(await _nodelay_of_accepted(base)) is nodelay


async def test_while_uvicorn_stops_every_response_closes_its_connection_and_the_event_stream_says_finished() -> None:
    """A browser's keep-alive connection that uvicorn did not close at the signal is closed by the app's next response,
    and the pages' event streams end with `finished` instead of reconnecting: uvicorn waits for open connections
    before the lifespan's end, and pages that reconnect at once kept a server from stopping (`web/_stopping.py`).
    The server is uvicorn's own `Server`, its SIGTERM handler installed as `uvicorn.run` installs it."""
    import signal

    from web_support import asgi_client, bearer

    from pydantic_ai_ask_user.web import WebAnswerer

    web = WebAnswerer()
    server = uvicorn.Server(uvicorn.Config(web.app))
    async with asgi_client(web) as client:
        client.headers.update(bearer(web))
        running = await client.get('/api/requests')
        assert running.status_code == 200
        assert 'connection' not in running.headers
        previous = signal.signal(signal.SIGTERM, server.handle_exit)
        try:
            assert (await client.get('/api/requests')).headers.get('connection') is None  # not told to stop yet
            server.should_exit = True  # what the handler sets on SIGTERM
            for path in ('/api/requests', '/', '/static/style.css', '/no-such-page'):
                assert (await client.get(path)).headers['connection'] == 'close', path
            with anyio.fail_after(WAIT):
                events = await client.get('/api/events')
            assert events.headers['connection'] == 'close'
            assert events.headers['content-type'].startswith('text/event-stream')
            assert 'event: finished' in events.text
        finally:
            signal.signal(signal.SIGTERM, previous)
    web.close()
