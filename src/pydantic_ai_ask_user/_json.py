"""The JSON shapes of questions and responses: the one reader and writer of each, for every front end and app.

A response is `{"answers": [{"header": ..., "selected": [...]} | {"header": ..., "custom_answer": ...}],
"cancelled": false}`, each answer with an optional `"note"`, the response with an optional `"answered_by"`;
`RESPONSE_JSON_SCHEMA` is its JSON schema. Reading checks the shape only; whether a
response fits the request it answers is `check_response`'s job, and an app must call it (or `read_response`,
which does both).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._answers import AskUserAnswer, AskUserRequest, AskUserResponse, check_response

__all__ = ('response_from_json', 'response_to_json', 'read_response', 'RESPONSE_JSON_SCHEMA')


class AnswerJSON(BaseModel):
    # Strict: JSON written by a person or a frontend gets no coercion (`"true"` is not a boolean).
    model_config = ConfigDict(extra='forbid', strict=True)

    header: str = Field(description='The header of the question this answers, as the request has it.')
    selected: list[str] = Field(
        default_factory=list[str], description='The labels of the options picked (one unless multi_select).'
    )
    custom_answer: str | None = Field(
        default=None, description="The person's own words instead of an option; then `selected` is empty."
    )
    note: str | None = Field(
        default=None, description='What the person added to this answer; only when the request takes notes.'
    )


class ResponseJSON(BaseModel):
    model_config = ConfigDict(extra='forbid', strict=True)

    answers: list[AnswerJSON] = Field(
        default_factory=list[AnswerJSON], description='One answer per question; empty when cancelled.'
    )
    cancelled: bool = Field(default=False, description='True when the person declined to answer.')
    answered_by: str | None = Field(
        default=None,
        description='Who answered, as the front end knows them. A claim, not proof: an app that authenticates '
        'people sets it itself.',
    )


def response_from_json(data: Any) -> AskUserResponse:
    """An `AskUserResponse` from its JSON shape (already parsed); `ValueError` naming each problem.

    Only the shape is checked here; whether it fits its request is `check_response`'s job.
    """
    if not isinstance(data, dict):
        raise ValueError('a response is a JSON object with "answers" and/or "cancelled"')
    try:
        shape = ResponseJSON.model_validate(data)
    except ValidationError as error:
        problems = '; '.join(
            f'{".".join(str(part) for part in item["loc"]) or "response"}: {item["msg"]}'
            for item in error.errors(include_url=False)
        )
        raise ValueError(problems) from None
    return AskUserResponse(
        answers=tuple(
            AskUserAnswer(
                header=answer.header,
                selected=tuple(answer.selected),
                custom_answer=answer.custom_answer,
                note=answer.note,
            )
            for answer in shape.answers
        ),
        cancelled=shape.cancelled,
        answered_by=shape.answered_by,
    )


RESPONSE_JSON_SCHEMA: dict[str, Any] = ResponseJSON.model_json_schema()
"""The JSON schema of a response's JSON shape, as `response_from_json` reads it and `response_to_json` writes it."""


def read_response(request: AskUserRequest, data: Any) -> AskUserResponse:
    """The response in `data` (parsed JSON) to `request`, checked against it: `ValueError` naming each problem.

    The one call an app needs for an answer a client sent: the shape (`response_from_json`), then the fit
    (`check_response`: known headers, one answer each, labels that are options, custom answers within the rules).
    """
    response = response_from_json(data)
    check_response(request, response)
    return response


def response_to_json(response: AskUserResponse) -> dict[str, Any]:
    """`response` as a JSON-ready dict, the inverse of `response_from_json`."""
    answers: list[dict[str, Any]] = []
    for answer in response.answers:
        item: dict[str, Any] = {'header': answer.header}
        if answer.custom_answer is not None:
            item['custom_answer'] = answer.custom_answer
        else:
            item['selected'] = list(answer.selected)
        if answer.note is not None:
            item['note'] = answer.note
        answers.append(item)
    data: dict[str, Any] = {'answers': answers, 'cancelled': response.cancelled}
    if response.answered_by is not None:
        data['answered_by'] = response.answered_by
    return data
