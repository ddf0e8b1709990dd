"""AskUser over AG-UI: Pydantic AI's `AGUIAdapter` and `AGUIEventStream`, with questions as interrupts.

Decisions, and why:

- A pending question ends the run with an *interrupt* outcome, not with `pendingToolCallIds`: the
  AG-UI spec says a run that stopped to ask must not be reported as a success, and an interrupt
  carries what a page needs to draw the question (`metadata.questions`) and the shape of the answer
  (`responseSchema`, which is `RESPONSE_JSON_SCHEMA`). Its id is `ask-user-<tool call id>`, so a
  resume entry for it cannot be mistaken for one of Pydantic AI's approval interrupts (`int-...`).
- The answer comes back as `resume[].payload` in the response JSON shape (`{"answers": [], "cancelled":
  true}` is the person's decline). It is read with `read_response` against the call it answers, then
  turned into the tool result with `ask_user_result`. A misfit is a `UserError`, which the adapter sends
  as `RUN_ERROR` before the agent runs: it never reaches the model.
- `status: "cancelled"` gives the model `WITHDRAWN`, not `DECLINED`: AG-UI defines it as the interrupt
  *abandoned* (`ResumeEntry.status`: "answered or abandoned"), which a client does when it drops the
  question (a closed tab, a cancelled thread), and which says nothing about what the person wanted. A
  person who declines answers with the response JSON's `cancelled: true`, as the example page does.
- A resume entry is routed by the call it names, not by its id's prefix alone: an entry for a question's
  call is ours even under Pydantic AI's approval prefix (`int-<id>`), so approvals never answer a question.
  Refused, with `RUN_ERROR`: an approval for a question (`int-<id>`, any status, or an `{"approved": ...}`
  payload on our interrupt), since an approval says nothing about which option was picked and a denial's
  `reason` is free text; two entries for one call, since which one the person meant cannot be told; an
  entry for a question the conversation is not waiting on (its last response's calls), since Pydantic AI
  would hand it to whatever call now has that id; a cancelled entry carrying a payload.
- A `ToolMessage` answering `ask_user_question` (the CopilotKit pattern, or a replayed history) is
  held to the same rule in `sanitize_messages`, the one step every client message goes through.
- Notes and time: the interrupt's `metadata` has `notes: true` when the person may add a note to each
  answer (`AskUser(notes=True)`; the answer then carries `note`), and `deadline` (a Unix timestamp in
  seconds) when the wait runs out; each only when set. A note is refused unless the `AskUser` takes notes.
- Who answered: an `answered_by` in the client's payload is the client's claim. It never reaches the
  model, and it reaches `DeferredToolResults.answered_by` only through the adapter's `answered_by` hook
  (`answered_by=lambda request, response: ...`), which the app writes with what it knows (its session
  user) and which may return the claim (`response.answered_by`) if it trusts the client. No hook: dropped.
- `AskUserRequestedEvent` and `AskUserAnsweredEvent` become `CUSTOM` events named
  `ask_user_requested` / `ask_user_answered`, carrying `toolCallId`, so a page tied to the tool call
  can show and clear the question in live mode (an `AskUser` with an answerer).

The call a resume entry answers is one the conversation is waiting on: with `manage_message_history='server'`
the held history's (`message_history`, the server's), otherwise the last response of the history the run
continues. With a `conversation_store` the stored history is loaded inside the run, after resume entries
are read, so there the call comes from the client's messages, which `@ag-ui/client` always sends. The
request an entry is checked against, and the one the `answered_by` hook gets, has the deferring run's
`run_id` (and so its `key`) when the history says which run made the call (`ModelResponse.run_id`, which a
server-held history has); a client's messages do not say.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from copy import deepcopy
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final, ForwardRef, Self, cast

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    Message,
    ResumeEntry,
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
)
from pydantic_ai import AgentRunResultEvent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    ModelMessage,
)
from pydantic_ai.output import OutputDataT
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.ui import UIEventStream
from pydantic_ai.ui.ag_ui import AGUIAdapter, AGUIEventStream

from ..._answers import (
    TIMED_OUT,
    TOOL_NAME,
    WITHDRAWN,
    AskUserRequest,
    AskUserResponse,
    check_answered_by,
    deferred_answer,
)
from ..._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ..._json import RESPONSE_JSON_SCHEMA
from ..._module_names import LazyModule
from ..._plain_questions import questions_to_json
from ..._text import printable
from .._answers import (
    ANSWERED_EVENT_NAME,
    REQUESTED_EVENT_NAME,
    PendingCalls,
    answered_payload,
    checked_response,
    refuse_approval_shape,
    request_extras,
    requested_payload,
    with_client_answers,
)
from .._base import QuestionAdapter, QuestionEventStream

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
else:
    # The same names for `typing.get_type_hints`: references resolved in this module when an annotation is read,
    # through Starlette's modules imported only then (Pydantic AI's adapter imports Starlette only to serve).
    _requests = LazyModule('starlette.requests')
    _responses = LazyModule('starlette.responses')
    Request = ForwardRef('_requests.Request', module=__name__)
    Response = ForwardRef('_responses.Response', module=__name__)

__all__ = (
    'AskUserAGUIAdapter',
    'AskUserAGUIEventStream',
    'INTERRUPT_PREFIX',
    'INTERRUPT_REASON',
    'question_interrupt',
    'AnsweredBy',
    'MalformedHistoryError',
)

AnsweredBy = Callable[[AskUserRequest, AskUserResponse], 'str | None']
"""The adapter's `answered_by` hook: who answered `request`, given the client's checked `response`; `None`: unknown.

`response.answered_by` is what the client claimed (or `None`); return it only if the app trusts the client.
"""

INTERRUPT_PREFIX: Final = 'ask-user-'
"""The prefix of a question interrupt's id; the rest is the tool call id."""

INTERRUPT_REASON: Final = 'input_required'
"""The `reason` of a question interrupt (an approval interrupt's is `tool_call`)."""

APPROVAL_INTERRUPT_PREFIX: Final = 'int-'
"""The prefix of Pydantic AI's approval interrupt ids (`int-<tool call id>`), to tell which call an entry names."""


class MalformedHistoryError(UserError):
    """The client's messages do not make a history: a tool result for a call they do not hold, a broken file part.

    `dispatch_request` answers it with 400 before the run starts; a run started otherwise reports it as `RUN_ERROR`.
    """


def _tool_call_id(interrupt_id: str) -> str | None:
    """The tool call a resume entry's interrupt id names: ours (`ask-user-<id>`) or an approval's (`int-<id>`)."""
    for prefix in (INTERRUPT_PREFIX, APPROVAL_INTERRUPT_PREFIX):
        if interrupt_id.startswith(prefix) and len(interrupt_id) > len(prefix):
            return interrupt_id.removeprefix(prefix)
    return None


def question_interrupt(request: AskUserRequest) -> Interrupt:
    """The AG-UI interrupt for a pending question: questions in `metadata`, the answer's schema in `responseSchema`.

    `metadata` also has `notes: true` when the answer may carry a note per question, and `deadline` (a Unix
    timestamp in seconds) when the wait runs out, each only when set.
    """
    return Interrupt(
        id=f'{INTERRUPT_PREFIX}{request.id}',
        reason=INTERRUPT_REASON,
        tool_call_id=request.id,
        message='\n'.join(question.question for question in request.questions),
        # A copy per interrupt: a consumer that edits one schema must not edit every other.
        response_schema=deepcopy(RESPONSE_JSON_SCHEMA),
        metadata={'questions': questions_to_json(request), **request_extras(request)},
    )


@dataclass
class AskUserAGUIEventStream(
    QuestionEventStream[RunAgentInput, BaseEvent, AgentDepsT, OutputDataT], AGUIEventStream[AgentDepsT, OutputDataT]
):
    """`AGUIEventStream` that ends a run waiting on questions with an interrupt and forwards AskUser's events."""

    _deferred: DeferredToolRequests | None = field(default=None, init=False, repr=False)

    def requested_event(self, event: AskUserRequestedEvent) -> BaseEvent:
        """A `CUSTOM` event named `ask_user_requested`."""
        return CustomEvent(name=REQUESTED_EVENT_NAME, value=requested_payload(event))

    def answered_event(self, event: AskUserAnsweredEvent) -> BaseEvent:
        """A `CUSTOM` event named `ask_user_answered`."""
        return CustomEvent(name=ANSWERED_EVENT_NAME, value=answered_payload(event))

    async def handle_run_result(self, event: AgentRunResultEvent[Any]) -> AsyncIterator[BaseEvent]:
        """Note the deferred calls the run ended on, for the interrupt outcome."""
        output = event.result.output
        if isinstance(output, DeferredToolRequests):
            self._deferred = output
        async for e in super().handle_run_result(event):
            yield e  # pragma: no cover  (AG-UI's stream sends nothing for a run result today)

    async def after_stream(self) -> AsyncIterator[BaseEvent]:
        """`RUN_FINISHED`, with an interrupt per pending question added to the outcome the adapter chose."""
        async for event in super().after_stream():
            if isinstance(event, RunFinishedEvent) and event.outcome is not None:
                interrupts = self._question_interrupts()
                if interrupts:
                    if isinstance(event.outcome, RunFinishedInterruptOutcome):
                        interrupts = [*event.outcome.interrupts, *interrupts]
                    event = event.model_copy(update={'outcome': RunFinishedInterruptOutcome(interrupts=interrupts)})
            yield event

    def _question_interrupts(self) -> list[Interrupt]:
        deferred = self._deferred
        if deferred is None:
            return []
        interrupts: list[Interrupt] = []
        for call in deferred.calls:
            if call.tool_name == TOOL_NAME and deferred.kind(call.tool_call_id) == 'question':
                interrupts.append(question_interrupt(self.request(call, deferred)))
        return interrupts


@dataclass
class AskUserAGUIAdapter(
    QuestionAdapter[RunAgentInput, Message, BaseEvent, AgentDepsT, OutputDataT], AGUIAdapter[AgentDepsT, OutputDataT]
):
    """`AGUIAdapter` for an agent with `AskUser`: questions as interrupts, each answer checked before the model sees it.

    Use it exactly like `AGUIAdapter` (`AskUserAGUIAdapter.dispatch_request(request, agent=agent)`), with one
    more keyword option, `answered_by` (see `AnsweredBy`): who answered each question a resume entry answers,
    for `DeferredToolResults.answered_by`.
    """

    answered_by: AnsweredBy | None = field(default=None, kw_only=True)
    """Names who answered each question answered by a resume entry; without it, the client's claim is dropped.

    Pass it to `dispatch_request` / `from_request` like the other options. What it returns must pass
    `check_answered_by` (a `UserError` otherwise). An answer sent as a `ToolMessage` goes into the history,
    which has no `answered_by`.
    """

    def build_event_stream(self) -> UIEventStream[Any, BaseEvent, AgentDepsT, OutputDataT]:
        """The AG-UI event stream with questions as interrupts and AskUser's events forwarded."""
        stream = AskUserAGUIEventStream[AgentDepsT, OutputDataT](
            self.run_input,
            accept=self.accept,
            ag_ui_version=self.ag_ui_version,
            include_usage=self.include_usage,
            manage_system_prompt=self.manage_system_prompt,
            preserve_file_data=self.preserve_file_data,
        )
        return self.with_question_calls(stream)

    @cached_property
    def deferred_tool_results(self) -> DeferredToolResults | None:
        """Resume entries: answers to questions checked and turned into tool results, other approvals as usual.

        A `UserError` (sent as `RUN_ERROR`) names the question and what was wrong with its entry: see the
        module's decisions for what is refused.
        """
        resume = self.run_input.resume or []
        pending = self.pending_calls()
        entries_by_call: dict[str, ResumeEntry] = {}
        questions: list[tuple[str, ResumeEntry]] = []
        others: list[ResumeEntry] = []
        for entry in resume:
            tool_call_id = _tool_call_id(entry.interrupt_id)
            if tool_call_id is None:
                others.append(entry)  # Pydantic AI's reader refuses an id it cannot map to a call
                continue
            if tool_call_id in entries_by_call:
                raise UserError(
                    f'resume entries {printable(entries_by_call[tool_call_id].interrupt_id)!r} and '
                    f'{printable(entry.interrupt_id)!r} both answer tool call {printable(tool_call_id)!r}; '
                    'send one entry per interrupt'
                )
            entries_by_call[tool_call_id] = entry
            if entry.interrupt_id.startswith(INTERRUPT_PREFIX) or self.asks_question(pending, tool_call_id):
                questions.append((tool_call_id, entry))
            else:
                others.append(entry)
        approvals: DeferredToolResults | None = None
        if others:
            # Pydantic AI's own reading of approval interrupts, on a copy of the input holding only those.
            plain = AGUIAdapter[AgentDepsT, OutputDataT](
                agent=self.agent, run_input=self.run_input.model_copy(update={'resume': others})
            )
            approvals = plain.deferred_tool_results
        if not questions:
            return approvals
        results = approvals or DeferredToolResults()
        for tool_call_id, entry in questions:
            results.update(self._answer(pending, tool_call_id, entry))
        return results

    def _answer(self, pending: PendingCalls, tool_call_id: str, entry: ResumeEntry) -> DeferredToolResults:
        """The tool result for one resume entry answering the question `tool_call_id`, or `UserError`."""
        interrupt_id = printable(entry.interrupt_id)
        if not entry.interrupt_id.startswith(INTERRUPT_PREFIX):
            raise UserError(
                f'resume entry {interrupt_id!r} is an approval, but {TOOL_NAME} call {printable(tool_call_id)!r} '
                f'is a question: answer its interrupt {printable(INTERRUPT_PREFIX + tool_call_id)!r} with the '
                'response JSON'
            )
        call = pending.question(tool_call_id)
        if call is None:
            raise UserError(
                f'resume entry {interrupt_id!r} answers a question this conversation does not hold: it is waiting '
                f'on no {TOOL_NAME} call {printable(tool_call_id)!r}'
            )
        request = pending.request(call, notes=self.notes)
        if entry.status == 'cancelled':
            if entry.payload is not None:
                raise UserError(
                    f'resume entry {interrupt_id!r} is cancelled but carries a payload; to decline, resolve it '
                    'with {"answers": [], "cancelled": true}'
                )
            # Abandoned, not declined: nobody answered, and no answered_by hook is asked who did.
            return DeferredToolResults(calls={tool_call_id: WITHDRAWN})
        refuse_approval_shape(tool_call_id, entry.payload)
        response = checked_response(request, entry.payload)
        if response is None:
            return DeferredToolResults(calls={tool_call_id: TIMED_OUT})
        answered_by = None if self.answered_by is None else self.answered_by(request, response)
        if answered_by is not None and (problem := check_answered_by(answered_by)) is not None:
            raise UserError(f'the answered_by hook named who answered {printable(tool_call_id)!r}, but {problem}')
        return deferred_answer(request, replace(response, answered_by=answered_by))

    @classmethod
    def dump_messages(cls, messages: Sequence[ModelMessage], *args: Any, **kwargs: Any) -> list[Message]:
        """As `AGUIAdapter.dump_messages`, each question's result in the response JSON shape a client sends back."""
        return super().dump_messages(with_client_answers(messages), *args, **kwargs)

    @classmethod
    def load_messages(cls, messages: Sequence[Message], *args: Any, **kwargs: Any) -> list[ModelMessage]:
        """As `AGUIAdapter.load_messages`; a tool message nesting JSON deeper than Python can read is a `UserError`.

        Pydantic AI reads each tool message's content as JSON when it looks like JSON; `'[' * 100000` would
        otherwise end the request in a `RecursionError` (an HTTP 500) instead of the protocol's `RUN_ERROR`.
        """
        try:
            return super().load_messages(messages, *args, **kwargs)
        except RecursionError:
            raise UserError('a message nests JSON deeper than the server reads; send the response JSON') from None
        except ValueError as error:
            # Pydantic AI's own refusal of a history that does not hold together (a `ToolMessage` whose call
            # is not in it, a file part without its data); it would otherwise end the request in a 500.
            raise MalformedHistoryError(f'the messages are not a valid history: {printable(str(error))}') from None

    @classmethod
    async def from_request(cls, request: Request, *args: Any, **kwargs: Any) -> Self:
        """As `AGUIAdapter.from_request`; `MalformedHistoryError` when the client's messages are not a history.

        The messages are read here, before any response starts, so that `dispatch_request` can refuse them
        with 400; a message the server cannot read (JSON nested too deep) is left to the run's `RUN_ERROR`.
        """
        # AGUIAdapter.from_request is typed as returning an AGUIAdapter; it builds `cls`.
        adapter = cast('Self', await super().from_request(request, *args, **kwargs))
        try:
            _ = adapter.messages  # loads and caches them
        except MalformedHistoryError:
            raise
        except UserError:
            pass
        return adapter

    @classmethod
    async def dispatch_request(cls, request: Request, *args: Any, **kwargs: Any) -> Response:
        """As `AGUIAdapter.dispatch_request`; messages that are not a history get 400 `{"detail": "..."}`."""
        from starlette.responses import JSONResponse

        try:
            return await super().dispatch_request(request, *args, **kwargs)
        except MalformedHistoryError as error:
            return JSONResponse({'detail': str(error)}, status_code=400)
