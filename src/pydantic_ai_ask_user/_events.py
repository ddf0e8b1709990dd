"""The two events that let the rest of a run watch the exchange without answering it."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import CapabilityEvent
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import CAPABILITY_EVENT_TYPES

from ._answers import AskUserRequest, AskUserResponse
from ._receipt import AnswerReceipt

__all__ = ('AskUserRequestedEvent', 'AskUserAnsweredEvent', 'REQUESTED_KIND', 'ANSWERED_KIND')

REQUESTED_KIND = 'ask_user.requested'
"""How `AskUserRequestedEvent` serializes: the reference capability's kind, so consumers of its stream see ours."""

ANSWERED_KIND = 'ask_user.answered'
"""How `AskUserAnsweredEvent` serializes: the reference capability's kind."""


def _refuse_another_package() -> None:
    """Refuse to load beside another package that registered our kinds first, naming the clash.

    The kinds are the reference capability's on purpose, and Pydantic AI keeps one class per kind: defining a
    second class under a taken kind raises. Whichever package is imported second fails; when it is this one,
    the error says which package holds the kinds and what to do, instead of Pydantic AI's bare duplicate.
    """
    for kind, name in ((REQUESTED_KIND, 'AskUserRequestedEvent'), (ANSWERED_KIND, 'AskUserAnsweredEvent')):
        registered = CAPABILITY_EVENT_TYPES.get(kind)
        if registered is not None and (registered.__module__, registered.__qualname__) != (__name__, name):
            raise UserError(
                f'The capability event kind {kind!r} is already registered by '
                f'{registered.__module__}.{registered.__qualname__}: another ask-user package (such as the reference '
                'pydantic_ai_harness.ask_user) is loaded in this process, and both serialize their events under the '
                'same kinds, which Pydantic AI keeps one class each. Use one of the two packages per process.'
            )


_refuse_another_package()


@dataclass(kw_only=True, repr=False)
class AskUserRequestedEvent(CapabilityEvent, namespace='ask_user', name='requested', dispatch='immediate'):
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
class AskUserAnsweredEvent(CapabilityEvent, namespace='ask_user', name='answered', dispatch='immediate'):
    """The answerer returned; `response.cancelled` says whether the user declined.

    Emitted before the response is checked against the request, so a listener that has been waiting
    since the requested event is released even when the answerer misbehaved and the run is about to
    fail. Also emitted, with a cancelled response, when the wait timed out, the answerer raised, or the
    run was cancelled while waiting: every requested event of a live answerer has exactly one answered
    event, so a listener never waits forever.
    """

    request_id: str
    """The `id` of the request this answers: its tool call id, as the requested event's `request.id`."""

    run_id: str | None = None
    """The `run_id` of the request this answers; with `request_id`, its `key` (a tool call id repeats across runs)."""

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
