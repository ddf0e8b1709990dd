"""Hand-offs on Temporal: `TemporalQuestionStore.forward` (an Update on the waiting workflow) for questions and
approvals, through the library, `ask-user forward --temporal` and the web API; and escalation, a durable timer in the
workflow that forwards a question or an approval still waiting, once, even across a worker killed with -9.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import pytest
from starlette.requests import Request
from temporal_support import (
    CALL_ID,
    ESCALATE_AFTER,
    TOOL_SAID,
    EscalatingAskWorkflow,
    EscalatingReleaseWorkflow,
    Outcome,
    OwnedAskWorkflow,
    OwnedReleaseWorkflow,
)
from temporal_testing import ANSWER, ask_user_cli, history_kinds, start_run, told
from temporalio.client import Client, WorkflowHandle
from waits import WAIT, wait_until

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.store import (
    AlreadyAnsweredError,
    ApprovalDecision,
    PendingApproval,
    StoreEvent,
    UnknownRequestError,
)
from pydantic_ai_ask_user.temporal import TemporalQuestionStore, TemporalRecord
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio

T = TypeVar('T')

MISSING = '0123456789abcdef0123456789abcdef'
ALICE, BOB = Person('alice'), Person('bob')
CAROL = Person('carol', groups=frozenset({'team:oncall'}))


async def _start(client: Client, queue: str, workflow_type: Any, owner: str = 'alice') -> WorkflowHandle[Any, Outcome]:
    return await start_run(client, queue, workflow_type, prefix='forward', prompt='Release it', owner=owner)


async def _until(look: Callable[[], Awaitable[T | None]], what: str) -> T:
    deadline = time.monotonic() + WAIT
    while (found := await look()) is None:
        assert time.monotonic() < deadline, f'{what} not seen within {WAIT:.0f} s'
        await asyncio.sleep(0.1)  # the poll's pace, not a wait for time to pass
    return found


async def _question_of(
    store: TemporalQuestionStore, handle: WorkflowHandle[Any, Any], person: Person
) -> TemporalRecord:
    async def listed() -> TemporalRecord | None:
        mine = [each for each in await store.pending_records(visible_to=person) if each.workflow_id == handle.id]
        return mine[0] if mine else None

    return await _until(listed, f'the question of {handle.id} listed for {person.name}')


async def _approval_of(
    store: TemporalQuestionStore, handle: WorkflowHandle[Any, Any], person: Person
) -> PendingApproval:
    async def listed() -> PendingApproval | None:
        mine = [each for each in await store.pending_approvals(visible_to=person) if each.workflow_id == handle.id]
        return mine[0] if mine else None

    return await _until(listed, f'the approval of {handle.id} listed for {person.name}')


def who(request: Request) -> Person | bool:
    name = request.headers.get('x-user')
    return Person(name) if name in ('alice', 'bob') else False


async def test_forward_a_question_the_new_addressee_answers_and_the_run_gets_that_answer(
    client: Client, worker: str
) -> None:
    handle = await _start(client, worker, OwnedAskWorkflow)
    store = TemporalQuestionStore(client=client)
    record = await _question_of(store, handle, ALICE)
    key = record.key
    assert record.handoffs == ()
    with pytest.raises(ValueError, match='at least one'):
        await store.forward(key, [])
    with pytest.raises(ValueError, match='control'):
        await store.forward(key, ['bob'], note='a\x1b[31m')
    with pytest.raises(UnknownRequestError):
        await store.forward(MISSING, ['bob'])
    handoff = await store.forward(key, ['bob'], note='yours\nnow', by='alice')
    assert (handoff.by, handoff.from_audience, handoff.to_audience, handoff.note) == (
        'alice',
        ('alice',),
        ('bob',),
        'yours\nnow',
    )
    assert tuple(await store.handoffs(key)) == (handoff,)
    shown = await _question_of(store, handle, BOB)
    assert shown.request.audience == ('bob',)
    assert shown.handoffs == (handoff,)
    assert all(each.workflow_id != handle.id for each in await store.pending_records(visible_to=ALICE))
    await store.respond(key, ANSWER)
    assert (await handle.result()).output == told(shown.request, ANSWER)
    with pytest.raises(AlreadyAnsweredError):
        await store.forward(key, ['carol'])


async def test_forward_an_approval_adds_a_person_and_they_decide(client: Client, worker: str) -> None:
    handle = await _start(client, worker, OwnedReleaseWorkflow)
    store = TemporalQuestionStore(client=client)
    approval = await _approval_of(store, handle, ALICE)
    handoff = await store.forward(approval.key, ['bob'], replace=False, by='alice')
    assert handoff.to_audience == ('alice', 'bob')
    forwarded = await _approval_of(store, handle, BOB)
    assert forwarded.key == approval.key
    assert forwarded.audience == ('alice', 'bob')
    assert [each.to_audience for each in await store.handoffs(approval.key)] == [('alice', 'bob')]
    await store.decide(approval.key, ApprovalDecision.approve(decided_by='bob'))
    assert (await handle.result()).output == TOOL_SAID + json.dumps({CALL_ID: 'deployed to production'})
    with pytest.raises(UnknownRequestError):  # a decided wait is no longer listed
        await store.forward(approval.key, ['carol'])


async def test_ask_user_forward_temporal_and_the_web_api_forward(
    client: Client, worker: str, temporal_address: str
) -> None:
    handle = await _start(client, worker, OwnedAskWorkflow)
    store = TemporalQuestionStore(client=client)
    key = (await _question_of(store, handle, ALICE)).key
    code, out, err = await ask_user_cli(
        'forward', key, '--to', 'bob', '--note', 'yours', '--temporal', temporal_address
    )
    assert code == 0, err
    printed = json.loads(out)
    assert (printed['id'], printed['status'], printed['handoff']['to']) == (key, 'forwarded', ['bob'])
    await _question_of(store, handle, BOB)
    code, _, err = await ask_user_cli('forward', MISSING, '--to', 'bob', '--temporal', temporal_address)
    assert code == 5, err

    app = create_app(TemporalQuestionStore(temporal_address), authorize=who)
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=WAIT) as web:
        refused = await web.post(f'api/requests/{key}/forward', headers={'x-user': 'alice'}, json={'to': ['alice']})
        assert refused.status_code == 404  # no longer hers
        sent = await web.post(
            f'api/requests/{key}/forward', headers={'x-user': 'bob'}, json={'to': 'alice', 'note': 'back to you'}
        )
        assert sent.status_code == 200, sent.text
        assert sent.json()['handoff']['from'] == ['bob']
    back = await _question_of(store, handle, ALICE)
    assert [each.note for each in back.handoffs] == ['yours', 'back to you']
    await store.respond(key, ANSWER)
    await handle.result()


async def test_a_question_still_waiting_escalates_once_and_the_new_addressee_answers(
    client: Client, worker: str
) -> None:
    handle = await _start(client, worker, EscalatingAskWorkflow)
    store = TemporalQuestionStore(client=client)
    asked = await _question_of(store, handle, ALICE)
    escalated = await _question_of(store, handle, CAROL)
    (handoff,) = escalated.handoffs
    assert handoff.by is None
    assert handoff.from_audience == ('alice',)
    assert handoff.to_audience == ('alice', 'team:oncall')
    assert handoff.note == f'Escalated: unanswered after {ESCALATE_AFTER:g} seconds.\nthe owner is away'
    assert handoff.at - asked.created_at >= ESCALATE_AFTER
    await store.respond(asked.key, ANSWER)
    assert (await handle.result()).output == told(asked.request, ANSWER)
    kinds = await history_kinds(handle)
    assert kinds.count('timer_fired_event_attributes') == 1


async def test_an_approval_still_waiting_escalates(client: Client, worker: str) -> None:
    handle = await _start(client, worker, EscalatingReleaseWorkflow)
    store = TemporalQuestionStore(client=client)
    approval = await _approval_of(store, handle, CAROL)
    assert approval.audience == ('alice', 'team:oncall')
    (handoff,) = await store.handoffs(approval.key)
    assert handoff.by is None
    await store.decide(approval.key, ApprovalDecision.deny('not today', decided_by='carol'))
    assert (await handle.result()).output == TOOL_SAID + json.dumps({CALL_ID: 'not today'})


async def test_a_worker_killed_before_the_escalation_fires_it_once_after_the_restart(
    client: Client, start_worker: Any, tmp_path: Path
) -> None:
    first = start_worker()
    handle = await _start(client, start_worker.queue, EscalatingAskWorkflow)
    store = TemporalQuestionStore(client=client)
    asked = await _question_of(store, handle, ALICE)
    assert asked.handoffs == ()
    first.kill()

    async def fired() -> bool:
        return 'timer_fired_event_attributes' in await history_kinds(handle)

    # The timer fires on the server with no worker up; the escalation is the next worker's to apply.
    await wait_until(fired, 'the escalation timer to fire')
    start_worker()
    escalated = await _question_of(store, handle, CAROL)
    assert len(escalated.handoffs) == 1
    await store.respond(asked.key, ANSWER)
    assert (await handle.result()).output == told(asked.request, ANSWER)
    kinds = await history_kinds(handle)
    assert kinds.count('timer_started_event_attributes') == 1
    assert kinds.count('timer_fired_event_attributes') == 1


@dataclass
class _Listing(TemporalQuestionStore):
    """The store, counting its listings: `events()` diffs one listing against the next."""

    listings: int = 0

    async def pending_records(self, *, visible_to: Person | None = None) -> Sequence[TemporalRecord]:
        found = await super().pending_records(visible_to=visible_to)
        self.listings += 1
        return found


async def test_events_tell_of_a_forward_as_the_former_addressees_losing_it_and_the_new_ones_getting_it(
    client: Client, worker: str
) -> None:
    store = _Listing(client=client, events_poll_seconds=0.2)
    seen: list[StoreEvent] = []

    async def watch() -> None:
        async for event in store.events():
            seen.append(event)

    def kinds(key: str) -> list[tuple[str, tuple[str, ...] | None]]:
        return [(each.kind, each.request.audience if each.request else None) for each in seen if each.request_id == key]

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        await wait_until(lambda: store.listings >= 1, 'the first listing of events()')
        handle = await _start(client, worker, OwnedAskWorkflow)
        key = (await _question_of(store, handle, ALICE)).key
        await wait_until(lambda: kinds(key) == [('requested', ('alice',))], 'the question requested')
        await store.forward(key, ['bob'])
        await wait_until(lambda: len(kinds(key)) == 3, 'the forward told')
        assert kinds(key)[1:] == [('withdrawn', ('alice',)), ('requested', ('bob',))]
        await store.respond(key, ANSWER)
        await handle.result()
        group.cancel_scope.cancel()
