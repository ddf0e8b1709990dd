"""Approvals waiting in Temporal workflows, listed and resolved from another process: `ask-user pending --temporal`
and `ask-user resolve --temporal`, on a real dev server, with a worker killed with -9 after the resolution."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from ask_user_support import free_port
from pydantic_ai import Agent, Tool
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin, PydanticAIWorkflow, TemporalDurability
from pydantic_ai.models.function import FunctionModel
from temporal_support import (
    ALL_WORKFLOWS,
    ANSWER_PREFIX,
    CALL_ID,
    DEPLOY_ARGS,
    DEPLOYED,
    DEPLOYS_FILE_VARIABLE,
    HOLD_FILE_VARIABLE,
    TASK_QUEUE,
    TOOL_SAID,
    ApprovalWorkflow,
    DeferredWaitingWorkflow,
    Outcome,
    Turn,
    _deploy_then_report,  # pyright: ignore[reportPrivateUsage]
    deploy,
    patient_worker,
    wait_for_a_person,
)
from temporal_testing import accepted_updates, ask_user_cli, finished_once, listed_by_pending, start_run, wait_for_file
from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from waits import WAIT

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._approvals import IGNORED_DENIAL, RESPONDED_DENIAL
from pydantic_ai_ask_user.deferred import ask_user_result, waiting_handler
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval
from pydantic_ai_ask_user.temporal import (
    AskUserWorkflow,
    TemporalExternalEvents,
    TemporalQuestionStore,
    pending_temporal_events,
)

pytestmark = pytest.mark.anyio

DEPLOYED_TEXT = TOOL_SAID + 'deployed to production'

APPROVE = json.dumps({'approvals': {CALL_ID: True}})
"""`ask-user resolve --json -`'s input that approves the deploy call."""

GONE = 'no wait has this token: it was resolved already, its deadline passed, or no workflow of this namespace waits'


unlisted_agent = Agent(
    FunctionModel(_deploy_then_report),
    name='unlisted_approval_asker',
    tools=[Tool(deploy, requires_approval=True)],
    capabilities=[TemporalDurability(), TemporalExternalEvents(listed=False), waiting_handler(wait_for_a_person)],
)
"""An approval that waits in the workflow without being listed: only the Query finds it."""


@workflow.defn(sandboxed=False)  # defined beside the test that runs it, in this process only
class UnlistedApprovalWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `unlisted_agent` once."""

    __pydantic_ai_agents__ = (unlisted_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await unlisted_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@pytest.fixture
async def worker(temporal_address: str) -> AsyncIterator[tuple[Client, str]]:
    """A client and a worker in this process, on a task queue of their own."""
    client = await Client.connect(temporal_address, plugins=[PydanticAIPlugin()])
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    DEPLOYED.clear()
    async with patient_worker(client, task_queue=queue, workflows=[*ALL_WORKFLOWS, UnlistedApprovalWorkflow]):
        yield client, queue


async def _start(client: Client, queue: str, workflow_type: Any = ApprovalWorkflow) -> WorkflowHandle[Any, Outcome]:
    return await start_run(client, queue, workflow_type, prefix='resolve', prompt='Deploy the service')


async def test_pending_lists_the_approval_with_its_call_and_resolve_approves_it_once_from_another_process(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    handle = await _start(client, queue)
    # A wait of approvals only is listed by its approval, which names the wait's token (what `resolve` takes).
    line = await listed_by_pending(temporal_address, handle.id)
    token = line['token']
    assert line['kind'] == 'approval'
    assert token.endswith('.' + handle.id)
    assert (line['tool_call_id'], line['tool_name'], line['args']) == (CALL_ID, 'deploy', DEPLOY_ARGS)
    code, out, err = await ask_user_cli('pending', '--temporal', temporal_address)
    assert code == 0, err
    assert f'  run deploy {{"target":"production"}}?  call {CALL_ID}\n' in out
    assert f'(--approve, --deny REASON or --args JSON; wait {token})\n' in out
    questions = await TemporalQuestionStore(client=client).pending_records()
    assert all(record.workflow_id != handle.id for record in questions)  # an approval is no question (`answer`)

    code, out, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, '--json', '-', stdin=APPROVE)
    assert (code, err) == (0, ''), err
    assert json.loads(out) == {'resolved': token}
    assert (await handle.result()).output == DEPLOYED_TEXT
    assert DEPLOYED == ['production']

    # Decided: a second decision, either way, is refused, and nothing more is recorded.
    for second in (('--json', '-'), ('--fail', 'too late')):
        code, out, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, *second, stdin=APPROVE)
        assert (code, out) == (7, ''), err
        assert GONE in err
    assert DEPLOYED == ['production']
    await finished_once(client, handle)


@pytest.mark.parametrize(
    ('decision', 'said'),
    [
        (('--json', '-'), 'not on a Friday'),
        (('--fail', 'nobody is on call'), 'No decision on this tool call arrived: nobody is on call'),
    ],
    ids=['denied', 'failed'],
)
async def test_resolve_denies_and_the_tool_never_runs(
    temporal_address: str, worker: tuple[Client, str], decision: tuple[str, str], said: str
) -> None:
    client, queue = worker
    handle = await _start(client, queue)
    token = (await listed_by_pending(temporal_address, handle.id))['token']
    denial = json.dumps({'approvals': {CALL_ID: {'kind': 'tool-denied', 'message': 'not on a Friday'}}})
    code, out, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, *decision, stdin=denial)
    assert (code, json.loads(out)) == (0, {'resolved': token}), err
    assert (await handle.result()).output == TOOL_SAID + said
    assert DEPLOYED == []


async def test_a_bad_decision_is_refused_saying_why_nothing_reaches_the_run_and_it_keeps_waiting(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    handle = await _start(client, queue)
    token = (await listed_by_pending(temporal_address, handle.id))['token']
    refusals = {
        '{"approvals": 3}': 'ask-user: not a DeferredToolResults: ',
        '{"approvals": ': 'ask-user: not a DeferredToolResults: ',
        json.dumps({'approvals': {'call_9': True}}): (
            'ask-user: invalid answer: the decision must decide every pending call and nothing else: it leaves out '
            "'call_0', which the run waits for; it approves or denies 'call_9', which is no pending approval"
        ),
        json.dumps({'calls': {CALL_ID: 'deployed by hand'}}): (
            "it leaves out 'call_0', which the run waits for; it gives a result for 'call_0', which is no pending call"
        ),
        json.dumps({'approvals': {CALL_ID: True}, 'answered_by': {'call_9': 'bob'}}): (
            "ask-user: invalid answer: answered_by names call 'call_9', which this decision does not decide"
        ),
    }
    for decision, message in refusals.items():
        code, out, err = await ask_user_cli(
            'resolve', token, '--temporal', temporal_address, '--json', '-', stdin=decision
        )
        assert (code, out) == (2, ''), err
        assert message in err, err
        assert 'Traceback' not in err
    for not_a_token in ('abc', 'dbos1.abc.' + handle.id, '\x1b[31mtemporal'):
        code, out, err = await ask_user_cli('resolve', not_a_token, '--temporal', temporal_address, '--fail', 'x')
        assert (code, out) == (2, ''), err
        assert 'this is not a TemporalEventWaiter token: it names no Temporal workflow' in err
        assert '\x1b' not in err
    # A token naming a workflow that does not exist: nothing waits on it.
    code, _, err = await ask_user_cli(
        'resolve', token + 'x', '--temporal', temporal_address, '--json', '-', stdin=APPROVE
    )
    assert code == 7, err
    assert GONE in err

    assert [event.token for event in await pending_temporal_events(handle)] == [token]  # still waiting
    assert await accepted_updates(handle) == 0
    assert DEPLOYED == []

    # The beginning of the token will do, as git takes a commit's (the format's prefix begins every token: not that).
    prefix = token[: len('temporal1.') + 12]
    code, out, err = await ask_user_cli('resolve', prefix, '--temporal', temporal_address, '--json', '-', stdin=APPROVE)
    assert (code, json.loads(out)) == (0, {'resolved': token}), err
    assert (await handle.result()).output == DEPLOYED_TEXT
    await finished_once(client, handle)


async def test_a_token_prefix_that_begins_several_waits_is_refused_listing_them(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    first, second = await _start(client, queue), await _start(client, queue)
    tokens = {(await listed_by_pending(temporal_address, handle.id))['token'] for handle in (first, second)}
    code, out, err = await ask_user_cli('resolve', 'temporal1.', '--temporal', temporal_address, '--fail', 'x')
    assert (code, out) == (9, ''), err  # EXIT_AMBIGUOUS: nothing sent
    assert "'temporal1.' means 2 waiting items" in err
    assert all(token in err for token in tokens)
    assert await accepted_updates(first) == await accepted_updates(second) == 0
    for token in tokens:
        code, _, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, '--fail', 'cancelled')
        assert code == 0, err
    assert DEPLOYED == []


async def test_a_deferred_question_is_resolved_with_an_answer_read_as_ask_user_answer_reads_it(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    handle = await _start(client, queue, DeferredWaitingWorkflow)
    line = await listed_by_pending(temporal_address, handle.id)
    token = line['token']
    assert 'approvals' not in line  # a wait's approvals are lines of their own
    [call] = line['calls']
    assert (call['tool_call_id'], call['tool_name']) == (CALL_ID, 'ask_user_question')
    misfits = {
        json.dumps({'calls': {CALL_ID: {'Database': ['Oracle'], 'Region': ['EU']}}}): (
            "invalid answer: call 'call_0': the answer to 'Database' picks 'Oracle', which is not one of its options"
        ),
        json.dumps({'calls': {CALL_ID: 'PostgreSQL in the EU'}}): 'not with text of your own',
        json.dumps({'calls': {CALL_ID: {'Database': {'answer': ['SQLite'], 'note': 'n'}, 'Region': ['EU']}}}): (
            "invalid answer: call 'call_0': "
        ),
    }
    for decision, message in misfits.items():
        code, out, err = await ask_user_cli(
            'resolve', token, '--temporal', temporal_address, '--json', '-', stdin=decision
        )
        assert (code, out) == (2, ''), err
        assert message in err, err
    assert await accepted_updates(handle) == 0

    [event] = await pending_temporal_events(handle)
    assert event.requests is not None
    request = AskUserRequest.from_deferred(event.requests, event.requests.calls[0])
    # Labels match ignoring case, as `ask-user answer` matches them; the model gets what `ask_user_result` makes.
    answer = json.dumps({'calls': {CALL_ID: {'Database': ['sqlite'], 'Region': 'eu'}}})
    code, out, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, '--json', '-', stdin=answer)
    assert (code, json.loads(out)) == (0, {'resolved': token}), err
    response = AskUserResponse(
        answers=(
            AskUserAnswer(header='Database', selected=('SQLite',)),
            AskUserAnswer(header='Region', selected=('EU',)),
        )
    )
    expected = ask_user_result(request, response)
    assert (await handle.result()).output == ANSWER_PREFIX + json.dumps(expected, sort_keys=True)
    await finished_once(client, handle)


async def test_an_unlisted_approval_is_found_by_the_query_and_resolved(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    handle = await _start(client, queue, UnlistedApprovalWorkflow)
    deadline = time.monotonic() + WAIT
    while not (events := await _pending_or_none(handle)):
        assert time.monotonic() < deadline, 'the approval did not wait'
        await asyncio.sleep(0.1)  # the poll's pace, not a wait for time to pass
    [event] = events
    code, out, err = await ask_user_cli('pending', '--temporal', temporal_address, '--json')
    assert code == 0, err
    assert event.token not in out  # not listed: nothing was published for it
    code, out, err = await ask_user_cli(
        'resolve', event.token, '--temporal', temporal_address, '--json', '-', stdin='{}'
    )
    assert (code, out) == (2, ''), err
    assert "it leaves out 'call_0', which the run waits for" in err
    code, out, err = await ask_user_cli(
        'resolve', event.token, '--temporal', temporal_address, '--json', '-', stdin=APPROVE
    )
    assert (code, json.loads(out)) == (0, {'resolved': event.token}), err
    assert (await handle.result()).output == DEPLOYED_TEXT


async def _pending_or_none(handle: WorkflowHandle[Any, Any]) -> list[Any]:
    from temporalio.service import RPCError

    try:
        return await pending_temporal_events(handle)
    except RPCError:
        return []  # no worker has run the workflow's first task yet


def _deployed(tmp_path: Path) -> list[str]:
    deploys = tmp_path / 'deploys'
    return deploys.read_text().split() if deploys.exists() else []


async def test_a_worker_killed_with_9_after_resolve_was_accepted_finishes_the_run_with_that_decision(
    temporal_address: str, start_worker: Any, tmp_path: Path
) -> None:
    client = await Client.connect(temporal_address, plugins=[PydanticAIPlugin()])
    hold = tmp_path / 'tool-runs'
    first = start_worker(**{HOLD_FILE_VARIABLE: str(hold)})
    handle = await _start(client, start_worker.queue)
    token = (await listed_by_pending(temporal_address, handle.id))['token']
    code, _, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, '--json', '-', stdin=APPROVE)
    assert code == 0, err  # accepted: in the workflow's history
    await wait_for_file(hold)  # the run went on with it, to the tool call the first worker never finishes
    first.kill()

    start_worker(**{DEPLOYS_FILE_VARIABLE: str(tmp_path / 'deploys')})
    assert (await handle.result()).output == DEPLOYED_TEXT
    assert _deployed(tmp_path) == ['production']
    await finished_once(client, handle)
    code, _, err = await ask_user_cli('resolve', token, '--temporal', temporal_address, '--json', '-', stdin=APPROVE)
    assert code == 7, err


async def test_resolve_with_an_unreachable_server_is_exit_4_and_namespace_without_temporal_is_refused() -> None:
    address = f'127.0.0.1:{free_port()}'  # nothing listens there
    token = 'temporal1.' + 'a' * 32 + '.deploy-1'
    code, out, err = await ask_user_cli('resolve', token, '--temporal', address, '--json', '-', stdin=APPROVE)
    assert (code, out) == (4, ''), err
    assert err.startswith(f'ask-user: cannot resolve the wait in the Temporal namespace default at {address}: ')
    assert 'Fatal Python error' not in err
    code, _, err = await ask_user_cli('resolve', token, '--namespace', 'prod', '--fail', 'x')
    assert code == 4
    assert '--namespace is a Temporal namespace' in err


RunWaiting = tuple[WorkflowHandle[Any, Outcome], PendingApproval]
"""A run's workflow, and the approval it waits for."""


async def _two_runs_waiting(
    temporal_address: str, worker: tuple[Client, str]
) -> tuple[TemporalQuestionStore, RunWaiting, RunWaiting]:
    """Two runs whose models both call `call_0`, each waiting for its approval: the store, and each run's handle
    with its approval."""
    client, queue = worker
    first, second = await _start(client, queue), await _start(client, queue)
    for handle in (first, second):
        await listed_by_pending(temporal_address, handle.id)
    store = TemporalQuestionStore(client=client)
    approvals = {approval.workflow_id: approval for approval in await store.pending_approvals()}
    return store, (first, approvals[first.id]), (second, approvals[second.id])


async def test_approvals_are_pending_items_decided_by_id_with_arguments_checked_against_the_tool_s_schema(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    # Two runs, both models calling `call_0`: two approvals, told apart by their waits.
    store, (first, one), (second, other) = await _two_runs_waiting(temporal_address, worker)
    assert (one.tool_call_id, other.tool_call_id) == (CALL_ID, CALL_ID)
    assert one.key != other.key
    assert (one.tool_name, one.args) == ('deploy', DEPLOY_ARGS)
    assert one.parameters is not None
    assert one.parameters['properties']['target'] == {'type': 'string'}
    assert await store.get_approval(one.key) == one

    # Arguments that do not fit the schema: refused here, saying what is wrong; nothing reaches the run.
    with pytest.raises(ValueError, match=r"at target: 3 is not of type 'string'"):
        await store.decide(one.key, ApprovalDecision.edit({'target': 3}))
    code, out, err = await ask_user_cli('answer', one.key, '--temporal', temporal_address, '--args', '{}')
    assert (code, out) == (2, ''), err
    assert "'target' is a required property" in err
    # Edited, from the command line: the tool runs with the person's arguments.
    code, out, err = await ask_user_cli(
        'answer', one.key, '--temporal', temporal_address, '--args', '{"target": "staging"}'
    )
    assert code == 0, err
    assert json.loads(out) == {
        'id': one.key,
        'tool_call_id': CALL_ID,
        'decision': 'edited',
        'args': {'target': 'staging'},
    }
    assert (await first.result()).output == TOOL_SAID + 'deployed to staging'
    # Denied with a reason, through the store; the other run's tool never runs.
    await store.decide(other.key, ApprovalDecision.deny('not on a Friday'))
    assert (await second.result()).output == TOOL_SAID + 'not on a Friday'
    assert DEPLOYED == ['staging']
    code, _, err = await ask_user_cli('answer', other.key, '--temporal', temporal_address, '--approve')
    assert code == 5, err  # its wait is over: no longer listed


async def test_respond_and_ignore_reach_the_model_and_the_tool_never_runs(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    store, (first, one), (second, other) = await _two_runs_waiting(temporal_address, worker)
    # Respond, from the command line: the model gets the person's words instead of the tool's result.
    code, out, err = await ask_user_cli(
        'answer', one.key, '--temporal', temporal_address, '--respond', 'Use staging first.'
    )
    assert code == 1, err
    assert json.loads(out) == {
        'id': one.key,
        'tool_call_id': CALL_ID,
        'decision': 'responded',
        'response': 'Use staging first.',
    }
    assert (await first.result()).output == TOOL_SAID + RESPONDED_DENIAL.format(response='Use staging first.')
    # Ignore, through the store.
    await store.decide(other.key, ApprovalDecision.ignore())
    assert (await second.result()).output == TOOL_SAID + IGNORED_DENIAL
    assert DEPLOYED == []
