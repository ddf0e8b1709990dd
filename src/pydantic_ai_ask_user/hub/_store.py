"""`QuestionHub`: the in-process store where this process's questions and approvals wait for a person."""

from __future__ import annotations

import bisect
import math
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import replace as replace_item
from typing import Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, Person, QuestionWithdrawn, check_response
from pydantic_ai_ask_user._approvals import ApprovalDecision, PendingApproval, check_decision
from pydantic_ai_ask_user._audience import audience_includes, check_audience
from pydantic_ai_ask_user._escalation import Escalation, Handoff, escalation_note
from pydantic_ai_ask_user._history import (
    ALL_FINISHED,
    FinishedRecord,
    HistoryFilter,
    approval_outcome,
    check_handoff,
    page_history_in_memory,
    question_outcome,
)
from pydantic_ai_ask_user._question_store import (
    EVERYTHING,
    approval_order,
    check_limit,
    decode_approval_position,
    decode_position,
    encode_approval_position,
    encode_position,
    order_key,
)
from pydantic_ai_ask_user._receipt import AnswerReceipt, receipt_from_json, receipt_to_json
from pydantic_ai_ask_user.checks import check_same_questions
from pydantic_ai_ask_user.store import (
    DEFAULT_PAGE_SIZE,
    AlreadyAnsweredError,
    PendingFilter,
    PendingPage,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
    addressed_to,
)

__all__ = ('QuestionHub', 'HubRecord', 'DEFAULT_REMEMBER_FINISHED', 'DEFAULT_SUBSCRIBER_BUFFER')

DEFAULT_REMEMBER_FINISHED = 1000
"""How many finished questions and approvals a hub remembers, so that a late answer gets 409 or 410 instead of 404;
its history (`history_page`) holds the same ones, so this is also where a hub's history ends."""

DEFAULT_SUBSCRIBER_BUFFER = 256
"""How many events an `events()` subscriber may fall behind before it is dropped (its iteration then ends)."""

_REPLAY = 64
"""How many of its latest events the hub keeps (few: each holds its question) for a stream resumed from one of them
(`events_after`, the web API's `Last-Event-ID`); one further behind, or from another server process, starts from now.
"""

_Outcome = Literal['answered', 'withdrawn']


@dataclass(frozen=True)
class HubRecord:
    """A waiting request of a `QuestionHub`, with when it was asked."""

    request: AskUserRequest
    """The request."""

    created_at: float
    """When it was first asked, in seconds since the epoch."""

    workflow_id: str | None = None
    """Always `None`: an in-process hub has no durable workflow (the field mirrors the durable store's records)."""


class _Waiting:
    """One pending request, and the event its asker waits on."""

    __slots__ = ('askers', 'created_at', 'done', 'order', 'request', 'response', 'withdrawn')

    def __init__(self, request: AskUserRequest) -> None:
        self.request = request
        self.created_at = time.time()
        self.order = order_key(request, self.created_at)
        self.done = anyio.Event()
        self.response: AskUserResponse | None = None
        self.withdrawn: str | None = None
        self.askers = 0


class QuestionHub:
    """Holds the requests of this process until a person answers them; a `QuestionStore`.

    `ask(request)` publishes a request and waits for its response. The web pages and the JSON API
    answer through the `QuestionStore` methods. A request leaves the hub as soon as it is answered,
    declined, or withdrawn (its asker was cancelled: a timeout, a cancelled run); the hub then only
    remembers it, in a bounded list, to tell a late answer that it came too late.

    That list is its history too (`history_page`, a `HistoryStore`): the last `remember_finished` items finished
    (questions and approvals together), each with what was asked, the answer or decision, who gave it and when; an
    older one is forgotten, and a hub forgets them all when its process ends.

    Everything is keyed by `AskUserRequest.key`, the question's run and tool call: providers repeat tool
    call ids across runs (`call_0`), and two runs that do are two questions, each waiting for its own answer.

    It is an `ApprovalStore` too: `ask_wait` publishes the questions and tool approvals of a waiting handler's wait
    (see `WebAnswerer.request_input`) and waits until each is answered or decided; the pages, the API and
    `decide`/`decide_wait` decide the approvals (approve, deny with a reason, approve with edited arguments checked
    against the tool's schema), each once, addressed like the questions.

    A waiting item can be handed on (`forward`), and hands itself on by its escalation policy
    (`AskUserRequest.escalate`, `PendingApproval.escalate`): the wait for it forwards it at each step's time, once.
    """

    def __init__(
        self, *, remember_finished: int = DEFAULT_REMEMBER_FINISHED, subscriber_buffer: int = DEFAULT_SUBSCRIBER_BUFFER
    ) -> None:
        if remember_finished < 0:
            raise ValueError(f'remember_finished must be 0 or more, not {remember_finished!r}')
        if subscriber_buffer < 1:
            raise ValueError(f'subscriber_buffer must be 1 or more, not {subscriber_buffer!r}')
        self._pending: dict[str, _Waiting] = {}
        # The `order_key` of every pending request, sorted: a page is a bisection and a slice, not a sort.
        self._order: list[tuple[float, float, str]] = []
        self._finished: OrderedDict[str, _Outcome] = OrderedDict()
        self._answered: dict[str, tuple[AskUserRequest, AskUserResponse]] = {}
        # Whom the remembered finished questions were for (the audience only, not the request: it is kept for
        # as long as the outcome), so an error about one can say so and a front end hide it from anyone else.
        self._finished_audiences: dict[str, tuple[str, ...] | None] = {}
        # What each remembered finished item was, who finished it and when: the history (`history_page`).
        self._history: dict[str, FinishedRecord] = {}
        self._remember = remember_finished
        self._buffer = subscriber_buffer
        self._subscribers: set[MemoryObjectSendStream[StoreEvent]] = set()
        # Each event's `position` is this hub's own prefix and its number, so a position of another process (a
        # restarted server) is never taken for one of these; the latest are kept for a resumed stream.
        self._epoch = secrets.token_hex(6)
        self._sequence = 0
        self._recent: deque[StoreEvent] = deque(maxlen=_REPLAY)
        # The tool calls waiting for a decision, by `PendingApproval.key`, and their `approval_order`, sorted.
        self._approvals: dict[str, _Deciding] = {}
        self._approval_order: list[tuple[float, str]] = []
        # The question keys of each open `ask_wait`, by its token: what `wait_items` and `decide_wait` take together.
        self._wait_questions: dict[str, tuple[str, ...]] = {}
        # The hand-offs of each pending item that has any (`forward`), the oldest first: moved into its history.
        self._handoffs: dict[str, list[Handoff]] = {}
        # How many steps of its escalation policy each pending item has had applied (`_escalating`).
        self._escalated: dict[str, int] = {}

    async def ask(self, request: AskUserRequest) -> AskUserResponse:
        """Publish `request` and wait until a person answers or declines it.

        Cancelling the wait withdraws the request: it leaves the hub and a `withdrawn` event is sent. An
        answer the hub accepted before a cancel scope's cancellation (`AskUser(timeout=...)`'s deadline)
        reached the wait is returned all the same, since the person was told it was taken; a bare
        `task.cancel()` is never swallowed, even then (see `_landed_despite`).

        A question is its `request.key`: its run and its tool call. Asking again under the key of a request
        that is still waiting (a replay of the same call in the same run) joins that wait, and under the key
        of an answered one returns its answer, so a replay never asks twice; but only for the very questions
        it answers: other questions under that key raise `DifferentQuestionsError`, never the stale answer.
        Another run that repeats the tool call id has another key: a question of its own.
        """
        key = request.key
        waiting = self._pending.get(key)
        if waiting is None:
            if (answered := self._answered.get(key)) is not None:
                stored, response = answered
                check_same_questions(request, stored)
                return response
            self._forget(key)
            waiting = _Waiting(request)
            self._pending[key] = waiting
            bisect.insort(self._order, waiting.order)
            self._publish(StoreEvent('requested', key, request))
        else:
            check_same_questions(request, waiting.request)
        waiting.askers += 1
        try:
            await self._escalating(key, waiting.created_at, waiting.request.escalate, waiting.done)
        except anyio.get_cancelled_exc_class():
            if waiting.response is not None and _landed_despite():
                return waiting.response
            raise
        finally:
            waiting.askers -= 1
            if waiting.response is None and waiting.withdrawn is None and not waiting.askers:
                self._remove(waiting)
                self._finish(waiting, 'withdrawn')
        if waiting.withdrawn is not None:
            raise QuestionWithdrawn(waiting.withdrawn)
        response = waiting.response
        if response is None:  # pragma: no cover - `done` is only set once a response is stored
            raise RuntimeError(f'request {key!r} was released without a response')
        return response

    def __len__(self) -> int:
        """How many requests are waiting."""
        return len(self._pending)

    async def pending(self, *, visible_to: Person | None = None) -> Sequence[AskUserRequest]:
        """Every request waiting for an answer, oldest first; with `visible_to`, only those that person may see."""
        return tuple(waiting.request for waiting in self._pending.values() if addressed_to(waiting.request, visible_to))

    async def pending_records(self, *, visible_to: Person | None = None) -> Sequence[HubRecord]:
        """Every waiting request with when it was first asked, oldest first (the inbox shows the time)."""
        return tuple(
            HubRecord(waiting.request, waiting.created_at)
            for waiting in self._pending.values()
            if addressed_to(waiting.request, visible_to)
        )

    async def pending_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: PendingFilter = EVERYTHING,
        visible_to: Person | None = None,
    ) -> PendingPage[HubRecord]:
        """A page of the waiting requests in deadline order (the `QuestionStore` contract), from a sorted index; with
        `visible_to`, only that person's, in the page and its count.
        """
        check_limit(limit)
        start = 0 if cursor is None else bisect.bisect_right(self._order, decode_position(cursor))
        records: list[HubRecord] = []
        more = False
        for index in range(start, len(self._order)):
            waiting = self._pending[self._order[index][2]]
            if not (
                where.takes_item(waiting.request, waiting.created_at) and addressed_to(waiting.request, visible_to)
            ):
                continue
            if len(records) == limit:
                more = True
                break
            records.append(HubRecord(waiting.request, waiting.created_at))
        last = records[-1] if more else None
        next_cursor = None if last is None else encode_position(order_key(last.request, last.created_at))
        return PendingPage(records, next_cursor, await self.count_pending(where, visible_to=visible_to))

    async def count_pending(self, where: PendingFilter = EVERYTHING, *, visible_to: Person | None = None) -> int:
        """How many requests wait (that pass `where`, and that `visible_to` may see)."""
        if where == EVERYTHING and (visible_to is None or visible_to.sees_all):
            return len(self._pending)
        return sum(
            1
            for waiting in self._pending.values()
            if where.takes_item(waiting.request, waiting.created_at) and addressed_to(waiting.request, visible_to)
        )

    async def get(self, key: str) -> AskUserRequest:
        """The pending request with this key (`AskUserRequest.key`); the store errors when it is not pending."""
        return self._waiting(key).request

    async def respond(self, key: str, response: AskUserResponse) -> None:
        """Answer or decline a pending request, once; `ValueError` if the response does not fit it."""
        waiting = self._waiting(key)
        check_response(waiting.request, response)
        waiting.response = response
        self._remove(waiting)
        self._finish(waiting, 'answered', response)
        waiting.done.set()

    def withdraw_all(self, reason: str = 'the server is shutting down') -> int:
        """Withdraw every waiting request, e.g. as the server shuts down; returns how many there were.

        Each asker's wait raises `QuestionWithdrawn(reason)`, so `AskUser` gives its model `WITHDRAWN` (never
        `TIMED_OUT` or `DECLINED`: nobody answered, nobody declined) and the run goes on at once instead of
        waiting for its timeout. A `withdrawn` event is sent for each; a late answer gets `WithdrawnError`.
        Requests asked afterwards wait as usual (`WebAnswerer.close` refuses them too). Every tool approval still
        waiting is withdrawn too (counted in the number returned): its `ask_wait` goes on, with it undecided.
        """
        withdrawn = tuple(self._pending.values())
        self._pending.clear()
        self._order.clear()
        for waiting in withdrawn:
            waiting.withdrawn = reason
            self._finish(waiting, 'withdrawn')
            waiting.done.set()
        undecided = tuple(self._approvals.values())
        for deciding in undecided:  # their waits go on at once, each undecided call denied
            self._end_approval(deciding, 'withdrawn')
        return len(withdrawn) + len(undecided)

    def events(self) -> AsyncIterator[StoreEvent]:
        """Events from this call on: requested, answered, withdrawn. Stop iterating (or `aclose()`) to unsubscribe."""
        return self.events_after(None)

    def events_after(self, position: str | None) -> AsyncIterator[StoreEvent]:
        """`events()`, first replaying those after `position` (a `StoreEvent.position` of this hub's) when the hub
        still holds every one of them (its latest 64); from now on otherwise.
        """
        send, receive = anyio.create_memory_object_stream[StoreEvent](max_buffer_size=self._buffer)
        self._subscribers.add(send)
        return _Subscription(self, send, receive, self._after(position))

    def _after(self, position: str | None) -> deque[StoreEvent]:
        prefix, _, number = (position or '').partition('-')
        if prefix != self._epoch or not number.isdigit() or len(number) > 18 or not self._recent:
            return deque()
        after = int(number)
        oldest = int((self._recent[0].position or '-0').rpartition('-')[2])
        if after > self._sequence or after < oldest - 1:
            return deque()  # not one of ours, or older than what is kept: from now on
        return deque(event for event in self._recent if int((event.position or '-0').rpartition('-')[2]) > after)

    def close(self) -> None:
        """End every `events()` iteration, e.g. before the server shuts down; pending requests keep waiting."""
        for send in tuple(self._subscribers):
            self._unsubscribe(send)

    def _remove(self, waiting: _Waiting) -> None:
        del self._pending[waiting.request.key]
        index = bisect.bisect_left(self._order, waiting.order)
        if index < len(self._order) and self._order[index] == waiting.order:
            del self._order[index]

    def _waiting(self, request_id: str) -> _Waiting:
        waiting = self._pending.get(request_id)
        if waiting is not None:
            return waiting
        outcome = self._finished.get(request_id)
        if outcome == 'answered':
            raise _with_audience(AlreadyAnsweredError(request_id), self._finished_audiences, request_id)
        if outcome == 'withdrawn':
            raise _with_audience(WithdrawnError(request_id), self._finished_audiences, request_id)
        raise UnknownRequestError(request_id)

    def _finish(self, waiting: _Waiting, outcome: _Outcome, response: AskUserResponse | None = None) -> None:
        request = waiting.request
        request_id = request.key
        if self._remember:
            self._finished[request_id] = outcome
            self._finished_audiences[request_id] = request.audience
            if response is not None:
                # With the request it answers: a replay asking other questions under this key is refused, not answered.
                self._answered[request_id] = (request, response)
            self._history[request_id] = FinishedRecord(
                kind='question',
                key=request_id,
                outcome=question_outcome(response),
                by=None if response is None else response.answered_by,
                asked_at=waiting.created_at,
                finished_at=time.time(),
                request=request,
                response=response,
                handoffs=tuple(self._handoffs.pop(request_id, ())),
            )
            self._forget_oldest()
        self._handoffs.pop(request_id, None)
        self._escalated.pop(request_id, None)
        # With its request, so each stream decides from the event who may hear of it (no list of keys per stream).
        self._publish(StoreEvent(outcome, request_id, request))

    def _forget_oldest(self) -> None:
        while len(self._finished) > self._remember:
            forgotten, _ = self._finished.popitem(last=False)
            self._answered.pop(forgotten, None)
            self._finished_audiences.pop(forgotten, None)
            self._history.pop(forgotten, None)

    def _forget(self, key: str) -> None:
        """Forget that `key` finished: it waits again (asked again after it was withdrawn, a replay)."""
        self._finished.pop(key, None)
        self._finished_audiences.pop(key, None)
        self._history.pop(key, None)

    async def history_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: HistoryFilter = ALL_FINISHED,
        visible_to: Person | None = None,
    ) -> PendingPage[FinishedRecord]:
        """A page of the finished questions and approvals this hub remembers (its last `remember_finished`), the
        newest first (the `HistoryStore` contract); with `visible_to`, only what that person may see.
        """
        return page_history_in_memory(
            tuple(self._history.values()), limit=limit, cursor=cursor, where=where, visible_to=visible_to
        )

    async def keep_receipt(self, request: AskUserRequest, receipt: AnswerReceipt, /) -> AnswerReceipt:
        """Keep `receipt`, the run's signed receipt of the answer to `request`, with its finished record (the history
        shows it); returns the one kept: the first, when the record has one already (a replay signs again).

        Kept as `receipt_to_json` writes it, for as long as the hub remembers the record; a question it no longer
        remembers (or never answered) keeps nothing, and `receipt` is returned as it is.
        """
        record = self._history.get(request.key)
        if record is None or record.kind != 'question' or record.response is None:
            return receipt
        if record.receipt is not None:
            try:
                return receipt_from_json(record.receipt)
            except ValueError:  # pragma: no cover - the hub writes only what `receipt_to_json` makes
                return receipt
        self._history[request.key] = replace(record, receipt=receipt_to_json(receipt))
        return receipt

    # Hand-offs.

    async def forward(
        self, key: str, to: Sequence[str], *, note: str = '', by: str | None = None, replace: bool = True
    ) -> Handoff:
        """Hand the pending question or approval `key` on to `to` (names or groups, as an audience), with `note`.

        `replace=True` addresses it to `to` alone; `replace=False` adds `to` to whom it is addressed (one addressed
        to anyone stays so). The run waiting for it is not touched: it still gets one answer, from whoever answers.
        Returns the `Handoff`, kept with the item (`handoffs`) and in its history. `ValueError` for bad names or a
        bad note (`check_handoff`); the store errors when it is not pending. A `withdrawn` event with the item as
        it was addressed (its former addressees drop it) and a `requested` event as it is now are sent.
        """
        names, note = check_handoff(to, note)
        return self._forward(key, names, note, by, replace=replace)

    def _forward(self, key: str, names: tuple[str, ...], note: str, by: str | None, *, replace: bool) -> Handoff:
        if (waiting := self._pending.get(key)) is not None:
            before = waiting.request.audience
            after = _audience_after(before, names, replace=replace)
            previous = waiting.request
            waiting.request = replace_item(previous, audience=after)
            handoff = Handoff(time.time(), by, before, after if after is not None else names, note)
            self._handoffs.setdefault(key, []).append(handoff)
            self._publish(StoreEvent('withdrawn', key, previous))
            self._publish(StoreEvent('requested', key, waiting.request))
            return handoff
        if (deciding := self._approvals.get(key)) is not None:
            before = deciding.approval.audience
            after = _audience_after(before, names, replace=replace)
            previous_approval = deciding.approval
            deciding.approval = replace_item(previous_approval, audience=after)
            handoff = Handoff(time.time(), by, before, after if after is not None else names, note)
            self._handoffs.setdefault(key, []).append(handoff)
            self._publish(StoreEvent('withdrawn', key, item='approval', approval=previous_approval))
            self._publish(StoreEvent('requested', key, item='approval', approval=deciding.approval))
            return handoff
        self._waiting(key)  # raises the store error of a finished (or unknown) item
        raise UnknownRequestError(key)  # pragma: no cover - `_waiting` raised

    async def _escalating(self, key: str, asked_at: float, steps: Sequence[Escalation], done: anyio.Event) -> None:
        """Wait until `done`; meanwhile forward the item `key` by each step of its escalation policy as it falls due.

        The timer is the wait itself (no task of its own), so it ends with it. Each step is applied once, by whichever
        wait of the item reaches it first (a replay joining the wait counts the same steps).
        """
        for index, step in enumerate(steps):
            delay = asked_at + step.after - time.time()
            if delay > 0:
                with anyio.move_on_after(delay):
                    await done.wait()
            if done.is_set():
                return
            if self._escalated.get(key, 0) > index:
                continue
            self._escalated[key] = index + 1
            try:
                self._forward(key, step.to, escalation_note(step), None, replace=step.replace)
            except StoreError:  # pragma: no cover - a pending item's wait is open; nothing to escalate otherwise
                return
        await done.wait()

    async def handoffs(self, key: str) -> Sequence[Handoff]:
        """The hand-offs of the pending question or approval `key`, the oldest first (none if it has none)."""
        return tuple(self._handoffs.get(key, ()))

    # The tool approvals (`ApprovalStore`).

    async def ask_wait(
        self,
        token: str,
        questions: Sequence[AskUserRequest],
        approvals: Sequence[PendingApproval],
        *,
        timeout: float | None = None,
    ) -> tuple[
        list[tuple[AskUserRequest, AskUserResponse | None]], list[tuple[PendingApproval, ApprovalDecision | None]]
    ]:
        """Publish the questions and tool approvals of the wait of `token` (each approval's `token`) and wait until
        every one is answered or decided; each with its answer or decision, `None` for one withdrawn (`withdraw_all`).

        After `timeout` seconds, every item still open is withdrawn (`None`), and the items answered or decided in
        time keep their answers and decisions. Cancelling the wait (a cancelled run) withdraws every item still open
        too: a `withdrawn` event each, and a late decision gets `WithdrawnError`. An approval already waiting under
        its key (a replay) is joined.
        """
        if any(approval.token != token for approval in approvals):
            raise ValueError('every approval of a wait carries its token')
        waiting = [self._open_approval(approval) for approval in approvals]
        self._wait_questions[token] = tuple(request.key for request in questions)
        answers: dict[str, AskUserResponse | None] = {}

        async def answer(request: AskUserRequest) -> None:
            try:
                answers[request.key] = await self.ask(request)
            except QuestionWithdrawn:
                answers[request.key] = None

        try:
            with anyio.move_on_after(math.inf if timeout is None else timeout):
                async with anyio.create_task_group() as group:
                    for request in questions:
                        group.start_soon(answer, request)
                    for deciding in waiting:
                        approval = deciding.approval
                        group.start_soon(
                            self._escalating, approval.key, approval.created_at, approval.escalate, deciding.done
                        )
        finally:
            self._wait_questions.pop(token, None)
            for deciding in waiting:
                if not deciding.done.is_set():
                    self._end_approval(deciding, 'withdrawn')
        return (
            [(request, answers.get(request.key)) for request in questions],
            [(deciding.approval, deciding.decision) for deciding in waiting],
        )

    def _open_approval(self, approval: PendingApproval) -> _Deciding:
        key = approval.key
        if (deciding := self._approvals.get(key)) is not None:
            return deciding
        self._forget(key)
        deciding = _Deciding(approval if approval.created_at else replace(approval, created_at=time.time()))
        self._approvals[key] = deciding
        bisect.insort(self._approval_order, approval_order(deciding.approval))
        self._publish(StoreEvent('requested', key, item='approval', approval=deciding.approval))
        return deciding

    def _end_approval(self, deciding: _Deciding, outcome: _Outcome) -> None:
        key = deciding.approval.key
        del self._approvals[key]
        order = approval_order(deciding.approval)
        index = bisect.bisect_left(self._approval_order, order)
        if index < len(self._approval_order) and self._approval_order[index] == order:
            del self._approval_order[index]
        if self._remember:
            self._finished[key] = outcome
            self._finished_audiences[key] = deciding.approval.audience
            decision = deciding.decision if outcome == 'answered' else None
            self._history[key] = FinishedRecord(
                kind='approval',
                key=key,
                outcome=approval_outcome(decision),
                by=None if decision is None else decision.decided_by,
                asked_at=deciding.approval.created_at,
                finished_at=time.time(),
                approval=deciding.approval,
                decision=decision,
                handoffs=tuple(self._handoffs.pop(key, ())),
            )
            self._forget_oldest()
        self._handoffs.pop(key, None)
        self._escalated.pop(key, None)
        deciding.done.set()
        self._publish(StoreEvent(outcome, key, item='approval', approval=deciding.approval))

    async def pending_approvals(self, *, visible_to: Person | None = None) -> Sequence[PendingApproval]:
        """Every tool call waiting for a decision, oldest first; with `visible_to`, only those addressed to them."""
        return [
            self._approvals[key].approval
            for _, key in self._approval_order
            if audience_includes(self._approvals[key].approval.audience, visible_to)
        ]

    async def pending_approvals_page(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None, visible_to: Person | None = None
    ) -> PendingPage[PendingApproval]:
        """A page of the tool calls waiting for a decision, the oldest first, from a sorted index (a bisection and
        a walk, as `pending_page`); with `visible_to`, only theirs, in the page and its count.
        """
        check_limit(limit)
        start = 0 if cursor is None else bisect.bisect_right(self._approval_order, decode_approval_position(cursor))
        page: list[PendingApproval] = []
        more = False
        for _, key in self._approval_order[start:]:
            approval = self._approvals[key].approval
            if not audience_includes(approval.audience, visible_to):
                continue
            if len(page) == limit:
                more = True
                break
            page.append(approval)
        next_cursor = encode_approval_position(approval_order(page[-1])) if more else None
        if visible_to is None or visible_to.sees_all:
            total = len(self._approvals)
        else:
            total = sum(1 for each in self._approvals.values() if audience_includes(each.approval.audience, visible_to))
        return PendingPage(page, next_cursor, total)

    async def get_approval(self, key: str) -> PendingApproval:
        """The pending approval `key`; `AlreadyAnsweredError` once decided, `WithdrawnError` once its wait gave up."""
        return self._deciding(key).approval

    def _deciding(self, key: str) -> _Deciding:
        deciding = self._approvals.get(key)
        if deciding is not None:
            return deciding
        outcome = self._finished.get(key)
        if outcome == 'answered':
            raise _with_audience(AlreadyAnsweredError(key), self._finished_audiences, key)
        if outcome == 'withdrawn':
            raise _with_audience(WithdrawnError(key), self._finished_audiences, key)
        raise UnknownRequestError(key)

    async def wait_items(self, token: str) -> tuple[Sequence[PendingApproval], Sequence[AskUserRequest]]:
        """The approvals and questions of the open wait of `token` still pending (none when it is over)."""
        approvals = [each.approval for each in self._approvals.values() if each.approval.token == token]
        keys = self._wait_questions.get(token, ())
        return approvals, [self._pending[key].request for key in keys if key in self._pending]

    def _wait_of(self, request_id: str) -> str | None:
        """The token of the open wait that asked the question `request_id`; `None` for a question of no wait."""
        return next((token for token, keys in self._wait_questions.items() if request_id in keys), None)

    async def decide(self, key: str, decision: ApprovalDecision) -> None:
        """Decide the pending approval `key`, once; `ValueError` (nothing recorded) if `check_decision` refuses it."""
        await self.decide_wait({key: decision}, {})

    async def decide_wait(
        self, approvals: Mapping[str, ApprovalDecision], answers: Mapping[str, AskUserResponse]
    ) -> None:
        """Decide these approvals and answer these questions of one wait together: every one is checked first,
        then all are recorded at once (no other task runs between), or none is.
        """
        if not approvals and not answers:
            raise ValueError('nothing to decide: give at least one approval or answer')
        deciding = {key: self._deciding(key) for key in approvals}
        waiting = {key: self._waiting(key) for key in answers}
        for key, decision in approvals.items():
            check_decision(deciding[key].approval, decision)
        for key, response in answers.items():
            check_response(waiting[key].request, response)
        if len(approvals) + len(answers) > 1:
            tokens = {each.approval.token for each in deciding.values()} | {self._wait_of(key) for key in answers}
            if len(tokens) > 1 or None in tokens:
                raise ValueError('the items decided together must all be of one wait (their run is waiting on it)')
        for key, decision in approvals.items():
            deciding[key].decision = decision
            self._end_approval(deciding[key], 'answered')
        for key, response in answers.items():
            await self.respond(key, response)

    def _publish(self, event: StoreEvent) -> None:
        self._sequence += 1
        event = replace(event, position=f'{self._epoch}-{self._sequence}')
        self._recent.append(event)
        for send in tuple(self._subscribers):
            try:
                send.send_nowait(event)
            except anyio.WouldBlock:
                # A subscriber that fell this far behind has lost events; ending its stream tells it to resync.
                self._unsubscribe(send)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._unsubscribe(send)

    def _unsubscribe(self, send: MemoryObjectSendStream[StoreEvent]) -> None:
        self._subscribers.discard(send)
        send.close()


class _Deciding:
    """One tool call waiting for a decision, and the event its wait waits on."""

    __slots__ = ('approval', 'decision', 'done')

    def __init__(self, approval: PendingApproval) -> None:
        self.approval = approval
        self.decision: ApprovalDecision | None = None
        self.done = anyio.Event()


def _audience_after(before: tuple[str, ...] | None, names: tuple[str, ...], *, replace: bool) -> tuple[str, ...] | None:
    """The audience after a hand-off to `names`: them alone, or (not `replace`) them added to `before`."""
    if replace:
        return names
    if before is None:
        return None  # anyone may answer it already
    return check_audience([*before, *names])


def _with_audience(error: StoreError, audiences: dict[str, tuple[str, ...] | None], request_id: str) -> StoreError:
    """`error`, saying whom the request was for when the hub remembers it."""
    return error.for_audience(audiences[request_id]) if request_id in audiences else error


def _landed_despite() -> bool:
    """Whether an answer that landed as the wait was cancelled may be returned instead of the cancellation.

    Only when the cancellation comes from a cancel scope (`AskUser(timeout=...)`'s `move_on_after`, a task
    group): anyio cancels such a scope at every checkpoint until it exits, so if it was meant for an outer
    scope, not the wait, it is delivered again at the caller's next await, and nothing is lost. A bare
    `task.cancel()` (asyncio's, edge-triggered) is delivered once: returning would swallow it and the task
    would run on, so it is re-raised, and the answer stays recorded in the hub as answered.
    """
    return anyio.current_effective_deadline() == -math.inf


class _Subscription:
    """The iterator `QuestionHub.events()` returns; subscribed from the moment it is created."""

    __slots__ = ('_hub', '_receive', '_replay', '_send')

    def __init__(
        self,
        hub: QuestionHub,
        send: MemoryObjectSendStream[StoreEvent],
        receive: MemoryObjectReceiveStream[StoreEvent],
        replay: deque[StoreEvent] | None = None,
    ) -> None:
        self._hub = hub
        self._send = send
        self._receive = receive
        self._replay = replay if replay is not None else deque[StoreEvent]()

    def __aiter__(self) -> _Subscription:
        return self

    async def __anext__(self) -> StoreEvent:
        if self._replay:
            return self._replay.popleft()
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            await self.aclose()
            raise StopAsyncIteration from None

    def end(self) -> None:
        """End the iteration from any task: a waiting `__anext__` raises `StopAsyncIteration`, and so does the next."""
        self._replay.clear()
        self._hub._unsubscribe(self._send)  # pyright: ignore[reportPrivateUsage]

    async def aclose(self) -> None:
        """Unsubscribe."""
        self.end()
        self._receive.close()
