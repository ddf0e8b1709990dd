"""The contract between a place where questions wait and the front ends that answer them.

An in-process hub (the web answerer's) and a durable store (on DBOS) both keep pending requests and
take their answers; the web inbox and JSON API are written against this protocol, so either can
back them, and the process that shows a question need not be the one whose run is waiting.

A store identifies a question by its `AskUserRequest.key` (its run and its tool call), never by the tool
call id alone, which providers repeat across runs: every `request_id` below is such a key.

A durable store also holds the second kind of pending item, a tool call waiting for approval (`PendingApproval`,
`ApprovalStore`): beside the questions, in the same store, keyed by `PendingApproval.key` (its wait and its call).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    ForwardRef,
    Generic,
    Literal,
    Protocol,
    Self,
    TypeVar,
    cast,
    runtime_checkable,
)

from ._module_names import LazyModule
from ._search import is_searching, search_takes

if TYPE_CHECKING:  # annotations only: the exit codes of `ask-user` load this module without the models
    from ._answers import AskUserRequest, AskUserResponse
    from ._approvals import ApprovalDecision, PendingApproval
    from ._audience import Person
else:
    # The same names for `typing.get_type_hints`: each is a reference resolved in this module when an annotation is
    # read, through a module imported only then, so importing this module still loads none of the models.
    _answers = LazyModule('pydantic_ai_ask_user._answers')
    _approvals = LazyModule('pydantic_ai_ask_user._approvals')
    _audience = LazyModule('pydantic_ai_ask_user._audience')
    AskUserRequest = ForwardRef('_answers.AskUserRequest', module=__name__)
    AskUserResponse = ForwardRef('_answers.AskUserResponse', module=__name__)
    ApprovalDecision = ForwardRef('_approvals.ApprovalDecision', module=__name__)
    PendingApproval = ForwardRef('_approvals.PendingApproval', module=__name__)
    Person = ForwardRef('_audience.Person', module=__name__)

__all__ = (
    'QuestionStore',
    'ApprovalStore',
    'StoreEvent',
    'StoreError',
    'UnknownRequestError',
    'AlreadyAnsweredError',
    'WithdrawnError',
    'PendingRecord',
    'PendingFilter',
    'PendingPage',
    'BadCursorError',
    'UnreadableRequestError',
    'DEFAULT_PAGE_SIZE',
    'MAX_PAGE_SIZE',
    'NO_DEADLINE_ORDER',
    'order_key',
    'encode_cursor',
    'decode_cursor',
    'check_limit',
    'page_pending',
    'count_pending',
    'page_in_memory',
    'EVERYTHING',
    'encode_position',
    'decode_position',
    'approval_order',
    'page_approvals',
    'page_approvals_in_memory',
)

DEFAULT_PAGE_SIZE = 50
"""How many waiting questions a page holds unless the caller asks for another number."""

MAX_PAGE_SIZE = 500
"""The most waiting questions one page holds: a larger `limit` is refused, so no listing reads the whole table."""

NO_DEADLINE_ORDER = 1e12
"""Where a question without a deadline sorts: after every deadline (`LATEST_DEADLINE` is about 2.5e11)."""

_CURSOR_VERSION = 1
"""The first element of every cursor this version writes; a cursor of another version is refused as malformed."""

_CURSOR_KEY = re.compile(r'[A-Za-z0-9_.:-]{1,200}')
"""What the question key inside a cursor may look like (as every key does); anything else is a tampered cursor."""

_MAX_CURSOR_LENGTH = 2000
"""The longest cursor read: a key of 200 characters and two numbers fit many times over (Temporal's tokens too)."""


class StoreError(Exception):
    """A request cannot be shown or answered in its present state.

    Each subclass carries how every front end reports it, in one table: the web API's status and error
    code, the page's heading and text, and the command line's exit code.
    """

    http_status: ClassVar[int] = 404
    """The HTTP status of the web API's and the pages' answer."""

    code: ClassVar[str] = 'not_found'
    """The `error` field of the web API's JSON answer."""

    heading: ClassVar[str] = 'No such question'
    """The heading of the page a person sees."""

    page_text: ClassVar[str] = 'No question is waiting at this address.'
    """The sentence under that heading."""

    exit_code: ClassVar[int] = 5
    """The exit code of `ask-user answer` (and of the commands that answer by id)."""

    audience_known: bool = False
    """Whether the store said whom the request was for (`audience`): it does for a finished request it still holds."""

    audience: tuple[str, ...] | None = None
    """The request's `AskUserRequest.audience`, when `audience_known`.

    Front ends that filter by audience read it: to a person a finished question was not addressed to, it is
    reported as unknown, like one that never existed.
    """

    def __init__(self, request_id: str, message: str) -> None:
        super().__init__(message)
        self.request_id = request_id
        """The key (`AskUserRequest.key`) of the request the error is about."""

    def for_audience(self, audience: tuple[str, ...] | None) -> Self:
        """Record whom the request was for (its `AskUserRequest.audience`); return the error, for a store to raise."""
        self.audience_known = True
        self.audience = audience
        return self


class UnknownRequestError(StoreError, KeyError):
    """No request has this id (or it was forgotten long ago). A web API answers 404."""

    http_status = 404
    code = 'not_found'
    heading = 'No such question'
    page_text = 'No question is waiting at this address.'
    exit_code = 5

    def __init__(self, request_id: str) -> None:
        message = f'no question is waiting under key {request_id!r}'
        if _KEY.fullmatch(request_id) is None:
            # Not a key of a run's request: perhaps the tool call id, which a store does not take for one.
            message += " (a store takes the request's key, `AskUserRequest.key`, not its tool call id `.id`)"
        super().__init__(request_id, message)

    def __str__(self) -> str:
        return str(self.args[0])


_KEY = re.compile(r'[0-9a-f]{32}')
"""The key of a request that belongs to a run (`request_key`: 32 hex digits of a SHA-256)."""


class AlreadyAnsweredError(StoreError):
    """The request was answered (or declined) already; it is answered once. A web API answers 409."""

    http_status = 409
    code = 'already_answered'
    heading = 'Already answered'
    page_text = 'This question has been answered already.'
    exit_code = 6

    def __init__(self, request_id: str) -> None:
        super().__init__(request_id, f'question {request_id!r} has already been answered')


class WithdrawnError(StoreError):
    """The run stopped waiting (timeout, cancellation) before an answer came. A web API answers 410."""

    http_status = 410
    code = 'withdrawn'
    heading = 'This question is no longer waiting'
    page_text = 'The agent stopped waiting for an answer (it timed out or its run was cancelled).'
    exit_code = 7

    def __init__(self, request_id: str) -> None:
        super().__init__(request_id, f'question {request_id!r} is no longer waiting for an answer')


class UnreadableRequestError(StoreError):
    """The request is stored damaged (written by hand, or by something other than ask-user): it cannot be shown or
    answered. Listings leave it out; to anyone but its addressees it is unknown, like a missing one.
    """

    http_status = 422
    code = 'unreadable'
    heading = 'This question cannot be shown'
    page_text = 'It is stored damaged, so it can be neither shown nor answered here. Tell whoever runs the agent.'
    exit_code = 4

    def __init__(self, request_id: str, reason: str = '') -> None:
        super().__init__(request_id, f'question {request_id!r} is stored damaged and cannot be read{reason}')


@dataclass(frozen=True)
class StoreEvent:
    """Something happened to a request (or, in a store that holds them, a tool approval): it started waiting, was
    answered (decided), or was withdrawn.
    """

    kind: Literal['requested', 'answered', 'withdrawn']
    """What happened."""

    request_id: str
    """Which request it happened to: its `AskUserRequest.key`."""

    request: AskUserRequest | None = None
    """The request itself: on `requested` events of a question, and, where the store has it, on its `answered` and
    `withdrawn` events too (so a stream decides who may hear of them from the event alone); `None` otherwise."""

    item: Literal['question', 'approval'] = 'question'
    """What kind of pending item it happened to: a question (`request_id` is its `AskUserRequest.key`), or a tool
    call waiting for approval (`request_id` is its `PendingApproval.key`; `answered` means decided)."""

    approval: PendingApproval | None = None
    """The approval itself: on `requested` events of an approval, and, where the store has it, on its other events
    too (so a stream decides who may hear of them from the event alone); `None` otherwise."""

    position: str | None = None
    """Where the stream stands after this event, in a store whose events resume (`events_after`): give it back to
    resume after it, missing nothing and repeating nothing. The web API sends it as each event's `id:`."""


class BadCursorError(ValueError):
    """A page cursor that this store did not write: malformed, tampered with, or of another store or version.

    The web API answers it with 400 (`bad_cursor`), `ask-user pending --cursor` with exit code 2.
    """


class PendingRecord(Protocol):
    """One waiting question of a page: the request, when it was asked, and the durable run waiting for it, if any."""

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
        """The durable workflow (the run) waiting for it; `None` when there is none (an in-process hub)."""
        ...


@dataclass(frozen=True)
class PendingFilter:
    """Which waiting questions a listing or a count takes: all of them unless narrowed.

    The ages are absolute times, so that every page of one listing takes the same questions; the front ends turn an
    age (`?older_than=SECONDS`, `ask-user pending --older-than`) into one when the listing starts.
    """

    asked_before: float | None = None
    """Only questions asked before this time (seconds since the epoch): the ones older than an age."""

    asked_after: float | None = None
    """Only questions asked at or after this time: the ones younger than an age."""

    kind: Literal['question', 'approval'] | None = None
    """Only questions, only approvals, or (`None`) both: a page of questions with `kind='approval'` is empty."""

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

    # Whom a question is put to is not here but beside it (`visible_to=`, as `pending` takes it): each store narrows
    # its listing and its count by both, in the same query, so that paging and counting stay index-backed.

    def takes(self, created_at: float) -> bool:
        """Whether a question asked at `created_at` passes this filter (for stores that filter in memory)."""
        if self.asked_before is not None and not created_at < self.asked_before:
            return False
        return self.asked_after is None or created_at >= self.asked_after

    def takes_item(self, item: Any, created_at: float, kind: Literal['question', 'approval'] = 'question') -> bool:
        """Whether a question (`AskUserRequest`) or an approval (`PendingApproval`) of `kind`, asked at `created_at`,
        passes every field of this filter, its search fields included (visibility is not here).
        """
        if self.kind is not None and self.kind != kind:
            return False
        return self.takes(created_at) and search_takes(self, item)

    @property
    def searching(self) -> bool:
        """Whether a search field or `kind` narrows it (beyond the ages a store's SQL reads by its indexes)."""
        return self.kind is not None or is_searching(self)


EVERYTHING = PendingFilter()
"""The filter that takes every waiting question."""

RecordT = TypeVar('RecordT', covariant=True)
# Unbounded: a page of questions holds `PendingRecord`s, a page of approvals `PendingApproval`s.
QuestionRecordT = TypeVar('QuestionRecordT', bound=PendingRecord)


@dataclass(frozen=True)
class PendingPage(Generic[RecordT]):
    """One page of waiting questions, in deadline order, and where the next page starts."""

    records: Sequence[RecordT]
    """The questions of this page: the nearest deadline first, questions without one last, then the oldest first,
    then by key (the tiebreak that makes the order total and stable)."""

    next_cursor: str | None
    """Pass it back for the next page; `None` on the last page. Opaque: only the store that wrote it reads it."""

    total: int
    """How many questions wait (that pass the filter), counted without reading them, when the page was read."""

    total_exact: bool = field(default=True)
    """`False` where the store can only count something near it (Temporal counts waiting workflows, not questions)."""


def order_key(request: AskUserRequest, created_at: float) -> tuple[float, float, str]:
    """Where a waiting question sorts: its deadline (none last), when it was asked, its key."""
    deadline = NO_DEADLINE_ORDER if request.deadline is None else request.deadline
    return (deadline, created_at, request.key)


def encode_cursor(position: Sequence[Any]) -> str:
    """An opaque cursor for `position` (a store's own list of JSON values): URL-safe base64 of versioned JSON."""
    data = json.dumps([_CURSOR_VERSION, *position], separators=(',', ':'), allow_nan=False)
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip('=')


def decode_cursor(cursor: str) -> list[Any]:
    """The position `encode_cursor` wrote; `BadCursorError` for anything it did not write."""
    if not cursor or len(cursor) > _MAX_CURSOR_LENGTH or not cursor.isascii():
        raise BadCursorError('the cursor is not one this server gave out; start again from the first page')
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + '=' * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        raise BadCursorError('the cursor is not one this server gave out; start again from the first page') from None
    if not isinstance(value, list) or not value or value[0] != _CURSOR_VERSION:
        raise BadCursorError('the cursor is not one this server gave out; start again from the first page')
    return cast('list[Any]', value)[1:]


def encode_position(key: tuple[float, float, str]) -> str:
    """The cursor of a page ending at the question whose `order_key` is `key`."""
    return encode_cursor(list(key))


def decode_position(cursor: str) -> tuple[float, float, str]:
    """The `order_key` a cursor of `encode_position` ends at; `BadCursorError` when it is not such a cursor."""
    position = decode_cursor(cursor)
    if len(position) == 3:
        deadline, created_at, key = position
        if _finite(deadline) and _finite(created_at) and isinstance(key, str) and _CURSOR_KEY.fullmatch(key):
            return (float(deadline), float(created_at), key)
    raise BadCursorError('the cursor is not one this server gave out; start again from the first page')


def _finite(value: object) -> bool:
    """Whether `value` is a JSON number a float holds: an integer of 400 digits is not (`float()` overflows)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def check_limit(limit: int) -> int:
    """`limit` when it is a page size a store takes (1 to `MAX_PAGE_SIZE`); a `ValueError` naming the range else."""
    value = cast(object, limit)  # checked at run time: callers pass what a person typed
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise ValueError(f'the page size must be a whole number from 1 to {MAX_PAGE_SIZE}, not {limit!r}')
    return limit


@dataclass(frozen=True)
class _Listed:
    """A waiting question of a store that lists only requests (no `pending_records`): asked at an unknown time."""

    request: AskUserRequest
    created_at: float = 0.0
    workflow_id: str | None = None


def page_in_memory(
    records: Sequence[QuestionRecordT],
    *,
    limit: int,
    cursor: str | None,
    where: PendingFilter,
    visible_to: Person | None = None,
) -> PendingPage[QuestionRecordT]:
    """A page of `records` (every waiting question, in any order), for stores that hold them all in memory; only
    `visible_to`'s, in the page and in its total.
    """
    check_limit(limit)
    after = None if cursor is None else decode_position(cursor)
    taken = sorted(
        (record for record in records if _takes(where, visible_to, record)),
        key=lambda record: order_key(record.request, record.created_at),
    )
    following = [record for record in taken if after is None or order_key(record.request, record.created_at) > after]
    page = following[:limit]
    more = len(following) > limit
    last = page[-1] if page else None
    next_cursor = encode_position(order_key(last.request, last.created_at)) if more and last is not None else None
    return PendingPage(page, next_cursor, len(taken))


async def page_pending(
    store: QuestionStore,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    where: PendingFilter = EVERYTHING,
    visible_to: Person | None = None,
) -> PendingPage[PendingRecord]:
    """A page of `store`'s waiting questions (only `visible_to`'s): its own `pending_page`, or, for a store written
    against an earlier version of the protocol (without it), its whole listing paged in memory.
    """
    paged = cast('Callable[..., Awaitable[PendingPage[PendingRecord]]] | None', getattr(store, 'pending_page', None))
    if paged is not None:
        return await paged(limit=check_limit(limit), cursor=cursor, where=where, visible_to=visible_to)
    return page_in_memory(await _everything(store), limit=limit, cursor=cursor, where=where, visible_to=visible_to)


async def count_pending(
    store: QuestionStore, where: PendingFilter = EVERYTHING, *, visible_to: Person | None = None
) -> int:
    """How many questions wait in `store` (that `visible_to` may see): its own `count_pending`, or its listing."""
    counted = cast('Callable[..., Awaitable[int]] | None', getattr(store, 'count_pending', None))
    if counted is not None:
        return await counted(where, visible_to=visible_to)
    return sum(1 for record in await _everything(store) if _takes(where, visible_to, record))


def _takes(where: PendingFilter, visible_to: Person | None, record: PendingRecord) -> bool:
    from ._audience import addressed_to

    return where.takes_item(record.request, record.created_at) and addressed_to(record.request, visible_to)


async def _everything(store: QuestionStore) -> Sequence[PendingRecord]:
    """Every waiting question of a store without `pending_page`, unfiltered: the caller filters by `_takes` (so a
    store written before `visible_to` leaks nothing either).
    """
    records = cast('Callable[[], Awaitable[Sequence[PendingRecord]]] | None', getattr(store, 'pending_records', None))
    if records is not None:
        return await records()
    return [_Listed(request) for request in await store.pending()]


def approval_order(approval: PendingApproval) -> tuple[float, str]:
    """Where a waiting approval sorts: the oldest first (an approval has no deadline of its own), then its key."""
    return (approval.created_at, approval.key)


def encode_approval_position(position: tuple[float, str]) -> str:
    """The cursor of a page of approvals ending at the one whose `approval_order` is `position`."""
    return encode_cursor(['approval', *position])


def decode_approval_position(cursor: str) -> tuple[float, str]:
    """The `approval_order` a cursor of `encode_approval_position` ends at; `BadCursorError` for any other cursor
    (a cursor of the questions' pages included).
    """
    position = decode_cursor(cursor)
    if len(position) == 3 and position[0] == 'approval':
        _, created_at, key = position
        if _finite(created_at) and isinstance(key, str) and _CURSOR_KEY.fullmatch(key):
            return (float(created_at), key)
    raise BadCursorError('the cursor is not one this server gave out; start again from the first page')


def page_approvals_in_memory(
    approvals: Sequence[PendingApproval],
    *,
    limit: int,
    cursor: str | None,
    visible_to: Person | None = None,
    where: PendingFilter = EVERYTHING,
) -> PendingPage[PendingApproval]:
    """A page of `approvals` (every waiting one, in any order), for stores that hold them all in memory; only
    `visible_to`'s that `where` takes, in the page and in its total.
    """
    from ._audience import audience_includes

    check_limit(limit)
    after = None if cursor is None else decode_approval_position(cursor)
    taken = sorted(
        (
            a
            for a in approvals
            if audience_includes(a.audience, visible_to) and where.takes_item(a, a.created_at, 'approval')
        ),
        key=approval_order,
    )
    following = [approval for approval in taken if after is None or approval_order(approval) > after]
    page = following[:limit]
    more = len(following) > limit and bool(page)
    return PendingPage(page, encode_approval_position(approval_order(page[-1])) if more else None, len(taken))


async def page_approvals(
    store: ApprovalStore,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    visible_to: Person | None = None,
    where: PendingFilter = EVERYTHING,
) -> PendingPage[PendingApproval]:
    """A page of `store`'s waiting approvals (only `visible_to`'s), the oldest first: its own
    `pending_approvals_page`, or, for a store written against an earlier version of the protocol, its whole listing
    paged in memory.

    With a search or an age in `where` (`PendingFilter.searching`, `asked_before`, `asked_after`), the person's whole
    listing (`pending_approvals(visible_to=...)`) is read and matched in memory: waiting approvals are few (each holds
    a run), and a filter only narrows what the person may already see.
    """
    if where != EVERYTHING:
        if where.kind == 'question':
            check_limit(limit)
            if cursor is not None:
                decode_approval_position(cursor)
            return PendingPage((), None, 0)
        listed = await store.pending_approvals(visible_to=visible_to)
        return page_approvals_in_memory(listed, limit=limit, cursor=cursor, visible_to=visible_to, where=where)
    paged = cast(
        'Callable[..., Awaitable[PendingPage[PendingApproval]]] | None', getattr(store, 'pending_approvals_page', None)
    )
    if paged is not None:
        return await paged(limit=check_limit(limit), cursor=cursor, visible_to=visible_to)
    listed = await store.pending_approvals(visible_to=visible_to)
    return page_approvals_in_memory(listed, limit=limit, cursor=cursor, visible_to=visible_to)


class QuestionStore(Protocol):
    """Where pending questions wait for a person, seen from the side that answers them.

    A front end lists the waiting questions a page at a time (`pending_page`) and counts them (`count_pending`): with
    100,000 questions waiting, neither reads them all. `pending()` lists every one, for small stores and tests.
    """

    async def pending(self, *, visible_to: Person | None = None) -> Sequence[AskUserRequest]:
        """Every request waiting for an answer, oldest first (every one: front ends page with `pending_page`).

        With `visible_to`, only the requests that person may see and answer (`addressed_to`: addressed to their
        name or one of their groups, or to nobody in particular); `None` is the administrative view, every request.
        """
        ...

    async def pending_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: PendingFilter = EVERYTHING,
        visible_to: Person | None = None,
    ) -> PendingPage[PendingRecord]:
        """At most `limit` waiting questions (1 to `MAX_PAGE_SIZE`) that pass `where`, in deadline order (see
        `PendingPage.records`), starting after `cursor` (a `next_cursor` of this store), with the total count.

        With `visible_to`, only that person's questions (as `pending`), in the page and in its count alike: a page
        never holds, and its total never counts, a question addressed to somebody else.
        Keyset-paged: a question asked or answered between two pages neither repeats nor skips another. Raises
        `BadCursorError` for a cursor this store did not write, `ValueError` for a `limit` out of range.
        """
        ...

    async def count_pending(self, where: PendingFilter = EVERYTHING, *, visible_to: Person | None = None) -> int:
        """How many questions wait (that pass `where`, and that `visible_to` may see), without decoding them."""
        ...

    async def get(self, key: str) -> AskUserRequest:
        """The pending request whose `key` this is, whoever it is addressed to (a front end checks `addressed_to`).

        Raises `UnknownRequestError`, `AlreadyAnsweredError` or `WithdrawnError` when it is not pending.
        """
        ...

    async def respond(self, key: str, response: AskUserResponse) -> None:
        """Answer (or, with `AskUserResponse(cancelled=True)`, decline) a pending request, once.

        Raises `ValueError` if `check_response` rejects the response (nothing is recorded then), and the
        errors of `get` when the request is not pending.
        """
        ...

    def events(self) -> AsyncIterator[StoreEvent]:
        """Events from now on, for as long as the caller iterates: requested, answered, withdrawn."""
        ...


@runtime_checkable
class ApprovalStore(QuestionStore, Protocol):
    """A store whose waits hold tool approvals beside questions (`DBOSQuestionStore`, `TemporalQuestionStore`).

    An approval is decided once, like a question is answered once, and raises the same `StoreError`s. The items of
    one wait (its approvals and its questions) reach the run together: deciding one item records it, and the item
    that completes the wait sends the run every decision and answer at once; `decide_wait` decides several items
    of one wait in one call, all or nothing.
    """

    async def pending_approvals(self, *, visible_to: Person | None = None) -> Sequence[PendingApproval]:
        """Every tool call waiting for approval, oldest first; with `visible_to`, only those addressed to that
        person (`audience_includes`), as `pending` filters the questions.
        """
        ...

    async def pending_approvals_page(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None, visible_to: Person | None = None
    ) -> PendingPage[PendingApproval]:
        """At most `limit` waiting approvals (1 to `MAX_PAGE_SIZE`), the oldest first (`approval_order`), starting
        after `cursor` (a `next_cursor` of this method), with how many wait in all.

        With `visible_to`, only that person's, in the page and its total alike, as `pending_page` pages questions.
        Keyset-paged; `BadCursorError` for a cursor it did not write (one of `pending_page` too). A store without it
        is paged in memory by `page_approvals`.
        """
        ...

    async def get_approval(self, key: str) -> PendingApproval:
        """The pending approval whose `PendingApproval.key` this is; the errors of `get` when it is not pending."""
        ...

    async def wait_items(self, token: str) -> tuple[Sequence[PendingApproval], Sequence[AskUserRequest]]:
        """The approvals and questions of the wait of `token` (`PendingApproval.token`) still pending."""
        ...

    async def decide(self, key: str, decision: ApprovalDecision) -> None:
        """Decide the pending approval `key`, once.

        Raises `ValueError` saying what is wrong if `check_decision` refuses it (edited arguments that do not fit
        the tool's schema, say): nothing is recorded then. The errors of `get` when it is not pending.
        """
        ...

    async def decide_wait(
        self, approvals: Mapping[str, ApprovalDecision], answers: Mapping[str, AskUserResponse]
    ) -> None:
        """Decide these approvals and answer these questions (by key), all of one wait, together: each is checked
        first, and either all are recorded (and the run resumed, when that completes its wait) or none is.

        `ValueError` when one is refused or they are not all items of one wait; the errors of `get` for an item
        not pending.
        """
        ...
