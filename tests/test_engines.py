"""AskUser under Pydantic AI's durable engines: it builds under each; what waits, what is refused, and why."""

from __future__ import annotations

import warnings
from datetime import timedelta

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from pydantic_ai_ask_user import AskUser, AskUserRequest, AskUserResponse


def _model() -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('done')]))


async def _answerer(request: AskUserRequest) -> AskUserResponse:
    return AskUserResponse(cancelled=True)  # pragma: no cover - never asked here


def _activity_names(activities: list[object]) -> list[str]:
    return [getattr(activity, '__temporal_activity_definition').name for activity in activities]


@pytest.mark.parametrize('answerer', [None, _answerer], ids=['deferred', 'live'])
def test_an_agent_with_ask_user_builds_under_temporal_durability(answerer: object) -> None:
    from pydantic_ai.durable_exec.temporal import AgentPlugin, TemporalDurability

    durability = TemporalDurability()
    agent = Agent(_model(), name='migrator', capabilities=[durability, AskUser(answerer=answerer)])  # type: ignore[arg-type]
    AgentPlugin(agent)  # what a Temporal worker is configured with
    # Activities get Temporal's default 60 s timeout: no place to wait for a person. `ask_user_question` runs in
    # workflow code instead (its `'temporal': False` metadata), where only `TemporalAnswerer` may wait; under
    # Prefect in flow code (`'prefect': False`), where only `PrefectAnswerer` may wait, by suspending the flow run.
    assert durability.activity_config['start_to_close_timeout'] == timedelta(seconds=60)
    [tool] = AskUser(answerer=None).get_toolset().tools.values()  # type: ignore[attr-defined]
    assert tool.metadata == {'temporal': False, 'prefect': False}


def test_the_temporal_agent_wrapper_names_the_ask_user_activity_after_the_stable_toolset_id() -> None:
    from pydantic_ai.durable_exec.temporal import TemporalAgent

    agent = Agent(_model(), name='migrator', capabilities=[AskUser(answerer=None)])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # TemporalAgent is deprecated; users still run it
        wrapped = TemporalAgent(agent)
    assert 'agent__migrator__toolset__ask_user__call_tool' in _activity_names(wrapped.temporal_activities)


def test_an_agent_with_ask_user_builds_under_prefect_durability() -> None:
    from pydantic_ai.durable_exec.prefect import PrefectDurability

    Agent(_model(), name='migrator', capabilities=[PrefectDurability(), AskUser(answerer=None)])
    Agent(_model(), name='migrator', capabilities=[PrefectDurability(), AskUser(answerer=_answerer)])
