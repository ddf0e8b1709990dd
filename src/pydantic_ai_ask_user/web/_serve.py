"""Serving the app standalone with uvicorn."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager

import anyio
import uvicorn
from starlette.types import ASGIApp

from .._serving import GuardedServer, ServerLimits, Trusted, bind
from ._app import AskUserApp

__all__ = ('serve', 'ServerLimits', 'reachable_host', 'listens_everywhere', 'WILDCARD_HOSTS')

SHUTDOWN_SECONDS = 2
"""How long open connections (a live inbox stream) may delay the server's shutdown."""

WILDCARD_HOSTS = {'': '127.0.0.1', '0.0.0.0': '127.0.0.1', '::': '::1'}
"""Addresses that mean "every interface", and the loopback address a link on this machine uses instead."""


@asynccontextmanager
async def serve(
    app: ASGIApp,
    *,
    host: str = '127.0.0.1',
    port: int = 0,
    limits: ServerLimits | None = None,
    trusted: Trusted | None = None,
    forwarded_allow_ips: str | None = None,
) -> AsyncGenerator[str]:
    """Serve `app` with uvicorn on `host:port` (0: any free port) while the block runs; yields the base URL.

    `limits` bound slow and idle connections (by default `ServerLimits()`). Raises `OSError` when the
    address cannot be bound. On a wildcard host (`0.0.0.0`, `::`), which no browser can open, the URL
    names the loopback address instead (`http://127.0.0.1:8000/`).

    `forwarded_allow_ips`: the addresses of the proxies whose `X-Forwarded-Proto` and `X-Forwarded-For` are believed
    (uvicorn's option of that name: comma-separated, `*` for any); by default uvicorn's, `127.0.0.1` (or
    `$FORWARDED_ALLOW_IPS`). Behind a proxy that ends HTTPS, the app then sets its cookies `Secure`.
    """
    sock = bind(host, port)
    bound_port: int = sock.getsockname()[1]
    if trusted is None and isinstance(app, AskUserApp):
        trusted = app.recognizes
    server = _Server(
        app,
        sock,
        limits=limits,
        trusted=trusted,
        log_level='warning',
        lifespan='off',
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        **({} if forwarded_allow_ips is None else {'forwarded_allow_ips': forwarded_allow_ips}),
    )
    reachable = reachable_host(host)
    shown_host = f'[{reachable}]' if ':' in reachable else reachable
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_serve_until_exit, server)
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


class _Server(GuardedServer):
    """uvicorn, leaving signals alone: Ctrl-C stays the caller's business, and cancels the block as usual."""

    @contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


def reachable_host(host: str) -> str:
    """The address a browser on this machine opens for a server on `host`: loopback for a wildcard host."""
    return WILDCARD_HOSTS.get(host, host)


def listens_everywhere(host: str) -> bool:
    """Whether a server on `host` listens on every interface (`0.0.0.0`, `::`), which no browser can open as such."""
    return host in WILDCARD_HOSTS


async def _serve_until_exit(server: uvicorn.Server) -> None:
    await server.serve()
