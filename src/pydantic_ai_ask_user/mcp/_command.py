"""What `ask-user mcp` runs: serve `ask_user_question` to any MCP host, over stdio or streamable HTTP.

The command itself (its arguments) is `_cli/mcp.py`, which imports this module only when it runs.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread

from .._answers import Answerer, AskUserRequest, AskUserResponse, CannotAskError
from .._cli.exit_codes import EXIT_CANNOT_ASK
from .._text import printable

__all__ = ('run',)


def _say(message: str) -> None:
    """One line on stderr: the host's log for a stdio server, the console for an HTTP one."""
    print(f'ask-user: {printable(message, allow_newline=False)}', file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Serve until the host disconnects (stdio) or the process is interrupted (HTTP); return the exit code."""
    try:
        return anyio.run(_serve, args)
    except CannotAskError as error:
        _say(str(error))
        return EXIT_CANNOT_ASK


async def _serve(args: argparse.Namespace) -> int:
    try:
        from ._server import ask_user_server
    except ImportError as error:
        raise CannotAskError(f"{error}; install the mcp extra: pip install 'pydantic-ai-ask-user[mcp]'") from None

    async with _answerer(args) as answerer:
        server = ask_user_server(answerer, timeout=args.timeout, notes=args.notes, recommended_options=args.recommended)
        if args.http:
            await _serve_http(server, args)
        else:
            from mcp.server.stdio import stdio_server

            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
    return 0


async def _serve_http(server: Any, args: argparse.Namespace) -> None:
    from .._serving import GuardedServer, bind

    app = server.streamable_http_app(streamable_http_path=args.path, host=args.host)
    try:
        sock = bind(args.host, args.port)
    except OSError as error:
        raise CannotAskError(f'cannot serve MCP on {args.host}:{args.port}: {error}') from None
    port = sock.getsockname()[1]
    shown = f'[{args.host}]' if ':' in args.host else args.host
    _say(f'MCP endpoint (streamable HTTP): http://{shown}:{port}{args.path}')
    try:
        # Our accept loop and limits (`ServerLimits()`): a header deadline, bounded connections, rate-limited logs.
        await GuardedServer(app, sock, log_level='warning').serve()
    finally:
        sock.close()


@asynccontextmanager
async def _answerer(args: argparse.Namespace) -> AsyncGenerator[Answerer]:
    if args.db:
        async with _durable(args.db) as answerer:
            yield answerer
    elif args.web:
        async with _web(args) as answerer:
            yield answerer
    else:
        try:
            from ..terminal import TerminalAnswerer
        except ImportError as error:
            hint = "install the terminal extra: pip install 'pydantic-ai-ask-user[terminal]'"
            raise CannotAskError(f'{error}; {hint}') from None
        terminal = TerminalAnswerer(tty=args.tty)
        terminal.terminal()  # CannotAskError now, not at the first question
        try:
            yield terminal
        finally:
            terminal.close()


@asynccontextmanager
async def _web(args: argparse.Namespace) -> AsyncGenerator[Answerer]:
    try:
        from ..web import WebAnswerer, serve
    except ImportError as error:
        raise CannotAskError(f"{error}; install the web extra: pip install 'pydantic-ai-ask-user[web]'") from None
    web = WebAnswerer(title='ask-user')
    try:
        served = serve(web.app, host=args.web_host, port=args.web_port)
        base = await served.__aenter__()
    except OSError as error:
        raise CannotAskError(f'cannot serve the question pages on {args.web_host}:{args.web_port}: {error}') from None
    try:
        _say(f'question inbox (the link works once): {web.login_url(base)}')

        async def ask(request: AskUserRequest) -> AskUserResponse:
            url = web.login_url(base, request.key)
            _say(f'a question is waiting; answer it in your browser (the link works once): {url}')
            if args.open:
                await anyio.to_thread.run_sync(webbrowser.open, url)
            return await web(request)

        yield ask
    finally:
        web.app.finish()
        web.hub.close()
        await served.__aexit__(None, None, None)


@asynccontextmanager
async def _durable(url: str) -> AsyncGenerator[Answerer]:
    try:
        from dbos import DBOS

        from ..durable import DBOSAnswerer, dbos_config
        from ..durable._db import shown_database_url
    except ImportError as error:
        raise CannotAskError(f"{error}; install the dbos extra: pip install 'pydantic-ai-ask-user[dbos]'") from None
    try:
        config = dbos_config(url, name='ask-user-mcp', application_version='ask-user-mcp-1')
    except Exception as error:
        raise CannotAskError(f'cannot use the database {shown_database_url(url)}: {error}') from None
    DBOS(config=config)
    await anyio.to_thread.run_sync(DBOS.launch)
    answerer = DBOSAnswerer(url)
    shown = shown_database_url(url)
    _say(f'questions wait in {shown}; answer them with: ask-user pending --db {shown}')
    try:
        yield answerer
    finally:
        answerer.close()
        await anyio.to_thread.run_sync(DBOS.destroy)
