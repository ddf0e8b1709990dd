"""Serving the app standalone with uvicorn, and the answerer behind `ask-user ask --web`."""

from __future__ import annotations

import socket
import sys
import webbrowser
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import TextIO

import anyio
import uvicorn
from starlette.types import ASGIApp

from pydantic_ai_ask_user import Answerer, AskUserRequest, AskUserResponse, CannotAskError
from pydantic_ai_ask_user._text import printable

from ._answerer import WebAnswerer

__all__ = ('serve', 'open_cli_answerer')

SHUTDOWN_SECONDS = 2
"""How long open connections (a live inbox stream) may delay the server's shutdown."""


@asynccontextmanager
async def serve(app: ASGIApp, *, host: str = '127.0.0.1', port: int = 0) -> AsyncGenerator[str]:
    """Serve `app` with uvicorn on `host:port` (0: any free port) while the block runs; yields the base URL.

    Raises `OSError` when the address cannot be bound.
    """
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    bound_port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level='warning',
        lifespan='off',
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
    )
    server = _Server(config)
    shown_host = f'[{host}]' if ':' in host else host
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


async def _serve_until_exit(server: uvicorn.Server, sock: socket.socket) -> None:
    await server.serve(sockets=[sock])


@asynccontextmanager
async def open_cli_answerer(
    *, host: str = '127.0.0.1', port: int = 0, open_browser: bool = False, out: TextIO | None = None
) -> AsyncGenerator[Answerer]:
    """The answerer of `ask-user ask --web`: serves the form, prints its one-time link, opens a browser if asked.

    Raises `CannotAskError` when the address cannot be served.
    """
    stream = out if out is not None else sys.stderr
    web = WebAnswerer(title='ask-user')
    try:
        served = serve(web.app, host=host, port=port)
        base = await served.__aenter__()
    except OSError as error:
        raise CannotAskError(f'cannot serve the question page on {host}:{port}: {error}') from None
    try:

        async def ask(request: AskUserRequest) -> AskUserResponse:
            url = web.login_url(base, request.id)
            # The host is the caller's --host, printed as given: keep what a terminal would act on out of it.
            shown = printable(url, allow_newline=False)
            print(f'ask-user: answer in your browser (the link works once): {shown}', file=stream, flush=True)
            if open_browser and not await anyio.to_thread.run_sync(webbrowser.open, url):
                print('ask-user: could not open a browser; open the link above yourself', file=stream, flush=True)
            return await web(request)

        yield ask
    finally:
        web.hub.close()
        await served.__aexit__(None, None, None)
