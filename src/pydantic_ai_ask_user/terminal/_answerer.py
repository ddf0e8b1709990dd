"""`TerminalAnswerer`: asks in the terminal, one request at a time, in arrival order."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import ClassVar

from .._answers import MAX_CUSTOM_ANSWER_LENGTH, AskUserRequest, AskUserResponse, check_answered_by
from .._i18n import N_, negotiate_terminal
from .._os_user import os_user_at_host
from ._app import run_menu
from ._bell import notification_sequences
from ._menu import DEFAULT_MAX_CUSTOM_ANSWER_LENGTH, Menu, RenamedCustomOptions, renamed_custom_options
from ._terminal import Terminal, open_terminal

__all__ = ('TerminalAnswerer', 'NOTIFICATION_TITLE')

NOTIFICATION_TITLE = N_('A question is waiting for you')
"""The title of the desktop notification (`desktop_notification=True`); its body is the questions' headers."""


@dataclass(init=False)
class TerminalAnswerer(RenamedCustomOptions):
    """An `Answerer` that asks in the terminal with an inline menu, below what the model already wrote.

    Concurrent requests wait their turn and are shown one at a time in arrival order. The person
    declines with Esc, Ctrl-C or Ctrl-D; nothing is ever answered for them. When the wait is
    cancelled (an `AskUser(timeout=...)` or a cancelled run) the menu is erased, one line says the
    question was withdrawn, and the terminal is restored. Runs on asyncio, as prompt_toolkit does.
    """

    _renamed_owner: ClassVar[str] = 'TerminalAnswerer'

    allow_custom_answers: bool = True
    """Offer a "Type my own answer" row, so the person can answer in their own words instead of a label."""

    max_custom_answer_length: int = DEFAULT_MAX_CUSTOM_ANSWER_LENGTH
    """The most characters the person may type as their own answer; a counter shows how many are used.

    At most `MAX_CUSTOM_ANSWER_LENGTH` (2,000), the limit `check_custom_answer` holds every answer to.
    """

    tty: str | None = None
    """The terminal device to ask in. `None`: stdin and stdout when both are terminals, else `/dev/tty`.

    Pass `'/dev/tty'` to draw on the controlling terminal even when stdin or stdout is redirected.
    """

    language: str | None = None
    """The language of every string the menu draws (`'ko'`, `'en'`); `None`: from `LANGUAGE`, `LC_*` and `LANG`.

    `negotiate_terminal()` reads them when a question opens; a language without a catalog is English.
    """

    bell: bool = False
    """Ring the terminal bell (BEL) when a question opens, so a person in another window or tab hears it."""

    desktop_notification: bool = False
    """Write the desktop-notification escape sequences (OSC 9 and OSC 777) when a question opens.

    Terminals that know them show a notification titled `NOTIFICATION_TITLE` with the questions' headers;
    others ignore them. The headers are the model's text: control characters and `;` are dropped, and the
    text is cut at `MAX_NOTIFICATION_TEXT` characters. Inside tmux (`TMUX` is set) they are wrapped in tmux's
    passthrough, which tmux forwards only with `set -g allow-passthrough on`.
    """

    answered_by: bool | str = True
    """Who the responses say answered (`AskUserResponse.answered_by`): `True` is `os_user_at_host()`.

    A string names someone else (one line, at most 200 characters, see `check_answered_by`); `False` leaves it
    `None`. The model never sees it; events, the durable store and receipts do. Declining carries it too.
    """

    _terminal: Terminal | None = field(default=None, init=False, repr=False)
    _lock: asyncio.Lock | None = field(default=None, init=False, repr=False)
    _lock_loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)
    _menus: list[Menu] = field(default_factory=list[Menu], init=False, repr=False)
    _redraw: Callable[[], None] | None = field(default=None, init=False, repr=False)

    def __init__(
        self,
        allow_custom_answers: bool = True,
        max_custom_answer_length: int = DEFAULT_MAX_CUSTOM_ANSWER_LENGTH,
        tty: str | None = None,
        *,
        language: str | None = None,
        bell: bool = False,
        desktop_notification: bool = False,
        answered_by: bool | str = True,
        allow_custom: bool | None = None,
        max_custom_length: int | None = None,
    ) -> None:
        # Written out rather than generated, for the two deprecated spellings of the options.
        allow_custom_answers, max_custom_answer_length = renamed_custom_options(
            'TerminalAnswerer', allow_custom_answers, max_custom_answer_length, allow_custom, max_custom_length
        )
        if not 1 <= max_custom_answer_length <= MAX_CUSTOM_ANSWER_LENGTH:
            raise ValueError(
                'TerminalAnswerer.max_custom_answer_length must be at least 1 and at most '
                f'{MAX_CUSTOM_ANSWER_LENGTH} (MAX_CUSTOM_ANSWER_LENGTH), not {max_custom_answer_length}'
            )
        self.allow_custom_answers = allow_custom_answers
        self.max_custom_answer_length = max_custom_answer_length
        if isinstance(answered_by, str) and (problem := check_answered_by(answered_by)) is not None:
            raise ValueError(f'TerminalAnswerer.answered_by {problem}')
        self.tty = tty
        self.language = language
        self.bell = bell
        self.desktop_notification = desktop_notification
        self.answered_by = answered_by
        self._terminal = None
        self._lock = None
        self._lock_loop = None
        self._menus = []
        self._redraw = None
        if tty is None:
            keep_banner_off_the_menu()

    def terminal(self) -> Terminal:
        """The terminal this answerer asks in, opened on first use; `CannotAskError` when there is none."""
        if self._terminal is None:
            self._terminal = open_terminal(self.tty)
        return self._terminal

    def _queue(self) -> asyncio.Lock:
        # asyncio.Lock wakes waiters in arrival order; one per event loop, since a lock belongs to its loop.
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Ask `request` in the terminal once the requests before it are answered, and return the answers."""
        terminal = self.terminal()
        menu = Menu(
            request,
            allow_custom_answers=self.allow_custom_answers,
            max_custom_answer_length=self.max_custom_answer_length,
            language=negotiate_terminal() if self.language is None else self.language,
        )
        self._menus.append(menu)
        self._update_waiting()
        try:
            async with self._queue():
                self._update_waiting()
                self._notify(terminal, menu)
                response = await run_menu(terminal, menu, self._set_redraw)
        finally:
            self._menus.remove(menu)
            self._update_waiting()
        who = os_user_at_host() if self.answered_by is True else self.answered_by or None
        return dataclasses.replace(response, answered_by=who)

    def _notify(self, terminal: Terminal, menu: Menu) -> None:
        if not (self.bell or self.desktop_notification):
            return
        title = menu.translator.gettext(NOTIFICATION_TITLE)
        body = ', '.join(question.header for question in menu.request.questions)
        # Inside tmux (it sets TMUX), the OSC sequences are wrapped so tmux passes them to the outer terminal.
        tmux = bool(os.environ.get('TMUX'))
        terminal.output.write_raw(
            notification_sequences(title, body, bell=self.bell, desktop=self.desktop_notification, tmux=tmux)
        )
        terminal.output.flush()

    def _set_redraw(self, redraw: Callable[[], None] | None) -> None:
        self._redraw = redraw

    def _update_waiting(self) -> None:
        # The menu shown is the oldest one still here; it tells how many wait behind it.
        if self._menus:
            self._menus[0].waiting = len(self._menus) - 1
        if self._redraw is not None:
            self._redraw()

    def close(self) -> None:
        """Close the terminal device if this answerer opened one; it opens again on the next request."""
        if self._terminal is not None:
            self._terminal.close()
            self._terminal = None

    async def __aenter__(self) -> TerminalAnswerer:
        self.terminal()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def keep_banner_off_the_menu() -> None:
    """Spend Pydantic AI's once-per-process first-run banner, so that it never prints just above the menu.

    The banner (the agent, the model, where to set up Logfire) goes to the terminal's stderr as the first run
    starts, and the menu of that run's first question is drawn right under it, on the same screen. Pydantic AI
    lets a caller that knows a banner would land in the wrong place spend the claim without showing anything
    (`claim_banner`); without that function (another version), `PYDANTIC_AI_NO_BANNER=1` or
    `pydantic_ai.BANNER_ENABLED = False` does the same, as the README says. Only once Pydantic AI is imported
    (an agent is about): `ask-user ask` draws the menu without it, and must not pay for importing it.
    """
    if 'pydantic_ai' not in sys.modules:
        return
    try:
        from pydantic_ai import _display  # pyright: ignore[reportPrivateUsage]
    except ImportError:  # pragma: no cover - a Pydantic AI without the banner
        return
    claim: object = getattr(_display, 'claim_banner', None)
    if callable(claim):
        claim()
