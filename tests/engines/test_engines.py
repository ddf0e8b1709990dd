"""AskUser under Pydantic AI's durable engines: it builds under each; what waits, what is refused, and why."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import warnings
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from waits import WAIT

from pydantic_ai_ask_user import AskUser, AskUserRequest, AskUserResponse

PREFECT_FLOW = Path(__file__).with_name('prefect_flow.py')

BOUND = min(4 * WAIT, 540.0)
"""How long `prefect_flow.py` may take: short of pytest-timeout's 600 s, so that the test kills it and Prefect's
temporary server (and says so) rather than pytest-timeout failing the test and leaving both running."""


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


def test_inside_a_prefect_flow_a_live_wait_is_refused_and_a_deferred_call_is_a_question(tmp_path: Path) -> None:
    env = {
        **os.environ,
        'PREFECT_HOME': str(tmp_path),
        'PREFECT_SERVER_ANALYTICS_ENABLED': 'false',
        # Prefect's temporary local server is given 20 s to start by default; a loaded machine needs longer.
        'PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS': '300',
    }
    # In a session of its own: Prefect's temporary server is the flow process's child, and outlives a kill of it alone.
    process = subprocess.Popen(
        [sys.executable, str(PREFECT_FLOW)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=BOUND)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result['live'].startswith('UserError: AskUser cannot wait for a person inside a Prefect run')
    assert 'AskUser(answerer=None)' in result['live']
    assert result['deferred'] == {'kind': 'question', 'id': 'call-1'}
