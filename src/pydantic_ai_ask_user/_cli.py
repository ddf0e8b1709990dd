"""The `ask-user` command line: one subcommand per module, each importing its front end only when run."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ('main',)

_COMMAND_MODULES = ('_demo', '_cli_ask', '_cli_durable')
"""Modules that add a subcommand: each has `register(subparsers)`, and sets `func` returning the exit code."""


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand this installation has."""
    parser = argparse.ArgumentParser(
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


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
