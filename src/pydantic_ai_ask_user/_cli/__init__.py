"""The `ask-user` command line: one module per command, each importing its front end only when it runs.

`ask` (the terminal or a browser), `pending`/`answer`/`resolve` (a DBOS database) and `demo` (an agent)
all register here at start-up, whichever extras are installed; a command whose extra is missing says
which one to install when it runs. Their exit codes are the one table of `exit_codes`.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn, cast

from .._text import printable
from . import ask, demo, durable, mcp
from .arguments import END_AT_ONCE
from .exit_codes import EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED
from .i18n import _

__all__ = ('main', 'build_parser', 'COMMANDS', 'TRACEBACK_VARIABLE')

TRACEBACK_VARIABLE = 'ASK_USER_TRACEBACK'
"""The environment variable that, set to `1`, prints where an internal error happened instead of one line."""

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]  # pyright: ignore[reportPrivateUsage]
    """What a command's `register` adds its subparser to."""

    Register = Callable[[Subparsers], None]
    """A command's `register(subparsers)`: adds its subparser and sets `func(args) -> exit code` on it."""

COMMANDS: tuple[Register, ...] = (demo.register, ask.register, durable.register, mcp.register)
"""Every command of `ask-user`, in the order `--help` lists them.

Each command's module stays cheap to import (its front end, and for `mcp` the `mcp` library, is imported
inside its `run`), so that `ask-user --help` and `ask` start fast and every command is listed even when
its extra is not installed.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, echoing a refused argument without the escape sequences it may hold."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and the problem on stderr, and exit 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f'{self.prog}: error: {printable(message)}\n')


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand of `ask-user`."""
    parser = _Parser(
        prog='ask-user', description='Ask a person structured multiple-choice questions, for agents and scripts.'
    )
    # Each subcommand's parser is a `_Parser` too; the commands need only what any ArgumentParser has.
    subparsers = cast('Subparsers', parser.add_subparsers(dest='command', required=True, metavar='COMMAND'))
    for register in COMMANDS:
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ask-user` and return its exit code."""
    args = build_parser().parse_args(argv)
    code = _run(args)
    if argv is None and getattr(args, END_AT_ONCE, False):
        # Run as the program (not called with arguments from Python): its output out, it ends here, with its code.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _run(args: argparse.Namespace) -> int:
    """Run the command `args` names and return its exit code; an error is one line (or its traceback, if asked)."""
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(_('ask-user: interrupted'), file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:
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
