"""The answerer of `ask-user ask` and `ask-user answer` in the terminal; imported only when one of them asks there."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from .._answers import Answerer, CannotAskError
from ..terminal import TerminalAnswerer
from ..terminal._terminal import CONTROLLING_TERMINAL

__all__ = ('open_terminal_answerer', 'CannotAskError')


@asynccontextmanager
async def open_terminal_answerer(*, bell: bool = False, desktop_notification: bool = False) -> AsyncGenerator[Answerer]:
    """The controlling terminal's menu, so that stdin and stdout stay free for data.

    `bell` and `desktop_notification` are `TerminalAnswerer`'s (`ask-user ask --bell --notify-desktop`).
    Raises `CannotAskError` at once when there is no terminal, before anything is read or drawn.
    """
    answerer = TerminalAnswerer(tty=CONTROLLING_TERMINAL, bell=bell, desktop_notification=desktop_notification)
    answerer.terminal()
    try:
        yield answerer
    finally:
        answerer.close()
