"""The public reader and writer of the response JSON shape, and its JSON schema."""

from __future__ import annotations

from typing import Any

import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.json import (
    RESPONSE_JSON_SCHEMA,
    questions_to_json,
    read_response,
    response_from_json,
    response_to_json,
)

REQUEST = AskUserRequest(
    id='call_1',
    questions=(
        Question(
            question='Which database?',
            header='Database',
            options=(QuestionOption(label='PostgreSQL', description='relational'), QuestionOption(label='SQLite')),
        ),
        Question(
            question='Which features?',
            header='Features',
            multi_select=True,
            options=(QuestionOption(label='Auth'), QuestionOption(label='Search')),
        ),
    ),
)


@pytest.mark.parametrize(
    'response',
    [
        pytest.param(
            AskUserResponse(
                answers=(
                    AskUserAnswer(header='Database', selected=('PostgreSQL',)),
                    AskUserAnswer(header='Features', selected=('Auth', 'Search')),
                )
            ),
            id='picks',
        ),
        pytest.param(
            AskUserResponse(
                answers=(
                    AskUserAnswer(header='Database', custom_answer='DuckDB'),
                    AskUserAnswer(header='Features', selected=('Search',)),
                )
            ),
            id='custom-and-picks',
        ),
        pytest.param(AskUserResponse(cancelled=True), id='declined'),
    ],
)
def test_a_response_survives_the_writer_and_the_reader(response: AskUserResponse) -> None:
    assert response_from_json(response_to_json(response)) == response
    assert read_response(REQUEST, response_to_json(response)) == response


@pytest.mark.parametrize(
    ('data', 'problem'),
    [
        pytest.param({'answers': [{'header': 'Database', 'selected': ['MARS']}]}, "selects 'MARS'", id='not-an-option'),
        pytest.param(
            {
                'answers': [
                    {'header': 'Database', 'selected': ['SQLite']},
                    {'header': 'Features', 'selected': ['Auth']},
                    {'header': 'Injected', 'selected': ['x']},
                ]
            },
            'Injected',
            id='extra-header',
        ),
        pytest.param({'answers': [{'header': 'Database', 'selected': ['SQLite']}]}, 'Features', id='missing-header'),
        pytest.param(
            {'answers': [{'header': 'Database', 'selected': 'SQLite'}]}, 'answers.0.selected', id='wrong-type'
        ),
        pytest.param({'answers': [], 'approved': True}, 'approved', id='unknown-field'),
        pytest.param(['SQLite'], 'JSON object', id='not-an-object'),
    ],
)
def test_read_response_refuses_what_does_not_fit_its_request(data: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        read_response(REQUEST, data)


def test_the_schema_describes_the_shape_the_writer_writes() -> None:
    assert RESPONSE_JSON_SCHEMA['type'] == 'object'
    assert set(RESPONSE_JSON_SCHEMA['properties']) == {'answers', 'cancelled', 'answered_by'}
    assert RESPONSE_JSON_SCHEMA['additionalProperties'] is False
    answer = RESPONSE_JSON_SCHEMA['$defs']['AnswerJSON']
    assert set(answer['properties']) == {'header', 'selected', 'custom_answer', 'note'}
    assert answer['required'] == ['header']


def test_questions_are_written_as_the_model_wrote_them() -> None:
    written = questions_to_json(REQUEST)
    assert [question['header'] for question in written] == ['Database', 'Features']
    assert written[1]['multi_select'] is True
    assert written[0]['options'][0] == {'label': 'PostgreSQL', 'description': 'relational'}
