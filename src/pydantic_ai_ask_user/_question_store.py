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

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol, Self, runtime_checkable

if TYPE_CHECKING:  # annotations only: the exit codes of `ask-user` load this module without the models
    from ._answers import AskUserRequest, AskUserResponse
    from ._approvals import ApprovalDecision, PendingApproval
    from ._audience import Person

__all__ = (
    'QuestionStore',
    'ApprovalStore',
    'StoreEvent',
    'StoreError',
    'UnknownRequestError',
    'AlreadyAnsweredError',
    'WithdrawnError',
)


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
        super().__init__(request_id, f'no question is waiting under id {request_id!r}')

    def __str__(self) -> str:
        return str(self.args[0])


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


@dataclass(frozen=True)
class StoreEvent:
    """Something happened to a request: it started waiting, was answered, or was withdrawn."""

    kind: Literal['requested', 'answered', 'withdrawn']
    """What happened."""

    request_id: str
    """Which request it happened to: its `AskUserRequest.key`."""

    request: AskUserRequest | None = None
    """The request itself, on `requested` events; `None` on the others."""


class QuestionStore(Protocol):
    """Where pending questions wait for a person, seen from the side that answers them."""

    async def pending(self, *, visible_to: Person | None = None) -> Sequence[AskUserRequest]:
        """Every request waiting for an answer, oldest first.

        With `visible_to`, only the requests that person may see and answer (`addressed_to`: addressed to their
        name or one of their groups, or to nobody in particular); `None` is the administrative view, every request.
        """
        ...

    async def get(self, request_id: str) -> AskUserRequest:
        """The pending request whose `key` this is, whoever it is addressed to (a front end checks `addressed_to`).

        Raises `UnknownRequestError`, `AlreadyAnsweredError` or `WithdrawnError` when it is not pending.
        """
        ...

    async def respond(self, request_id: str, response: AskUserResponse) -> None:
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
