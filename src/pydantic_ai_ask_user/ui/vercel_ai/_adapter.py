"""AskUser over the Vercel AI SDK: Pydantic AI's `VercelAIAdapter` and `VercelAIEventStream`, with checked answers.

Decisions, and why:

- A pending question is the `tool-ask_user_question` part in state `input-available`, its `input`
  holding the questions: the AI SDK's own "waiting for the tool's output" state, which a page
  answers with `addToolOutput` (`addToolResult` before v6). Never `approval-requested`: approve/deny
  buttons cannot answer a multiple-choice question. Pydantic AI's `dump_messages(sdk_version=6)`
  shows every unanswered call as an approval on reload; here a question stays `input-available`.
- The answer is the tool part's `output`, in the response JSON shape. Every `ask_user_question` result
  in the messages a client sends (the new answer, and each one replayed from earlier turns) is read
  with `read_response` against its call and turned into the tool result with `ask_user_result` in
  `sanitize_messages`, the one step every client message goes through. A misfit is a `UserError`,
  sent as the stream's `error` part before the agent runs: it never reaches the model. So is an
  approval response for a question: a question is answered, not approved.
- Results the server streams (`tool-output-available`) or dumps are in the response JSON shape too,
  so a client sends back exactly what it was shown.
- `AskUserRequestedEvent` and `AskUserAnsweredEvent` become `data-ask-user-requested` and
  `data-ask-user-answered` parts whose `id` is the tool call id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Final

from pydantic_ai import DeferredToolResults
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import CapabilityEvent, FunctionToolResultEvent, ModelMessage, ToolCallPart
from pydantic_ai.output import OutputDataT
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.ui import UIEventStream
from pydantic_ai.ui.vercel_ai import VercelAIAdapter, VercelAIEventStream
from pydantic_ai.ui.vercel_ai.request_types import ToolApprovalRequestedPart, ToolInputAvailablePart, UIMessage
from pydantic_ai.ui.vercel_ai.response_types import BaseChunk, DataChunk

from ..._answers import TOOL_NAME, AskUserRequest
from ..._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ..._text import printable
from .._answers import (
    ANSWERED_EVENT_NAME,
    REQUESTED_EVENT_NAME,
    answer_for_client,
    answered_payload,
    check_client_messages,
    question_calls,
    requested_payload,
    with_client_answers,
)

__all__ = ('AskUserVercelAIAdapter', 'AskUserVercelAIEventStream', 'REQUESTED_DATA_TYPE', 'ANSWERED_DATA_TYPE')

REQUESTED_DATA_TYPE: Final = f'data-{REQUESTED_EVENT_NAME.replace("_", "-")}'
"""The type of the data part for a new question: `data-ask-user-requested`."""

ANSWERED_DATA_TYPE: Final = f'data-{ANSWERED_EVENT_NAME.replace("_", "-")}'
"""The type of the data part for an answered (declined, timed out, withdrawn, failed) question."""

_TOOL_PART_TYPE: Final = f'tool-{TOOL_NAME}'


@dataclass
class AskUserVercelAIEventStream(VercelAIEventStream[AgentDepsT, OutputDataT]):
    """`VercelAIEventStream` that forwards AskUser's events and shows question results in the response JSON shape."""

    _calls: dict[str, ToolCallPart] = field(default_factory=dict[str, ToolCallPart], init=False, repr=False)

    async def handle_capability_event(self, event: CapabilityEvent) -> AsyncIterator[BaseChunk]:
        """`AskUserRequestedEvent` / `AskUserAnsweredEvent` as data parts whose id is the tool call id."""
        if isinstance(event, AskUserRequestedEvent):
            yield DataChunk(type=REQUESTED_DATA_TYPE, id=event.request.id, data=requested_payload(event))
        elif isinstance(event, AskUserAnsweredEvent):
            yield DataChunk(type=ANSWERED_DATA_TYPE, id=event.request_id, data=answered_payload(event))
        else:
            async for chunk in super().handle_capability_event(event):
                yield chunk  # pragma: no cover  (Pydantic AI forwards no capability event today)

    async def handle_tool_call_end(self, part: ToolCallPart) -> AsyncIterator[BaseChunk]:
        """Remember each `ask_user_question` call, to show its result in the response JSON shape."""
        if part.tool_name == TOOL_NAME:
            self._calls[part.tool_call_id] = part
        async for chunk in super().handle_tool_call_end(part):
            yield chunk  # pragma: no cover  (the Vercel stream sends the call's input at its result, not here)

    async def handle_function_tool_result(self, event: FunctionToolResultEvent) -> AsyncIterator[BaseChunk]:
        """A question's result as the client is shown it (the response JSON), so it can send it back unchanged."""
        part = event.part
        if part.tool_name == TOOL_NAME and (call := self._calls.get(part.tool_call_id)) is not None:
            try:
                request = AskUserRequest.from_tool_call(call)
            except ValueError:
                pass
            else:
                event = replace(event, part=replace(part, content=answer_for_client(request, part.content)))
        async for chunk in super().handle_function_tool_result(event):
            yield chunk


@dataclass
class AskUserVercelAIAdapter(VercelAIAdapter[AgentDepsT, OutputDataT]):
    """`VercelAIAdapter` for an agent with `AskUser`: every answer checked before the model sees it.

    Use it exactly like `VercelAIAdapter` (`AskUserVercelAIAdapter.dispatch_request(request, agent=agent,
    sdk_version=6)`).
    """

    _held_history: list[ModelMessage] = field(default_factory=list[ModelMessage], init=False, repr=False)

    def build_event_stream(self) -> UIEventStream[Any, BaseChunk, AgentDepsT, OutputDataT]:
        """The Vercel AI event stream with AskUser's events forwarded."""
        stream = AskUserVercelAIEventStream[AgentDepsT, OutputDataT](
            self.run_input,
            accept=self.accept,
            sdk_version=self.sdk_version,
            server_message_id=self.server_message_id,
            manage_system_prompt=self.manage_system_prompt,
        )
        stream._calls.update(question_calls(self._held_history, self.messages))  # pyright: ignore[reportPrivateUsage]
        return stream

    def run_stream_native(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """As `VercelAIAdapter.run_stream_native`; answered calls are looked up in the `message_history` first."""
        self._held_history = list(kwargs.get('message_history') or ())
        return super().run_stream_native(*args, **kwargs)

    @cached_property
    def deferred_tool_results(self) -> DeferredToolResults | None:
        """Approval responses as usual; one for a question is a `UserError`: a question is answered, not approved."""
        results = super().deferred_tool_results
        if results is not None:
            calls = question_calls(self._held_history, self.messages)
            if questions := [tool_call_id for tool_call_id in results.approvals if tool_call_id in calls]:
                raise UserError(
                    f'{TOOL_NAME} call {printable(questions[0])!r} is a question: answer it with the tool output '
                    '(the response JSON), not with an approval'
                )
        return results

    def sanitize_messages(
        self, messages: Sequence[ModelMessage], *, deferred_tool_results: DeferredToolResults | None = None
    ) -> list[ModelMessage]:
        """Pydantic AI's sanitizing, once each `ask_user_question` result from the client is checked (`UserError`)."""
        checked = check_client_messages(messages, self._held_history)
        return super().sanitize_messages(checked, deferred_tool_results=deferred_tool_results)

    @classmethod
    def dump_messages(cls, messages: Sequence[ModelMessage], *args: Any, **kwargs: Any) -> list[UIMessage]:
        """As `VercelAIAdapter.dump_messages`, with a pending question `input-available` (never `approval-requested`).

        Each question's result is in the response JSON shape a client sends back.
        """
        dumped: list[UIMessage] = super().dump_messages(with_client_answers(messages), *args, **kwargs)
        for message in dumped:
            message.parts = [
                ToolInputAvailablePart(
                    type=part.type,
                    tool_call_id=part.tool_call_id,
                    title=part.title,
                    input=part.input,
                    provider_executed=part.provider_executed,
                    call_provider_metadata=part.call_provider_metadata,
                )
                if isinstance(part, ToolApprovalRequestedPart) and part.type == _TOOL_PART_TYPE
                else part
                for part in message.parts
            ]
        return dumped
