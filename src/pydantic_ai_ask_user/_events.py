"""The two events that let the rest of a run watch the exchange without answering it."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import CapabilityEvent

from ._answers import AskUserRequest, AskUserResponse
from ._receipt import AnswerReceipt

__all__ = ('AskUserRequestedEvent', 'AskUserAnsweredEvent')


@dataclass(kw_only=True, repr=False)
class AskUserRequestedEvent(CapabilityEvent, namespace='ask_user', dispatch='immediate'):
    """The model asked the user something, and the answerer is about to be called (or the call deferred).

    In deferred mode (`AskUser(answerer=None)`) it is emitted just before the call is deferred, and no
    answered event follows in this run: the answer comes back as `DeferredToolResults`, from whoever
    holds the request. Its `request` equals `AskUserRequest.from_tool_call(call)` of the deferred call.
    """

    request: AskUserRequest
    """What the model asked, validated; `request.id` is the tool call id and the answered event's `request_id`."""

    deadline: float | None = None
    """When `AskUser(timeout=...)` runs out, as a `time.time()` timestamp; `None` when the wait has no limit.

    For front ends and listeners that show the time left. It is taken when the event is emitted; a
    durable wait resumed after a restart keeps the deadline it recorded first, which may be earlier.
    """


@dataclass(kw_only=True, repr=False)
class AskUserAnsweredEvent(CapabilityEvent, namespace='ask_user', dispatch='immediate'):
    """The answerer returned; `response.cancelled` says whether the user declined.

    Emitted before the response is checked against the request, so a listener that has been waiting
    since the requested event is released even when the answerer misbehaved and the run is about to
    fail. Also emitted, with a cancelled response, when the wait timed out, the answerer raised, or the
    run was cancelled while waiting: every requested event of a live answerer has exactly one answered
    event, so a listener never waits forever.
    """

    request_id: str
    """The `id` of the request this answers."""

    response: AskUserResponse
    """What the answerer returned; a cancelled response when it timed out, raised, or returned no response."""

    timed_out: bool = False
    """True when `AskUser(timeout=...)` ran out and the answerer was cancelled."""

    failed: bool = False
    """True when the answerer raised, or returned something that is not an `AskUserResponse`; the run then fails."""

    withdrawn: bool = False
    """True when the run was cancelled (or a durable engine aborted it) while the question was open."""

    receipt: AnswerReceipt | None = None
    """With `AskUser(receipt_key=...)`, the signed receipt of a response that names who answered (`answered_by`).

    `None` otherwise: no key, no response, or an answerer that cannot tell who answered.
    """

    @property
    def answered_by(self) -> str | None:
        """Who answered, as the answerer reported it (`response.answered_by`); `None` when it could not tell.

        Like the rest of `response`, unchecked when the answerer misbehaved and the run is about to fail: filter
        it (`printable`) before drawing it.
        """
        return self.response.answered_by
