"""What both UI integrations share: the answer a client sends, checked; the answer a client is shown; event payloads.

The rule both protocols follow: a client only ever sees and sends an answer in the response JSON shape
(`response_to_json` / `read_response`), never in the shape the model gets (`ask_user_result`). The
model's shape cannot tell a picked label from the person's own words (`{"Region": ["MARS"]}` is a
valid custom answer), so accepting it from a client would let any client put words in the person's
mouth. The response shape can: `selected` must be labels of the question, `custom_answer` is the
person's own words. So every tool result for `ask_user_question` a client sends back, the answer to
a pending question as much as one replayed from an earlier turn, is read with `read_response` against
the call it answers and turned into the model's shape here, and every result the server shows a
client (streamed, or dumped for a reload) is turned back into the response shape.

Which call: providers repeat tool call ids across turns (`call_0`, `functions.<tool>:<n>`), so one
conversation can hold several `ask_user_question` calls with one id. A result answers the call with its id
in the nearest response before it (as the model reads it), and a resume answers a call the conversation's
last response is still waiting on (`PendingCalls`), never an earlier question that had the same id.

Notes: a call is rebuilt with the `notes` of the agent's `AskUser` (the adapters find it), so a note in the
client's answer is taken only when `AskUser(notes=True)`, and refused otherwise. Who answered: the
`answered_by` a client puts in its answer is a claim anyone can write; it never reaches the model, and it
reaches `DeferredToolResults.answered_by` only through the adapter's `answered_by` hook, which decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, cast

from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,  # pyright: ignore[reportDeprecated]  # still what a retried call is answered with
    ToolCallPart,
    ToolReturnPart,
)

from .._answers import (
    DECLINED,
    TIMED_OUT,
    TOOL_NAME,
    AnswerResult,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    ask_user_result,
)
from .._events import AskUserAnsweredEvent, AskUserRequestedEvent
from .._json import read_response, response_to_json
from .._plain_questions import questions_to_json
from .._text import printable

__all__ = (
    'REQUESTED_EVENT_NAME',
    'ANSWERED_EVENT_NAME',
    'question_calls',
    'PendingCalls',
    'pending_calls',
    'refuse_approval_shape',
    'request_for',
    'checked_answer',
    'checked_response',
    'check_client_messages',
    'answer_for_client',
    'with_client_answers',
    'requested_payload',
    'request_extras',
    'answered_payload',
)

REQUESTED_EVENT_NAME: Final = 'ask_user_requested'
"""The name of the AG-UI custom event (and, as `data-ask-user-requested`, the Vercel data part) for a new question."""

ANSWERED_EVENT_NAME: Final = 'ask_user_answered'
"""The name of the AG-UI custom event (and, as `data-ask-user-answered`, the Vercel data part) for an answer."""


def question_calls(*histories: Iterable[ModelMessage]) -> dict[str, ToolCallPart]:
    """The latest `ask_user_question` call with each id in each of `histories`; an earlier history wins a clash.

    The latest, because providers repeat ids across turns: a later call with the same id is a new question.
    An earlier history wins, because the first is the server's (`message_history`) and the next the client's.
    """
    calls: dict[str, ToolCallPart] = {}
    for history in histories:
        latest: dict[str, ToolCallPart] = {}
        for message in history:
            if isinstance(message, ModelResponse):
                latest.update(_question_calls_of(message))
        for tool_call_id, call in latest.items():
            calls.setdefault(tool_call_id, call)
    return calls


def _question_calls_of(response: ModelResponse) -> dict[str, ToolCallPart]:
    return {
        part.tool_call_id: part
        for part in response.parts
        if isinstance(part, ToolCallPart) and part.tool_name == TOOL_NAME
    }


@dataclass(frozen=True)
class PendingCalls:
    """What a conversation is waiting on: the tool calls of its last response that no request after it answers.

    Only these can be answered by a resume (AG-UI `resume[]`, a Vercel approval): Pydantic AI resumes the last
    response's calls, so an entry for any other call would reach the model as the answer to something else.
    """

    calls: dict[str, ToolCallPart] = field(default_factory=dict[str, ToolCallPart])
    """Each waiting call, of any tool, by tool call id."""

    run_id: str | None = None
    """The run whose response made the calls (`ModelResponse.run_id`), which is the run that deferred them.

    It is what that run published as `RUN_ID_METADATA_KEY`, so a request rebuilt here has the deferring run's
    `key`. `None` when the history does not say, as a history a client sends over AG-UI or Vercel does not.
    """

    run_step: int | None = None
    """The step of that run in which its model made the calls (`RunContext.run_step`): its n-th response.

    Counted from the history (the responses of `run_id` up to this one), as Pydantic AI numbers the steps of a
    run; `None` with `run_id`.
    """

    def question(self, tool_call_id: str) -> ToolCallPart | None:
        """The waiting `ask_user_question` call with this id; `None` if the call is not waiting or is another tool's."""
        call = self.calls.get(tool_call_id)
        return call if call is not None and call.tool_name == TOOL_NAME else None

    def request(self, call: ToolCallPart, *, notes: bool = False) -> AskUserRequest:
        """The request of a waiting question, with the run that deferred it; `UserError` as `request_for`."""
        return request_for(call, notes=notes, run_id=self.run_id, run_step=self.run_step)


def pending_calls(history: Sequence[ModelMessage]) -> PendingCalls:
    """The calls `history` is waiting on (see `PendingCalls`); none when it holds no response."""
    last = max((i for i, message in enumerate(history) if isinstance(message, ModelResponse)), default=None)
    if last is None:
        return PendingCalls()
    response = history[last]
    assert isinstance(response, ModelResponse)
    answered = {
        part.tool_call_id
        for message in history[last + 1 :]
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name is not None)  # pyright: ignore[reportDeprecated]
    }
    calls = {
        part.tool_call_id: part
        for part in response.parts
        if isinstance(part, ToolCallPart) and part.tool_call_id not in answered
    }
    run_id = response.run_id
    run_step = None
    if run_id is not None:
        # Pydantic AI's step n of a run is the run's n-th model response.
        run_step = sum(
            isinstance(message, ModelResponse) and message.run_id == run_id for message in history[: last + 1]
        )
    return PendingCalls(calls, run_id, run_step)


def request_for(
    call: ToolCallPart, *, notes: bool = False, run_id: str | None = None, run_step: int | None = None
) -> AskUserRequest:
    """The request of `call`, asked in step `run_step` of run `run_id`, or `UserError`: a call the tool refused has no
    question.
    """
    try:
        return AskUserRequest.from_tool_call(call, notes=notes, run_id=run_id, run_step=run_step)
    except ValueError:
        raise UserError(
            f'tool call {printable(call.tool_call_id)!r} to {TOOL_NAME} holds no valid question, so it has no answer'
        ) from None


def refuse_approval_shape(tool_call_id: str, data: Any) -> None:
    """`UserError` if `data` is an approval (`{"approved": ...}`), not an answer: a question is answered, not approved.

    Said on its own, before the response is read, because a client sending it drew approve/deny buttons for a
    multiple-choice question: an approval says nothing about which option the person picked, and a denial's
    `reason` is free text that would reach the model as the person's answer.
    """
    if isinstance(data, dict) and 'approved' in data:
        raise UserError(
            f'{TOOL_NAME} call {printable(tool_call_id)!r} is a question: answer it with the response JSON '
            '({"answers": [...], "cancelled": false}; "cancelled": true declines), not with an approval'
        )


def checked_answer(request: AskUserRequest, data: Any) -> AnswerResult:
    """What the model gets for `data`, a client's answer in the response JSON shape, checked against `request`.

    `data` may be the parsed JSON or its text (an AG-UI `ToolMessage` carries text). The exact
    `TIMED_OUT` sentence is taken as is: it is what a client was shown for a wait that ran out, and
    it says nothing on the person's behalf. Anything else that does not fit is a `UserError` naming
    the question and the problem, which the adapters send to the client as the protocol's error event.
    """
    response = checked_response(request, data)
    return TIMED_OUT if response is None else ask_user_result(request, response)


def checked_response(request: AskUserRequest, data: Any) -> AskUserResponse | None:
    """The response in `data`, checked against `request` as `checked_answer` does; `None` for the `TIMED_OUT` sentence.

    Its `answered_by` is whatever the client wrote: a claim, for the adapter's `answered_by` hook to judge.
    """
    if isinstance(data, str):
        if data == TIMED_OUT:
            return None
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser can follow
            raise UserError(
                f'the answer to {TOOL_NAME} call {printable(request.id)!r} is not JSON; send the response JSON, '
                '{"answers": [{"header": ..., "selected": [...]}], "cancelled": false}'
            ) from None
    try:
        return read_response(request, data)
    except ValueError as error:
        raise UserError(
            f'the answer to {TOOL_NAME} call {printable(request.id)!r} was refused: {printable(str(error))}'
        ) from None


def check_client_messages(
    messages: Sequence[ModelMessage], held: Sequence[ModelMessage], *, notes: bool = False
) -> list[ModelMessage]:
    """`messages` with every `ask_user_question` result a client sent checked and turned into the model's shape.

    The call each result answers is the nearest call with its id before it in `messages`, else the latest in
    `held` (the server's history, which `messages` continue). A result for a call neither holds is refused too:
    nothing says what it answers. So is a second result for one call: the model would read two answers.
    `notes` is `AskUser.notes`: without it, an answer with a note is refused.
    """
    held_calls = question_calls(held)
    client_calls: dict[str, ToolCallPart] = {}  # by id, the nearest call before the message being read
    answered: set[str] = set()  # the calls answered since the response that made them
    checked: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            made = _question_calls_of(message)
            client_calls.update(made)
            answered -= made.keys()
        else:
            calls = {**held_calls, **client_calls}
            if any(_answers_a_question(part, calls) for part in message.parts):
                parts: list[Any] = []
                for part in message.parts:
                    if _answers_a_question(part, calls):
                        assert isinstance(part, ToolReturnPart)
                        if part.tool_call_id in answered:
                            raise UserError(
                                f'the conversation answers {TOOL_NAME} call {printable(part.tool_call_id)!r} twice; '
                                'send one answer per question'
                            )
                        answered.add(part.tool_call_id)
                        part = replace(part, tool_name=TOOL_NAME, content=_checked_return(part, calls, notes))
                    parts.append(part)
                message = replace(message, parts=parts)
        checked.append(message)
    return checked


def _is_question_return(part: object) -> bool:
    return isinstance(part, ToolReturnPart) and part.tool_name == TOOL_NAME


def _answers_a_question(part: object, calls: dict[str, ToolCallPart]) -> bool:
    # By the call it answers, not only by the name the client gave it: providers match a result to its call
    # by id, so a result renamed `anything` for a question's call id would reach the model as the answer.
    return isinstance(part, ToolReturnPart) and (part.tool_name == TOOL_NAME or part.tool_call_id in calls)


def _checked_return(part: Any, calls: dict[str, ToolCallPart], notes: bool) -> AnswerResult:
    assert isinstance(part, ToolReturnPart)
    call = calls.get(part.tool_call_id)
    if call is None:
        raise UserError(
            f'an answer to {TOOL_NAME} call {printable(part.tool_call_id)!r}, which this conversation does not hold'
        )
    return checked_answer(request_for(call, notes=notes), part.content)


def answer_for_client(request: AskUserRequest, content: Any) -> Any:
    """The model's `content` for `request` as a client is shown it: the response JSON shape.

    `DECLINED` becomes a cancelled response; `TIMED_OUT` and anything this cannot read stay as they
    are. Only server-made results come through here, so a value that is one of the question's labels
    is read as picked, anything else as the person's own words. An answer with a note
    (`{"answer": [...], "note": "..."}`, with `AskUser(notes=True)`) keeps its note.
    """
    if content == DECLINED:
        return response_to_json(AskUserResponse(cancelled=True))
    if not isinstance(content, dict):
        return content
    by_header = cast(dict[str, Any], content)
    answers: list[AskUserAnswer] = []
    for question in request.questions:
        values: Any = by_header.get(question.header)
        note: Any = None
        if isinstance(values, dict):
            noted = cast(dict[str, Any], values)
            values, note = noted.get('answer'), noted.get('note')
            if set(noted) != {'answer', 'note'} or not isinstance(note, str):
                return by_header
        if not isinstance(values, list):
            return by_header
        picked = cast(list[Any], values)
        if not all(isinstance(value, str) for value in picked):
            return by_header
        labels = {option.label for option in question.options}
        if len(picked) == 1 and picked[0] not in labels:
            answers.append(AskUserAnswer(header=question.header, custom_answer=picked[0], note=note))
        else:
            answers.append(AskUserAnswer(header=question.header, selected=tuple(picked), note=note))
    return response_to_json(AskUserResponse(answers=tuple(answers)))


def with_client_answers(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """`messages` with each `ask_user_question` result in the response JSON shape, for `dump_messages`."""
    calls: dict[str, ToolCallPart] = {}  # by id, the nearest call before the message being shown
    shown: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls.update(_question_calls_of(message))
        else:
            parts = [_shown_return(part, calls) for part in message.parts]
            message = replace(message, parts=parts)
        shown.append(message)
    return shown


def _shown_return(part: Any, calls: dict[str, ToolCallPart]) -> Any:
    if not _is_question_return(part) or (call := calls.get(part.tool_call_id)) is None:
        return part
    try:
        request = AskUserRequest.from_tool_call(call)
    except ValueError:
        return part
    return replace(part, content=answer_for_client(request, part.content))


def requested_payload(event: AskUserRequestedEvent) -> dict[str, Any]:
    """The JSON a page gets for a new question: the tool call id and the questions as the model wrote them.

    Plus `notes: true` when the person may add a note to each answer, and `deadline` (a Unix timestamp in
    seconds) when the wait runs out, for a countdown: each only when set.
    """
    return {
        'toolCallId': event.request.id,
        'questions': questions_to_json(event.request),
        **request_extras(event.request),
    }


def request_extras(request: AskUserRequest) -> dict[str, Any]:
    """What a page needs besides the questions: `{"notes": true}` when `request` takes notes, `{"deadline": ...}`."""
    extras: dict[str, Any] = {}
    if request.notes:
        extras['notes'] = True
    if request.deadline is not None:
        extras['deadline'] = request.deadline
    return extras


def answered_payload(event: AskUserAnsweredEvent) -> dict[str, Any]:
    """The JSON a page gets when a question is answered, declined, timed out, withdrawn or failed."""
    return {
        'toolCallId': event.request_id,
        'response': response_to_json(event.response),
        'timedOut': event.timed_out,
        'failed': event.failed,
        'withdrawn': event.withdrawn,
    }
