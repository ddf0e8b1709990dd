"""One listing of everything that waits for a person: the tool calls waiting for approval, then the questions, paged
together under one cursor and counted under one total.

What `ask-user pending` lists. Approvals come first, the oldest first (each holds a run at a tool call), then the
questions in their own order (the nearest deadline first). A page is filled from the approvals, then from the
questions; the cursor says which list the next page continues, so that every item is listed once, on one page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._approvals import PendingApproval
from ._audience import Person
from ._question_store import (
    EVERYTHING,
    ApprovalStore,
    PendingFilter,
    PendingPage,
    PendingRecord,
    QuestionStore,
    check_limit,
    decode_cursor,
    encode_cursor,
    page_approvals,
    page_pending,
)

__all__ = ('InboxPage', 'page_inbox')

_QUESTIONS_FROM_THE_START = encode_cursor(['questions'])
"""The cursor of a page that starts with the first question: the approvals ended exactly at the last page's end."""


@dataclass(frozen=True)
class InboxPage:
    """One page of what waits: approvals, then questions, and where the next page starts."""

    approvals: Sequence[PendingApproval]
    """The approvals of this page, the oldest first."""

    questions: Sequence[PendingRecord]
    """The questions of this page, in the questions' order (the nearest deadline first)."""

    next_cursor: str | None
    """Pass it back for the next page; `None` on the last page."""

    total: int
    """How many wait in all (approvals and questions) that the listing takes; where the store counts only near the
    number (`total_exact` false: Temporal counts its waiting workflows, approvals' included), that figure."""

    total_exact: bool = True
    """Whether `total` is exact (a store may estimate a very large count)."""

    approvals_total: int = 0
    """How many of `total` are approvals."""

    def __len__(self) -> int:
        return len(self.approvals) + len(self.questions)


async def page_inbox(
    store: QuestionStore | ApprovalStore,
    *,
    limit: int,
    cursor: str | None = None,
    where: PendingFilter = EVERYTHING,
    visible_to: Person | None = None,
) -> InboxPage:
    """A page of what waits in `store` (only what `visible_to` may see, and that `where` takes): its approvals when it
    holds them, then its questions. `BadCursorError` for a cursor no listing of this kind gave out.
    """
    check_limit(limit)
    approvals: PendingPage[PendingApproval] = PendingPage([], None, 0)
    in_approvals = cursor is None or _is_approval_cursor(cursor)
    if isinstance(store, ApprovalStore):
        # Past the approvals, one is read all the same, for their count.
        continued = cursor if in_approvals else None
        approvals = await _approvals(
            store, limit=limit if in_approvals else 1, cursor=continued, where=where, visible_to=visible_to
        )
    if in_approvals and approvals.next_cursor is not None:
        questions = await page_pending(store, limit=1, where=where, visible_to=visible_to)
        return _page(approvals.records, (), approvals.next_cursor, approvals, questions)
    shown_approvals: Sequence[PendingApproval] = approvals.records if in_approvals else ()
    room = limit - len(shown_approvals)
    question_cursor = None if in_approvals or cursor == _QUESTIONS_FROM_THE_START else cursor
    questions = await page_pending(
        store, limit=max(room, 1), cursor=question_cursor, where=where, visible_to=visible_to
    )
    if room == 0:  # the approvals filled the page: the questions start the next one
        following = _QUESTIONS_FROM_THE_START if questions.records else None
        return _page(shown_approvals, (), following, approvals, questions)
    return _page(shown_approvals, questions.records, questions.next_cursor, approvals, questions)


def _page(
    approvals: Sequence[PendingApproval],
    questions: Sequence[PendingRecord],
    next_cursor: str | None,
    approvals_page: PendingPage[PendingApproval],
    questions_page: PendingPage[PendingRecord],
) -> InboxPage:
    # A store that counts only near the number (Temporal counts its waiting workflows, approvals' included) gives
    # that one figure; an exact one is the sum of both lists.
    exact = questions_page.total_exact
    return InboxPage(
        approvals=approvals,
        questions=questions,
        next_cursor=next_cursor,
        total=approvals_page.total + questions_page.total if exact else questions_page.total,
        total_exact=questions_page.total_exact,
        approvals_total=approvals_page.total,
    )


def _is_approval_cursor(cursor: str) -> bool:
    """Whether `cursor` continues the approvals (else the questions); `BadCursorError` (from `decode_cursor`) when
    it is no cursor at all.
    """
    position = decode_cursor(cursor)
    return bool(position) and position[0] == 'approval'


async def _approvals(
    store: ApprovalStore, *, limit: int, cursor: str | None, where: PendingFilter, visible_to: Person | None
) -> PendingPage[PendingApproval]:
    """A page of the approvals `where` takes: the store's own paging when it takes every age, else paged here from
    the listing (approvals are few: each holds a run at a tool call).
    """
    return await page_approvals(store, limit=limit, cursor=cursor, visible_to=visible_to, where=where)
