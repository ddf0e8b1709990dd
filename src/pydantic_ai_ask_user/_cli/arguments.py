"""Argument types the commands share: a number of seconds and a port."""

from __future__ import annotations

import argparse

__all__ = ('seconds', 'port')


def seconds(text: str) -> float:
    """A positive number of seconds, for `--timeout`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number of seconds') from None
    if not value > 0:
        raise argparse.ArgumentTypeError('the timeout must be a positive number of seconds')
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
