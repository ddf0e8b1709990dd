"""Where questions wait, and the contract between that and the front ends that answer them.

A `QuestionStore` lists waiting questions (a page at a time, in deadline order, and counts them), takes answers and
tells of changes; the web inbox and `ask-user answer` work over any of them (the in-process hub, the DBOS database,
Temporal workflows).

The durable stores and the in-process hub (for `WebAnswerer.request_input`) hold a second kind of pending item
beside the questions: a tool call waiting for approval (`PendingApproval`), listed a page at a time
(`page_approvals`), decided with an `ApprovalDecision` (approve, deny with a reason, or approve with edited
arguments checked against the tool's schema) through the `ApprovalStore` methods.

The rules every front end follows over a store are here too: what a typed id means (`find_waiting`: a tool
call id, or a unique beginning of a key) how a whole wait is decided from JSON (`read_wait_decision`: every
item, or none), and one listing of everything that waits, approvals and questions under one cursor and one total
(`page_inbox`).

What finished is history (`page_history`, `HistoryStore`): each answered, declined, decided or withdrawn item
(`FinishedRecord`), newest first, for as long as its store keeps it, with the signed receipt of an answer where the
run signed one and its answerer kept it (`record_receipt` checks it).
"""

from __future__ import annotations

from ._approvals import ApprovalDecision, PendingApproval, check_decision
from ._audience import addressed_to
from ._escalation import Escalation, Handoff, escalation_note
from ._history import (
    MAX_NOTE_LENGTH,
    FinishedRecord,
    HistoryFilter,
    HistoryStore,
    NoHistoryError,
    finished_json,
    handoff_json,
    page_history,
    record_receipt,
)
from ._inbox_page import InboxPage, page_inbox
from ._lookup import MIN_PREFIX, WaitingMatches, find_waiting
from ._question_store import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    AlreadyAnsweredError,
    ApprovalStore,
    BadCursorError,
    PendingFilter,
    PendingPage,
    PendingRecord,
    QuestionStore,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    UnreadableRequestError,
    WithdrawnError,
    count_pending,
    page_approvals,
    page_pending,
)
from ._wait_decision import read_wait_decision

__all__ = (
    'QuestionStore',
    'StoreEvent',
    'StoreError',
    'UnknownRequestError',
    'AlreadyAnsweredError',
    'WithdrawnError',
    'UnreadableRequestError',
    'addressed_to',
    'ApprovalStore',
    'PendingApproval',
    'ApprovalDecision',
    'check_decision',
    'PendingRecord',
    'PendingFilter',
    'PendingPage',
    'BadCursorError',
    'page_pending',
    'page_approvals',
    'count_pending',
    'DEFAULT_PAGE_SIZE',
    'MAX_PAGE_SIZE',
    'MIN_PREFIX',
    'WaitingMatches',
    'find_waiting',
    'read_wait_decision',
    'InboxPage',
    'page_inbox',
    'FinishedRecord',
    'Handoff',
    'Escalation',
    'escalation_note',
    'MAX_NOTE_LENGTH',
    'finished_json',
    'handoff_json',
    'HistoryFilter',
    'HistoryStore',
    'NoHistoryError',
    'page_history',
    'record_receipt',
)
