"""What the commands share on the command line: adding a command, a number of seconds and a port."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

__all__ = ('command', 'later', 'seconds', 'port', 'END_AT_ONCE')

END_AT_ONCE = 'end_at_once'
"""The attribute a command sets to `True` on its arguments when the process must end as soon as it returns, without
the interpreter's clean-up: it started the Temporal client, whose runtime can abort that clean-up (temporalio 1.35:
`Fatal Python error: PyGILState_Release`, exit 134 instead of the command's own code)."""


def command(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],  # pyright: ignore[reportPrivateUsage]
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    summary: str,
    description: str,
) -> argparse.ArgumentParser:
    """Add the command `name`, run by `run`: `summary` is its line in `ask-user --help`, `description` its own help."""
    parser = subparsers.add_parser(name, help=summary, description=description)
    parser.set_defaults(func=run)
    return parser


def later(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """What runs a command: `function` of the module `module` of `_cli` (`'pending'`: `_cli/pending.py`), loaded by
    name when the command runs, not when the command line is built.

    The one place the command line defers its own imports: a command's module imports what it needs at its top (the
    question models, a store, anyio), and `ask-user --help` or another command loads none of it.
    """

    def run(args: argparse.Namespace) -> int:
        loaded = importlib.import_module(f'{__package__}.{module}')
        return int(getattr(loaded, function)(args))

    run.__qualname__ = f'{module}.{function}'
    return run


LONGEST_TIMEOUT = 10 * 366 * 24 * 3600
"""The longest `--timeout`: `AskUser`'s `MAX_TIMEOUT`, spelled here so the command line does not import Pydantic AI."""


def seconds(text: str) -> float:
    """A positive number of seconds, for `--timeout`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number of seconds') from None
    if not value > 0:
        raise argparse.ArgumentTypeError('the timeout must be a positive number of seconds')
    if not value <= LONGEST_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f'the timeout must be at most {LONGEST_TIMEOUT} seconds (ten years); leave it out to wait without a limit'
        )
    return value


def port(text: str) -> int:
    """A TCP port, 0 meaning any free one."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f'{text!r} is not a port number (0 to 65535)')
    return value
