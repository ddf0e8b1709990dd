"""`AskUser(on_timeout=...)` inside a DBOS run, where an ordinary answerer waits in a recorded step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from dbos import DBOS
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from worker_support import dbos_launched

from pydantic_ai_ask_user import DECLINED, TOOL_NAME, AskUser, AskUserRequest, AskUserResponse, AskUserTimeoutError

pytestmark = pytest.mark.anyio


@pytest.fixture(scope='module')
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """DBOS launched in this process on a fresh SQLite file; yields the database URL."""
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "timeout-policy.sqlite"}'
    with dbos_launched(url, 'ask-user-timeout-policy-tests', 'timeout-policy-1'):
        yield url


async def _never(request: AskUserRequest) -> AskUserResponse:
    await anyio.sleep_forever()
    raise AssertionError('not reached')  # pragma: no cover


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(json.dumps(returns[0].content))])
    question = {'header': 'Database', 'question': 'Which?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}
    return ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [question]})])


def _agent(on_timeout: Any) -> Agent[None, str]:
    return Agent(
        FunctionModel(_model),
        name=f'timeout_policy_{on_timeout}',
        capabilities=[DBOSDurability(), AskUser(answerer=_never, timeout=0.3, on_timeout=on_timeout)],
    )


_declining = _agent('decline')
_failing = _agent('fail')


@DBOS.workflow(name='timeout_policy_tests.decline')
async def _declining_workflow() -> str:
    return (await _declining.run('migrate')).output


@DBOS.workflow(name='timeout_policy_tests.fail')
async def _failing_workflow() -> str:
    return (await _failing.run('migrate')).output


async def _steps(workflow_id: str) -> list[str]:
    return [step['function_name'] for step in await DBOS.list_workflow_steps_async(workflow_id)]


async def test_decline_on_timeout_in_a_dbos_run_gives_the_model_declined(launched: str) -> None:
    handle = await DBOS.start_workflow_async(_declining_workflow)
    with anyio.fail_after(120):
        assert json.loads(await handle.get_result()) == DECLINED
    steps = await _steps(handle.workflow_id)
    assert steps.index('ask_user.deadline') < steps.index('ask_user.answer')


async def test_fail_on_timeout_in_a_dbos_run_fails_the_workflow_with_the_timeout_error(launched: str) -> None:
    handle = await DBOS.start_workflow_async(_failing_workflow)
    with anyio.fail_after(120), pytest.raises(AskUserTimeoutError) as raised:
        await handle.get_result()
    assert raised.value.timeout == 0.3
    assert [q.header for q in raised.value.request.questions] == ['Database']
    # The workflow's recorded outcome is the same error, read back from the database.
    with anyio.fail_after(120), pytest.raises(AskUserTimeoutError):
        await (await DBOS.retrieve_workflow_async(handle.workflow_id)).get_result()
