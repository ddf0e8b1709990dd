"""AskUser on a real Temporal dev server: deferred questions under `TemporalDurability` and `TemporalAgent`."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from pydantic_ai import DeferredToolRequests
from temporal_support import (
    ANSWER_PREFIX,
    CALL_ID,
    EVENTS,
    TASK_QUEUE,
    DurableAskWorkflow,
    LiveAskWorkflow,
    Outcome,
    Turn,
    WrappedAskWorkflow,
    patient_worker,
)
from temporal_testing import ANSWER, user_error_of
from temporalio.client import Client
from waits import WAIT

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user.deferred import ask_user_result, deferred_answer

pytestmark = pytest.mark.anyio

RUN_LIMIT = min(WAIT, 60)
"""Seconds a run may take: a hung workflow (issue 21's) fails the test."""

WORKFLOWS = {'TemporalDurability': DurableAskWorkflow, 'TemporalAgent': WrappedAskWorkflow}


@pytest.fixture
async def worker(client: Client) -> AsyncIterator[str]:
    """A worker for both workflows in this process, on a task queue of its own; yields the queue."""
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    async with patient_worker(client, task_queue=queue, workflows=[*WORKFLOWS.values(), LiveAskWorkflow]):
        yield queue


async def _run(client: Client, queue: str, workflow: type, turn: Turn) -> Outcome:
    # A bounded run: a workflow that hangs (as issue 21's did) fails the test instead of stalling the suite.
    return await client.execute_workflow(
        workflow.run,  # type: ignore[attr-defined]
        turn,
        id=f'ask-{uuid.uuid4().hex}',
        task_queue=queue,
        execution_timeout=timedelta(seconds=RUN_LIMIT),
        result_type=Outcome,
    )


@pytest.mark.parametrize('wrapper', WORKFLOWS)
async def test_a_deferred_question_pauses_the_workflow_and_the_answer_resumes_it(
    client: Client, worker: str, wrapper: str
) -> None:
    workflow = WORKFLOWS[wrapper]
    keys: set[str] = set()
    for _ in range(2):  # the model says `call_0` in every run: the second run's question is its own
        EVENTS.clear()
        paused = await _run(client, worker, workflow, Turn(prompt='Set up the service'))
        requests = paused.output
        assert isinstance(requests, DeferredToolRequests)
        assert requests.kind(CALL_ID) == 'question'
        request = AskUserRequest.from_deferred(requests, CALL_ID, notes=True)
        assert [event.request for event in EVENTS] == [request]
        assert EVENTS[0].request.key == request.key
        assert request.questions[0].recommended == 'PostgreSQL'
        assert request.questions[1].recommended is None
        keys.add(request.key)

        done = await _run(
            client, worker, workflow, Turn(history=paused.messages, answers=deferred_answer(request, ANSWER))
        )
        assert done.output == ANSWER_PREFIX + json.dumps(ask_user_result(request, ANSWER), sort_keys=True)
    assert len(keys) == 2


async def test_a_live_answerer_is_refused_inside_a_temporal_workflow_with_the_way_out(
    client: Client, worker: str
) -> None:
    message = await user_error_of(_run(client, worker, LiveAskWorkflow, Turn(prompt='Set up the service')))
    assert message.startswith('AskUser cannot wait for a person inside a Temporal run')
    assert 'AskUser(answerer=None)' in message
    assert 'TemporalAnswerer' in message  # the answerer that does wait under Temporal
