"""What `ask-user ask` runs: put one `ask_user_question` argument file to a person, and print the model's result.

Exit codes: 0 answered, 1 declined, 2 invalid input, 3 timed out, 4 no way to ask here. Asks through the
capability's own wait (`wait_for_answer`) and prints what `ask_user_result` makes, as the model would get it;
loads neither Pydantic AI nor DBOS, and Starlette only with `--web`.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace

import anyio
from pydantic import ValidationError

from .._answers import TIMED_OUT, Answerer, AskUserRequest, CannotAskError, ask_user_result, format_validation_error
from .._asking import wait_for_answer
from .._text import printable, terminal_json
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_DECLINED, EXIT_INVALID, EXIT_TIMED_OUT
from .i18n import _
from .install import install_hint

__all__ = ('run', 'read_request', 'ask_and_print')


def read_request(file: str) -> AskUserRequest | list[str]:
    """The validated request in `file` (`-` for stdin), or the problems that make it invalid, one per line."""
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
        _say(_('{error}; {hint}').format(error=error, hint=install_hint('web' if args.web else 'terminal')))
        return EXIT_CANNOT_ASK
    if not args.web and (args.bell or args.notify_desktop):
        opener = functools.partial(_terminal_opener(), bell=args.bell, desktop_notification=args.notify_desktop)
    return anyio.run(ask_and_print, request, opener, args.timeout)


def _terminal_opener() -> Callable[..., AbstractAsyncContextManager[Answerer]]:
    # Here, not at the top: the menu is the `terminal` extra's (prompt_toolkit).
    from .terminal_answerer import open_terminal_answerer

    return open_terminal_answerer


def _web_opener(args: argparse.Namespace) -> Callable[[], AbstractAsyncContextManager[Answerer]]:
    # Here, not at the top: the page server is the `web` extra's (Starlette, uvicorn).
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
