"""The inbox's rows: each waiting request, with when it was asked and which run asked it, when the store says."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from pydantic_ai_ask_user import AskUserRequest, Person
from pydantic_ai_ask_user._i18n import Translator, translator
from pydantic_ai_ask_user._text import utc_iso
from pydantic_ai_ask_user.store import QuestionStore, addressed_to

__all__ = ('InboxRow', 'PendingRecord', 'inbox_rows', 'ago', 'SHORT_ID_LENGTH', 'deadline_iso', 'time_left', 'clock')

SHORT_ID_LENGTH = 8
"""How many characters of a run id (or, for a request of no run, its tool call id) name the run: the random end.

Run ids are UUID7s, which share their time-ordered start, and tool call ids share theirs (`call_`, `toolu_01`,
`pyd_ai_`), so the end is what tells two apart.
"""


class PendingRecord(Protocol):
    """What a store's optional `pending_records()` returns per waiting request (as `DBOSQuestionStore` does)."""

    @property
    def request(self) -> AskUserRequest:
        """The request."""
        ...

    @property
    def created_at(self) -> float:
        """When it was asked, in seconds since the epoch."""
        ...

    @property
    def workflow_id(self) -> str | None:
        """The durable workflow (the run) waiting for it, if there is one."""
        ...


@dataclass(frozen=True)
class InboxRow:
    """One waiting request as the inbox lists it."""

    request: AskUserRequest
    """The request."""

    asked_at: float | None = None
    """When it was asked, in seconds since the epoch; `None` when the store does not say."""

    workflow_id: str | None = None
    """The durable workflow waiting for it; `None` when the store does not say."""

    @property
    def run(self) -> str:
        """What the inbox calls its run: the workflow id, else the end of the run id, else of the tool call id."""
        if self.workflow_id:
            return self.workflow_id
        name = self.request.run_id or self.request.id
        return name if len(name) <= SHORT_ID_LENGTH else '…' + name[-SHORT_ID_LENGTH:]

    @property
    def asked_iso(self) -> str | None:
        """`asked_at` as an ISO 8601 UTC time, for a `<time datetime>`."""
        if self.asked_at is None:
            return None
        return utc_iso(self.asked_at)

    def asked_ago(self, now: float | None = None, language: Translator | None = None) -> str | None:
        """How long ago it was asked, in words (`7 minutes ago`), in `language` (English by default)."""
        if self.asked_at is None:
            return None
        return ago((time.time() if now is None else now) - self.asked_at, language)

    @property
    def deadline_iso(self) -> str | None:
        """When the wait runs out, as an ISO 8601 UTC time; `None` when it has no limit."""
        return deadline_iso(self.request.deadline)

    def time_left(self, now: float | None = None) -> str | None:
        """How long until the wait runs out, as a clock (`4:05`, `1:02:03`); `None` when it has no limit."""
        return time_left(self.request.deadline, time.time() if now is None else now)


async def inbox_rows(store: QuestionStore, who: Person) -> list[InboxRow]:
    """The requests waiting for `who`, oldest first, with their time and run when the store has `pending_records()`.

    The store filters (`visible_to`); the rows are checked again here, so a store that filters loosely, or one
    written before stores took `visible_to` (it is then asked for every row), still shows nobody a question
    addressed to someone else.
    """
    records = cast('Callable[..., Awaitable[Sequence[PendingRecord]]] | None', getattr(store, 'pending_records', None))
    if records is None:
        listed = await store.pending(**_filter(store.pending, who))
        return [InboxRow(request) for request in listed if addressed_to(request, who)]
    return [
        InboxRow(record.request, record.created_at, record.workflow_id)
        for record in await records(**_filter(records, who))
        if addressed_to(record.request, who)
    ]


def _filter(method: Callable[..., object], who: Person) -> dict[str, Person]:
    """`{'visible_to': who}` when `method` takes it (every store of this library does), else nothing."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return {}
    takes = any(p.name == 'visible_to' or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    return {'visible_to': who} if takes else {}


def ago(seconds: float, language: Translator | None = None) -> str:
    """`seconds` as a relative time in words, rounded as the inbox script rounds it (`just now`, `3 hours ago`)."""
    t = language or translator('en')
    if seconds < 45:
        return t.gettext('just now')
    minutes = int(seconds / 60 + 0.5)
    if minutes < 60:
        return t.ngettext('{count} minute ago', '{count} minutes ago', minutes).format(count=minutes)
    hours = int(seconds / 3600 + 0.5)
    if hours < 24:
        return t.ngettext('{count} hour ago', '{count} hours ago', hours).format(count=hours)
    days = int(seconds / 86400 + 0.5)
    return t.ngettext('{count} day ago', '{count} days ago', days).format(count=days)


def deadline_iso(deadline: float | None) -> str | None:
    """A `time.time()` deadline as an ISO 8601 UTC time (`2026-12-03T16:30:00Z`); `None` for none."""
    if deadline is None:
        return None
    return utc_iso(deadline)


def time_left(deadline: float | None, now: float) -> str | None:
    """The time from `now` to `deadline` as a clock, as the page scripts count it down; `None` for no deadline."""
    if deadline is None:
        return None
    return clock(deadline - now)


def clock(seconds: float) -> str:
    """`seconds` (0 when negative) as `m:ss`, or `h:mm:ss` from an hour on: the same in every language."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f'{hours}:{minutes:02d}:{secs:02d}' if hours else f'{minutes}:{secs:02d}'
