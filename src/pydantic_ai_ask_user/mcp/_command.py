"""`ask-user mcp`: serve `ask_user_question` to any MCP host, over stdio or streamable HTTP."""

from __future__ import annotations

import argparse
import socket
import sys
import webbrowser
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread

from .._answers import Answerer, AskUserRequest, AskUserResponse, CannotAskError
from .._text import printable

__all__ = ('register', 'run', 'DEFAULT_TTY', 'DEFAULT_HTTP_PORT', 'DEFAULT_HTTP_PATH')

DEFAULT_TTY = '/dev/tty'
"""The terminal the questions are drawn on by default: the controlling terminal, never the stdio pipe."""

DEFAULT_HTTP_PORT = 8765
"""The port `--http` serves on unless `--port` says otherwise."""

DEFAULT_HTTP_PATH = '/mcp'
"""The path of the streamable HTTP endpoint."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `mcp` to the `ask-user` command line."""
    parser = subparsers.add_parser(
        'mcp',
        help='serve ask_user_question to an MCP host (Claude Code, Cursor, ...) over stdio or HTTP',
        description=(
            'An MCP server with one tool, ask_user_question: the same schema, limits and validation as '
            'the AskUser capability, answered in the terminal (drawn on /dev/tty, never on the stdio pipe), '
            'in a browser (--web) or through the durable question store (--db). Exit codes: 0 the host '
            'closed the connection, 4 no way to ask a person here.'
        ),
    )
    parser.add_argument('--http', action='store_true', help='serve streamable HTTP instead of stdio')
    parser.add_argument('--host', default='127.0.0.1', help='with --http: the address to serve on')
    parser.add_argument('--port', type=_port, default=DEFAULT_HTTP_PORT, help='with --http: the port (0: any free one)')
    parser.add_argument('--path', default=DEFAULT_HTTP_PATH, help='with --http: the endpoint path')
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--web', action='store_true', help='answer in a browser instead of the terminal')
    where.add_argument('--db', metavar='URL', help='answer through the durable question store at URL (DBOS)')
    parser.add_argument('--web-host', default='127.0.0.1', help='with --web: the address of the question pages')
    parser.add_argument('--web-port', type=_port, default=0, help='with --web: their port (default: any free one)')
    parser.add_argument('--open', action='store_true', help='with --web: open each question in a browser')
    parser.add_argument('--tty', default=DEFAULT_TTY, help='the terminal to ask in (default: %(default)s)')
    parser.add_argument('--timeout', type=_seconds, metavar='SECONDS', help='give up on a question after SECONDS')
    parser.set_defaults(func=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number of seconds') from None
    if not value > 0:
        raise argparse.ArgumentTypeError('the timeout must be a positive number of seconds')
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f'{text!r} is not a port number (0 to 65535)')
    return value


def _say(message: str) -> None:
    """One line on stderr: the host's log for a stdio server, the console for an HTTP one."""
    print(f'ask-user: {printable(message, allow_newline=False)}', file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Serve until the host disconnects (stdio) or the process is interrupted (HTTP); return the exit code."""
    # Imported here, not at the top: `_cli` imports this module to register the command.
    from .._cli.exit_codes import EXIT_CANNOT_ASK

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
        server = ask_user_server(answerer, timeout=args.timeout)
        if args.http:
            await _serve_http(server, args)
        else:
            from mcp.server.stdio import stdio_server

            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
    return 0


async def _serve_http(server: Any, args: argparse.Namespace) -> None:
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=args.path, host=args.host)
    family = socket.AF_INET6 if ':' in args.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio then sets TCP_NODELAY on each accepted connection (no delayed-ACK stall).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
    except OSError as error:
        sock.close()
        raise CannotAskError(f'cannot serve MCP on {args.host}:{args.port}: {error}') from None
    port = sock.getsockname()[1]
    shown = f'[{args.host}]' if ':' in args.host else args.host
    _say(f'MCP endpoint (streamable HTTP): http://{shown}:{port}{args.path}')
    config = uvicorn.Config(app, log_level='warning', access_log=False)
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
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
            url = web.login_url(base, request.id)
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
    except ImportError as error:
        raise CannotAskError(f"{error}; install the dbos extra: pip install 'pydantic-ai-ask-user[dbos]'") from None
    try:
        config = dbos_config(url, name='ask-user-mcp', application_version='ask-user-mcp-1')
    except Exception as error:
        raise CannotAskError(f'cannot use the database {url!r}: {error}') from None
    DBOS(config=config)
    await anyio.to_thread.run_sync(DBOS.launch)
    answerer = DBOSAnswerer(url)
    _say(f'questions wait in {url}; answer them with: ask-user pending --db {url}')
    try:
        yield answerer
    finally:
        answerer.close()
        await anyio.to_thread.run_sync(DBOS.destroy)
