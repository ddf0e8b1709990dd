"""`AskUserWorkflow`: the state of what a workflow waits for, and the Updates, Signals and Queries that reach it.

Two kinds of wait share it: a question of `TemporalAnswerer` (answered with a `QuestionAnswer`) and an
external event of `TemporalEventWaiter`, such as a waiting handler's approval (resolved with an
`EventResolution`). Each wait is held in the workflow instance while it lasts; an answer is checked against
the exact wait by the Update's validator, so a misfit is refused to its sender and never written to the
workflow's history, and checked again by the handler, since another answer may have been recorded since.
Everything here is rebuilt the same way on every replay: the waits by the workflow code that opens them,
the answers by the Updates and Signals in the history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace as replace_item
from typing import Any, Literal

from pydantic import JsonValue, TypeAdapter, ValidationError
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ToolReturn
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from temporalio import workflow
from temporalio.exceptions import ApplicationError

from .._answers import AskUserRequest, AskUserResponse, check_response, check_tool_result
from .._audience import check_audience
from .._escalation import Escalation, Handoff, escalation_note
from .._history import check_handoff
from .._text import printable
from .._wait_calls import WaitCalls
from ._visibility import WaitingEvent, addressed, publish_waits

__all__ = (
    'AskUserWorkflow',
    'QuestionAnswer',
    'EventResolution',
    'WaitingEvent',
    'UPDATE_NAME',
    'SIGNAL_NAME',
    'QUERY_NAME',
    'RESOLVE_UPDATE_NAME',
    'RESOLVE_SIGNAL_NAME',
    'EVENTS_QUERY_NAME',
    'FORWARD_UPDATE_NAME',
    'Forward',
    'wait_in_workflow',
    'audience_after',
    'workflow_instance',
)

UPDATE_NAME = 'ask_user.answer'
"""The Update that answers a waiting question: refused to its sender, and not recorded, unless it fits the question."""

SIGNAL_NAME = 'ask_user.answer_by_signal'
"""The Signal that answers a waiting question, for clients that cannot send Updates: an unfit one is dropped."""

QUERY_NAME = 'ask_user.pending'
"""The Query that lists the questions the workflow waits for, as `AskUserRequest`s."""

RESOLVE_UPDATE_NAME = 'ask_user.resolve'
"""The Update that resolves a waiting external event (an approval): refused to its sender, and not recorded, unless
it fits the wait."""

RESOLVE_SIGNAL_NAME = 'ask_user.resolve_by_signal'
"""The Signal that resolves a waiting external event, for clients that cannot send Updates: an unfit one is dropped."""

EVENTS_QUERY_NAME = 'ask_user.pending_events'
"""The Query that lists the external events the workflow waits for (approvals among them), as `WaitingEvent`s."""

FORWARD_UPDATE_NAME = 'ask_user.forward'
"""The Update that hands a waiting question, or a waiting external event (the approvals of a waiting handler's wait),
on to other people (`Forward`): refused to its sender, and not recorded, unless the wait is open. Returns the
`Handoff`."""

_MAX_ERROR_CHARS = 500
"""How much of a validation error a refusal quotes: the error echoes what the sender sent."""

_RESULTS = TypeAdapter(DeferredToolResults)


@dataclass(frozen=True)
class QuestionAnswer:
    """What a client sends to answer one waiting question: the question's `key` and the person's response."""

    key: str
    """`AskUserRequest.key` of the question answered: its run and its tool call."""

    response: AskUserResponse
    """What the person answered; checked against the exact question with `check_response` before it is recorded."""


@dataclass(frozen=True)
class EventResolution:
    """What a client sends to end one waiting external event: its token and the payload, or why there is none."""

    token: str
    """The token the wait handed out (`WaitingEvent.token`)."""

    payload: JsonValue = None
    """The JSON payload the wait returns. For a waiting handler's wait, the JSON form of the `DeferredToolResults`
    deciding exactly the calls it waits for (each answer to an AskUser question among them checked too)."""

    error: str | None = None
    """Set instead of a payload to end the wait with `ExternalEventError(error)`: the waiting handler then denies the
    pending approvals and fails the pending calls with this reason."""


@dataclass(frozen=True)
class Forward:
    """What a client sends to hand a waiting question or external event on (`TemporalQuestionStore.forward`)."""

    key: str
    """The question's `AskUserRequest.key`, or the external event's token (`WaitingEvent.token`)."""

    to: tuple[str, ...]
    """Whom it goes to: names or groups, as an audience (checked with `check_handoff`)."""

    note: str = ''
    """The note for the new addressees."""

    by: str | None = None
    """Who handed it on, when the front end knows."""

    replace: bool = True
    """`True`: addressed to `to` alone; `False`: `to` is added to whom it is addressed (anyone's stays anyone's)."""


@dataclass
class _Waits:
    """What one workflow waits for and what was accepted for it; rebuilt the same way on every replay."""

    pending: dict[str, AskUserRequest | WaitingEvent] = field(default_factory=dict[str, AskUserRequest | WaitingEvent])
    """The waits open now: questions by their key, external events by their token."""

    given: dict[str, AskUserResponse | EventResolution] = field(
        default_factory=dict[str, AskUserResponse | EventResolution]
    )
    """What was accepted for each wait, by the same keys."""

    listed: set[str] = field(default_factory=set[str])
    """The keys of the open waits shown in the workflow's search attribute and memo (`_visibility`)."""

    events_listed: bool = False
    """Whether an external event was ever listed here: from then on the memo carries the events' field."""

    handoffs: dict[str, list[Handoff]] = field(default_factory=dict[str, list[Handoff]])
    """The hand-offs of each open wait that has any, the oldest first."""

    def _open(self, key: str, kind: str) -> AskUserRequest | WaitingEvent:
        waiting = self.pending.get(key)
        if waiting is None or key in self.given:
            raise ValueError(f'no {kind} {printable(key)!r} waits for an answer in this workflow')
        return waiting

    def check_answer(self, answer: QuestionAnswer) -> None:
        """Raise `ValueError` unless `answer` answers a question waiting here, and fits it."""
        request = self._open(answer.key, 'question with key')
        if not isinstance(request, AskUserRequest):
            raise ValueError(f'no question with key {printable(answer.key)!r} waits for an answer in this workflow')
        check_response(request, answer.response)

    def check_resolution(self, resolution: EventResolution) -> None:
        """Raise `ValueError` unless `resolution` ends an external event waiting here, and fits it."""
        event = self._open(resolution.token, 'event with token')
        if not isinstance(event, WaitingEvent):
            raise ValueError(f'no event with token {printable(resolution.token)!r} waits in this workflow')
        if resolution.error is not None:
            if resolution.payload is not None:
                raise ValueError('a resolution has a payload or an error, not both')
            return
        if event.requests is not None:
            _check_decision(event.requests, resolution.payload)

    def record(self, key: str, given: AskUserResponse | EventResolution) -> None:
        """Record what was accepted for the wait of `key`."""
        self.given[key] = given

    def check_forward(self, forward: Forward) -> tuple[tuple[str, ...], str]:
        """The names and the note of `forward`, checked; `ValueError` unless its wait is open here."""
        self._open(forward.key, 'question or event with key')
        return check_handoff(list(forward.to), forward.note)

    def forward(self, forward: Forward) -> Handoff:
        """Hand the open wait of `forward.key` on, in workflow code: its audience changes, the hand-off is kept, and
        a listed wait is shown anew.
        """
        names, note = self.check_forward(forward)
        waiting = self.pending[forward.key]
        if isinstance(waiting, WaitingEvent):
            waiting = addressed(waiting)
        before = waiting.audience
        after = audience_after(before, names, replace=forward.replace)
        self.pending[forward.key] = replace_item(waiting, audience=after)
        handoff = Handoff(workflow.now().timestamp(), forward.by, before, after if after is not None else names, note)
        self.handoffs.setdefault(forward.key, []).append(handoff)
        if forward.key in self.listed:
            _publish(self)
        return handoff


def _check_decision(requests: DeferredToolRequests, payload: JsonValue) -> None:
    """Raise `ValueError` unless `payload` is the `DeferredToolResults` deciding exactly `requests`, answers fitting."""
    try:
        results = _RESULTS.validate_python(payload)
    except ValidationError as error:
        raise ValueError(
            f'the payload is not the JSON form of DeferredToolResults: {printable(str(error)[:_MAX_ERROR_CHARS])}'
        ) from None
    calls = WaitCalls.of(requests)
    if (problem := calls.problem(results)) is not None:
        raise ValueError(problem)
    # A result for an AskUser question must answer it: `AskUser` would fail the run on any other.
    for call_id, value in results.calls.items():
        request = calls.question(call_id)
        if request is None:
            continue
        result = value.return_value if isinstance(value, ToolReturn) else value
        try:
            check_tool_result(request, result)
        except ValueError as error:
            raise ValueError(f'call {printable(call_id)!r}: {error}') from None


_WAITS_ATTRIBUTE = '_ask_user_waits'
"""The attribute of the workflow instance that holds its `_Waits`."""


def _waits(instance: object) -> _Waits:
    waits = getattr(instance, _WAITS_ATTRIBUTE, None)
    if waits is None:
        waits = _Waits()
        setattr(instance, _WAITS_ATTRIBUTE, waits)
    return waits


def _refused(error: ValueError) -> ApplicationError:
    return ApplicationError(str(error), type='ValueError', non_retryable=True)


class AskUserWorkflow:
    """Base class of a workflow that waits for people: the Updates, Signals and Queries their answers arrive by.

    Needed by `TemporalAnswerer` (questions) and `TemporalExternalEvents` (the waiting handler's approvals and any
    `wait_for_external_event`):

    ```python {test="skip"}
    @workflow.defn
    class Deploy(AskUserWorkflow, PydanticAIWorkflow):
        ...
    ```
    """

    @workflow.update(name=UPDATE_NAME)
    def answer_question(self, answer: QuestionAnswer) -> None:
        """Record the answer to a waiting question; the validator has checked it against the question."""
        waits = _waits(self)
        try:
            # Checked again: another answer to the same question may have been recorded since this one was validated.
            waits.check_answer(answer)
        except ValueError as error:
            raise _refused(error) from None
        waits.record(answer.key, answer.response)

    @answer_question.validator
    def _refuse_an_answer_that_does_not_fit(self, answer: QuestionAnswer) -> None:
        # A rejected Update is never written to the workflow's history: the sender gets the error, the run nothing.
        _waits(self).check_answer(answer)

    @workflow.signal(name=SIGNAL_NAME)
    def answer_question_by_signal(self, answer: QuestionAnswer) -> None:
        """Record the answer to a waiting question if it fits; a Signal cannot be refused, so a misfit is dropped."""
        waits = _waits(self)
        try:
            waits.check_answer(answer)
        except ValueError as error:
            workflow.logger.warning('ask_user: a signalled answer was dropped: %s', error)
            return
        waits.record(answer.key, answer.response)

    @workflow.query(name=QUERY_NAME)
    def pending_questions(self) -> list[AskUserRequest]:
        """The questions this workflow waits for now."""
        return [waiting for waiting in _waits(self).pending.values() if isinstance(waiting, AskUserRequest)]

    @workflow.update(name=RESOLVE_UPDATE_NAME)
    def resolve_event(self, resolution: EventResolution) -> None:
        """Record the resolution of a waiting external event; the validator has checked it against the wait."""
        waits = _waits(self)
        try:
            waits.check_resolution(resolution)
        except ValueError as error:
            raise _refused(error) from None
        waits.record(resolution.token, resolution)

    @resolve_event.validator
    def _refuse_a_resolution_that_does_not_fit(self, resolution: EventResolution) -> None:
        _waits(self).check_resolution(resolution)

    @workflow.signal(name=RESOLVE_SIGNAL_NAME)
    def resolve_event_by_signal(self, resolution: EventResolution) -> None:
        """Record the resolution of a waiting external event if it fits; a misfit is dropped."""
        waits = _waits(self)
        try:
            waits.check_resolution(resolution)
        except ValueError as error:
            workflow.logger.warning('ask_user: a signalled resolution was dropped: %s', error)
            return
        waits.record(resolution.token, resolution)

    @workflow.query(name=EVENTS_QUERY_NAME)
    def pending_events(self) -> list[WaitingEvent]:
        """The external events this workflow waits for now."""
        return [waiting for waiting in _waits(self).pending.values() if isinstance(waiting, WaitingEvent)]

    @workflow.update(name=FORWARD_UPDATE_NAME)
    def forward_wait(self, forward: Forward) -> Handoff:
        """Hand a waiting question or external event on (`Forward`); the validator has checked that it waits."""
        try:
            return _waits(self).forward(forward)
        except ValueError as error:
            raise _refused(error) from None

    @forward_wait.validator
    def _refuse_a_forward_of_nothing_waiting(self, forward: Forward) -> None:
        _waits(self).check_forward(forward)


def workflow_instance(waiter: str) -> AskUserWorkflow:
    """The running workflow, which must inherit `AskUserWorkflow`; a `UserError` naming `waiter` and the fix if not."""
    if not workflow.in_workflow():
        raise UserError(
            f'{waiter} waits inside a Temporal workflow, and this agent runs outside one. Run the agent '
            'in a workflow (with TemporalDurability), or wait another way here.'
        )
    instance: Any = workflow.instance()
    if not isinstance(instance, AskUserWorkflow):
        name = type(instance).__name__
        raise UserError(
            f'{waiter} needs the workflow to inherit AskUserWorkflow, which receives the answers, but '
            f'{name} does not: declare it as class {name}(AskUserWorkflow, ...).'
        )
    return instance


async def wait_in_workflow(
    instance: AskUserWorkflow,
    key: str,
    waiting: AskUserRequest | WaitingEvent,
    timeout: float | None,
    *,
    listed: bool = False,
) -> AskUserResponse | EventResolution | None:
    """Open the wait `waiting` under `key` and wait for what an Update or Signal gives it; `None` at the deadline.

    The deadline is `workflow.wait_condition`'s durable timer: a replay after a crash waits only for what is left.
    `listed`: the wait (a question, or an external event) is shown in the workflow's search attribute and memo
    (`_visibility`) as it opens and closes, for `TemporalQuestionStore`.
    """
    waits = _waits(instance)
    waits.pending[key] = waiting
    if listed:
        waits.listed.add(key)
        waits.events_listed = waits.events_listed or isinstance(waiting, WaitingEvent)
        _publish(waits)
    try:
        if not await _wait_escalating(waits, key, waiting.escalate, timeout):
            return None
    finally:
        # No longer waiting: a late answer is refused to its sender, never accepted and dropped.
        # As it was addressed last (a hand-off may have changed whom it is for).
        current = waits.pending.pop(key, waiting)
        waits.handoffs.pop(key, None)
        if listed:
            waits.listed.discard(key)
            settled = 'answered' if key in waits.given else 'withdrawn'
            _publish(waits, (settled, current) if isinstance(current, AskUserRequest) else None)
    return waits.given[key]


async def _wait_escalating(waits: _Waits, key: str, steps: tuple[Escalation, ...], timeout: float | None) -> bool:
    """Wait until the wait of `key` is given something (`True`) or `timeout` passes (`False`), forwarding it by each
    step of `steps` as it falls due while it waits.

    Every wait is `workflow.wait_condition` with a durable timer: a worker killed before a step falls due, replaced
    after, replays to the same timer, which the server fired once; the step's forward is workflow code, replayed from
    the history, never applied twice. A step at or after `timeout` never falls due. Without steps, one timer as ever.
    """
    started = workflow.now().timestamp()
    for step in steps:
        if timeout is not None and step.after >= timeout:
            break
        left = step.after - (workflow.now().timestamp() - started)
        if left > 0:
            try:
                await workflow.wait_condition(lambda: key in waits.given, timeout=left)
                return True
            except TimeoutError:
                pass
        if key in waits.given or key not in waits.pending:
            return key in waits.given
        waits.forward(Forward(key, step.to, escalation_note(step), None, replace=step.replace))
    if key in waits.given:
        return True
    left = None if timeout is None else timeout - (workflow.now().timestamp() - started)
    if left is not None and left <= 0:
        return False
    try:
        await workflow.wait_condition(lambda: key in waits.given, timeout=left)
    except TimeoutError:
        return False
    return True


def audience_after(before: tuple[str, ...] | None, names: tuple[str, ...], *, replace: bool) -> tuple[str, ...] | None:
    """The audience after a hand-off to `names`: them alone, or (not `replace`) them added to `before`."""
    if replace:
        return names
    if before is None:
        return None  # anyone may answer it already
    return check_audience([*before, *names])


def _publish(waits: _Waits, settled: tuple[Literal['answered', 'withdrawn'], AskUserRequest] | None = None) -> None:
    """Show the listed waits open now (`TemporalQuestionStore` lists them), and the question `settled` names."""
    # In the order the waits opened (a set's order may differ on the worker that replays this).
    shown = {key: waiting for key, waiting in waits.pending.items() if key in waits.listed}
    questions = {key: waiting for key, waiting in shown.items() if isinstance(waiting, AskUserRequest)}
    events = {key: waiting for key, waiting in shown.items() if isinstance(waiting, WaitingEvent)}
    handoffs = {key: waits.handoffs[key] for key in shown if key in waits.handoffs}
    publish_waits(questions, settled, events=events if waits.events_listed else None, handoffs=handoffs)
