"""History: the questions and tool approvals that finished (answered, declined, decided, withdrawn), newest first.

Part of the store contract (`pydantic_ai_ask_user.store` exports it), in a module of its own so that the contract's
first module (`_question_store`, which the exit codes of `ask-user` load) stays free of the models. A store that keeps
what finished implements `HistoryStore.history_page`; the front ends call `page_history`, which raises
`NoHistoryError` for a store that keeps none (a `QuestionStore` written against an earlier version).

A finished item is kept only as long as its store keeps it: the in-process hub its last `remember_finished` items,
a DBOS database until `finished_retention_seconds` (a week by default) prunes it. That is where history ends.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, cast, runtime_checkable

from ._answers import AskUserRequest, AskUserResponse
from ._approvals import ApprovalDecision, PendingApproval
from ._audience import Person, QuestionContext, addressing_json, audience_includes, check_audience
from ._escalation import MAX_HANDOFF_NOTE_LENGTH, Handoff, check_note
from ._json import response_to_json
from ._plain_questions import questions_to_json
from ._question_store import (
    DEFAULT_PAGE_SIZE,
    BadCursorError,
    PendingPage,
    check_limit,
    decode_cursor,
    encode_cursor,
)
from ._receipt import ReceiptStatus, check_kept_receipt
from ._search import is_searching, search_takes

__all__ = (
    'MAX_NOTE_LENGTH',
    'check_handoff',
    'handoff_json',
    'FinishedRecord',
    'HistoryFilter',
    'ALL_FINISHED',
    'HistoryStore',
    'NoHistoryError',
    'ItemKind',
    'Outcome',
    'QUESTION_OUTCOMES',
    'APPROVAL_OUTCOMES',
    'question_outcome',
    'approval_outcome',
    'history_order',
    'encode_history_position',
    'decode_history_position',
    'visible_in_history',
    'page_history_in_memory',
    'page_history',
    'finished_json',
    'record_receipt',
)

ItemKind = Literal['question', 'approval']
"""What kind of item waited: a question (`AskUserRequest`) or a tool call waiting for approval (`PendingApproval`)."""

Outcome = Literal['answered', 'declined', 'withdrawn', 'approved', 'edited', 'denied', 'responded', 'ignored']
"""How an item finished: see `QUESTION_OUTCOMES` and `APPROVAL_OUTCOMES`."""

QUESTION_OUTCOMES: tuple[Outcome, ...] = ('answered', 'declined', 'withdrawn')
"""How a question finishes: answered; declined (`AskUserResponse.cancelled`); withdrawn (nobody answered: its run
timed out, was cancelled, or the server shut down)."""

APPROVAL_OUTCOMES: tuple[Outcome, ...] = ('approved', 'edited', 'denied', 'responded', 'ignored', 'withdrawn')
"""How an approval finishes: the five `ApprovalDecision.describe()` words, or withdrawn (its wait gave up)."""

_HISTORY_CURSOR = 'history'
"""The first element of every history cursor, so that a cursor of the pending lists is refused (`BadCursorError`)."""

_CURSOR_KEY = re.compile(r'[A-Za-z0-9_.:-]{1,200}')
"""What the item key inside a history cursor may look like (every question's and approval's key does)."""


class NoHistoryError(TypeError):
    """The store keeps no history (it has no `history_page`): a `QuestionStore` written against an earlier version.

    The web API answers it with 501 (`no_history`), the History page says so, `ask-user history` exits 4.
    """

    def __init__(self, store: object) -> None:
        super().__init__(f'this store ({type(store).__name__}) keeps no history of finished questions and approvals')


MAX_NOTE_LENGTH = MAX_HANDOFF_NOTE_LENGTH
"""The longest note of a hand-off (`Handoff.note`), in characters."""


def check_handoff(to: object, note: object) -> tuple[tuple[str, ...], str]:
    """The names (`to`, as an audience: sorted, each once) and the note of a hand-off, checked: `ValueError` (or
    `TypeError`) for no names, a bad name (see `check_audience`), or a note too long or holding control characters.
    """
    names = check_audience(to)
    if names is None:
        raise ValueError('a hand-off names at least one person or group')
    return names, check_note(note, MAX_NOTE_LENGTH)


def handoff_json(handoff: Handoff) -> dict[str, Any]:
    """A hand-off as the JSON API and `ask-user history --json` show it: `at`, `by`, `from` (`null`: anyone), `to`,
    `note`.
    """
    return {
        'at': handoff.at,
        'by': handoff.by,
        'from': None if handoff.from_audience is None else list(handoff.from_audience),
        'to': list(handoff.to_audience),
        'note': handoff.note,
    }


@dataclass(frozen=True)
class FinishedRecord:
    """One finished item of the history: a question answered, declined or withdrawn, or a tool approval decided or
    withdrawn, with who finished it, when, and what it was.

    A question has `request` (and, unless withdrawn, `response`); an approval has `approval` (and, unless withdrawn,
    `decision`).
    """

    kind: ItemKind
    """`'question'` or `'approval'`."""

    key: str
    """The item's key: `AskUserRequest.key` of a question, `PendingApproval.key` of an approval."""

    outcome: Outcome
    """How it finished: for a question `answered`, `declined` or `withdrawn`; for an approval `approved`, `edited`
    (approved with edited arguments), `denied`, `responded`, `ignored` or `withdrawn`."""

    by: str | None
    """Who answered or decided it (`AskUserResponse.answered_by`, `ApprovalDecision.decided_by`); `None` when the
    front end did not say, and for a withdrawn item (nobody finished it)."""

    asked_at: float
    """When it started waiting, in seconds since the epoch."""

    finished_at: float
    """When it finished, in seconds since the epoch: the history's order (newest first)."""

    request: AskUserRequest | None = None
    """The question, for a question; `None` for an approval."""

    response: AskUserResponse | None = None
    """The answer (or the decline) of an answered or declined question; `None` otherwise."""

    approval: PendingApproval | None = None
    """The tool call, for an approval; `None` for a question."""

    decision: ApprovalDecision | None = None
    """The decision of a decided approval (with the edited arguments, the reason or the reply); `None` otherwise."""

    workflow_id: str | None = None
    """The durable workflow (the run) that waited for it; `None` where there is none (the in-process hub)."""

    handoffs: tuple[Handoff, ...] = ()
    """Its hand-offs while it waited (`forward`), the oldest first: its audience is the one after the last."""

    receipt: Any = None
    """The signed receipt of a question's answer (`receipt_to_json`'s JSON: hashes, who and when, the signature) when
    the run signed one (`AskUser(receipt_key=...)`) and its answerer kept it (`ReceiptKeeper`); `None` otherwise.

    As the store holds it, unchecked: `record_receipt` reads and verifies it against `request` and `response`.
    """

    @property
    def audience(self) -> tuple[str, ...] | None:
        """Whom it was addressed to (`None`: anyone)."""
        item = self.request if self.request is not None else self.approval
        return None if item is None else item.audience

    @property
    def context(self) -> QuestionContext | None:
        """Where it came from, when the application said."""
        item = self.request if self.request is not None else self.approval
        return None if item is None else item.context


@dataclass(frozen=True)
class HistoryFilter:
    """Which finished items a history page takes: all of them unless narrowed.

    The times are absolute, so that every page of one listing takes the same items. The search fields (agent,
    title, conversation, addressee, free text) are matched as `_search.search_takes` says.
    """

    kind: ItemKind | None = None
    """Only questions, only approvals, or (`None`) both."""

    finished_before: float | None = None
    """Only items finished before this time (seconds since the epoch)."""

    finished_after: float | None = None
    """Only items finished at or after this time."""

    agent: str | None = None
    """Only items asked by this agent (`QuestionContext.agent_name`, exactly)."""

    title: str | None = None
    """Only items whose context title holds this text (any case)."""

    conversation: str | None = None
    """Only items of this conversation (`QuestionContext.conversation_id`, exactly)."""

    addressee: str | None = None
    """Only items whose audience names this name or group (an item for anyone names none)."""

    text: str | None = None
    """Free text, any case: only items whose questions (headers, questions, option labels), context title or summary,
    or, for an approval, tool name or arguments hold it."""

    def takes(self, record: FinishedRecord) -> bool:
        """Whether `record` passes this filter (for stores that filter in memory)."""
        if self.kind is not None and record.kind != self.kind:
            return False
        if self.finished_before is not None and not record.finished_at < self.finished_before:
            return False
        if self.finished_after is not None and not record.finished_at >= self.finished_after:
            return False
        return search_takes(self, record.request if record.request is not None else record.approval)

    @property
    def searching(self) -> bool:
        """Whether a search field narrows it (beyond the kind and times a store's SQL reads by its indexes)."""
        return is_searching(self)


ALL_FINISHED = HistoryFilter()
"""The filter that takes every finished item."""


@runtime_checkable
class HistoryStore(Protocol):
    """A store that keeps what finished, and pages it (the in-process hub, `DBOSQuestionStore`)."""

    async def history_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: HistoryFilter = ALL_FINISHED,
        visible_to: Person | None = None,
    ) -> PendingPage[FinishedRecord]:
        """At most `limit` finished items (1 to `MAX_PAGE_SIZE`) that pass `where`, the newest first (`history_order`:
        `finished_at`, then key, both descending), after `cursor` (a `next_cursor` of this method), with how many
        there are in all.

        With `visible_to`, only what that person may see (`visible_in_history`), in the page and its total alike;
        `None` is the administrative view. Keyset-paged: items that finish between two pages come before the first
        page and neither repeat nor skip another. `BadCursorError` for a cursor it did not write (a pending list's
        included), `ValueError` for a `limit` out of range.
        """
        ...


def question_outcome(response: AskUserResponse | None) -> Outcome:
    """How a question finished: `answered`, `declined` (a cancelled response) or (`None`) `withdrawn`."""
    if response is None:
        return 'withdrawn'
    return 'declined' if response.cancelled else 'answered'


def approval_outcome(decision: ApprovalDecision | None) -> Outcome:
    """How an approval finished: its decision's word (`ApprovalDecision.describe`) or (`None`) `withdrawn`."""
    return 'withdrawn' if decision is None else cast(Outcome, decision.describe())


def history_order(record: FinishedRecord) -> tuple[float, str]:
    """Where a finished item sorts (the history lists the greatest first): when it finished, then its key."""
    return (record.finished_at, record.key)


def encode_history_position(position: tuple[float, str]) -> str:
    """The cursor of a history page ending at the item whose `history_order` is `position`."""
    return encode_cursor([_HISTORY_CURSOR, *position])


def decode_history_position(cursor: str) -> tuple[float, str]:
    """The `history_order` a cursor of `encode_history_position` ends at; `BadCursorError` for any other cursor."""
    position = decode_cursor(cursor)
    if len(position) == 3 and position[0] == _HISTORY_CURSOR:
        _, finished_at, key = position
        if (
            isinstance(finished_at, (int, float))
            and not isinstance(finished_at, bool)
            and -1e15 < finished_at < 1e15
            and isinstance(key, str)
            and _CURSOR_KEY.fullmatch(key)
        ):
            return (float(finished_at), key)
    raise BadCursorError('the cursor is not one this server gave out; start again from the first page')


def visible_in_history(record: FinishedRecord, person: Person | None) -> bool:
    """Whether `person` may see `record` in the history: `None` (the administrator) and a person who sees all see
    everything; anyone else what was addressed to them (or to nobody in particular), as the pending list shows it,
    and what they answered or decided themselves (`by` is their name).
    """
    if audience_includes(record.audience, person):
        return True
    return person is not None and person.name is not None and record.by == person.name


def page_history_in_memory(
    records: Sequence[FinishedRecord],
    *,
    limit: int,
    cursor: str | None,
    where: HistoryFilter = ALL_FINISHED,
    visible_to: Person | None = None,
) -> PendingPage[FinishedRecord]:
    """A history page of `records` (every finished item a store holds, in any order), for stores that hold them in
    memory: only those `where` takes and `visible_to` may see, in the page and its total.
    """
    check_limit(limit)
    before = None if cursor is None else decode_history_position(cursor)
    taken = sorted(
        (record for record in records if where.takes(record) and visible_in_history(record, visible_to)),
        key=history_order,
        reverse=True,
    )
    following = [record for record in taken if before is None or history_order(record) < before]
    page = following[:limit]
    more = len(following) > limit and bool(page)
    return PendingPage(page, encode_history_position(history_order(page[-1])) if more else None, len(taken))


async def page_history(
    store: object,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    where: HistoryFilter = ALL_FINISHED,
    visible_to: Person | None = None,
) -> PendingPage[FinishedRecord]:
    """A page of `store`'s history (only what `visible_to` may see), newest first: its own `history_page`.

    `NoHistoryError` for a store that keeps none; `BadCursorError` and `ValueError` as `history_page` raises them.
    """
    paged = cast('Callable[..., Awaitable[PendingPage[FinishedRecord]]] | None', getattr(store, 'history_page', None))
    if paged is None:
        raise NoHistoryError(store)
    return await paged(limit=check_limit(limit), cursor=cursor, where=where, visible_to=visible_to)


def record_receipt(record: FinishedRecord, key: bytes | str | None) -> ReceiptStatus | None:
    """The kept receipt of `record` checked with `key` against its question and answer (`check_kept_receipt`);
    `not_checked` without a key; `None` when it has no receipt.

    The question is checked as it was asked: a hand-off changes whom a stored question is for, and the receipt
    signed whom it was for when the run asked it (the audience before the first hand-off).
    """
    if record.receipt is None:
        return None
    request = record.request
    if request is None:
        return ReceiptStatus('not_verified', record.receipt, None, 'an approval has no signed receipt')
    if record.handoffs:
        request = replace(request, audience=record.handoffs[0].from_audience)
    return check_kept_receipt(record.receipt, request, record.response, key)


def finished_json(record: FinishedRecord, *, receipt_key: bytes | str | None = None) -> dict[str, Any]:
    """A finished item as the JSON API and `ask-user history --json` show it.

    Every item: `kind`, `id` (its key), `outcome`, `by` (or `null`), `asked_at` and `finished_at` (seconds since the
    epoch), `workflow_id`, and `audience` and `context` when set. A question adds `tool_call_id`, `run_id`,
    `questions` (in the model's shape) and `response` (`{"answers": [...], "cancelled": ...}`, `null` when
    withdrawn); an approval adds the call (`token`, `tool_call_id`, `tool_name`, `args`, `run_id`) and `decision`
    (`{"approved": ..., "reason", "override_args", "response", "ignored"}` as each applies, `null` when withdrawn).
    An item handed on while it waited adds `handoffs` (each as `handoff_json` shows it, the oldest first).
    A question whose answer has a kept receipt adds `receipt` (as kept) and `receipt_check`: `verified` or
    `not_verified` (with `receipt_problem`) checked with `receipt_key`, `not_checked` without it.
    """
    data: dict[str, Any] = {
        'kind': record.kind,
        'id': record.key,
        'outcome': record.outcome,
        'by': record.by,
        'asked_at': record.asked_at,
        'finished_at': record.finished_at,
        'workflow_id': record.workflow_id,
    }
    if record.request is not None:
        request = record.request
        data |= {'tool_call_id': request.id, 'run_id': request.run_id, 'questions': questions_to_json(request)}
        data['response'] = None if record.response is None else response_to_json(record.response)
        data |= addressing_json(request)
    elif record.approval is not None:
        call = record.approval.call_json()
        del call['parameters']  # the tool's schema, for checking edited arguments: not part of what happened
        data |= {key: value for key, value in call.items() if key != 'id'}
        decision = None if record.decision is None else record.decision.to_json()
        if decision is not None:
            decision.pop('decided_by', None)  # it is `by`
        data['decision'] = decision
        data |= record.approval.addressing_json()
    if record.handoffs:
        data['handoffs'] = [handoff_json(handoff) for handoff in record.handoffs]
    if (status := record_receipt(record, receipt_key)) is not None:
        data |= {'receipt': status.kept, 'receipt_check': status.check}
        if status.problem is not None:
            data['receipt_problem'] = status.problem
    return data
