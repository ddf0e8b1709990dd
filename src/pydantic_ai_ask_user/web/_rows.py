"""The inbox's rows: each waiting request, with when it was asked and which run asked it, when the store says."""

from __future__ import annotations

import math
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic_ai_ask_user import AskUserRequest, Person
from pydantic_ai_ask_user._i18n import Translator, translator
from pydantic_ai_ask_user._search import check_search_value
from pydantic_ai_ask_user._text import utc_iso
from pydantic_ai_ask_user.store import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    HistoryFilter,
    PendingFilter,
    PendingRecord,
    QuestionStore,
    addressed_to,
    page_pending,
)

__all__ = (
    'InboxRow',
    'InboxPage',
    'PendingRecord',
    'inbox_page',
    'paging_from_query',
    'search_from_query',
    'kind_from_query',
    'search_query',
    'search_link',
    'SEARCH_PARAMETERS',
    'limit_from_query',
    'BadPaging',
    'ago',
    'SHORT_ID_LENGTH',
    'deadline_iso',
    'time_left',
    'clock',
)

SHORT_ID_LENGTH = 8
"""How many characters of a run id (or, for a request of no run, its tool call id) name the run: the random end.

Run ids are UUID7s, which share their time-ordered start, and tool call ids share theirs (`call_`, `toolu_01`,
`pyd_ai_`), so the end is what tells two apart.
"""


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


@dataclass(frozen=True)
class InboxPage:
    """One page of the inbox: its rows, where the next page starts, and how many questions wait in all."""

    rows: Sequence[InboxRow]
    """The waiting requests of this page, in the store's order (the nearest deadline first)."""

    next_cursor: str | None
    """The cursor of the next page; `None` on the last."""

    total: int
    """How many questions wait."""

    total_exact: bool = True
    """Whether `total` is exact (Temporal counts waiting workflows)."""


class BadPaging(ValueError):
    """A `limit`, `older_than` or `newer_than` in a query string that cannot be used; answered with 400."""


async def inbox_page(
    store: QuestionStore,
    who: Person,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    where: PendingFilter | None = None,
) -> InboxPage:
    """A page of the requests waiting for `who`, with their time and run; `BadCursorError` for a cursor the store did
    not write.

    The store filters the page and its count (`visible_to`); the rows are checked again here, so a store that filters
    loosely still shows nobody a question addressed to someone else (its page is then short by it).
    """
    page = await page_pending(store, limit=limit, cursor=cursor, where=where or PendingFilter(), visible_to=who)
    # A store that does not say when a request was asked (`created_at` 0) shows no time.
    rows = [
        InboxRow(record.request, record.created_at or None, record.workflow_id)
        for record in page.records
        if addressed_to(record.request, who)
    ]
    return InboxPage(rows, page.next_cursor, page.total, page.total_exact)


def paging_from_query(query: Mapping[str, str], *, now: float) -> tuple[int, str | None, PendingFilter]:
    """The page size, cursor and filter of `?limit=&cursor=&older_than=&newer_than=` (ages in seconds).

    Raises `BadPaging`, whose message says what is wrong, for a value that is not one.
    """
    limit = limit_from_query(query)
    ages: dict[str, float | None] = {}
    for name in ('older_than', 'newer_than'):
        text = query.get(name, '')
        ages[name] = None
        if text:
            try:
                seconds = float(text[:30])
            except ValueError:
                seconds = math.nan
            if not (math.isfinite(seconds) and seconds >= 0):
                raise BadPaging(f'{name} must be a number of seconds, 0 or more')
            ages[name] = now - seconds
    cursor = query.get('cursor') or None
    search = search_from_query(query)
    kind = kind_from_query(query)
    return (
        limit,
        cursor,
        PendingFilter(asked_before=ages['older_than'], asked_after=ages['newer_than'], kind=kind, **search),
    )


SEARCH_PARAMETERS = (
    ('agent', 'agent'),
    ('title', 'title'),
    ('conversation', 'conversation'),
    ('addressee', 'addressee'),
    ('q', 'text'),
)
"""The query parameters of a search, each with the filter field it sets (`q` is the free text)."""


def search_from_query(query: Mapping[str, str]) -> dict[str, str | None]:
    """The search fields of `?agent=&title=&conversation=&addressee=&q=`, by field name; `BadPaging` for a value too
    long or with a control or format character.
    """
    fields: dict[str, str | None] = {}
    for parameter, name in SEARCH_PARAMETERS:
        try:
            fields[name] = check_search_value(parameter, query.get(parameter))
        except ValueError as error:
            raise BadPaging(str(error)) from None
    return fields


def kind_from_query(query: Mapping[str, str]) -> Literal['question', 'approval'] | None:
    """`?kind=`: `question`, `approval` or (empty, absent) `None`; `BadPaging` for anything else."""
    kind = query.get('kind', '')
    if kind == 'question' or kind == 'approval':
        return kind
    if kind:
        raise BadPaging('kind must be question or approval')
    return None


def search_link(where: PendingFilter | HistoryFilter) -> str:
    """`where`'s search and kind as the end of a query string (`&agent=...&q=...`, URL-encoded; empty when none), for
    the links to the next page: the page keeps the filter it was drawn with.
    """
    kept = search_query(where)
    return '&' + urllib.parse.urlencode(kept) if kept else ''


def search_query(where: PendingFilter | HistoryFilter) -> dict[str, str]:
    """The query parameters that repeat `where`'s search and kind (for the next page's link): only those set."""
    kept: dict[str, str] = {}
    if where.kind is not None:
        kept['kind'] = where.kind
    for parameter, name in SEARCH_PARAMETERS:
        value = getattr(where, name)
        if value is not None:
            kept[parameter] = value
    return kept


def limit_from_query(query: Mapping[str, str]) -> int:
    """The page size of `?limit=` (`DEFAULT_PAGE_SIZE` when not given); `BadPaging` for one that is not 1 to 500."""
    text = query.get('limit', '')
    if not text:
        return DEFAULT_PAGE_SIZE
    digits = text.lstrip('0')  # read whole: `000001000` is 1000, not the 1 its first six digits say
    if not (text.isascii() and text.isdigit()) or len(digits) > 3 or not 1 <= int(digits or 0) <= MAX_PAGE_SIZE:
        raise BadPaging(f'limit must be a whole number from 1 to {MAX_PAGE_SIZE}')
    return int(digits)


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
