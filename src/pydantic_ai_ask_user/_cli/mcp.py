"""`ask-user mcp`: serve `ask_user_question` to any MCP host (Claude Code, Cursor, ...) over stdio or HTTP.

Registering costs nothing: the `mcp` library, the front ends and the question models are imported by
`_cli/mcp_server.py` when the command runs.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from .._text import printable
from ..mcp import TOKEN_VARIABLE, check_token
from .arguments import command, later, port, seconds

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]  # pyright: ignore[reportPrivateUsage]

__all__ = ('register', 'DEFAULT_TTY', 'DEFAULT_HTTP_PORT', 'DEFAULT_HTTP_PATH')

DEFAULT_TTY = '/dev/tty'
"""The terminal the questions are drawn on by default: the controlling terminal, never the stdio pipe."""

DEFAULT_HTTP_PORT = 8765
"""The port `--http` serves on unless `--port` says otherwise."""

DEFAULT_HTTP_PATH = '/mcp'
"""The path of the streamable HTTP endpoint."""


def register(subparsers: Subparsers) -> None:
    """Add `mcp` to the `ask-user` command line."""
    parser = command(
        subparsers,
        'mcp',
        later('mcp_server', 'run'),
        summary='serve ask_user_question to an MCP host (Claude Code, Cursor, ...) over stdio or HTTP',
        description=(
            'An MCP server with one tool, ask_user_question: the same schema, limits and validation as '
            'the AskUser capability, answered in the terminal (drawn on /dev/tty, never on the stdio pipe), '
            'in a browser (--web) or through the durable question store (--db). Exit codes: 0 the host '
            'closed the connection, 4 no way to ask a person here.'
        ),
    )
    parser.add_argument('--http', action='store_true', help='serve streamable HTTP instead of stdio')
    parser.add_argument('--host', default='127.0.0.1', help='with --http: the address to serve on')
    parser.add_argument('--port', type=port, default=DEFAULT_HTTP_PORT, help='with --http: the port (0: any free one)')
    parser.add_argument('--path', default=DEFAULT_HTTP_PATH, help='with --http: the endpoint path')
    parser.add_argument(
        '--token',
        type=_token,
        help=(
            'with --http: the bearer token clients must send (Authorization: Bearer TOKEN); default: '
            f'${TOKEN_VARIABLE} if set (which ps does not show), else a random one printed once at start'
        ),
    )
    parser.add_argument(
        '--allow-host',
        action='append',
        type=_host,
        metavar='HOST[:PORT]',
        help=(
            'with --http: also answer requests whose Host header names HOST (any port unless one is given); '
            'loopback names and the --host address are always allowed (repeatable)'
        ),
    )
    parser.add_argument(
        '--allow-origin',
        action='append',
        type=_origin,
        metavar='ORIGIN',
        help='with --http: also answer browser requests from ORIGIN (scheme://host[:port], repeatable)',
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--web', action='store_true', help='answer in a browser instead of the terminal')
    where.add_argument('--db', metavar='URL', help='answer through the durable question store at URL (DBOS)')
    parser.add_argument('--web-host', default='127.0.0.1', help='with --web: the address of the question pages')
    parser.add_argument('--web-port', type=port, default=0, help='with --web: their port (default: any free one)')
    parser.add_argument('--open', action='store_true', help='with --web: open each question in a browser')
    parser.add_argument('--tty', default=DEFAULT_TTY, help='the terminal to ask in (default: %(default)s)')
    parser.add_argument('--timeout', type=seconds, metavar='SECONDS', help='give up on a question after SECONDS')
    parser.add_argument(
        '--notes', action='store_true', help='let the person add a note to each answer (as AskUser(notes=True))'
    )
    parser.add_argument(
        '--recommended',
        action='store_true',
        help='let the model mark one option per question as recommended (as AskUser(recommended_options=True))',
    )


def _token(text: str) -> str:
    if (problem := check_token(text)) is not None:
        raise argparse.ArgumentTypeError(problem)  # never quoting the token, as argparse would
    return text


def _host(text: str) -> str:
    if re.fullmatch(r'[A-Za-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?', text) is None:
        raise argparse.ArgumentTypeError(
            f'{printable(repr(text))} is not a host name or address, with an optional port'
        )
    return text


def _origin(text: str) -> str:
    if re.fullmatch(r'https?://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?', text) is None:
        raise argparse.ArgumentTypeError(f'{printable(repr(text))} is not an origin (scheme://host[:port], no path)')
    return text
