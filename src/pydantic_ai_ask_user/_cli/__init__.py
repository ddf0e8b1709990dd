"""The `ask-user` command line: one module per command, each importing its front end only when it runs.

`ask` (the terminal or a browser), `pending`/`answer`/`resolve` (a DBOS database) and `demo` (an agent)
all register here at start-up, whichever extras are installed; a command whose extra is missing says
which one to install when it runs. Their exit codes are the one table of `exit_codes`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, cast

from .._text import printable
from . import ask, demo, inbox, mcp
from .arguments import END_AT_ONCE
from .exit_codes import EXIT_BROKEN_PIPE, EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED
from .i18n import _

__all__ = ('main', 'build_parser', 'COMMANDS', 'TRACEBACK_VARIABLE')

TRACEBACK_VARIABLE = 'ASK_USER_TRACEBACK'
"""The environment variable that, set to `1`, prints where an internal error happened instead of one line."""

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]  # pyright: ignore[reportPrivateUsage]
    """What a command's `register` adds its subparser to."""

    Register = Callable[[Subparsers], None]
    """A command's `register(subparsers)`: adds its subparser and sets `func(args) -> exit code` on it."""

COMMANDS: tuple[Register, ...] = (demo.register, ask.register, inbox.register, mcp.register)
"""Every command of `ask-user`, in the order `--help` lists them.

Each command's module stays cheap to import (its front end, and for `mcp` the `mcp` library, is imported
inside its `run`), so that `ask-user --help` and `ask` start fast and every command is listed even when
its extra is not installed.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, echoing a refused argument without the escape sequences it may hold."""

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        """Write the help to `file` (stdout); unlike argparse, a reader that went away is not ignored, so `main` exits
        141 as for every other output.
        """
        (file or sys.stdout).write(self.format_help())

    def error(self, message: str) -> NoReturn:
        """Print the usage and the problem on stderr, and exit 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f'{self.prog}: error: {printable(message)}\n')


class _Version(argparse.Action):
    """`--version`: print `ask-user VERSION` and exit 0, the version read from the package metadata only then."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help='show the version of ask-user and exit', **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        from .._version import __version__

        print(f'ask-user {__version__}')
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand of `ask-user`."""
    parser = _Parser(
        prog='ask-user', description='Ask a person structured multiple-choice questions, for agents and scripts.'
    )
    parser.add_argument('--version', action=_Version, default=argparse.SUPPRESS)
    # Each subcommand's parser is a `_Parser` too; the commands need only what any ArgumentParser has.
    subparsers = cast('Subparsers', parser.add_subparsers(dest='command', required=True, metavar='COMMAND'))
    for register in COMMANDS:
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ask-user` and return its exit code."""
    parsed: list[argparse.Namespace] = []
    code = _run(argv, parsed)
    if argv is None and parsed and getattr(parsed[0], END_AT_ONCE, False):
        # Run as the program (not called with arguments from Python): its output out, it ends here, with its code.
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        _save_measurements()
        os._exit(code)
    return code


def _save_measurements() -> None:
    """Write coverage's data of this process, when coverage measures it, before `os._exit` skips the clean-up where
    coverage would write it: the tests measure the commands that end at once (Temporal's) in real processes.

    Nothing is imported for it: with coverage not loaded (any real use) this does nothing.
    """
    measuring: Any = getattr(sys.modules.get('coverage'), 'Coverage', None)
    current: Any = measuring.current() if measuring is not None else None
    if current is not None:
        with contextlib.suppress(Exception):  # a measurement's trouble must not change the command's exit code
            current.stop()
            current.save()


def _run(argv: Sequence[str] | None, parsed: list[argparse.Namespace]) -> int:
    """Parse `argv` (into `parsed`), run the command it names and return its exit code; an error is one line."""
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit:  # `--help` and `--version` wrote to stdout, and argparse exits
            sys.stdout.flush()  # here, not at exit: a reader that went away is seen while it can still be handled
            raise
        parsed.append(args)
        code = int(args.func(args))
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        print(_('ask-user: interrupted'), file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:
        if _broken_pipe(error):
            return _reader_gone()
        # A person gets one line, never a traceback; a developer asks for it. Both filtered: an exception
        # message can quote its input.
        if os.environ.get(TRACEBACK_VARIABLE) == '1':
            sys.stderr.write(printable(traceback.format_exc()))
        else:
            message = f'{type(error).__name__}: {error}'.strip().split('\n', 1)[0]
            print(
                _(
                    'ask-user: internal error (a bug in ask-user): {message}; set {variable}=1 to see where it happened'
                ).format(message=printable(message), variable=TRACEBACK_VARIABLE),
                file=sys.stderr,
            )
        return EXIT_INTERNAL_ERROR


def _broken_pipe(error: BaseException) -> bool:
    """Whether `error` is stdout's reader going away: a `BrokenPipeError`, or a task group's holding only those."""
    if isinstance(error, BaseExceptionGroup):
        group = cast('BaseExceptionGroup[BaseException]', error)
        return all(_broken_pipe(inner) for inner in group.exceptions)
    return isinstance(error, BrokenPipeError)


def _reader_gone() -> int:
    """The Unix way for a closed pipe (`ask-user pending | head`): no message, no traceback, exit 141.

    Whatever is still buffered for stdout is dropped: stdout is pointed at /dev/null, so the flush at exit
    has nowhere to fail (Python would print "Exception ignored" and exit 120).
    """
    with contextlib.suppress(OSError, ValueError):  # no stdout file descriptor at all (a captured stdout)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE
