"""The answerer of `ask-user ask` and `ask-user answer` in the terminal; imported only when one of them asks there."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from .._answers import Answerer
from ..terminal import TerminalAnswerer
from ..terminal._terminal import CONTROLLING_TERMINAL

__all__ = ('open_terminal_answerer',)


@asynccontextmanager
async def open_terminal_answerer() -> AsyncGenerator[Answerer]:
    """The controlling terminal's menu, so that stdin and stdout stay free for data.

    Raises `CannotAskError` at once when there is no terminal, before anything is read or drawn.
    """
    answerer = TerminalAnswerer(tty=CONTROLLING_TERMINAL)
    answerer.terminal()
    try:
        yield answerer
    finally:
        answerer.close()
