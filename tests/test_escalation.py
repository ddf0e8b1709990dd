"""`Escalation`: the policy's checks, `AskUser(escalate=...)`'s, and the policy reaching the request a run asks.

The stores apply it: tests/hub/test_hub_escalation.py, tests/dbos/test_dbos_escalation.py,
tests/temporal/test_temporal_forward.py.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from ask_user_support import ask_call, question
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from pydantic_ai_ask_user import AskUser, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._escalation import check_escalation, escalation_from_json, escalation_to_json
from pydantic_ai_ask_user.store import Escalation, escalation_note

pytestmark = pytest.mark.anyio


def test_a_step_is_checked_and_normalized() -> None:
    step = Escalation(after=timedelta(minutes=30), to='team:oncall')
    assert step.after == 1800.0
    assert step.to == ('team:oncall',)
    assert not step.replace
    assert escalation_note(step) == 'Escalated: unanswered after 30 minutes.'
    noted = Escalation(after=90, to=['bob', 'alice', 'bob'], replace=True, note='  the pager is down  ')
    assert noted.to == ('alice', 'bob')
    assert escalation_note(noted) == 'Escalated: unanswered after 90 seconds.\nthe pager is down'
    assert escalation_note(Escalation(after=7200, to='x')) == 'Escalated: unanswered after 2 hours.'


@pytest.mark.parametrize(
    ('fields', 'match'),
    [
        ({'after': 0, 'to': 'bob'}, 'more than 0'),
        ({'after': -1, 'to': 'bob'}, 'more than 0'),
        ({'after': float('inf'), 'to': 'bob'}, 'more than 0'),
        ({'after': True, 'to': 'bob'}, 'number of seconds'),
        ({'after': '60', 'to': 'bob'}, 'number of seconds'),
        ({'after': 60, 'to': []}, 'to=...'),
        ({'after': 60, 'to': 'bad\nname'}, 'to=...'),
        ({'after': 60, 'to': 'bob', 'replace': 'yes'}, 'replace'),
        ({'after': 60, 'to': 'bob', 'note': 'x' * 1001}, 'at most 1000'),
        ({'after': 60, 'to': 'bob', 'note': 'a\x1b[31m'}, 'control'),
    ],
)
def test_a_bad_step_is_a_value_error(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Escalation(**fields)


def test_steps_come_in_order_and_are_escalations() -> None:
    first, second = Escalation(after=60, to='bob'), Escalation(after=120, to='carol')
    assert check_escalation(None) == ()
    assert check_escalation(first) == (first,)
    assert check_escalation([first, second]) == (first, second)
    with pytest.raises(ValueError, match='in order'):
        check_escalation([second, first])
    with pytest.raises(ValueError, match='in order'):
        check_escalation([first, first])
    with pytest.raises(ValueError, match='not Escalation'):
        check_escalation([first, 'carol'])
    with pytest.raises(ValueError, match='not str'):
        check_escalation('carol')


def test_the_policy_round_trips_through_json_and_anything_unreadable_is_none() -> None:
    steps = (Escalation(after=60, to='bob', note='hi'), Escalation(after=120, to='carol', replace=True))
    assert escalation_from_json(escalation_to_json(steps)) == steps
    assert escalation_from_json(None) == ()
    assert escalation_from_json([{'after': 60}]) == ()
    assert escalation_from_json([{'after': 60, 'to': ['bob']}, 'x']) == ()
    assert escalation_from_json(list(reversed(escalation_to_json(steps)))) == ()


def test_ask_user_checks_its_policy_at_construction() -> None:
    async def answerer(request: AskUserRequest) -> AskUserResponse:  # pragma: no cover - never asked
        raise AssertionError

    with pytest.raises(ValueError, match='in order'):
        AskUser(answerer=answerer, escalate=[Escalation(after=60, to='b'), Escalation(after=30, to='c')])
    with pytest.raises(ValueError, match='needs an answerer'):
        AskUser(answerer=None, escalate=Escalation(after=60, to='b'))
    with pytest.raises(ValueError, match='never happens'):
        AskUser(answerer=answerer, timeout=60, escalate=Escalation(after=60, to='b'))
    with pytest.raises(ValueError, match='not int'):
        AskUser(answerer=answerer, escalate=5)  # pyright: ignore[reportArgumentType]
    AskUser(answerer=answerer, timeout=61, escalate=Escalation(after=60, to='b'))


async def test_the_request_a_run_asks_carries_the_policy_and_the_model_sees_nothing_of_it() -> None:
    asked: list[AskUserRequest] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        asked.append(request)
        header = request.questions[0].header
        return AskUserResponse(answers=(AskUserAnswer(header=header, selected=('SQLite',)),))

    tools: list[list[ToolDefinition]] = []
    turn = [ask_call(question('Database'))]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools.append(list(info.function_tools))
        return ModelResponse(parts=turn if len(messages) == 1 else [TextPart('done')])

    steps = [Escalation(after=60, to='team:oncall'), Escalation(after=600, to='boss', replace=True)]
    await Agent(FunctionModel(respond), capabilities=[AskUser(answerer=answerer, escalate=steps)]).run('go')
    escalating = tools[0]
    await Agent(FunctionModel(respond), capabilities=[AskUser(answerer=answerer)]).run('go')
    assert asked[0].escalate == tuple(steps)
    assert asked[1].escalate == ()
    assert asked[0].questions == asked[1].questions
    assert escalating == tools[-1]
