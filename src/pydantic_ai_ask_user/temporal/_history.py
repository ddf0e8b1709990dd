"""History on Temporal: what finished, read back from each workflow's own event history.

Decided: no second record. Everything a finished item was is already in its workflow's history, written by the
workflow itself: the memo upserts (`_visibility`) carry each question and each listed wait (with its approvals) and
say when it stopped waiting; the accepted Updates and the Signals carry the answers and decisions, with who gave
them; a memo upsert of its own carries the signed receipt of an answer (`RECEIPT_MEMO`, set by
`TemporalAnswerer.keep_receipt` after the question stopped waiting). So the history needs no activity, no database
and no change to a running workflow (old workflows have a history too), at the price of one history fetch per
workflow listed.

A page is a page of the workflows that ever listed a question (`AskUserQuestions` is set), in Temporal's visibility
order (running ones first, then the most recently closed), read `limit` workflows at a time: their finished items,
newest first within the page. Temporal cannot sort items across workflows by when they finished, so the order is
the workflows' and `total` counts what was found so far (`total_exact` is `False` while there is more).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import anyio
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecution
from temporalio.contrib.pydantic import pydantic_data_converter

from .._answers import AskUserRequest, AskUserResponse, response_from_result
from .._approvals import DEFAULT_DENIAL, IGNORED_DENIAL, RESPONDED_DENIAL, ApprovalDecision, PendingApproval
from .._history import FinishedRecord, approval_outcome, question_outcome
from .._question_store import BadCursorError, decode_cursor, encode_cursor
from ._visibility import (
    EVENTS_MEMO,
    QUESTIONS_ATTRIBUTE_NAME,
    RECEIPT_MEMO,
    WAITING_MEMO,
    ListedEvent,
    WaitingQuestion,
    wait_approvals,
    wait_questions,
)
from ._workflow import (
    RESOLVE_SIGNAL_NAME,
    RESOLVE_UPDATE_NAME,
    SIGNAL_NAME,
    UPDATE_NAME,
    EventResolution,
    QuestionAnswer,
)

__all__ = ('HISTORY_QUERY', 'finished_in', 'history_cursor', 'read_history_cursor', 'HISTORY_FETCHES')

HISTORY_QUERY = f'{QUESTIONS_ATTRIBUTE_NAME} IS NOT NULL'
"""The workflows that ever listed a question or an approval: the ones a history page reads."""

HISTORY_FETCHES = 8
"""How many workflow histories a page fetches at once."""

_CURSOR = 'temporal-history'

_QUESTIONS: Any = dict[str, WaitingQuestion] | None
_WAITS: Any = dict[str, ListedEvent] | None


def history_cursor(token: bytes | None, skip: int) -> str:
    """The cursor of the page that starts `skip` items into the visibility page of `token` (`None`: the first)."""
    return encode_cursor([_CURSOR, base64.b64encode(token or b'').decode(), skip])


def read_history_cursor(cursor: str) -> tuple[bytes | None, int]:
    """What `history_cursor` wrote; `BadCursorError` for any other cursor."""
    position = decode_cursor(cursor)
    if len(position) == 3 and position[0] == _CURSOR and isinstance(position[1], str):
        skip = position[2]
        if isinstance(skip, int) and not isinstance(skip, bool) and 0 <= skip < 1_000_000:
            try:
                token = base64.b64decode(position[1], validate=True)
            except (binascii.Error, ValueError):
                pass
            else:
                return token or None, skip
    raise BadCursorError('the cursor is not one this server gave out; start again from the first page')


@dataclass
class _Open:
    """A question or a listed wait that started waiting, and the answer or decision given to it so far."""

    asked_at: float
    request: AskUserRequest | None = None
    event: ListedEvent | None = None
    given: AskUserResponse | EventResolution | None = None


def _decode(payload: Payload, kind: Any) -> Any:
    [value] = pydantic_data_converter.payload_converter.from_payloads([payload], [kind])
    return value


def _seconds(event: HistoryEvent) -> float:
    return event.event_time.seconds + event.event_time.nanos / 1e9


def _decision(value: object, decided_by: str | None) -> ApprovalDecision:
    """The decision a resolution's `approvals` entry (`ApprovalDecision.result()`) stands for."""
    if value is True:
        return ApprovalDecision(approved=True, decided_by=decided_by)
    data = cast('dict[str, Any]', value) if isinstance(value, dict) else {}
    if data.get('kind') == 'tool-approved':
        return ApprovalDecision(approved=True, override_args=data.get('override_args'), decided_by=decided_by)
    message = data.get('message')
    message = message if isinstance(message, str) else None
    prefix = RESPONDED_DENIAL.split('{response}')[0]
    if message == IGNORED_DENIAL:
        return ApprovalDecision(approved=False, ignored=True, decided_by=decided_by)
    if message is not None and message.startswith(prefix):
        return ApprovalDecision(approved=False, response=message[len(prefix) :], decided_by=decided_by)
    reason = None if message in (None, DEFAULT_DENIAL) else message
    return ApprovalDecision(approved=False, reason=reason, decided_by=decided_by)


def _records(key: str, opened: _Open, finished_at: float, workflow_id: str) -> list[FinishedRecord]:
    """What finished when `key` stopped waiting at `finished_at`: a question, or every approval of a wait."""
    if opened.request is not None:
        response = opened.given if isinstance(opened.given, AskUserResponse) else None
        return [_question_record(opened.request, response, opened.asked_at, finished_at, workflow_id)]
    if opened.event is None:
        return []
    resolution = opened.given if isinstance(opened.given, EventResolution) else None
    payload = cast('dict[str, Any]', resolution.payload) if resolution and isinstance(resolution.payload, dict) else {}
    decided = cast('dict[str, Any]', payload.get('approvals') or {})
    names = cast('dict[str, Any]', payload.get('answered_by') or {})
    records: list[FinishedRecord] = []
    answered = cast('dict[str, Any]', payload.get('calls') or {})
    for request in wait_questions(opened.event.event):
        response = _wait_answer(request, resolution, answered, names)
        records.append(_question_record(request, response, opened.asked_at, finished_at, workflow_id))
    for approval in wait_approvals(opened.event.event, workflow_id, opened.asked_at):
        decision = _approval_decision(approval, resolution, decided, names)
        records.append(
            FinishedRecord(
                kind='approval',
                key=approval.key,
                outcome=approval_outcome(decision),
                by=None if decision is None else decision.decided_by,
                asked_at=opened.asked_at,
                finished_at=finished_at,
                approval=approval,
                decision=decision,
                workflow_id=workflow_id,
            )
        )
    return records


def _question_record(
    request: AskUserRequest, response: AskUserResponse | None, asked_at: float, finished_at: float, workflow_id: str
) -> FinishedRecord:
    """The history's record of a question that stopped waiting with `response` (`None`: withdrawn)."""
    return FinishedRecord(
        kind='question',
        key=request.key,
        outcome=question_outcome(response),
        by=None if response is None else response.answered_by,
        asked_at=asked_at,
        finished_at=finished_at,
        request=request,
        response=response,
        workflow_id=workflow_id,
    )


def _wait_answer(
    request: AskUserRequest, resolution: EventResolution | None, answered: dict[str, Any], names: dict[str, Any]
) -> AskUserResponse | None:
    """The answer a wait's resolution gave one of its AskUser questions (the result the model got, read back), or
    `None` when it gave none (the wait ended without one, or its result is an outcome such as `WITHDRAWN`).
    """
    if resolution is None or resolution.error is not None or request.id not in answered:
        return None
    try:
        response = response_from_result(request, answered[request.id])
    except ValueError:  # an outcome sentence, not a person's answer
        return None
    by = names.get(request.id)
    return replace(response, answered_by=by) if isinstance(by, str) else response


def _approval_decision(
    approval: PendingApproval,
    resolution: EventResolution | None,
    decided: dict[str, Any],
    names: dict[str, Any],
) -> ApprovalDecision | None:
    if resolution is None:
        return None
    by = names.get(approval.tool_call_id)
    by = by if isinstance(by, str) else None
    if resolution.error is not None:
        return ApprovalDecision(approved=False, reason=resolution.error, decided_by=by)
    if approval.tool_call_id not in decided:
        return None
    return _decision(decided[approval.tool_call_id], by)


def _read(events: Sequence[HistoryEvent], workflow_id: str) -> list[FinishedRecord]:
    """Every item of one workflow's history that finished, in the order they finished."""
    opened: dict[str, _Open] = {}
    records: list[FinishedRecord] = []
    waiting: set[str] = set()
    listed: set[str] = set()
    receipts: dict[str, Any] = {}
    last = 0.0
    for event in events:
        last = _seconds(event)
        if event.HasField('workflow_properties_modified_event_attributes'):
            fields = event.workflow_properties_modified_event_attributes.upserted_memo.fields
            if WAITING_MEMO in fields:
                questions = cast('dict[str, WaitingQuestion]', _decode(fields[WAITING_MEMO], _QUESTIONS) or {})
                for key, question in questions.items():
                    opened.setdefault(key, _Open(question.asked_at, request=question.request))
                for key in sorted(waiting - questions.keys()):
                    records.extend(_records(key, opened.pop(key), last, workflow_id))
                waiting = set(questions)
            if RECEIPT_MEMO in fields:
                kept = _decode(fields[RECEIPT_MEMO], Any)
                for key, receipt in cast('dict[str, Any]', kept).items() if isinstance(kept, dict) else ():
                    receipts.setdefault(str(key), receipt)  # the first kept for a question stays
            if EVENTS_MEMO in fields:
                waits = cast('dict[str, ListedEvent]', _decode(fields[EVENTS_MEMO], _WAITS) or {})
                for token, wait in waits.items():
                    opened.setdefault(token, _Open(wait.asked_at, event=wait))
                for token in sorted(listed - waits.keys()):
                    records.extend(_records(token, opened.pop(token), last, workflow_id))
                listed = set(waits)
        elif event.HasField('workflow_execution_update_accepted_event_attributes'):
            given = event.workflow_execution_update_accepted_event_attributes.accepted_request.input
            _take(opened, given.name, list(given.args.payloads))
        elif event.HasField('workflow_execution_signaled_event_attributes'):
            signal = event.workflow_execution_signaled_event_attributes
            _take(opened, signal.signal_name, list(signal.input.payloads))
    # Whatever still waited when the workflow ended (it failed, timed out, or was ended from outside) was withdrawn.
    ended = bool(events) and _ended(events[-1])
    for key in sorted(waiting | listed) if ended else ():
        records.extend(_records(key, opened.pop(key), last, workflow_id))
    if receipts:
        records = [
            replace(record, receipt=receipts[record.key])
            if record.kind == 'question' and record.key in receipts
            else record
            for record in records
        ]
    return records


def _ended(event: HistoryEvent) -> bool:
    return any(
        event.HasField(name)
        for name in (
            'workflow_execution_completed_event_attributes',
            'workflow_execution_failed_event_attributes',
            'workflow_execution_timed_out_event_attributes',
            'workflow_execution_terminated_event_attributes',
            'workflow_execution_canceled_event_attributes',
            'workflow_execution_continued_as_new_event_attributes',
        )
    )


def _take(opened: dict[str, _Open], name: str, payloads: list[Payload]) -> None:
    """Note the answer or decision an Update or a Signal carries, the first one for each wait (the one recorded)."""
    if not payloads:
        return
    try:
        if name in (UPDATE_NAME, SIGNAL_NAME):
            answer = cast(QuestionAnswer, _decode(payloads[0], QuestionAnswer))
            item, key = answer.response, answer.key
        elif name in (RESOLVE_UPDATE_NAME, RESOLVE_SIGNAL_NAME):
            resolution = cast(EventResolution, _decode(payloads[0], EventResolution))
            item, key = resolution, resolution.token
        else:
            return
    except Exception:  # a payload of another version, or a Signal that was dropped as unfit: nothing to show
        return
    if key in opened and opened[key].given is None:
        opened[key] = replace(opened[key], given=item)


async def finished_in(client: Client, executions: Sequence[WorkflowExecution]) -> list[FinishedRecord]:
    """The finished items of `executions`, each workflow's history fetched (`HISTORY_FETCHES` at a time)."""
    found: list[list[FinishedRecord]] = [[] for _ in executions]
    limiter = anyio.Semaphore(HISTORY_FETCHES)

    async def read(index: int, execution: WorkflowExecution) -> None:
        async with limiter:
            history = await client.get_workflow_handle(execution.id, run_id=execution.run_id).fetch_history()
        found[index] = _read(list(history.events), execution.id)

    async with anyio.create_task_group() as group:
        for index, execution in enumerate(executions):
            group.start_soon(read, index, execution)
    return [record for records in found for record in records]
