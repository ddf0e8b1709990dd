"""The JSON shapes of questions and responses, shared by the web API, the durable store and the command line.

`{"answers": [{"header": ..., "selected": [...]} | {"header": ..., "custom_answer": ...}], "cancelled": false}`.
Not imported by the package root: only the front ends that speak JSON load it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._answers import AskUserAnswer, AskUserRequest, AskUserResponse

__all__ = ('questions_to_json', 'response_from_json', 'response_to_json')


class _AnswerJSON(BaseModel):
    # Strict: JSON written by a person or a frontend gets no coercion (`"true"` is not a boolean).
    model_config = ConfigDict(extra='forbid', strict=True)

    header: str
    selected: list[str] = Field(default_factory=list[str])
    custom_answer: str | None = None


class _ResponseJSON(BaseModel):
    model_config = ConfigDict(extra='forbid', strict=True)

    answers: list[_AnswerJSON] = Field(default_factory=list[_AnswerJSON])
    cancelled: bool = False


def response_from_json(data: Any) -> AskUserResponse:
    """An `AskUserResponse` from its JSON shape (already parsed); `ValueError` naming each problem.

    Only the shape is checked here; whether it fits its request is `check_response`'s job.
    """
    if not isinstance(data, dict):
        raise ValueError('a response is a JSON object with "answers" and/or "cancelled"')
    try:
        shape = _ResponseJSON.model_validate(data)
    except ValidationError as error:
        problems = '; '.join(
            f'{".".join(str(part) for part in item["loc"]) or "response"}: {item["msg"]}'
            for item in error.errors(include_url=False)
        )
        raise ValueError(problems) from None
    return AskUserResponse(
        answers=tuple(
            AskUserAnswer(header=answer.header, selected=tuple(answer.selected), custom_answer=answer.custom_answer)
            for answer in shape.answers
        ),
        cancelled=shape.cancelled,
    )


def response_to_json(response: AskUserResponse) -> dict[str, Any]:
    """`response` as a JSON-ready dict, the inverse of `response_from_json`."""
    answers: list[dict[str, Any]] = []
    for answer in response.answers:
        item: dict[str, Any] = {'header': answer.header}
        if answer.custom_answer is not None:
            item['custom_answer'] = answer.custom_answer
        else:
            item['selected'] = list(answer.selected)
        answers.append(item)
    return {'answers': answers, 'cancelled': response.cancelled}


def questions_to_json(request: AskUserRequest) -> list[dict[str, Any]]:
    """The request's questions in the shape the model wrote them: the `questions` of an `ask_user_question` call."""
    return [question.model_dump(mode='json') for question in request.questions]
