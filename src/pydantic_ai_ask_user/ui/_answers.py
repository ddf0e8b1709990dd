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

Notes: a call is rebuilt with the `notes` of the agent's `AskUser` (the adapters find it), so a note in the
client's answer is taken only when `AskUser(notes=True)`, and refused otherwise. Who answered: the
`answered_by` a client puts in its answer is a claim anyone can write; it never reaches the model, and it
reaches `DeferredToolResults.answered_by` only through the adapter's `answered_by` hook, which decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Final, cast

from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

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
from .._json import questions_to_json, read_response, response_to_json
from .._text import printable

__all__ = (
    'REQUESTED_EVENT_NAME',
    'ANSWERED_EVENT_NAME',
    'question_calls',
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
    """Every `ask_user_question` call in `histories`, by tool call id; an earlier history wins a clash."""
    calls: dict[str, ToolCallPart] = {}
    for history in histories:
        for message in history:
            if isinstance(message, ModelResponse):
                for part in message.parts:
                    if isinstance(part, ToolCallPart) and part.tool_name == TOOL_NAME:
                        calls.setdefault(part.tool_call_id, part)
    return calls


def request_for(call: ToolCallPart, *, notes: bool = False) -> AskUserRequest:
    """The request of `call`, or `UserError`: a call the tool itself refused has no question to answer."""
    try:
        return AskUserRequest.from_tool_call(call, notes=notes)
    except ValueError:
        raise UserError(
            f'tool call {printable(call.tool_call_id)!r} to {TOOL_NAME} holds no valid question, so it has no answer'
        ) from None


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

    The call each result answers is looked up in `held` (the server's history) first, then in
    `messages`. A result for a call neither holds is refused too: nothing says what it answers.
    `notes` is `AskUser.notes`: without it, an answer with a note is refused.
    """
    calls = question_calls(held, messages)
    checked: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(_answers_a_question(part, calls) for part in message.parts):
            parts = [
                replace(part, tool_name=TOOL_NAME, content=_checked_return(part, calls, notes))
                if _answers_a_question(part, calls)
                else part
                for part in message.parts
            ]
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
    calls = question_calls(messages)
    shown: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
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
