"""What the AG-UI and Vercel AI adapters share: the one way each shows AskUser's events and checks answers.

`QuestionEventStream` and `QuestionAdapter` sit between Pydantic AI's generic `UIEventStream` /
`UIAdapter` and a protocol's own class in the method order (`class X(QuestionAdapter[...], AGUIAdapter[...])`),
so each `super()` call here reaches the protocol's behaviour. They add only `init=False` fields, so a
subclass takes the arguments of the protocol's class (and the keyword-only options it adds itself).

Whether answers may carry notes is the `notes` of the `AskUser` the run uses: the adapter finds it among
the agent's capabilities and those passed for the run (`dispatch_request(..., capabilities=[...])`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import CapabilityEvent, FunctionToolResultEvent, ModelMessage, ToolCallPart
from pydantic_ai.output import OutputDataT
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.ui import UIAdapter, UIEventStream

from .._answers import TOOL_NAME, AskUserRequest
from .._capability import AskUser
from .._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ._answers import PendingCalls, answer_for_client, check_client_messages, pending_calls, question_calls

__all__ = ('QuestionEventStream', 'QuestionAdapter')

RunInputT = TypeVar('RunInputT')
MessageT = TypeVar('MessageT')
EventT = TypeVar('EventT')


@dataclass
class QuestionEventStream(UIEventStream[RunInputT, EventT, AgentDepsT, OutputDataT]):
    """A protocol's event stream forwarding AskUser's events, question results shown in the response JSON shape."""

    _calls: dict[str, ToolCallPart] = field(default_factory=dict[str, ToolCallPart], init=False, repr=False)

    _requests: dict[str, AskUserRequest] = field(default_factory=dict[str, AskUserRequest], init=False, repr=False)
    """Each request this run asked, by id, as `AskUserRequestedEvent` carried it: with its `notes` and `deadline`."""

    _notes: bool = field(default=False, init=False, repr=False)
    """The `notes` of the run's `AskUser`, for a call whose requested event this stream did not see."""

    def request(self, call: ToolCallPart, deferred: DeferredToolRequests | None = None) -> AskUserRequest:
        """The request of `call`: as the run asked it when this stream saw it asked, else rebuilt from the call.

        Rebuilt with `AskUserRequest.from_deferred` when `call` is one of the `deferred` calls the run ended on,
        so the request has the deferring run's identity. `ValueError` for a call that holds no valid question.
        """
        if deferred is not None:
            rebuilt = AskUserRequest.from_deferred(deferred, call, notes=self._notes)
        else:
            rebuilt = AskUserRequest.from_tool_call(call, notes=self._notes)
        asked = self._requests.get(call.tool_call_id)
        # What was asked carries the deadline; compared, because a provider that repeats ids may have asked
        # other questions under this id earlier in the run.
        return asked if asked is not None and asked == rebuilt else rebuilt

    @abstractmethod
    def requested_event(self, event: AskUserRequestedEvent) -> EventT:
        """The protocol's event for a new question."""

    @abstractmethod
    def answered_event(self, event: AskUserAnsweredEvent) -> EventT:
        """The protocol's event for an answered (declined, timed out, withdrawn, failed) question."""

    async def handle_capability_event(self, event: CapabilityEvent) -> AsyncIterator[EventT]:
        """`AskUserRequestedEvent` / `AskUserAnsweredEvent` as the protocol's events carrying the tool call id."""
        if isinstance(event, AskUserRequestedEvent):
            self._requests[event.request.id] = event.request
            yield self.requested_event(event)
        elif isinstance(event, AskUserAnsweredEvent):
            yield self.answered_event(event)
        else:
            async for e in super().handle_capability_event(event):
                yield e  # pragma: no cover  (Pydantic AI forwards no capability event today)

    async def handle_tool_call_end(self, part: ToolCallPart) -> AsyncIterator[EventT]:
        """Remember each `ask_user_question` call, to show its result in the response JSON shape."""
        if part.tool_name == TOOL_NAME:
            self._calls[part.tool_call_id] = part
        async for e in super().handle_tool_call_end(part):
            yield e

    async def handle_function_tool_result(self, event: FunctionToolResultEvent) -> AsyncIterator[EventT]:
        """A question's result as the client is shown it (the response JSON), so it can send it back unchanged."""
        part = event.part
        if part.tool_name == TOOL_NAME and (call := self._calls.get(part.tool_call_id)) is not None:
            try:
                request = self.request(call)
            except ValueError:
                pass
            else:
                event = replace(event, part=replace(part, content=answer_for_client(request, part.content)))
        async for e in super().handle_function_tool_result(event):
            yield e


@dataclass
class QuestionAdapter(UIAdapter[RunInputT, MessageT, EventT, AgentDepsT, OutputDataT]):
    """A protocol's adapter that checks every `ask_user_question` answer from the client before the model sees it."""

    _held_history: list[ModelMessage] = field(default_factory=list[ModelMessage], init=False, repr=False)

    _run_capabilities: list[Any] = field(default_factory=list[Any], init=False, repr=False)

    def ask_user(self) -> AskUser[Any] | None:
        """The `AskUser` of the run: among the capabilities passed for it, else among the agent's; `None` if none."""
        found: list[AskUser[Any]] = []

        def collect(capability: Any) -> None:
            if isinstance(capability, AskUser):
                found.append(cast(AskUser[Any], capability))

        for capability in self._run_capabilities:
            capability.apply(collect)
        root = getattr(self.agent, 'root_capability', None)
        if root is not None:
            root.apply(collect)
        return found[0] if found else None

    @property
    def notes(self) -> bool:
        """Whether an answer may carry a note: the `notes` of the run's `AskUser` (`False` without one)."""
        ask_user = self.ask_user()
        return ask_user is not None and ask_user.notes

    def question_calls(self) -> dict[str, ToolCallPart]:
        """The `ask_user_question` calls an answer may be for: the held `message_history` first, then the client's."""
        return question_calls(self._held_history, self.messages)

    def pending_calls(self) -> PendingCalls:
        """The calls the run resumes, which a resume entry or an approval may answer (see `PendingCalls`).

        Those of the held `message_history` when the server owns the history (the client's copy of it is not
        what runs), else those at the end of the history the run continues: the held one, then the client's.
        """
        if self.manage_message_history == 'server' and self._held_history:
            return pending_calls(self._held_history)
        return pending_calls([*self._held_history, *self.messages])

    def asks_question(self, pending: PendingCalls, tool_call_id: str) -> bool:
        """Whether `tool_call_id` is a question's call: the waiting call with that id, else any call in the history.

        By the waiting call first, because a provider may reuse an old question's id for a call to another tool.
        A call that is not waiting counts too, so that an approval cannot answer an old question either.
        """
        if tool_call_id in pending.calls:
            return pending.question(tool_call_id) is not None
        return tool_call_id in self.question_calls()

    def with_question_calls(
        self, stream: QuestionEventStream[RunInputT, EventT, AgentDepsT, OutputDataT]
    ) -> QuestionEventStream[RunInputT, EventT, AgentDepsT, OutputDataT]:
        """`stream`, told of the calls already made, so their results reach the client in the response JSON shape."""
        with suppress(UserError):  # unreadable messages: the run reports it as the protocol's error when it reads them
            stream._calls.update(self.question_calls())  # pyright: ignore[reportPrivateUsage]
            # The resumed calls last: an earlier question with the same id must not stand for them.
            pending = self.pending_calls()
            stream._calls.update(  # pyright: ignore[reportPrivateUsage]
                {tool_call_id: call for tool_call_id in pending.calls if (call := pending.question(tool_call_id))}
            )
        stream._notes = self.notes  # pyright: ignore[reportPrivateUsage]
        return stream

    def run_stream_native(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """As the protocol adapter's `run_stream_native`; answered calls are looked up in `message_history` first."""
        self._held_history = list(kwargs.get('message_history') or ())
        self._run_capabilities = list(kwargs.get('capabilities') or ())
        return super().run_stream_native(*args, **kwargs)

    def sanitize_messages(
        self, messages: Sequence[ModelMessage], *, deferred_tool_results: DeferredToolResults | None = None
    ) -> list[ModelMessage]:
        """Pydantic AI's sanitizing, once each `ask_user_question` result from the client is checked (`UserError`)."""
        checked = check_client_messages(messages, self._held_history, notes=self.notes)
        return super().sanitize_messages(checked, deferred_tool_results=deferred_tool_results)
