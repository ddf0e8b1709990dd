"""`TemporalQuestionStore`: the questions waiting in Temporal workflows, listed and answered from any process."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypeVar, cast

import anyio
from temporalio.api.common.v1 import Payload
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WorkflowExecution,
    WorkflowExecutionAsyncIterator,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError, RPCStatusCode

from .._answers import AskUserRequest, AskUserResponse, ask_user_result, check_response
from .._approvals import ApprovalDecision, PendingApproval, check_decision
from .._audience import Person, addressed_to, audience_from_json, audience_includes
from .._escalation import Handoff
from .._history import (
    ALL_FINISHED,
    FinishedRecord,
    HistoryFilter,
    check_handoff,
    history_order,
    visible_in_history,
)
from .._question_store import (
    DEFAULT_PAGE_SIZE,
    EVERYTHING,
    AlreadyAnsweredError,
    BadCursorError,
    PendingFilter,
    PendingPage,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
    check_limit,
    decode_cursor,
    encode_cursor,
    order_key,
    page_approvals_in_memory,
)
from ._events import NotATemporalTokenError, pending_temporal_events, resolve_temporal_event, token_workflow_id
from ._history import HISTORY_QUERY, finished_in, history_cursor, read_history_cursor
from ._visibility import (
    EVENTS_MEMO,
    QUESTIONS_ATTRIBUTE,
    QUESTIONS_ATTRIBUTE_NAME,
    SETTLED_MEMO,
    WAITING,
    WAITING_MEMO,
    ListedEvent,
    WaitingEvent,
    WaitingQuestion,
    addressed,
    entry,
    wait_approvals,
    wait_questions,
)
from ._workflow import FORWARD_UPDATE_NAME, UPDATE_NAME, Forward, QuestionAnswer

__all__ = (
    'TemporalQuestionStore',
    'TemporalRecord',
    'TemporalEventRecord',
    'MissingSearchAttributeError',
    'DEFAULT_ADDRESS',
    'DEFAULT_NAMESPACE',
)

_T = TypeVar('_T')
_E = TypeVar('_E', bound=StoreError)

DEFAULT_ADDRESS = 'localhost:7233'
"""Where a Temporal server listens unless told otherwise (`temporal server start-dev`'s default)."""

DEFAULT_NAMESPACE = 'default'
"""The namespace used unless told otherwise."""

DEFAULT_EVENTS_POLL_SECONDS = 0.5
"""How often `events()` lists the waiting questions to find what changed."""

_KEY = re.compile(r'[A-Za-z0-9_.:-]{1,200}')
"""What a question's key may look like (as in the web inbox's paths); anything else is unknown without a lookup, and
never reaches a visibility query as text."""

_UPDATE_ATTEMPTS = 5
"""How many times `respond` sends its Update while the question still waits and no reply came."""

_UNREACHABLE = frozenset({RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED})
"""The RPC statuses that mean the server cannot be reached (now), not that the request was wrong."""


@dataclass(frozen=True)
class TemporalRecord:
    """A question waiting in a Temporal workflow, as `pending_records()` lists it."""

    request: AskUserRequest
    """The question."""

    workflow_id: str
    """The workflow waiting for the answer."""

    created_at: float
    """When the workflow started waiting for it, in seconds since the epoch."""

    handoffs: tuple[Handoff, ...] = ()
    """Its hand-offs (`forward`, escalation), the oldest first."""

    @property
    def key(self) -> str:
        """The question's key, its id in the store."""
        return self.request.key


@dataclass(frozen=True)
class TemporalEventRecord:
    """An external event (such as an approval) waiting in a Temporal workflow, as `pending_events()` lists it."""

    event: WaitingEvent
    """The wait: its token, its name, and the calls it decides."""

    workflow_id: str
    """The workflow waiting for the resolution."""

    created_at: float
    """When the workflow started waiting, in seconds since the epoch."""

    handoffs: tuple[Handoff, ...] = ()
    """The wait's hand-offs (`forward` of one of its approvals, escalation), the oldest first."""

    @property
    def key(self) -> str:
        """The wait's token, what `resolve_temporal_event` (and `ask-user resolve --temporal`) takes."""
        return self.event.token

    @property
    def addressed_event(self) -> WaitingEvent:
        """The wait with whom it is for and where it comes from: as it was addressed when it opened, or, for a wait
        opened by an earlier version, as its first AskUser question is (anyone's without one).
        """
        return addressed(self.event)


@dataclass
class TemporalQuestionStore:
    """The answering side of `TemporalAnswerer`: a `QuestionStore` over every workflow of one namespace.

    Use it from any process with a connection to the Temporal server (the web inbox: `create_app(store)`; the
    command line: `ask-user pending --temporal ADDRESS`). Waiting questions are found through Temporal's visibility
    (the search attribute `AskUserQuestions`, which the namespace must have, and each workflow's memo; see
    `_visibility`); an answer is checked with `check_response` and sent as the Update `UPDATE_NAME`, which the
    workflow validates again and accepts once. A question is identified by its `AskUserRequest.key` (its run and its
    tool call), never by the tool call id alone.
    """

    address: str = DEFAULT_ADDRESS
    """The Temporal server's `host:port`."""

    _: KW_ONLY

    namespace: str = DEFAULT_NAMESPACE
    """The namespace the workflows run in."""

    client: Client | None = None
    """A connected client to use instead of connecting to `address` and `namespace`."""

    events_poll_seconds: float = DEFAULT_EVENTS_POLL_SECONDS
    """How often `events()` lists the waiting questions."""

    _connected: Client | None = field(default=None, init=False, repr=False, compare=False)

    def close(self) -> None:
        """Forget the connection this store made (a client passed in is the caller's); it connects again if used."""
        self._connected = None

    async def connected(self) -> Client:
        """The client this store uses: `client`, or its own connection to `address` and `namespace`, made once.

        `ConnectionError` when the server cannot be reached.
        """
        if self.client is not None:
            return self.client
        if self._connected is None:
            try:
                self._connected = await Client.connect(
                    self.address, namespace=self.namespace, data_converter=pydantic_data_converter
                )
            except RuntimeError as error:  # the SDK's "Failed client connect: ..."
                raise ConnectionError(f'cannot connect to the Temporal server at {self.address}: {error}') from error
        return self._connected

    async def pending(self, *, visible_to: Person | None = None) -> Sequence[AskUserRequest]:
        """Every question waiting for an answer, across the namespace's running workflows, oldest first.

        With `visible_to`, only the questions that person may see (`addressed_to`).
        """
        return [record.request for record in await self.pending_records(visible_to=visible_to)]

    async def pending_records(self, *, visible_to: Person | None = None) -> Sequence[TemporalRecord]:
        """Every waiting question with its workflow and when it was asked, oldest first; `visible_to`'s, if given."""
        waits = await self.pending_waits(visible_to=visible_to)
        return [record for record in waits if isinstance(record, TemporalRecord)]

    async def pending_events(self, *, visible_to: Person | None = None) -> Sequence[TemporalEventRecord]:
        """Every listed external event waiting (`TemporalExternalEvents`: the waiting handler's approvals and deferred
        calls), with its workflow and when it opened, oldest first; with `visible_to`, only the waits addressed to
        that person (`addressed`: as `TemporalExternalEvents(audience=...)` or the wait's first question says).
        """
        waits = await self.pending_waits(visible_to=visible_to)
        return [record for record in waits if isinstance(record, TemporalEventRecord)]

    async def pending_waits(
        self, *, visible_to: Person | None = None
    ) -> Sequence[TemporalRecord | TemporalEventRecord]:
        """Every waiting question and listed external event, oldest first, in one listing of the namespace.

        With `visible_to`, only the questions and waits that person may see: the audience travels in each
        workflow's memo with the question (and with the wait: `addressed`) and is filtered here, after listing.
        """
        records: list[TemporalRecord | TemporalEventRecord] = []
        async with _reaching(self):
            client = await self.connected()
            async for execution in client.list_workflows(_WAITING_QUERY):
                records.extend(record for record in _waiting(execution) if addressed_to(record.request, visible_to))
                records.extend(
                    record
                    for record in waiting_events(execution)
                    if audience_includes(addressed(record.event).audience, visible_to)
                )
        records.sort(key=lambda record: (record.created_at, record.workflow_id))
        return records

    async def pending_approvals(self, *, visible_to: Person | None = None) -> Sequence[PendingApproval]:
        """Every tool call waiting for approval in a listed waiting handler's wait of the namespace, oldest first;
        `visible_to`'s only, if given.

        An approval is addressed and in context as its wait is (`TemporalExternalEvents(audience=..., context=...)`,
        else the wait's first AskUser question's; an approval of a wait with neither is anyone's).
        """
        return [
            approval
            for record in await self.pending_events(visible_to=visible_to)
            for approval in wait_approvals(record.event, record.workflow_id, record.created_at)
        ]

    async def pending_approvals_page(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None, visible_to: Person | None = None
    ) -> PendingPage[PendingApproval]:
        """A page of `pending_approvals`, the oldest first. Paged from the listing: Temporal's visibility lists the
        waiting workflows (whose memo holds their approvals) and cannot sort or filter inside a memo.
        """
        listed = await self.pending_approvals(visible_to=visible_to)
        return page_approvals_in_memory(listed, limit=limit, cursor=cursor, visible_to=visible_to)

    async def get_approval(self, key: str) -> PendingApproval:
        """The pending approval with this key (`PendingApproval.key`); `UnknownRequestError` when none is listed
        (a decided approval's wait is over, and is no longer listed).
        """
        found = [approval for approval in await self.pending_approvals() if approval.key == key]
        if not found:
            raise UnknownRequestError(key[:200])
        return found[0]

    async def wait_items(self, token: str) -> tuple[Sequence[PendingApproval], Sequence[AskUserRequest]]:
        """The approvals and AskUser questions of the wait of `token`, as its workflow lists them (none when over)."""
        for record in await self.pending_events():
            if record.key == token:
                return wait_approvals(record.event, record.workflow_id, record.created_at), wait_questions(record.event)
        return [], []

    async def decide(self, key: str, decision: ApprovalDecision) -> None:
        """Decide the pending approval `key`. A Temporal wait is resolved whole, by one Update: `ValueError` when
        the wait holds other items too (decide them together, `decide_wait`).
        """
        await self.decide_wait({key: decision}, {})

    async def decide_wait(
        self, approvals: Mapping[str, ApprovalDecision], answers: Mapping[str, AskUserResponse]
    ) -> None:
        """Decide every item of one wait at once: each checked here, then the whole `DeferredToolResults` sent as
        the Update the workflow validates again and accepts once (or refuses, and records nothing).

        `ValueError` when an item is refused, the items are not all of one wait, or they leave one of its items out;
        `UnknownRequestError` for an item no listed wait holds; `WithdrawnError` when the wait ended meanwhile.
        """
        if not approvals and not answers:
            raise ValueError('nothing to decide: give at least one approval or answer')
        wanted = {*approvals, *answers}
        for record in await self.pending_events():
            items = {
                approval.key: approval
                for approval in wait_approvals(record.event, record.workflow_id, record.created_at)
            }
            questions = {request.key: request for request in wait_questions(record.event)}
            if wanted.isdisjoint(items.keys() | questions.keys()):
                continue
            if not wanted <= items.keys() | questions.keys():
                raise ValueError('the items decided together must all be of one wait (their run is waiting on it)')
            left_out = [item for item in [*items, *questions] if item not in wanted]
            requests = record.event.requests
            if left_out or requests is None or len(requests.calls) != len(questions):
                raise ValueError(
                    'a Temporal wait is decided whole, by one update: decide all its items together '
                    f'(`ask-user answer {record.key} --json FILE`)'
                )
            results: dict[str, Any] = {'approvals': {}, 'calls': {}, 'answered_by': {}}
            for key, decision in approvals.items():
                check_decision(items[key], decision)
                results['approvals'][items[key].tool_call_id] = decision.result()
                if decision.decided_by is not None:
                    results['answered_by'][items[key].tool_call_id] = decision.decided_by
            for key, response in answers.items():
                request = questions[key]
                results['calls'][request.id] = ask_user_result(request, response)  # checks it
                if response.answered_by is not None:
                    results['answered_by'][request.id] = response.answered_by
            try:
                async with _reaching(self):
                    await resolve_temporal_event(await self.connected(), record.key, results)
            except WorkflowUpdateFailedError as error:
                raise WithdrawnError(next(iter(wanted))) from error  # its wait ended, or it was decided meanwhile
            return
        raise UnknownRequestError(next(iter(wanted))[:200])

    async def pending_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: PendingFilter = EVERYTHING,
        visible_to: Person | None = None,
    ) -> PendingPage[TemporalRecord]:
        """A page of the waiting questions, as Temporal's visibility list pages them, and how many workflows wait.

        Temporal lists workflows, in its own order (the most recently started first), a page at a time behind an
        opaque token, and cannot sort by a memo: so a page is `limit` waiting workflows, its questions sorted by
        deadline within it (a workflow waiting on several parallel questions brings them all), and `total` counts
        waiting workflows (`total_exact` is `False`). The ages of `where` and the audience (`visible_to`) are applied
        to each page as it comes, so a filtered page may be shorter than `limit` and still have a next one. With
        `visible_to`, Temporal cannot count by the memo's audience: `total` is then that person's questions, counted
        by listing them (`count_pending`, exact), never the others' workflows.
        """
        check_limit(limit)
        token = None if cursor is None else _page_token(cursor)
        async with _reaching(self):
            listing = await _listed(await self.connected(), _WAITING_QUERY, limit, token)
        records = [
            record
            for execution in listing.current_page or ()
            for record in _waiting(execution)
            if where.takes_item(record.request, record.created_at) and addressed_to(record.request, visible_to)
        ]
        records.sort(key=lambda record: order_key(record.request, record.created_at))
        following = listing.next_page_token
        next_cursor = None if not following else encode_cursor(['temporal', base64.b64encode(following).decode()])
        total = await self.count_pending(where, visible_to=visible_to)
        return PendingPage(records, next_cursor, total, total_exact=not _sees_all(visible_to))

    async def history_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: HistoryFilter = ALL_FINISHED,
        visible_to: Person | None = None,
    ) -> PendingPage[FinishedRecord]:
        """A page of what finished (questions answered, declined or withdrawn; approvals decided or withdrawn), read
        back from the event histories of the workflows that listed them (`_history`).

        Temporal lists workflows in its own order (running ones first, then the most recently closed) and cannot
        sort items across them by when they finished: a page holds at most `limit` items, newest first among the
        `limit` workflows it reads, and the next page goes on from there. `total` counts the items found up to the
        end of this page, and is exact (`total_exact`) only on a listing that fits one page. With `visible_to`,
        only what that person may see (`visible_in_history`). `BadCursorError` for a cursor it did not write.
        """
        check_limit(limit)
        token, skip = (None, 0) if cursor is None else read_history_cursor(cursor)
        async with _reaching(self):
            client = await self.connected()
            listing = await _listed(client, HISTORY_QUERY, limit, token)
            found = await finished_in(client, list(listing.current_page or ()))
        taken = [record for record in found if where.takes(record) and visible_in_history(record, visible_to)]
        taken.sort(key=history_order, reverse=True)
        page = taken[skip : skip + limit]
        following = listing.next_page_token
        if skip + limit < len(taken):
            next_cursor: str | None = history_cursor(token, skip + limit)
        elif following:
            next_cursor = history_cursor(following, 0)
        else:
            next_cursor = None
        total = skip + len(page) + (0 if next_cursor is None else 1)
        return PendingPage(page, next_cursor, total, total_exact=next_cursor is None and cursor is None)

    async def count_pending(self, where: PendingFilter = EVERYTHING, *, visible_to: Person | None = None) -> int:
        """How many workflows wait for an answer (Temporal counts workflows; ages are not applied to a count).

        With `visible_to` (who does not see all), the questions that person may see, counted by listing them: the
        audience is in the memo, which Temporal cannot count by.
        """
        if not _sees_all(visible_to) or where.searching:
            return sum(
                1
                for record in await self.pending_records(visible_to=visible_to)
                if where.takes_item(record.request, record.created_at)
            )
        async with _reaching(self):
            client = await self.connected()
            return (await client.count_workflows(_WAITING_QUERY)).count

    async def wait_tokens_meant(self, token: str, *, min_prefix: int) -> list[str]:
        """`[token]` when `token` is a whole `TemporalEventWaiter` token; else the tokens of the listed open waits
        that begin with it (none for fewer than `min_prefix` characters): one is the token meant, several are
        ambiguous, none is no token.
        """
        try:
            token_workflow_id(token)
            return [token]
        except NotATemporalTokenError:
            pass
        if len(token) < min_prefix:
            return []
        return [record.key for record in await self.pending_events() if record.key.startswith(token)]

    async def open_wait(self, token: str) -> WaitingEvent | None:
        """The wait open under `token` in the workflow it names, or `None` when none is (`RPCError` NOT_FOUND when
        there is no such workflow; `NotATemporalTokenError` when it is no token).

        Read from the workflow's memo when the wait is listed there (no worker needed), else by the Query, which a
        worker answers (a wait of `TemporalExternalEvents(listed=False)`, or one that is over).
        """
        client = await self.connected()
        handle = client.get_workflow_handle(token_workflow_id(token))
        described = await handle.describe()
        if described.status != WorkflowExecutionStatus.RUNNING:
            return None
        for record in waiting_events(described):
            if record.key == token:
                return record.event
        return next((event for event in await pending_temporal_events(handle) if event.token == token), None)

    async def get(self, key: str) -> AskUserRequest:
        """The waiting question whose key this is.

        Raises `UnknownRequestError`, `AlreadyAnsweredError` or `WithdrawnError` when it is not waiting.
        """
        request, _ = await self._waiting(key)
        return request

    async def respond(self, key: str, response: AskUserResponse) -> None:
        """Answer (or decline) the waiting question with this key, once; returns when its workflow has recorded it.

        Raises `ValueError` if `check_response` rejects the response (nothing is sent then), the errors of `get`
        when it is not waiting, and `AlreadyAnsweredError` or `WithdrawnError` when, by the time the Update arrived,
        another answer was recorded or the wait ended: the workflow refuses it, and records nothing.
        """
        request, handle = await self._waiting(key)
        check_response(request, response)
        # One id for every attempt of this answer: a resend after a lost reply is the same Update to the server,
        # which returns the outcome it recorded rather than applying it twice.
        update_id = f'ask-user-{uuid.uuid4().hex}'
        answer = QuestionAnswer(key=request.key, response=response)
        for attempt in range(_UPDATE_ATTEMPTS):
            try:
                async with _reaching(self):
                    await handle.execute_update(UPDATE_NAME, answer, id=update_id)  # pyright: ignore[reportUnknownMemberType]
                return
            except WorkflowUpdateFailedError as error:
                # Refused by the workflow's validator: answered by someone else, or no longer waiting.
                await self._waiting(key)
                raise WithdrawnError(key) from error  # still listed, but it takes no answer any more
            except (RPCError, RPCTimeoutOrCancelledError):
                # Not delivered, or its reply lost (a workflow task that failed or timed out on a busy worker, the
                # workflow closing first): send it again while the question still waits.
                await self._waiting(key)
                if attempt + 1 == _UPDATE_ATTEMPTS:
                    raise

    async def _waiting(self, request_id: str) -> tuple[AskUserRequest, WorkflowHandle[Any, Any]]:
        """The waiting question `request_id` and its workflow, read from the workflow itself; the store errors else."""
        if not _KEY.fullmatch(request_id):
            raise UnknownRequestError(request_id[:200])
        states = ', '.join(f'"{entry(state, request_id)}"' for state in ('waiting', 'answered', 'withdrawn'))
        query = f'{QUESTIONS_ATTRIBUTE_NAME} IN ({states})'
        async with _reaching(self):
            client = await self.connected()
            # The index says which workflow asked; `describe` says what it is now (visibility may lag behind).
            found = [execution async for execution in client.list_workflows(query, limit=10)]
            found.sort(key=lambda execution: execution.status != WorkflowExecutionStatus.RUNNING)
            for execution in found:
                handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
                now = await handle.describe()
                entries = now.typed_search_attributes.get(QUESTIONS_ATTRIBUTE) or ()
                if entry('answered', request_id) in entries:
                    raise _addressed_as_asked(AlreadyAnsweredError(request_id), now)
                if now.status == WorkflowExecutionStatus.RUNNING:
                    for record in _waiting(now):
                        if record.key == request_id:
                            return record.request, handle
                if entry('withdrawn', request_id) in entries or entry('waiting', request_id) in entries:
                    # Its wait ended unanswered, or its workflow did.
                    raise _addressed_as_asked(WithdrawnError(request_id), now)
        raise UnknownRequestError(request_id)

    async def forward(
        self, key: str, to: Sequence[str], *, note: str = '', by: str | None = None, replace: bool = True
    ) -> Handoff:
        """Hand the waiting question or approval `key` on to `to` (names or groups), with `note`: the `QuestionHub`
        contract, by the Update `FORWARD_UPDATE_NAME` on the workflow that waits, which changes the wait's audience,
        keeps the hand-off and shows both in its memo (the listings, a moment later: visibility lags).

        An approval is held by its waiting handler's wait, which is addressed as a whole: forwarding one of its
        approvals forwards the wait, so all its approvals. `ValueError` for bad names or a bad note; the store errors
        when it is not waiting (`WithdrawnError` when its wait ended as the Update arrived).
        """
        names, checked = check_handoff(to, note)
        handle, wait_key, question = await self._forwardable(key)
        forward = Forward(wait_key, names, checked, by, replace)
        try:
            async with _reaching(self):
                return await handle.execute_update(  # pyright: ignore[reportUnknownMemberType]
                    FORWARD_UPDATE_NAME, forward, result_type=Handoff
                )
        except WorkflowUpdateFailedError as error:
            if question:
                await self._waiting(key)  # the store error of a question answered meanwhile
            raise WithdrawnError(key) from error

    async def _forwardable(self, key: str) -> tuple[WorkflowHandle[Any, Any], str, bool]:
        """The workflow waiting for the question or approval `key`, the key of its wait there, and whether it is a
        question; the store errors when neither waits.
        """
        try:
            _, handle = await self._waiting(key)
            return handle, key, True
        except UnknownRequestError:
            pass
        for record in await self.pending_events():
            if any(a.key == key for a in wait_approvals(record.event, record.workflow_id, record.created_at)):
                client = await self.connected()
                return client.get_workflow_handle(record.workflow_id), record.key, False
        raise UnknownRequestError(key[:200])

    async def handoffs(self, key: str) -> Sequence[Handoff]:
        """The hand-offs of the waiting question or approval `key`, the oldest first (none if it has none), as its
        workflow's memo holds them now; the store errors when it does not wait.
        """
        handle, wait_key, _ = await self._forwardable(key)
        async with _reaching(self):
            described = await handle.describe()
        for record in [*_waiting(described), *waiting_events(described)]:
            if record.key == wait_key:
                return record.handoffs
        return ()

    async def events(self) -> AsyncIterator[StoreEvent]:
        """Events from now on, found by listing the waiting questions every `events_poll_seconds`."""
        known = {record.key: record for record in await self.pending_records()}
        while True:
            await anyio.sleep(self.events_poll_seconds)
            now = {record.key: record for record in await self.pending_records()}
            for key, record in now.items():
                if key not in known:
                    yield StoreEvent('requested', key, record.request)
                elif record.request.audience != known[key].request.audience:
                    # Handed on: its former addressees drop it, and its new ones are told, as the hub tells them.
                    yield StoreEvent('withdrawn', key, known[key].request)
                    yield StoreEvent('requested', key, record.request)
            for key in known.keys() - now.keys():
                yield StoreEvent(await self._settled(key), key, known[key].request)
            known = now

    async def _settled(self, request_id: str) -> Literal['answered', 'withdrawn']:
        """How the question that no longer waits ended: `answered` or `withdrawn`."""
        try:
            await self._waiting(request_id)
        except AlreadyAnsweredError:
            return 'answered'
        except (WithdrawnError, UnknownRequestError):
            return 'withdrawn'
        return 'answered'  # the listing lagged: it still waits, and will show again as requested if it does


_WAITING_QUERY = f'{QUESTIONS_ATTRIBUTE_NAME} = "{WAITING}" AND ExecutionStatus = "Running"'
"""The visibility query of the workflows waiting for an answer."""


_BAD_CURSOR = 'the cursor is not one this server gave out; start again from the first page'
"""What `BadCursorError` says for a cursor Temporal or this store did not write."""


async def _listed(client: Client, query: str, limit: int, token: bytes | None) -> WorkflowExecutionAsyncIterator:
    """One page of the workflows `query` finds, from `token` on; `BadCursorError` for a token Temporal did not write
    (the cursor was edited: the caller's mistake, not the server's).
    """
    listing = client.list_workflows(query, page_size=limit, next_page_token=token)
    try:
        await listing.fetch_next_page()
    except RPCError as error:
        if token is not None and error.status == RPCStatusCode.INVALID_ARGUMENT:
            raise BadCursorError(
                'the cursor is not one this server gave out; start again from the first page'
            ) from None
        raise
    return listing


def _page_token(cursor: str) -> bytes:
    """Temporal's page token inside a cursor of `pending_page`; `BadCursorError` when it is not such a cursor."""
    position = decode_cursor(cursor)
    if len(position) == 2 and position[0] == 'temporal' and isinstance(position[1], str):
        try:
            return base64.b64decode(position[1], validate=True)
        except (binascii.Error, ValueError):
            pass
    raise BadCursorError('the cursor is not one this server gave out; start again from the first page')


def _sees_all(visible_to: Person | None) -> bool:
    return visible_to is None or visible_to.sees_all


def _waiting(execution: WorkflowExecution) -> Iterable[TemporalRecord]:
    """The questions the memo of `execution` says it waits for."""
    waiting = _memo_field(execution, WAITING_MEMO, WaitingQuestion)
    return [
        TemporalRecord(question.request, execution.id, question.asked_at, question.handoffs)
        for key, question in waiting.items()
        if key == question.request.key
    ]


def _addressed_as_asked(error: _E, execution: WorkflowExecution) -> _E:
    """`error` about a question that no longer waits, with whom the question was for when the memo of `execution`
    still says (`SETTLED_MEMO`, or the questions a workflow that ended was waiting for): a front end then tells
    someone else's finished question from a missing one only to those it was for. Read defensively: an audience
    that does not read back as one is nobody's (`audience_from_json`).
    """
    key = error.request_id
    audiences = _memo_field(execution, SETTLED_MEMO, list[str])
    if key in audiences:
        return error.for_audience(audience_from_json(audiences[key]))
    for record in _waiting(execution):
        if record.key == key:
            return error.for_audience(record.request.audience)
    return error  # unaddressed, or settled before this version kept audiences: anyone's to be told


def waiting_events(execution: WorkflowExecution) -> Iterable[TemporalEventRecord]:
    """The external events the memo of `execution` says it waits for."""
    waiting = _memo_field(execution, EVENTS_MEMO, ListedEvent)
    return [
        TemporalEventRecord(listed.event, execution.id, listed.asked_at, listed.handoffs)
        for token, listed in waiting.items()
        if token == listed.event.token
    ]


def _memo_field(execution: WorkflowExecution, name: str, kind: type[_T]) -> dict[str, _T]:
    """The memo field `name` of `execution`, `{key: kind}`; empty when absent or unreadable by this version."""
    payload: Payload | None = execution.raw_info.memo.fields.get(name)
    if payload is None:
        return {}
    try:
        [value] = pydantic_data_converter.payload_converter.from_payloads([payload], [dict[str, kind]])
    except Exception:  # written by another version, or by hand: nothing to show or answer
        return {}
    return cast('dict[str, _T]', value)


class MissingSearchAttributeError(ConnectionError):
    """The namespace has no search attribute `AskUserQuestions`, so no question can be found in it.

    A `ConnectionError`: like an unreachable server, the store cannot serve until its operator acts (the web inbox
    answers 503 and logs this message, `ask-user` exits 4 with it).
    """


class _reaching:
    """Turns an RPC error that says the server cannot be reached into a `ConnectionError` (an `OSError`), which the
    web inbox answers with 503 and the command line with exit code 4.
    """

    def __init__(self, store: TemporalQuestionStore) -> None:
        self.address = store.address
        self.namespace = store.namespace

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, _: object) -> None:
        if not isinstance(error, RPCError):
            return
        if error.status in _UNREACHABLE:
            raise ConnectionError(f'cannot reach the Temporal server at {self.address}: {error}') from error
        if error.status == RPCStatusCode.INVALID_ARGUMENT and QUESTIONS_ATTRIBUTE_NAME in str(error):
            raise MissingSearchAttributeError(
                f'the namespace {self.namespace!r} has no search attribute {QUESTIONS_ATTRIBUTE_NAME}, which '
                'TemporalAnswerer lists its questions in; register it once: temporal operator search-attribute '
                f'create --namespace {self.namespace} --name {QUESTIONS_ATTRIBUTE_NAME} --type KeywordList'
            ) from error
