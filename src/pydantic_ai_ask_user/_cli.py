"""The `ask-user` command line: one subcommand per module, each importing its front end only when run."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from ._text import printable

__all__ = ('main', 'EXIT_INTERNAL_ERROR')

EXIT_INTERNAL_ERROR = 70
"""An error ask-user did not expect: a bug. `EX_SOFTWARE` of sysexits.h, not 1, which means "declined"."""

TRACEBACK_VARIABLE = 'ASK_USER_TRACEBACK'
"""The environment variable that, set to `1`, prints where an internal error happened instead of one line."""

_COMMAND_MODULES = ('_demo', '_cli_ask', '_cli_durable', 'mcp._command')
"""Modules that add a subcommand: each has `register(subparsers)`, and sets `func` returning the exit code."""


class _Parser(argparse.ArgumentParser):
    """argparse, echoing a refused argument without the escape sequences it may hold."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and the problem on stderr, and exit 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f'{self.prog}: error: {printable(message)}\n')


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand this installation has."""
    parser = _Parser(
        prog='ask-user', description='Ask a person structured multiple-choice questions, for agents and scripts.'
    )
    subparsers = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f'{__package__}.{name}')
        except ModuleNotFoundError as error:
            if error.name != f'{__package__}.{name}':
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ask-user` and return its exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print('ask-user: interrupted', file=sys.stderr)
        return 130
    except Exception as error:
        # A person gets one line, never a traceback; a developer asks for it. Both filtered: an exception
        # message can quote its input.
        if os.environ.get(TRACEBACK_VARIABLE) == '1':
            sys.stderr.write(printable(traceback.format_exc()))
        else:
            message = f'{type(error).__name__}: {error}'.strip().split('\n', 1)[0]
            print(
                f'ask-user: internal error (a bug in ask-user): {printable(message)}; '
                f'set {TRACEBACK_VARIABLE}=1 to see where it happened',
                file=sys.stderr,
            )
        return EXIT_INTERNAL_ERROR


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
