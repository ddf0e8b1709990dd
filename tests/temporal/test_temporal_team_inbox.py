"""The team inbox on Temporal: questions and tool approvals addressed to their owners, each person seeing and deciding
only their own, through every listing (the store, `ask-user pending --temporal --for`, the web inbox's API), and a
whole wait (approval and question) decided at once by `ask-user answer TOKEN --json`, all or nothing.

Every test has a dev server of its own (`temporal_server`): the counts are exact, with no other test's workflow
listed beside these. alice's and bob's runs are of one agent whose model repeats the tool call id `call_0`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from starlette.requests import Request
from temporal_server import TemporalServer
from temporal_support import (
    ALL_WORKFLOWS,
    ASK_TOO,
    CALL_ID,
    DEPLOYED,
    QUESTION_CALL_ID,
    TASK_QUEUE,
    TOOL_SAID,
    ApprovalWorkflow,
    Outcome,
    OwnedAskWorkflow,
    OwnedReleaseWorkflow,
    patient_worker,
)
from temporal_testing import ANSWER, accepted_updates, ask_user_cli, start_run, told
from temporalio.client import Client, WorkflowHandle
from waits import WAIT, wait_until

from pydantic_ai_ask_user import AskUserRequest, Person
from pydantic_ai_ask_user._cli.approvals import approval_json
from pydantic_ai_ask_user._json import response_to_json
from pydantic_ai_ask_user.store import ApprovalDecision, FinishedRecord, PendingApproval, UnknownRequestError
from pydantic_ai_ask_user.temporal import TemporalQuestionStore, TemporalRecord, pending_temporal_events
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio

T = TypeVar('T')

MISSING = '0123456789abcdef0123456789abcdef'
"""A key nothing has: what every answer about someone else's item must look like."""

ALICE, BOB = Person('alice'), Person('bob')


def who(request: Request) -> Person | bool:
    """The app's own sign-in, a header its proxy sets: alice, bob, or the operator, who sees all."""
    name = request.headers.get('x-user')
    if name == 'operator':
        return Person('operator', sees_all=True)
    return Person(name) if name in ('alice', 'bob') else False


@pytest.fixture
async def worker(temporal_server: TemporalServer) -> AsyncIterator[tuple[Client, str]]:
    """A client and a worker in this process, on a dev server of this test's own."""
    client = await Client.connect(temporal_server.address, plugins=[PydanticAIPlugin()])
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    DEPLOYED.clear()
    async with patient_worker(client, task_queue=queue, workflows=list(ALL_WORKFLOWS)):
        yield client, queue


async def _start(
    client: Client, queue: str, workflow_type: Any, owner: str, prompt: str = 'Release it'
) -> WorkflowHandle[Any, Outcome]:
    return await start_run(client, queue, workflow_type, prefix='team', prompt=prompt, owner=owner)


async def _until(look: Callable[[], Awaitable[T | None]], what: str) -> T:
    deadline = time.monotonic() + WAIT
    while (found := await look()) is None:
        assert time.monotonic() < deadline, f'{what} not seen within {WAIT:.0f} s'
        await asyncio.sleep(0.1)  # the poll's pace, not a wait for time to pass
    return found


async def _approvals_by_owner(store: TemporalQuestionStore, count: int) -> dict[str, PendingApproval]:
    async def listed() -> dict[str, PendingApproval] | None:
        approvals = await store.pending_approvals()
        return {a.workflow_id.split('-')[1]: a for a in approvals} if len(approvals) == count else None

    return await _until(listed, f'{count} approvals')


async def _questions_by_owner(store: TemporalQuestionStore, count: int) -> dict[str, TemporalRecord]:
    async def listed() -> dict[str, TemporalRecord] | None:
        records = await store.pending_records()
        return {r.workflow_id.split('-')[1]: r for r in records} if len(records) == count else None

    return await _until(listed, f'{count} questions')


def _json_lines(out: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    *lines, trailer = map(json.loads, out.splitlines())
    return lines, trailer


async def test_an_approval_only_wait_addressed_to_alice_is_hers_alone_everywhere_and_bob_s_is_his(
    temporal_server: TemporalServer, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    address = temporal_server.address
    runs = {owner: await _start(client, queue, OwnedReleaseWorkflow, owner) for owner in ('alice', 'bob')}
    store = TemporalQuestionStore(client=client)
    approvals = await _approvals_by_owner(store, 2)
    alice, bob = approvals['alice'], approvals['bob']
    assert alice.tool_call_id == bob.tool_call_id == CALL_ID  # both models said `call_0`: told apart by their waits
    assert alice.key != bob.key
    # No question in the wait: addressed by `TemporalExternalEvents(audience=..., context=...)`, a function of the run.
    assert (alice.audience, bob.audience) == (('alice',), ('bob',))
    assert alice.context is not None
    assert (alice.context.title, alice.context.agent_name) == ('Release for alice', 'release_asker')

    # The store: each sees their own; the operator both; a wait's listing is addressed as its approvals are.
    assert await store.pending_approvals(visible_to=ALICE) == [alice]
    assert await store.pending_approvals(visible_to=BOB) == [bob]
    assert await store.pending_approvals(visible_to=Person('mallory', groups=['team:alice'])) == []
    assert len(await store.pending_approvals(visible_to=Person('op', sees_all=True))) == 2
    assert [record.key for record in await store.pending_events(visible_to=ALICE)] == [alice.token]

    # The command line: `--for` narrows to each person's own, in text and in JSON.
    for person, mine, theirs in (('alice', alice, bob), ('bob', bob, alice)):
        code, out, err = await ask_user_cli('pending', '--temporal', address, '--for', person)
        assert code == 0, err
        assert f'{mine.key}  approval  asked ' in out
        assert f'  for {person}\n  Release for {person}\n' in out
        assert theirs.key not in out
        assert theirs.token not in out
        code, out, err = await ask_user_cli('pending', '--temporal', address, '--for', person, '--json')
        assert code == 0, err
        lines, _ = _json_lines(out)
        assert lines == [approval_json(mine)]
    code, out, err = await ask_user_cli('pending', '--temporal', address, '--for', 'mallory', '--json')
    assert code == 0, err
    assert _json_lines(out)[0] == []

    # The web inbox over the Temporal store: bob's every route with alice's approval is the 404 of a missing one.
    app = create_app(TemporalQuestionStore(address), authorize=who)
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=WAIT) as web:
        as_alice, as_bob = {'x-user': 'alice'}, {'x-user': 'bob'}
        listed = await web.get('api/approvals', headers=as_alice)
        assert [item['id'] for item in listed.json()['approvals']] == [alice.key]
        assert listed.json()['approvals'][0]['audience'] == ['alice']
        listed = await web.get('api/approvals', headers=as_bob)
        assert [item['id'] for item in listed.json()['approvals']] == [bob.key]
        for method, path, body in (
            ('GET', 'api/approvals/{}', None),
            ('POST', 'api/approvals/{}/decide', '"approve"'),
            ('GET', 'approvals/{}', None),
        ):
            sent = [
                await web.request(
                    method,
                    path.format(key),
                    headers={**as_bob, 'content-type': 'application/json'},
                    content=body,
                )
                for key in (alice.key, MISSING)
            ]
            assert [response.status_code for response in sent] == [404, 404], path
            assert sent[0].text.replace(alice.key, MISSING) == sent[1].text, path
        assert await store.get_approval(alice.key) == alice  # bob's attempt reached nothing
        assert await accepted_updates(runs['alice']) == 0

        decided = await web.post(f'api/approvals/{alice.key}/decide', headers=as_alice, json='approve')
        assert decided.status_code == 200, decided.text
        assert (await runs['alice'].result()).output == TOOL_SAID + json.dumps({CALL_ID: 'deployed to production'})
        denied = await web.post(f'api/approvals/{bob.key}/decide', headers=as_bob, json={'deny': 'not today'})
        assert denied.status_code == 200, denied.text
        assert (await runs['bob'].result()).output == TOOL_SAID + json.dumps({CALL_ID: 'not today'})
    assert DEPLOYED == ['production']


async def test_an_approval_without_an_audience_setting_or_a_question_is_anyone_s_with_the_agent_as_its_context(
    worker: tuple[Client, str],
) -> None:
    client, queue = worker
    await _start(client, queue, ApprovalWorkflow, 'nobody')
    store = TemporalQuestionStore(client=client)
    [approval] = (await _approvals_by_owner(store, 1)).values()
    assert approval.audience is None
    assert approval.context is not None
    assert approval.context.agent_name == 'approval_asker'
    assert await store.pending_approvals(visible_to=BOB) == [approval]


async def test_addressed_questions_are_listed_counted_and_answered_only_by_their_owner_on_every_listing(
    temporal_server: TemporalServer, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    address = temporal_server.address
    runs = {owner: await _start(client, queue, OwnedAskWorkflow, owner) for owner in ('alice', 'bob')}
    store = TemporalQuestionStore(client=client)
    records = await _questions_by_owner(store, 2)
    alice, bob = records['alice'], records['bob']
    assert alice.request.id == bob.request.id == CALL_ID
    assert alice.key != bob.key
    assert (alice.request.audience, bob.request.audience) == (('alice',), ('bob',))

    # The store: each person's page, count and listing hold their own question only; the operator's, both.
    for person, mine in ((ALICE, alice), (BOB, bob)):
        page = await store.pending_page(limit=500, visible_to=person)
        assert [record.key for record in page.records] == [mine.key]
        assert (page.total, page.total_exact) == (1, True)
        assert await store.count_pending(visible_to=person) == 1
        assert [request.key for request in await store.pending(visible_to=person)] == [mine.key]
    assert await store.count_pending(visible_to=Person('mallory')) == 0
    assert (await store.pending_page(limit=1, visible_to=Person('mallory'))).records == []
    everyone = await store.pending_page(limit=500)
    assert {record.key for record in everyone.records} == {alice.key, bob.key}

    # The command line: `pending --for` shows each their own, the trailer counting theirs only.
    for person, mine, theirs in (('alice', alice, bob), ('bob', bob, alice)):
        code, out, err = await ask_user_cli('pending', '--temporal', address, '--for', person, '--json')
        assert code == 0, err
        lines, trailer = _json_lines(out)
        assert [line['id'] for line in lines] == [mine.key]
        assert lines[0]['audience'] == [person]
        assert (trailer['total'], trailer['total_exact']) == (1, True)
        code, out, err = await ask_user_cli('pending', '--temporal', address, '--for', person)
        assert code == 0, err
        assert mine.key in out
        assert theirs.key not in out
        assert '1 of 1 waiting items shown' in err

    # The web inbox's API: bob's list, count and every answer route with alice's key are the 404 of a missing one.
    app = create_app(TemporalQuestionStore(address), authorize=who)
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=WAIT) as web:
        as_bob = {'x-user': 'bob'}
        body = (await web.get('api/requests', headers=as_bob)).json()
        assert [item['id'] for item in body['requests']] == [bob.key]
        assert body['total'] == 1
        await _looks_missing(web, as_bob, alice.key)
        assert await accepted_updates(runs['alice']) == 0
        operator = (await web.get('api/requests', headers={'x-user': 'operator'})).json()
        assert {item['id'] for item in operator['requests']} == {alice.key, bob.key}

        answered = await web.post(f'api/requests/{bob.key}/answer', headers=as_bob, json=response_to_json(ANSWER))
        assert answered.status_code == 200, answered.text
        assert (await runs['bob'].result()).output == told(bob.request, ANSWER)
        # Answered, bob's question is still no business of alice's: a 404 as a missing one, where bob hears 409.
        await _looks_missing(web, {'x-user': 'alice'}, bob.key)
        again = await web.post(f'api/requests/{bob.key}/decline', headers=as_bob, json={})
        assert (again.status_code, again.json()['error']) == (409, 'already_answered')
    # The command line answers by key (administrative access): alice's run gets its own answer.
    code, _, err = await ask_user_cli(
        'answer', alice.key, '--temporal', address, '--json', '-', stdin=json.dumps(response_to_json(ANSWER))
    )
    assert code == 0, err
    assert (await runs['alice'].result()).output == told(alice.request, ANSWER)
    assert await accepted_updates(runs['alice']) == 1


async def _looks_missing(web: httpx.AsyncClient, headers: dict[str, str], key: str) -> None:
    """Every question route with someone else's `key` answers exactly as with a key nothing has: 404."""
    for method, path, payload in (
        ('GET', 'api/requests/{}', None),
        ('POST', 'api/requests/{}/answer', response_to_json(ANSWER)),
        ('POST', 'api/requests/{}/decline', {}),
    ):
        sent = [await web.request(method, path.format(item), headers=headers, json=payload) for item in (key, MISSING)]
        assert [response.status_code for response in sent] == [404, 404], (path, sent[0].text)
        assert sent[0].text.replace(key, MISSING) == sent[1].text, path


async def test_pending_temporal_shows_each_approval_once_as_the_dbos_listing_does_and_the_wait_s_other_calls(
    temporal_server: TemporalServer, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    address = temporal_server.address
    await _start(client, queue, OwnedReleaseWorkflow, 'alice')
    await _start(client, queue, OwnedReleaseWorkflow, 'bob', prompt=f'Release it {ASK_TOO}')
    store = TemporalQuestionStore(client=client)
    approvals = await _approvals_by_owner(store, 2)
    mine, mixed = approvals['alice'], approvals['bob']

    code, out, err = await ask_user_cli('pending', '--temporal', address)
    assert code == 0, err
    for approval in (mine, mixed):
        assert out.count(approval.key) == 1
        # The form `pending --db` prints an approval in (`approval_lines`), addressing under its first line.
        owner = approval.workflow_id.split('-')[1]
        assert (
            f'{approval.key}  approval  asked {_shown_time(approval)}  workflow {approval.workflow_id}\n'
            f'  for {owner}\n  Release for {owner}\n  asked by release_asker · conversation '
        ) in out
        assert (
            f'  run deploy {{"target":"production"}}?  call {CALL_ID}\n'
            f'  (--approve, --deny REASON or --args JSON; wait {approval.token})\n'
        ) in out
    assert 'approve or deny' not in out  # the old per-wait approval line
    # The approval-only wait is its approval alone; the other wait shows the call it waits for a result of too.
    assert f'{mine.token}  opened' not in out
    assert f'{mixed.token}  opened ' in out
    assert '  result of: ask_user_question ' in out
    assert out.count(f'call {QUESTION_CALL_ID}') == 1

    code, out, err = await ask_user_cli('pending', '--temporal', address, '--json')
    assert code == 0, err
    lines, trailer = _json_lines(out)
    shown = [line for line in lines if line.get('kind') == 'approval']
    assert sorted(shown, key=lambda line: line['id']) == sorted(
        [approval_json(mine), approval_json(mixed)], key=lambda line: line['id']
    )
    [wait] = [line for line in lines if line['kind'] == 'wait']
    assert wait['token'] == mixed.token
    assert 'approvals' not in wait
    assert [(call['tool_call_id'], call['tool_name']) for call in wait['calls']] == [
        (QUESTION_CALL_ID, 'ask_user_question')
    ]
    assert (wait['audience'], wait['context']['title']) == (['bob'], 'Release for bob')
    assert trailer['total'] == 2  # Temporal counts the waiting workflows


def _shown_time(approval: PendingApproval) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(approval.created_at, UTC).isoformat(timespec='seconds')


async def test_answer_token_json_decides_a_whole_temporal_wait_all_or_nothing_and_the_run_finishes_with_it(
    temporal_server: TemporalServer, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    address = temporal_server.address
    handle = await _start(client, queue, OwnedReleaseWorkflow, 'alice', prompt=f'Release it {ASK_TOO}')
    store = TemporalQuestionStore(client=client)
    [approval] = (await _approvals_by_owner(store, 1)).values()
    token = approval.token
    approvals, questions = await store.wait_items(token)
    assert approvals == [approval]
    [question] = questions
    assert (question.id, question.audience) == (QUESTION_CALL_ID, ('alice',))

    def answer(decision: dict[str, Any]) -> Awaitable[tuple[int, str, str]]:
        return ask_user_cli('answer', token, '--temporal', address, '--json', '-', stdin=json.dumps(decision))

    good_answer = {'Database': ['sqlite'], 'Region': ['EU']}
    refusals: list[tuple[dict[str, Any], str]] = [
        ({CALL_ID: 'approve'}, f"a wait is decided whole: it leaves out '{QUESTION_CALL_ID}'"),
        ({QUESTION_CALL_ID: good_answer}, f"a wait is decided whole: it leaves out '{CALL_ID}'"),
        (
            {CALL_ID: 'approve', QUESTION_CALL_ID: {'Database': ['Oracle'], 'Region': ['EU']}},
            f"call '{QUESTION_CALL_ID}': ",
        ),
        ({CALL_ID: {'args': {'target': 3}}, QUESTION_CALL_ID: good_answer}, "at target: 3 is not of type 'string'"),
        ({CALL_ID: {'deny': 'no\x1b[2J'}, QUESTION_CALL_ID: good_answer}, 'U+001B'),
        ({CALL_ID: 'approve', QUESTION_CALL_ID: good_answer, 'call_9': 'approve'}, "'call_9': no pending item"),
    ]
    for decision, message in refusals:
        code, out, err = await answer(decision)
        assert (code, out) == (2, ''), err
        assert message in err, err
        assert '\x1b' not in err
    # One item of the wait alone, by its id: refused, saying how to decide the whole wait.
    code, out, err = await ask_user_cli('answer', approval.key, '--temporal', address, '--approve')
    assert (code, out) == (2, ''), err
    assert f'ask-user answer {token} --json FILE' in err
    # Through the store: a fitting decision with an answer that does not fit is refused whole.
    with pytest.raises(ValueError, match='Oracle'):
        await store.decide_wait({approval.key: ApprovalDecision.approve()}, {question.key: _pick(question, 'Oracle')})
    with pytest.raises(UnknownRequestError):
        await store.decide_wait({MISSING: ApprovalDecision.approve()}, {})
    # Nothing reached the run: it still waits on the same wait, with no Update accepted.
    assert [event.token for event in await pending_temporal_events(handle)] == [token]
    assert await accepted_updates(handle) == 0
    assert DEPLOYED == []

    # Both at once, by call id: the approval edited, the question answered (labels matched ignoring case).
    code, out, err = await answer({CALL_ID: {'args': {'target': 'staging'}}, QUESTION_CALL_ID: good_answer})
    assert code == 0, err
    assert json.loads(out) == {
        'token': token,
        'decided': {
            CALL_ID: {'decision': 'edited', 'args': {'target': 'staging'}},
            QUESTION_CALL_ID: {'answered': True},
        },
    }
    output = (await handle.result()).output
    assert output.startswith(TOOL_SAID)
    assert json.loads(output.removeprefix(TOOL_SAID)) == {
        CALL_ID: 'deployed to staging',
        QUESTION_CALL_ID: {'Database': ['SQLite'], 'Region': ['EU']},
    }
    assert DEPLOYED == ['staging']
    assert await accepted_updates(handle) == 1
    code, out, err = await answer({CALL_ID: 'approve', QUESTION_CALL_ID: good_answer})
    assert (code, out) == (7, ''), err
    assert 'nothing waits under this token' in err

    # The history has both items of the wait, each as it was decided and by whom: the question answered with the
    # labels the run got (read back from the result in the workflow's history), the approval edited.
    async def both() -> dict[str, FinishedRecord] | None:
        page = await store.history_page(limit=500)
        found = {record.key: record for record in page.records if record.workflow_id == handle.id}
        return found if len(found) == 2 else None

    records = await wait_until(both, 'the wait to be in the history')
    answered, edited = records[question.key], records[approval.key]
    assert (answered.kind, answered.outcome, edited.kind, edited.outcome) == (
        'question',
        'answered',
        'approval',
        'edited',
    )
    assert answered.request == question
    assert answered.response is not None
    assert {answer.header: answer.selected for answer in answered.response.answers} == {
        'Database': ('SQLite',),
        'Region': ('EU',),
    }
    assert answered.by is not None
    assert answered.by == edited.by == answered.response.answered_by
    assert answered.finished_at == edited.finished_at


def _pick(request: AskUserRequest, label: str) -> Any:
    from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse

    return AskUserResponse(
        answers=tuple(AskUserAnswer(header=question.header, selected=(label,)) for question in request.questions)
    )
