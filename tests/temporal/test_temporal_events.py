"""`TemporalEventWaiter` on a real Temporal dev server: a `RequestInput` approval waits in the workflow, an Update
from another client decides it, and a worker killed with -9 at any point leaves it to the next worker."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import DeferredToolResults, ToolDenied
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporal_support import (
    APPROVAL_TIMEOUT,
    CALL_ID,
    DEPLOY_ARGS,
    DEPLOYED,
    DEPLOYS_FILE_VARIABLE,
    HOLD_ASK_VARIABLE,
    HOLD_FILE_VARIABLE,
    TOOL_SAID,
    AnsweredAskWorkflow,
    ApprovalWorkflow,
    DeferredWaitingWorkflow,
    Outcome,
    PolicyApprovalWorkflow,
    TimedApprovalWorkflow,
    UnpreparedApprovalWorkflow,
    WrappedApprovalWorkflow,
    policy_approval_agent,
)
from temporal_testing import (
    ANSWER,
    accepted_updates,
    asked,
    finished_once,
    start_run,
    told,
    user_error_of,
    wait_for_file,
    waiting_one,
    waiting_question,
)
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError

from pydantic_ai_ask_user import TOOL_NAME, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.temporal import (
    RESOLVE_SIGNAL_NAME,
    RESOLVE_UPDATE_NAME,
    EventResolution,
    NotATemporalTokenError,
    WaitingEvent,
    answer_question,
    fail_temporal_event,
    pending_questions,
    pending_temporal_events,
    resolve_temporal_event,
)

pytestmark = pytest.mark.anyio

APPROVED = DeferredToolResults(approvals={CALL_ID: True})

DEPLOYED_TEXT = TOOL_SAID + 'deployed to production'


@pytest.fixture
async def other_client(temporal_address: str) -> Client:
    """Another client, as the process of the person who decides would have."""
    return await Client.connect(temporal_address, plugins=[PydanticAIPlugin()])


async def _start(client: Client, queue: str, workflow: Any) -> WorkflowHandle[Any, Outcome]:
    return await start_run(client, queue, workflow, prefix='approve', prompt='Deploy the service')


async def _waiting_event(handle: WorkflowHandle[Any, Any]) -> WaitingEvent:
    """The one external event the workflow waits for, once it waits."""
    return await waiting_one(lambda: pending_temporal_events(handle), 'event')


def _is_the_deploy_approval(event: WaitingEvent) -> None:
    assert event.name == 'deferred_tool_calls'
    assert event.requests is not None
    [call] = event.requests.approvals
    assert (call.tool_name, call.tool_call_id, call.args_as_dict()) == ('deploy', CALL_ID, DEPLOY_ARGS)
    assert event.requests.calls == []


@pytest.mark.parametrize(
    'workflow', [ApprovalWorkflow, WrappedApprovalWorkflow], ids=['TemporalDurability', 'TemporalAgent']
)
async def test_an_approval_waits_in_the_workflow_and_an_update_from_another_client_approves_it(
    client: Client, other_client: Client, worker: str, workflow: Any
) -> None:
    handle = await _start(client, worker, workflow)
    event = await _waiting_event(handle)
    _is_the_deploy_approval(event)
    assert event.token.endswith('.' + handle.id)  # the token names the workflow: any client resolves it
    assert await pending_questions(handle) == []  # an approval is no question

    await resolve_temporal_event(other_client, event.token, APPROVED)
    assert (await handle.result()).output == DEPLOYED_TEXT
    assert DEPLOYED == ['production']
    await finished_once(client, handle)


@pytest.mark.parametrize(
    'workflow', [ApprovalWorkflow, WrappedApprovalWorkflow], ids=['TemporalDurability', 'TemporalAgent']
)
async def test_a_denial_by_update_reaches_the_model_and_the_tool_never_runs(
    client: Client, other_client: Client, worker: str, workflow: Any
) -> None:
    handle = await _start(client, worker, workflow)
    event = await _waiting_event(handle)
    await resolve_temporal_event(
        other_client, event.token, DeferredToolResults(approvals={CALL_ID: ToolDenied('not on a Friday')})
    )
    assert (await handle.result()).output == TOOL_SAID + 'not on a Friday'
    assert DEPLOYED == []


async def test_a_malformed_or_foreign_decision_is_refused_to_its_sender_and_not_recorded(
    client: Client, other_client: Client, worker: str
) -> None:
    handle = await _start(client, worker, ApprovalWorkflow)
    other = await _start(client, worker, ApprovalWorkflow)
    event, other_event = await _waiting_event(handle), await _waiting_event(other)
    assert event.token != other_event.token

    refusals = {
        'not the JSON form of DeferredToolResults': {'approvals': 'yes'},
        "it approves or denies 'call_9', which is no pending approval": DeferredToolResults(
            approvals={CALL_ID: True, 'call_9': True}
        ),
        "it leaves out 'call_0', which the run waits for": DeferredToolResults(),
    }
    for reason, payload in refusals.items():
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await resolve_temporal_event(other_client, event.token, payload)
        assert reason in str(refused.value.cause), refused.value.cause
    # The other run's token, sent to this run: its wait is not here.
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(
            RESOLVE_UPDATE_NAME, EventResolution(other_event.token, payload={'approvals': {CALL_ID: True}})
        )
    assert 'no event with token' in str(refused.value.cause)
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(RESOLVE_UPDATE_NAME, EventResolution(event.token, payload={}, error='both'))
    assert 'not both' in str(refused.value.cause)
    with pytest.raises(NotATemporalTokenError):
        await resolve_temporal_event(other_client, 'dbos1.abc.' + handle.id, APPROVED)

    assert await pending_temporal_events(handle) == [event]  # still waiting: nothing was recorded
    assert await accepted_updates(handle) == 0
    assert DEPLOYED == []

    await resolve_temporal_event(other_client, event.token, APPROVED)
    assert (await handle.result()).output == DEPLOYED_TEXT
    with pytest.raises((WorkflowUpdateFailedError, RPCError)):  # over: a second decision is refused
        await resolve_temporal_event(other_client, event.token, APPROVED)
    await fail_temporal_event(other_client, other_event.token, 'nobody is on call')
    assert (await other.result()).output == TOOL_SAID + 'No decision on this tool call arrived: nobody is on call'
    assert DEPLOYED == ['production']
    await finished_once(client, handle)


async def test_a_signal_resolves_too_and_a_signalled_decision_that_does_not_fit_is_dropped(
    client: Client, worker: str
) -> None:
    handle = await _start(client, worker, ApprovalWorkflow)
    event = await _waiting_event(handle)
    await handle.signal(RESOLVE_SIGNAL_NAME, EventResolution(event.token, payload={'approvals': {'call_9': True}}))
    denial = {'approvals': {CALL_ID: {'kind': 'tool-denied', 'message': 'signalled no'}}}
    await handle.signal(RESOLVE_SIGNAL_NAME, EventResolution(event.token, payload=denial))
    assert (await handle.result()).output == TOOL_SAID + 'signalled no'
    assert DEPLOYED == []


async def test_the_deadline_is_a_durable_timer_and_the_call_is_denied_saying_why(client: Client, worker: str) -> None:
    handle = await _start(client, worker, TimedApprovalWorkflow)
    output = (await handle.result()).output
    assert isinstance(output, str)
    assert output.startswith(TOOL_SAID + 'No decision on this tool call arrived: No resolution arrived within')
    assert DEPLOYED == []
    history = await handle.fetch_history()
    timers = [
        event.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
        for event in history.events
        if event.HasField('timer_started_event_attributes')
    ]
    assert timers == [APPROVAL_TIMEOUT]


async def test_temporal_external_events_in_a_workflow_without_ask_user_workflow_fails_the_run_saying_what_to_inherit(
    client: Client, worker: str
) -> None:
    handle = await _start(client, worker, UnpreparedApprovalWorkflow)
    message = await user_error_of(handle.result())
    assert 'TemporalEventWaiter needs the workflow to inherit AskUserWorkflow' in message


async def test_a_deferred_question_waits_as_a_request_input_call_and_only_an_answer_that_fits_is_accepted(
    client: Client, other_client: Client, worker: str
) -> None:
    handle = await _start(client, worker, DeferredWaitingWorkflow)
    event = await _waiting_event(handle)
    assert event.requests is not None
    assert event.requests.approvals == []
    [call] = event.requests.calls
    assert (call.tool_name, call.tool_call_id) == (TOOL_NAME, CALL_ID)
    request = AskUserRequest.from_deferred(event.requests, call)
    # Leaves a question out; not the shape the model gets; free text of the sender's own.
    for misfit in ({'Region': ['EU']}, {'Database': 'PostgreSQL', 'Region': 'EU'}, 'yes, PostgreSQL in the EU'):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await resolve_temporal_event(other_client, event.token, DeferredToolResults(calls={CALL_ID: misfit}))
        assert "call 'call_0'" in str(refused.value.cause)
    assert await accepted_updates(handle) == 0

    answer = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)), *ANSWER.answers[1:]))
    await resolve_temporal_event(
        other_client, event.token, DeferredToolResults(calls={CALL_ID: ask_user_result(request, answer)})
    )
    assert (await handle.result()).output == told(request, answer)
    await finished_once(client, handle)


async def test_of_two_decisions_sent_at_once_one_is_recorded_and_the_other_refused(
    client: Client, other_client: Client, worker: str
) -> None:
    handle = await _start(client, worker, ApprovalWorkflow)
    event = await _waiting_event(handle)
    denied = DeferredToolResults(approvals={CALL_ID: ToolDenied('no')})
    sent = await asyncio.gather(
        resolve_temporal_event(other_client, event.token, APPROVED),
        resolve_temporal_event(client, event.token, denied),
        return_exceptions=True,
    )
    assert len([outcome for outcome in sent if isinstance(outcome, WorkflowUpdateFailedError)]) == 1, sent
    output = (await handle.result()).output
    assert output == (DEPLOYED_TEXT if sent[0] is None else TOOL_SAID + 'no')
    assert (['production'] if sent[0] is None else []) == DEPLOYED
    await finished_once(client, handle)


async def test_an_ask_that_decides_in_place_opens_no_wait(client: Client, worker: str) -> None:
    handle = await _start(client, worker, PolicyApprovalWorkflow)
    assert (await handle.result()).output == DEPLOYED_TEXT
    assert DEPLOYED == ['production']
    assert await pending_temporal_events(handle) == []
    assert await accepted_updates(handle) == 0


async def test_outside_a_workflow_temporal_external_events_leaves_the_wait_in_process() -> None:
    # The same agent run as a plain run: `ask` decides, as it would in process without the capability.
    result = await policy_approval_agent.run('Deploy the service')
    assert result.output == DEPLOYED_TEXT


def _deployed(tmp_path: Path) -> list[str]:
    deploys = tmp_path / 'deploys'
    return deploys.read_text().split() if deploys.exists() else []


async def _approved_once(
    client: Client, other_client: Client, handle: WorkflowHandle[Any, Any], tmp_path: Path
) -> None:
    """Approve the one waiting approval; the run deploys once and finishes once."""
    event = await _waiting_event(handle)
    _is_the_deploy_approval(event)
    await resolve_temporal_event(other_client, event.token, APPROVED)
    assert (await handle.result()).output == DEPLOYED_TEXT
    assert _deployed(tmp_path) == ['production']
    await finished_once(client, handle)


async def test_a_worker_killed_while_the_approval_is_being_published_leaves_the_same_wait_to_the_next_worker(
    client: Client, other_client: Client, start_worker: Any, tmp_path: Path
) -> None:
    hold = tmp_path / 'publishing'
    # TEMPORAL_DEBUG: no deadlock detector, so the frozen workflow task stays frozen until the kill.
    first = start_worker(**{HOLD_ASK_VARIABLE: str(hold), 'TEMPORAL_DEBUG': '1', DEPLOYS_FILE_VARIABLE: ''})
    handle = await _start(client, start_worker.queue, ApprovalWorkflow)
    await wait_for_file(hold)  # the first worker is inside the workflow task that opens the wait
    first.kill()

    start_worker(**{DEPLOYS_FILE_VARIABLE: str(tmp_path / 'deploys')})
    event = await _waiting_event(handle)
    assert event.token == hold.read_text()  # the replay minted the same token: what was handed out still resolves
    await _approved_once(client, other_client, handle, tmp_path)


async def test_a_worker_killed_while_the_approval_waits_leaves_it_waiting_for_the_next_worker(
    client: Client, other_client: Client, start_worker: Any, tmp_path: Path
) -> None:
    first = start_worker(**{DEPLOYS_FILE_VARIABLE: str(tmp_path / 'deploys')})
    handle = await _start(client, start_worker.queue, ApprovalWorkflow)
    event = await _waiting_event(handle)
    first.kill()

    start_worker(**{DEPLOYS_FILE_VARIABLE: str(tmp_path / 'deploys')})
    assert await _waiting_event(handle) == event
    await _approved_once(client, other_client, handle, tmp_path)


async def test_a_worker_killed_after_the_approval_was_accepted_finishes_the_run_with_that_decision(
    client: Client, other_client: Client, start_worker: Any, tmp_path: Path
) -> None:
    hold = tmp_path / 'tool-runs'
    first = start_worker(**{HOLD_FILE_VARIABLE: str(hold)})
    handle = await _start(client, start_worker.queue, ApprovalWorkflow)
    event = await _waiting_event(handle)
    await resolve_temporal_event(other_client, event.token, APPROVED)  # accepted: recorded in the history
    await wait_for_file(hold)  # the run went on with it, to the tool call the first worker never finishes
    first.kill()

    start_worker(**{DEPLOYS_FILE_VARIABLE: str(tmp_path / 'deploys')})
    assert (await handle.result()).output == DEPLOYED_TEXT
    assert _deployed(tmp_path) == ['production']
    await finished_once(client, handle)


async def test_a_worker_killed_while_the_question_is_being_published_leaves_it_to_the_next_worker(
    client: Client, start_worker: Any, tmp_path: Path
) -> None:
    hold = tmp_path / 'publishing'
    first = start_worker(**{HOLD_ASK_VARIABLE: str(hold), 'TEMPORAL_DEBUG': '1'})
    handle = await _start(client, start_worker.queue, AnsweredAskWorkflow)
    await wait_for_file(hold)  # the first worker is inside the workflow task that opens the question's wait
    first.kill()

    start_worker()
    request = await waiting_question(handle)
    assert request.key == hold.read_text()
    await answer_question(handle, request, ANSWER)
    assert (await handle.result()).output == told(request, ANSWER)
    assert asked(tmp_path) == [request.key]  # asked once
    await finished_once(client, handle)
