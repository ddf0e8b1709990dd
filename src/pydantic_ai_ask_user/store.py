"""Where questions wait, and the contract between that and the front ends that answer them.

A `QuestionStore` lists waiting questions (a page at a time, in deadline order, and counts them), takes answers and
tells of changes; the web inbox and `ask-user answer` work over any of them (the in-process hub, the DBOS database,
Temporal workflows).
"""

from __future__ import annotations

from ._audience import addressed_to
from ._question_store import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    AlreadyAnsweredError,
    BadCursorError,
    PendingFilter,
    PendingPage,
    PendingRecord,
    QuestionStore,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
    count_pending,
    page_pending,
)

__all__ = (
    'QuestionStore',
    'StoreEvent',
    'StoreError',
    'UnknownRequestError',
    'AlreadyAnsweredError',
    'WithdrawnError',
    'addressed_to',
    'PendingRecord',
    'PendingFilter',
    'PendingPage',
    'BadCursorError',
    'page_pending',
    'count_pending',
    'DEFAULT_PAGE_SIZE',
    'MAX_PAGE_SIZE',
)
