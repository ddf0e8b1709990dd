"""`ask-user answer --json`: how a person's JSON becomes a response, before any database is involved."""

from __future__ import annotations

from typing import Any

import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user._answer_json import parse_answer_json


def _request() -> AskUserRequest:
    database = Question(
        header='Database',
        question='Which database?',
        options=(QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite')),
    )
    envs = Question(
        header='Environments',
        question='Where?',
        options=(QuestionOption(label='dev'), QuestionOption(label='Staging')),
        multi_select=True,
    )
    return AskUserRequest(questions=(database, envs))


def _one(header: str, **answer: Any) -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header=header, **answer),))


@pytest.mark.parametrize('pick', ['postgresql', 'POSTGRESQL', 'ＰｏｓｔｇｒｅＳＱＬ', ['postgresql']])
def test_a_pick_that_matches_a_label_ignoring_case_and_width_is_that_label(pick: Any) -> None:
    assert parse_answer_json(_request(), {'Database': pick}) == _one('Database', selected=('PostgreSQL',))


def test_picks_in_a_multi_select_answer_and_in_the_response_shape_are_matched_too() -> None:
    assert parse_answer_json(_request(), {'Environments': ['DEV', 'staging']}) == _one(
        'Environments', selected=('dev', 'Staging')
    )
    shape = {'answers': [{'header': 'Database', 'selected': ['sqlite']}]}
    assert parse_answer_json(_request(), shape) == _one('Database', selected=('SQLite',))


def test_a_pick_that_matches_no_label_is_an_error_naming_the_options_not_a_custom_answer() -> None:
    with pytest.raises(ValueError, match='not one of its options') as caught:
        parse_answer_json(_request(), {'Database': ['postgres']})
    assert str(caught.value) == (
        "the answer to 'Database' picks 'postgres', which is not one of its options ('PostgreSQL', 'SQLite'); "
        'to answer in your own words, write {"Database": {"custom": "your own words"}}'
    )


def test_an_explicit_custom_answer_is_the_persons_own_words() -> None:
    assert parse_answer_json(_request(), {'Database': {'custom': 'Oracle, sadly'}}) == _one(
        'Database', custom_answer='Oracle, sadly'
    )
    shape = {'answers': [{'header': 'Database', 'custom_answer': 'postgresql'}]}
    assert parse_answer_json(_request(), shape) == _one('Database', custom_answer='postgresql')


@pytest.mark.parametrize('value', [{'custom': 3}, {'custom': 'x', 'also': 'y'}, {'text': 'x'}, [1], 7])
def test_a_malformed_answer_says_what_to_write(value: Any) -> None:
    with pytest.raises(ValueError, match=r'must be .*\{"Database": \{"custom": "your own words"\}\}'):
        parse_answer_json(_request(), {'Database': value})


def test_an_unknown_header_is_an_error_naming_the_headers() -> None:
    with pytest.raises(ValueError, match="'Color' is not a header of this question; the headers are 'Database', "):
        parse_answer_json(_request(), {'Color': ['red']})
