"""Serving the app standalone with uvicorn."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ('serve', 'ServerLimits', 'reachable_host')

SHUTDOWN_SECONDS = 2
"""How long open connections (a live inbox stream) may delay the server's shutdown."""

WILDCARD_HOSTS = {'': '127.0.0.1', '0.0.0.0': '127.0.0.1', '::': '::1'}
"""Addresses that mean "every interface", and the loopback address a link on this machine uses instead."""


@dataclass(frozen=True)
class ServerLimits:
    """How long and how many: what `serve` allows a client, so that slow or idle connections cannot pile up.

    The app itself bounds each request body (`max_body_bytes`, `body_seconds`); these bound the connections.
    """

    header_seconds: float = 10.0
    """How long a client may take to send a request's headers, from connecting or from its previous response."""

    keep_alive_seconds: int = 5
    """How long an idle connection is kept open for the next request."""

    max_connections: int = 512
    """How many connections and requests at once; beyond it, a new request gets 503."""

    max_header_bytes: int = 32 * 1024
    """The largest request line and headers; bigger gets 400."""


@asynccontextmanager
async def serve(
    app: ASGIApp, *, host: str = '127.0.0.1', port: int = 0, limits: ServerLimits | None = None
) -> AsyncGenerator[str]:
    """Serve `app` with uvicorn on `host:port` (0: any free port) while the block runs; yields the base URL.

    `limits` bound slow and idle connections (by default `ServerLimits()`). Raises `OSError` when the
    address cannot be bound. On a wildcard host (`0.0.0.0`, `::`), which no browser can open, the URL
    names the loopback address instead (`http://127.0.0.1:8000/`).
    """
    limits = limits or ServerLimits()
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    # With the protocol named, asyncio sets TCP_NODELAY on every accepted connection (it checks `proto`,
    # which accepted sockets inherit); with protocol 0 it does not, and each response's second write on
    # a kept-alive connection waits for the client's delayed ACK, about 40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    bound_port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        http=_with_header_deadline(limits.header_seconds),
        log_level='warning',
        lifespan='off',
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        timeout_keep_alive=limits.keep_alive_seconds,
        limit_concurrency=limits.max_connections,
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )
    server = _Server(config)
    reachable = reachable_host(host)
    shown_host = f'[{reachable}]' if ':' in reachable else reachable
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_serve_until_exit, server, sock)
            while not server.started:
                if server.should_exit:
                    raise OSError(f'the server on {shown_host}:{bound_port} did not start')
                await anyio.sleep(0.01)
            try:
                yield f'http://{shown_host}:{bound_port}/'
            finally:
                server.should_exit = True
    finally:
        sock.close()


class _Server(uvicorn.Server):
    """uvicorn, leaving signals alone: Ctrl-C stays the caller's business, and cancels the block as usual."""

    @contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


def reachable_host(host: str) -> str:
    """The address a browser on this machine opens for a server on `host`: loopback for a wildcard host."""
    return WILDCARD_HOSTS.get(host, host)


async def _serve_until_exit(server: uvicorn.Server, sock: socket.socket) -> None:
    await server.serve(sockets=[sock])


def _with_header_deadline(seconds: float) -> type[asyncio.Protocol]:
    """The h11 protocol of uvicorn, closing a connection whose request headers take longer than `seconds`.

    uvicorn has no such deadline: its keep-alive timer starts only after a response and stops at the
    first byte received, so a client sending headers a byte at a time could hold a connection forever.
    """

    class HeaderDeadline(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.header_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self.watch_headers()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self.watch_headers()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.watch_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_deadline()
            super().connection_lost(exc)

        def watch_headers(self) -> None:
            # The client owes headers while h11 waits for a request; once one has arrived, the app's own
            # body deadline takes over, and a long answer (the live inbox stream) is the server's doing.
            waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
            if waiting and self.header_deadline is None:
                self.header_deadline = self.loop.call_later(seconds, self.too_slow)
            elif not waiting:
                self.stop_deadline()

        def stop_deadline(self) -> None:
            if self.header_deadline is not None:
                self.header_deadline.cancel()
                self.header_deadline = None

        def too_slow(self) -> None:
            self.header_deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline
