"""`ask-user ask`: put one `ask_user_question` argument file to a person, and print the model's result.

Exit codes: 0 answered, 1 declined, 2 invalid input, 3 timed out, 4 no way to ask here. Asks through the
capability's own wait (`wait_for_answer`) and prints what `ask_user_result` makes, as the model would get it;
loads neither Pydantic AI nor DBOS, and Starlette only with `--web`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from .._text import printable, terminal_json
from .arguments import command, port, seconds
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_DECLINED, EXIT_INVALID, EXIT_TIMED_OUT
from .i18n import _

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._answers import Answerer, AskUserRequest

# The question models, anyio and the front ends are imported when `ask` runs, not when the command line
# is built: `ask-user --help` and the other commands never pay for them.

__all__ = ('register', 'run', 'read_request', 'ask_and_print')


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `ask` to the `ask-user` command line."""
    parser = command(
        subparsers,
        'ask',
        run,
        summary='ask the questions of a JSON file in the terminal or a browser, print the answers as JSON',
        description=(
            'Read the arguments of an ask_user_question call ({"questions": [...]}, a question may name its '
            '"recommended" label) from FILE or stdin, '
            'ask them, and print on stdout the JSON the model would get. Exit codes: 0 answered, '
            '1 declined, 2 invalid input, 3 timed out, 4 no terminal or browser to ask in.'
        ),
    )
    parser.add_argument('file', nargs='?', default='-', metavar='FILE|-', help='the question file (default: stdin)')
    parser.add_argument('--timeout', type=seconds, metavar='SECONDS', help='give up after this many seconds')
    parser.add_argument('--notes', action='store_true', help='let the person add a note to each answer')
    parser.add_argument('--web', action='store_true', help='ask in a browser instead of the terminal')
    parser.add_argument('--host', default='127.0.0.1', help='with --web: the address to serve on')
    parser.add_argument('--port', type=port, default=0, help='with --web: the port (default: any free one)')
    parser.add_argument('--open', action='store_true', help='with --web: open the page in a browser')
    parser.add_argument(
        '--notify-url', metavar='URL', help='with --web: POST a signed webhook there (key: $ASK_USER_WEBHOOK_KEY)'
    )
    parser.add_argument('--bell', action='store_true', help='in the terminal: ring the bell when the question opens')
    parser.add_argument(
        '--notify-desktop',
        action='store_true',
        help='in the terminal: a desktop notification when the question opens (OSC 9 and OSC 777)',
    )


def read_request(file: str) -> AskUserRequest | list[str]:
    """The validated request in `file` (`-` for stdin), or the problems that make it invalid, one per line."""
    from pydantic import ValidationError

    from .._answers import AskUserRequest, format_validation_error

    try:
        if file == '-':
            text = sys.stdin.read()
        else:
            with open(file, encoding='utf-8') as handle:
                text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        return [_('cannot read {path}: {error}').format(path=file, error=error)]
    try:
        return AskUserRequest.from_tool_args(text)
    except ValidationError as error:
        return format_validation_error(error)


def run(args: argparse.Namespace) -> int:
    """Ask, print the result, and return the exit code."""
    import anyio

    request = read_request(args.file)
    if isinstance(request, list):
        for problem in request:
            _say(problem)
        return EXIT_INVALID
    if args.notes or args.timeout is not None:
        # The front ends offer a note only on a request that takes them, and show the time left until its deadline.
        deadline = None if args.timeout is None else time.time() + args.timeout
        request = replace(request, notes=args.notes, deadline=deadline)
    try:
        opener = _web_opener(args) if args.web else _terminal_opener()
    except ImportError as error:
        from .install import install_hint

        _say(_('{error}; {hint}').format(error=error, hint=install_hint('web' if args.web else 'terminal')))
        return EXIT_CANNOT_ASK
    if not args.web and (args.bell or args.notify_desktop):
        import functools

        from .terminal_answerer import open_terminal_answerer

        opener = functools.partial(open_terminal_answerer, bell=args.bell, desktop_notification=args.notify_desktop)
    return anyio.run(ask_and_print, request, opener, args.timeout)


def _terminal_opener() -> Callable[[], AbstractAsyncContextManager[Answerer]]:
    from .terminal_answerer import open_terminal_answerer

    return open_terminal_answerer


def _web_opener(args: argparse.Namespace) -> Callable[[], AbstractAsyncContextManager[Answerer]]:
    from .web_answerer import open_web_answerer, web_notifier

    @asynccontextmanager
    async def opener() -> AsyncGenerator[Answerer]:
        notify = web_notifier(args.notify_url, os.environ)
        new_links, owned = _new_link_input(args.file)
        try:
            async with open_web_answerer(
                host=args.host, port=args.port, open_browser=args.open, new_links=new_links, notify=notify
            ) as answerer:
                yield answerer
        finally:
            if owned and new_links is not None:
                os.close(new_links)

    return opener


def _new_link_input(file: str) -> tuple[int | None, bool]:
    """Where `ask --web` reads Enter for a new link: stdin, or the terminal when the questions came on stdin.

    Returns the file descriptor (or `None`) and whether it was opened here, to be closed.
    """
    if file != '-':
        try:
            return sys.stdin.fileno(), False
        except (AttributeError, OSError, ValueError):  # no stdin at all (pythonw, a closed descriptor)
            return None, False
    try:
        return os.open('/dev/tty', os.O_RDONLY | os.O_NOCTTY), True
    except (AttributeError, OSError):  # no controlling terminal (a service, CI); O_NOCTTY is POSIX only
        return None, False


async def ask_and_print(
    request: AskUserRequest, opener: Callable[[], AbstractAsyncContextManager[Answerer]], timeout: float | None
) -> int:
    """Ask `request` through the answerer `opener` opens, print the result on stdout, and return the exit code."""
    from .._answers import TIMED_OUT, CannotAskError, ask_user_result
    from .._asking import wait_for_answer

    try:
        async with opener() as answerer:
            response, timed_out = await wait_for_answer(answerer, request, timeout)
            # Printed before the answerer closes: `ask --web` keeps serving a few seconds after the answer.
            if timed_out:
                _print_json(TIMED_OUT)
                return EXIT_TIMED_OUT
            try:
                if response is None:
                    raise ValueError('it returned None, not an AskUserResponse')
                result = ask_user_result(request, response)
            except ValueError as error:  # a shipped answerer never does: a bug, said in one line
                _say(_('the answerer returned an invalid response: {error}').format(error=error))
                return EXIT_CANNOT_ASK
            _print_json(result)
            return EXIT_DECLINED if response.cancelled else EXIT_ANSWERED
    except CannotAskError as error:
        _say(str(error))
        return EXIT_CANNOT_ASK


def _print_json(value: object) -> None:
    sys.stdout.write(terminal_json(value) + '\n')
    sys.stdout.flush()


def _say(message: str) -> None:
    """Print one problem on stderr; a validation error's location quotes the input's own field names."""
    print(f'ask-user: {printable(message)}', file=sys.stderr)
