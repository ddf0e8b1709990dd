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
  approval response for a question, approved or denied (a denial's `reason` is free text): a question is
  answered, not approved; and so are two results for one call. An `output-error` or `output-denied` part
  for a question is read like an output (its text must be the response JSON), so its text never reaches
  the model unchecked either.
- Which call: a result answers the nearest call with its id before it, and an approval is refused when
  the call waiting under its id (else any call with it) is a question, so a provider that repeats tool
  call ids (`call_0`) never has an answer checked against an earlier question, nor an approval of another
  tool refused for an old question's id.
- Results the server streams (`tool-output-available`) or dumps are in the response JSON shape too,
  so a client sends back exactly what it was shown.
- `AskUserRequestedEvent` and `AskUserAnsweredEvent` become `data-ask-user-requested` and
  `data-ask-user-answered` parts whose `id` is the tool call id. The requested part's data has
  `notes: true` when the person may add a note to each answer (`AskUser(notes=True)`) and `deadline`
  (a Unix timestamp in seconds) when the wait runs out, each only when set: the tool part's `input`
  is the model's arguments, and has neither.
- A note in the output is taken only when the `AskUser` takes notes, and refused otherwise.
- Who answered: an `answered_by` in the output is the client's claim. The answer is a tool output
  in the history, which has no `answered_by`; the claim reaches neither the model nor the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from pydantic_ai import DeferredToolResults
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.output import OutputDataT
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.ui import UIEventStream
from pydantic_ai.ui.vercel_ai import VercelAIAdapter, VercelAIEventStream
from pydantic_ai.ui.vercel_ai.request_types import (
    RequestData,
    ToolApprovalRequestedPart,
    ToolInputAvailablePart,
    UIMessage,
)
from pydantic_ai.ui.vercel_ai.response_types import BaseChunk, DataChunk

from ..._answers import TOOL_NAME
from ..._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ..._text import printable
from .._answers import (
    ANSWERED_EVENT_NAME,
    REQUESTED_EVENT_NAME,
    answered_payload,
    requested_payload,
    with_client_answers,
)
from .._base import QuestionAdapter, QuestionEventStream

__all__ = ('AskUserVercelAIAdapter', 'AskUserVercelAIEventStream', 'REQUESTED_DATA_TYPE', 'ANSWERED_DATA_TYPE')

REQUESTED_DATA_TYPE: Final = f'data-{REQUESTED_EVENT_NAME.replace("_", "-")}'
"""The type of the data part for a new question: `data-ask-user-requested`."""

ANSWERED_DATA_TYPE: Final = f'data-{ANSWERED_EVENT_NAME.replace("_", "-")}'
"""The type of the data part for an answered (declined, timed out, withdrawn, failed) question."""

_TOOL_PART_TYPE: Final = f'tool-{TOOL_NAME}'


@dataclass
class AskUserVercelAIEventStream(
    QuestionEventStream[RequestData, BaseChunk, AgentDepsT, OutputDataT], VercelAIEventStream[AgentDepsT, OutputDataT]
):
    """`VercelAIEventStream` that forwards AskUser's events and shows question results in the response JSON shape."""

    def requested_event(self, event: AskUserRequestedEvent) -> BaseChunk:
        """A `data-ask-user-requested` part whose id is the tool call id."""
        return DataChunk(type=REQUESTED_DATA_TYPE, id=event.request.id, data=requested_payload(event))

    def answered_event(self, event: AskUserAnsweredEvent) -> BaseChunk:
        """A `data-ask-user-answered` part whose id is the tool call id."""
        return DataChunk(type=ANSWERED_DATA_TYPE, id=event.request_id, data=answered_payload(event))


@dataclass
class AskUserVercelAIAdapter(
    QuestionAdapter[RequestData, UIMessage, BaseChunk, AgentDepsT, OutputDataT],
    VercelAIAdapter[AgentDepsT, OutputDataT],
):
    """`VercelAIAdapter` for an agent with `AskUser`: every answer checked before the model sees it.

    Use it exactly like `VercelAIAdapter` (`AskUserVercelAIAdapter.dispatch_request(request, agent=agent,
    sdk_version=6)`).
    """

    def build_event_stream(self) -> UIEventStream[Any, BaseChunk, AgentDepsT, OutputDataT]:
        """The Vercel AI event stream with AskUser's events forwarded."""
        stream = AskUserVercelAIEventStream[AgentDepsT, OutputDataT](
            self.run_input,
            accept=self.accept,
            sdk_version=self.sdk_version,
            server_message_id=self.server_message_id,
            manage_system_prompt=self.manage_system_prompt,
        )
        return self.with_question_calls(stream)

    @cached_property
    def deferred_tool_results(self) -> DeferredToolResults | None:
        """Approval responses as usual; one for a question is a `UserError`: a question is answered, not approved."""
        results = super().deferred_tool_results
        if results is not None:
            pending = self.pending_calls()
            asked = [tool_call_id for tool_call_id in results.approvals if self.asks_question(pending, tool_call_id)]
            if asked:
                raise UserError(
                    f'{TOOL_NAME} call {printable(asked[0])!r} is a question: answer it with the tool output '
                    '(the response JSON), not with an approval'
                )
        return results

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
