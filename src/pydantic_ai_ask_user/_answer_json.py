"""The answer `ask-user answer --json` reads: the `AskUserResponse` shape, or the shape the model gets."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from ._answers import AskUserAnswer, AskUserRequest, AskUserResponse
from ._json import response_from_json
from ._questions import Question
from ._text import fold

__all__ = ('parse_answer_json',)


def parse_answer_json(request: AskUserRequest, data: Any) -> AskUserResponse:
    """The response `data` gives for `request`: the `AskUserResponse` shape or the model-result shape.

    In the model-result shape each header maps to its labels (a list, or one string), or to
    `{"custom": "text"}` for the person's own words; with a note (when the request takes notes), to
    `{"answer": [labels], "note": "text"}` (the shape the model gets) or `{"custom": "text", "note": "text"}`.
    In either shape a label is matched ignoring case and width, as labels are told apart (`fold`):
    `postgresql` picks `PostgreSQL`. A pick that matches no label is a `ValueError` naming the options; it
    never becomes a custom answer by itself. Notes and `answered_by` in the response shape are kept;
    `check_response` decides whether they fit.
    """
    if not isinstance(data, Mapping):
        raise ValueError('the answer must be a JSON object')
    data = cast(Mapping[str, Any], data)
    headers = {question.header for question in request.questions}
    if set(data) <= {'answers', 'cancelled', 'answered_by'} and not (set(data) & headers):
        response = response_from_json(data)
        matched = tuple(_with_labels_matched(request, answer) for answer in response.answers)
        return replace(response, answers=matched)
    by_fold = {fold(question.header): question for question in request.questions}
    answers: list[AskUserAnswer] = []
    for header, value in data.items():
        question = by_fold.get(fold(header))
        if question is None:
            known = ', '.join(repr(question.header) for question in request.questions)
            raise ValueError(f'{header!r} is not a header of this question; the headers are {known}')
        note: str | None = None
        if isinstance(value, Mapping):
            given = cast(Mapping[str, Any], value)
            if 'note' in given:
                note = given['note']
                if not isinstance(note, str):
                    raise ValueError(f'the note on the answer to {question.header!r} must be a string')
            if set(given) in ({'custom'}, {'custom', 'note'}) and isinstance(given['custom'], str):
                answers.append(AskUserAnswer(header=question.header, custom_answer=given['custom'], note=note))
                continue
            if set(given) not in ({'answer'}, {'answer', 'note'}):
                raise ValueError(f'the answer to {question.header!r} must be {_custom_syntax(question)}')
            value = given['answer']
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in cast(list[Any], value)):
            raise ValueError(
                f'the answer to {question.header!r} must be a list of labels, or {_custom_syntax(question)}'
            )
        picks = tuple(_label(question, pick) for pick in cast(list[str], value))
        answers.append(AskUserAnswer(header=question.header, selected=picks, note=note))
    return AskUserResponse(answers=tuple(answers))


def _custom_syntax(question: Question) -> str:
    # Prose for a person, spaced to read (unlike the JSON the commands print); every message is made printable.
    return json.dumps({question.header: {'custom': 'your own words'}}, ensure_ascii=False)


def _label(question: Question, pick: str) -> str:
    """The option label `pick` names, exactly or ignoring case and width; `ValueError` naming the options."""
    key = fold(pick)
    for option in question.options:
        if option.label == pick or fold(option.label) == key:
            return option.label
    options = ', '.join(repr(option.label) for option in question.options)
    raise ValueError(
        f'the answer to {question.header!r} picks {pick!r}, which is not one of its options ({options}); '
        f'to answer in your own words, write {_custom_syntax(question)}'
    )


def _with_labels_matched(request: AskUserRequest, answer: AskUserAnswer) -> AskUserAnswer:
    try:
        question = request.question(answer.header)
    except KeyError:
        return answer  # `check_response` names the unknown header
    picks = tuple(_label(question, pick) for pick in answer.selected)
    return replace(answer, selected=picks)
