"""Signals while a menu is shown: the terminal is handed back whole when the process is ended or suspended.

Without this, `kill`, `timeout` or a closed terminal ends the process in the middle of the menu, leaving
the terminal in raw mode with the cursor hidden, and a suspended menu comes back in cooked mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import termios
import threading
from collections.abc import Callable, Coroutine
from types import FrameType, TracebackType
from typing import Any

from prompt_toolkit.application import Application

from ._terminal import Terminal

__all__ = ('ENDING_SIGNALS', 'MenuSignals')

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end the process: the menu is erased and the terminal restored, then the process ends by the signal."""

_SUSPEND = signal.SIGTSTP
"""Suspends the process (`kill -TSTP`, or Ctrl-Z, which raw mode turns into a key): restore, stop, then redraw."""

_RESUME = signal.SIGCONT
"""Sent on `fg` or `bg`; after a stop the menu never saw coming (`kill -STOP`), raw mode is entered again."""

_HANDLED = (*ENDING_SIGNALS, _SUSPEND, _RESUME)
"""Every signal a shown menu handles, when the process leaves it at its default action."""


class MenuSignals:
    """While a menu is shown, TERM, HUP, TSTP and CONT leave the terminal as a person needs it.

    TERM and HUP erase the menu and restore the terminal (termios settings, cursor shown, bracketed paste
    off), then the process ends by the same signal, as it would have without a menu (exit status 128+n).
    TSTP erases the menu, restores the terminal and suspends the process; on resume the menu enters raw
    mode again and is redrawn. CONT after a stop the menu did not see coming does the same.

    A handler is only installed from the main thread, and only for a signal whose handler is the default
    one: an application that handles a signal itself, or ignores it, keeps it. The previous handlers are
    put back when the menu is gone.
    """

    def __init__(self, terminal: Terminal, app: Application[Any], end: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Handle signals for `app` drawing on `terminal`; `end` stops the app when TERM or HUP arrives."""
        self._terminal = terminal
        self._app = app
        self._end = end
        self._fd = terminal.input.fileno()
        self._loop = asyncio.get_running_loop()
        self._previous: dict[int, Any] = {}
        self._original: list[Any] | None = None
        self._suspending = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.ended_by: int | None = None
        """The ending signal that arrived (TERM or HUP), if any; the process ends by it when the menu is gone."""

    def __enter__(self) -> MenuSignals:
        if threading.current_thread() is not threading.main_thread():
            return self
        try:
            self._original = termios.tcgetattr(self._fd)
        except termios.error:  # pragma: no cover - not a terminal after all
            return self
        for signum in _HANDLED:
            if signal.getsignal(signum) is signal.SIG_DFL:
                self._previous[signum] = signal.signal(signum, self._caught)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self.ended_by is not None:
            self._restore_termios()
            # The default action now ends the process, as it would have ended it without a menu on screen.
            signal.raise_signal(self.ended_by)
            raise SystemExit(128 + self.ended_by)  # pragma: no cover - only if the signal is blocked

    @property
    def can_suspend(self) -> bool:
        """Whether Ctrl-Z may suspend the process: TSTP is left at its default and handled here."""
        return _SUSPEND in self._previous

    def suspend(self) -> None:
        """Ctrl-Z: suspend the whole process group, as the key does in cooked mode; the menu comes back on resume."""
        if self.can_suspend:
            self._spawn(self._suspend(whole_group=True))

    def _caught(self, signum: int, frame: FrameType | None) -> None:
        # A Python signal handler runs in the main thread between two bytecodes: record and hand over to the loop.
        if signum in ENDING_SIGNALS:
            self.ended_by = signum
            self._loop.call_soon_threadsafe(lambda: self._spawn(self._end()))
        elif signum == _SUSPEND:
            self._loop.call_soon_threadsafe(lambda: self._spawn(self._suspend(whole_group=False)))
        elif not self._suspending:  # a resume after our own stop is handled where the stop was made
            self._loop.call_soon_threadsafe(self._resumed)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = self._loop.create_task(work)
        self._tasks.add(task)  # referenced until done, so it is never collected half-way
        task.add_done_callback(self._tasks.discard)

    @property
    def _showing(self) -> bool:
        return self._app.is_running and not self._app.future.done()  # pyright: ignore[reportOptionalMemberAccess]

    async def _suspend(self, *, whole_group: bool) -> None:
        renderer = self._app.renderer
        if self._showing:
            # A cursor position answer arriving in cooked mode would be echoed as `^[[12;1R`.
            await renderer.wait_for_cpr_responses()
        if not self._showing:
            self._stop(whole_group=whole_group)
            return
        renderer.erase()  # the menu gone, the cursor shown, bracketed paste off
        raw = termios.tcgetattr(self._fd)
        self._restore_termios()
        self._stop(whole_group=whole_group)
        termios.tcsetattr(self._fd, termios.TCSANOW, raw)
        renderer.request_absolute_cursor_position()
        self._app.invalidate()

    def _stop(self, *, whole_group: bool) -> None:
        self._suspending = True
        signal.signal(_SUSPEND, signal.SIG_DFL)
        try:
            # The process stops here, and carries on from here on resume.
            if whole_group:
                os.killpg(0, _SUSPEND)
            else:
                signal.raise_signal(_SUSPEND)
        finally:
            if self.can_suspend:  # not once the menu is gone and the previous handler is back
                signal.signal(_SUSPEND, self._caught)
            # The CONT that resumed us is handled by its Python handler before any loop callback runs.
            self._loop.call_soon(self._suspended)

    def _suspended(self) -> None:
        self._suspending = False

    def _resumed(self) -> None:
        if not self._showing:
            return
        # Whatever the shell did to the terminal while we were stopped, the menu needs raw mode back.
        self._terminal.input.raw_mode().__enter__()
        self._app.renderer.erase()
        self._app.renderer.request_absolute_cursor_position()
        self._app.invalidate()

    def _restore_termios(self) -> None:
        if self._original is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self._fd, termios.TCSANOW, self._original)
