"""What `ask-user mcp` runs: serve `ask_user_question` to any MCP host, over stdio or streamable HTTP.

The command itself (its arguments) is `_cli/mcp.py`, which loads this module by name only when it runs. Each front
end (and the MCP SDK) is imported where it is chosen: each is an optional extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread

from .._answers import Answerer, AskUserRequest, AskUserResponse, CannotAskError
from .._text import printable
from ..mcp import TOKEN_VARIABLE, check_token, new_token
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .install import install_hint

__all__ = ('run',)


def _say(message: str) -> None:
    """One line on stderr: the host's log for a stdio server, the console for an HTTP one."""
    print(f'ask-user: {printable(message, allow_newline=False)}', file=sys.stderr, flush=True)


def _missing(error: ImportError, extra: str) -> CannotAskError:
    """A missing extra, said as every `ask-user` command says it: with the install that works where it came from."""
    return CannotAskError(f'{error}; {install_hint(extra)}')


def run(args: argparse.Namespace) -> int:
    """Serve until the host disconnects (stdio) or the process is interrupted (HTTP); return the exit code."""
    variable = os.environ.get(TOKEN_VARIABLE)
    if args.http and args.token is None and variable is not None and (problem := check_token(variable)):
        _say(f'{TOKEN_VARIABLE}: {problem}')
        return EXIT_INVALID
    try:
        return anyio.run(_serve, args)
    except CannotAskError as error:
        _say(str(error))
        return EXIT_CANNOT_ASK


async def _serve(args: argparse.Namespace) -> int:
    try:
        from ..mcp import ask_user_server
    except ImportError as error:
        raise _missing(error, 'mcp') from None

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
    from ..mcp._http import carries_token

    app, token, made = _guarded_app(server, args)
    try:
        sock = bind(args.host, args.port)
    except OSError as error:
        raise CannotAskError(f'cannot serve MCP on {args.host}:{args.port}: {error}') from None
    port = sock.getsockname()[1]
    shown = f'[{args.host}]' if ':' in args.host else args.host
    _say(f'MCP endpoint (streamable HTTP): http://{shown}:{port}{args.path}')
    if made:  # said once, never again (a token the person gave is theirs to keep)
        _say(f'MCP bearer token (send "Authorization: Bearer <token>"; set your own in {TOKEN_VARIABLE}): {token}')
    try:
        # Our accept loop and limits (`ServerLimits()`): a header deadline, bounded connections, rate-limited logs;
        # over a limit, a request with the bearer token (the person's own host) is still served.
        await GuardedServer(app, sock, trusted=carries_token(token), log_level='warning').serve()
    finally:
        sock.close()


def _guarded_app(server: Any, args: argparse.Namespace) -> tuple[Any, str, bool]:
    """The HTTP app behind the token and the Host/Origin checks; its token, and whether it was made here."""
    from ..mcp import ask_user_http_app

    given: str | None = args.token or os.environ.get(TOKEN_VARIABLE)
    token = given or new_token()
    # The bound address is allowed as Host too, unless it is a wildcard, which no client names.
    bound = [] if args.host in ('0.0.0.0', '::', '') else [f'[{args.host}]' if ':' in args.host else args.host]
    app = ask_user_http_app(
        server,
        token=token,
        path=args.path,
        allowed_hosts=[*bound, *(args.allow_host or ())],
        allowed_origins=args.allow_origin or (),
    )
    return app, token, not given


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
            raise _missing(error, 'terminal') from None
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
        raise _missing(error, 'web') from None
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

        from ..dbos import DBOSAnswerer, dbos_config, shown_database_url
    except ImportError as error:
        raise _missing(error, 'dbos') from None
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
