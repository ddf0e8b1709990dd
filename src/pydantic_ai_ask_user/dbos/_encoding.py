"""What the rows of the questions table decode to, and how what they hold is encoded: the requests and responses
as JSON text, and the DBOS messages that carry an answer (or a withdrawal) to the waiting workflow.

No SQL here: `_questions` reads and writes the rows, and decodes them with `decode_row`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from pydantic import ValidationError

from .._answers import AskUserRequest, AskUserResponse, QuestionWithdrawn, format_validation_error
from .._audience import QuestionContext, audience_from_json, context_from_json
from .._escalation import Escalation, escalation_from_json, escalation_to_json
from .._json import response_from_json, response_to_json
from .._plain_questions import questions_to_json
from .._text import printable
from ._connection import json_value
from ._pending_rows import request_fields

__all__ = (
    'Status',
    'StoredRequest',
    'Identity',
    'UnreadableRowError',
    'decode_row',
    'encode_request',
    'decode_request',
    'encode_response',
    'decode_response',
    'WITHDRAWN_MESSAGE',
    'answer_message',
    'decode_message',
    'message_topic',
)

Status = Literal['pending', 'answered', 'withdrawn']
"""Where a question stands: waiting, answered (or declined) once, or given up by its run."""


@dataclass(frozen=True)
class StoredRequest:
    """One row of the table, decoded."""

    request: AskUserRequest
    """The questions as asked: `request.id` is the tool call id, `request.key` the row's id."""

    workflow_id: str
    """The DBOS workflow that waits for the answer."""

    status: Status
    """Where the question stands."""

    response: AskUserResponse | None
    """The answer, once `status` is `answered`."""

    created_at: float
    """When the question was first published, in seconds since the epoch."""

    answered_by: str | None = None
    """Who answered, from the `answered_by` column, once `status` is `answered` and the answer said who."""

    @property
    def key(self) -> str:
        """The question's key, the row's id: what `DBOSQuestionStore.get`, `respond` and `ask-user answer` take."""
        return self.request.key


@dataclass(frozen=True)
class Identity:
    """Who a stored question is: its key (the row's id), and the run and tool call it was made from."""

    key: str
    """`AskUserRequest.key`: the row's id."""

    tool_call_id: str
    """`AskUserRequest.id`: the tool call id, as the model and the UIs see it."""

    run_id: str | None = None
    """`AskUserRequest.run_id`: the run that asked, or `None` for a request that belongs to no run."""

    audience: tuple[str, ...] | None = None
    """`AskUserRequest.audience`: who may answer, or `None` for anyone."""

    context: QuestionContext | None = None
    """`AskUserRequest.context`: where the question comes from, or `None`."""

    @classmethod
    def of(cls, request: AskUserRequest) -> Identity:
        """The identity of `request`."""
        return cls(
            key=request.key,
            tool_call_id=request.id,
            run_id=request.run_id,
            audience=request.audience,
            context=request.context,
        )


class UnreadableRowError(ValueError):
    """A question's row that cannot be read back as one: its questions, response or columns do not validate."""

    def __init__(self, request_id: str, audience: tuple[str, ...] | None, reason: str) -> None:
        super().__init__(f'question {printable(repr(request_id))} is stored damaged ({printable(reason)})')
        self.request_id = request_id
        """The row's key."""
        self.audience = audience
        """Whom it is addressed to, as far as its audience column says (nobody, when that is damaged too)."""


def decode_row(row: Sequence[Any], request: AskUserRequest | None = None) -> StoredRequest:
    """The decoded form of one row of `_questions.REQUEST_COLUMNS`; given `request` (its questions, decoded before),
    not decoded again. `UnreadableRowError` when the row does not decode.
    """
    try:
        return _decode_row(row, request)
    except ValidationError as error:
        raise UnreadableRowError(
            str(row[0]), _row_audience(row[9]), '; '.join(format_validation_error(error))
        ) from None
    except (ValueError, TypeError) as error:
        reason = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
        raise UnreadableRowError(str(row[0]), _row_audience(row[9]), reason) from None


def _row_audience(text: object) -> tuple[str, ...] | None:
    """A damaged row's audience as far as it reads: `None` (everyone) only when the column is empty."""
    if text is None:
        return None
    try:
        return audience_from_json(json_value(str(text)))
    except (ValueError, TypeError):
        return ()


def _decode_row(row: Sequence[Any], request: AskUserRequest | None) -> StoredRequest:
    (request_id, workflow_id, questions, status, response, created_at, answered_by, run_id, tool_call_id) = row[:9]
    audience, context = row[9:]  # who may answer and where it comes from, as JSON text
    decoded = decode_response(response) if response is not None else None
    if decoded is not None and decoded.answered_by is None and answered_by is not None:
        decoded = replace(decoded, answered_by=answered_by)  # written by a version that kept it in the column only
    if request is not None and request.audience != (
        None if audience is None else audience_from_json(json_value(audience))
    ):
        request = replace(request, audience=None if audience is None else audience_from_json(json_value(audience)))
    if request is None:
        # Rows of earlier versions have neither: their id is the tool call id, and the request belongs to no run.
        request = decode_request(questions, tool_call_id or request_id, run_id=run_id or None)
        if audience is not None or context is not None:
            request = replace(
                request,
                audience=None if audience is None else audience_from_json(json_value(audience)),
                context=None if context is None else context_from_json(json_value(context)),
            )
    return StoredRequest(
        request=request,
        workflow_id=workflow_id,
        status=cast(Status, status),
        response=decoded,
        created_at=float(created_at),
        answered_by=answered_by if answered_by is not None else decoded.answered_by if decoded is not None else None,
    )


def encode_request(request: AskUserRequest) -> str:
    """The questions as the JSON arguments of an `ask_user_question` call, and `notes`, `deadline`, `run_step` and
    the escalation policy (`escalate`) if set.

    `{"questions": [...]}` for a request with none, as earlier versions wrote every request; `recommended`
    is kept in each question that has one. The run step is part of the key (a run may repeat a call id in
    another turn), so a row reads back as the request it was, key and all, without a column of its own.
    """
    data: dict[str, Any] = {'questions': questions_to_json(request)}
    if request.notes:
        data['notes'] = True
    if request.deadline is not None:
        data['deadline'] = request.deadline
    if request.run_step is not None:
        data['run_step'] = request.run_step
    if request.escalate:
        data['escalate'] = escalation_to_json(request.escalate)
    return json.dumps(data, ensure_ascii=False)


def escalation_of(text: str) -> tuple[Escalation, ...]:
    """The escalation policy a request's JSON (`encode_request`) holds; none when it holds none, or is not readable."""
    try:
        data = json.loads(text)
    except ValueError:
        return ()
    return escalation_from_json(cast(dict[str, Any], data).get('escalate')) if isinstance(data, dict) else ()


def decode_request(text: str, request_id: str, *, run_id: str | None = None) -> AskUserRequest:
    """The request stored as `text`, validated again as the tool would; `notes` is False when the row has none.

    `request_id` is the tool call id, `run_id` the run that asked (`None` for a request that belongs to no run).
    """
    data = json.loads(text)
    if not isinstance(data, dict):
        return AskUserRequest.from_tool_args(text, id=request_id)  # refused, with the tool's own message
    fields = request_fields(cast(dict[str, Any], data), run_id)
    request = AskUserRequest.from_tool_args(
        fields.arguments, id=request_id, notes=fields.notes, run_id=run_id, run_step=fields.run_step
    )
    if fields.deadline is not None:
        request = replace(request, deadline=fields.deadline)  # one out of range (not ours) is shown as none
    if fields.escalate:
        request = replace(request, escalate=fields.escalate)
    return request


def encode_response(response: AskUserResponse) -> str:
    """`response` as JSON, in the `AskUserResponse` shape."""
    return json.dumps(response_to_json(response), ensure_ascii=False)


def decode_response(text: str) -> AskUserResponse:
    """The response stored as `text`."""
    return response_from_json(json.loads(text))


WITHDRAWN_MESSAGE = '{"withdrawn": true}'
"""The DBOS message that ends the wait of a withdrawn request (by its caller, or because its workflow ended).

It reads as `QuestionWithdrawn`, never as a decline: nobody answered.
"""


def answer_message(response_json: str) -> str:
    """The DBOS message that carries a response, encoded by `encode_response`, to the waiting workflow.

    Written around the encoded response, not encoded again: `{"response": ...}`.
    """
    return f'{{"response": {response_json}}}'


def decode_message(message: str) -> AskUserResponse:
    """The response an `answer_message` carries; `QuestionWithdrawn` for `WITHDRAWN_MESSAGE`."""
    data = json.loads(message)
    if data.get('withdrawn'):
        raise QuestionWithdrawn()
    return response_from_json(data['response'])


def message_topic(request_id: str) -> str:
    """The DBOS message topic the waiting workflow receives the answer to the question with this key on."""
    return f'ask_user:{request_id}'
