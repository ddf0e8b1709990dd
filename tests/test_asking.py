"""The plain ask path shared by `AskUser` and `ask-user ask`, and how an answer is shown to a person."""

from __future__ import annotations

import anyio
import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._asking import ShownAnswer, shown_answers, wait_for_answer
from pydantic_ai_ask_user.testing import ScriptedAnswerer

pytestmark = pytest.mark.anyio


REQUEST = AskUserRequest.from_tool_args(
    {
        'questions': [
            {'header': 'Database', 'question': 'Which?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]},
            {
                'header': 'Envs',
                'question': 'Where?',
                'options': [{'label': 'dev'}, {'label': 'prod'}],
                'multi_select': True,
            },
        ]
    }
)


async def test_an_answer_in_time_is_returned_and_not_timed_out() -> None:
    response, timed_out = await wait_for_answer(ScriptedAnswerer(default=0), REQUEST, 30)
    assert response is not None
    assert not response.cancelled
    assert timed_out is False


async def test_no_answer_by_the_deadline_is_none_and_timed_out() -> None:
    with anyio.fail_after(30):
        assert await wait_for_answer(ScriptedAnswerer(default=0, delay=60), REQUEST, 0.05) == (None, True)


async def test_an_answer_the_answerer_already_had_at_the_deadline_counts() -> None:
    had = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))

    async def finishing(request: AskUserRequest) -> AskUserResponse:
        try:
            await anyio.sleep(60)
        finally:
            return had  # noqa: B012 - the answer it holds when cancelled is the point of the test

    with anyio.fail_after(30):
        assert await wait_for_answer(finishing, REQUEST, 0.05) == (had, False)


@pytest.mark.parametrize(
    ('response', 'shown'),
    [
        pytest.param(
            AskUserResponse(
                answers=(
                    AskUserAnswer(header='Envs', selected=('prod', 'dev')),
                    AskUserAnswer(header='Database', custom_answer='Cockroach'),
                )
            ),
            [ShownAnswer('Database', ('Cockroach',), custom=True), ShownAnswer('Envs', ('prod', 'dev'), custom=False)],
            id='in-the-request-order-as-the-model-gets-it',
        ),
        pytest.param(AskUserResponse(cancelled=True), [], id='declined'),
    ],
)
def test_shown_answers_are_what_the_model_gets(response: AskUserResponse, shown: list[ShownAnswer]) -> None:
    assert shown_answers(REQUEST, response) == shown


def test_a_response_that_does_not_fit_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='Nope'):
        shown_answers(REQUEST, AskUserResponse(answers=(AskUserAnswer(header='Nope', selected=('x',)),)))
