"""Escalation on DBOS: the asking workflow's wait forwards its question when it is still unanswered `after` seconds
after it was first published, in a step of its own, once, whatever kill -9 does to its worker.

Each test runs on SQLite and on PostgreSQL (the `database_url` fixture). The worker's question is for `alice` and
escalates to `team:oncall` (`worker.py --escalate S`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from ask_user_support import ask_one
from durable_support import RequestInputWorker, Worker, pending_of, pick, publications_recorded
from waits import scaled, wait_until

from pydantic_ai_ask_user import AskUserRequest, Person
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._encoding import decode_request, encode_request, escalation_of
from pydantic_ai_ask_user.store import ApprovalDecision, Escalation, Handoff, PendingApproval

pytestmark = pytest.mark.anyio

CAROL = Person('carol', groups=frozenset({'team:oncall'}))
ALICE = Person('alice')


def test_the_policy_is_kept_with_the_question_and_a_row_without_one_reads_as_none() -> None:
    steps = (Escalation(after=60, to='team:oncall', note='hi'), Escalation(after=120, to='boss', replace=True))
    request = ask_one()
    stored = encode_request(AskUserRequest(questions=request.questions, id='x', escalate=steps))
    assert escalation_of(stored) == steps
    assert decode_request(stored, 'x').escalate == steps
    plain = encode_request(request)
    assert 'escalate' not in json.loads(plain)
    assert escalation_of(plain) == ()
    assert decode_request(plain, 'x').escalate == ()
    damaged = json.dumps({**json.loads(plain), 'escalate': [{'after': 'soon'}]})
    assert decode_request(damaged, 'x').escalate == ()


def _escalate_steps(database_url: str, name: str = 'ask_user.escalate') -> int:
    """How many steps named like `name` (a SQL `LIKE` pattern; a question's escalation by default) DBOS recorded."""
    from sqlalchemy import text

    from pydantic_ai_ask_user.dbos._engine import create_engine

    table = 'dbos.operation_outputs' if database_url.startswith('postgresql') else 'operation_outputs'
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            query = text(f'SELECT count(*) FROM {table} WHERE function_name LIKE :name')
            return int(conn.execute(query, {'name': name}).scalar_one())
    finally:
        engine.dispose()


async def _handoffs(store: DBOSQuestionStore, key: str, count: int) -> Sequence[Handoff]:
    async def enough() -> Sequence[Handoff] | None:
        found = await store.handoffs(key)
        return found if len(found) >= count else None

    return await wait_until(enough, f'{count} hand-off(s) of {key}')


async def _answered_by_carol(store: DBOSQuestionStore, worker: Worker, key: str) -> None:
    (shown,) = await store.pending(visible_to=CAROL)
    assert shown.key == key
    assert shown.audience == ('alice', 'team:oncall')
    await store.respond(key, replace(pick('SQLite'), answered_by='carol'))
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['SQLite']}


async def test_a_question_unanswered_escalates_once_and_the_new_addressee_answers(
    worker: Worker, database_url: str
) -> None:
    worker.escalate = 1.0
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        assert record.request.audience == ('alice',)
        assert record.request.escalate == (Escalation(after=1.0, to='team:oncall'),)
        (handoff,) = await _handoffs(store, record.key, 1)
        assert (handoff.by, handoff.from_audience, handoff.to_audience) == (None, ('alice',), ('alice', 'team:oncall'))
        assert handoff.note == 'Escalated: unanswered after 1 seconds.'
        assert handoff.at >= record.created_at + 1.0
        await _answered_by_carol(store, worker, record.key)
        (finished,) = (await store.history_page()).records
        assert len(finished.handoffs) == 1
        assert finished.by == 'carol'
    assert _escalate_steps(database_url) == 1
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_a_worker_killed_before_the_escalation_applies_it_once_after_its_restart(
    worker: Worker, database_url: str
) -> None:
    # Long enough for the kill to come first on a loaded machine; the test waits for it to pass, once.
    worker.escalate = after = round(scaled(4.0), 1)
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        await publications_recorded(database_url)
        worker.kill()
        assert await store.handoffs(record.key) == ()
        due = record.created_at + after
        await wait_until(lambda: time.time() >= due, 'the escalation time to pass')
        # Nobody escalates a question whose workflow is down: the workflow itself does, when it is recovered.
        assert await store.handoffs(record.key) == ()
        worker.start(resume=True)
        (handoff,) = await _handoffs(store, record.key, 1)
        assert handoff.at >= due
        await _answered_by_carol(store, worker, record.key)
        (finished,) = (await store.history_page()).records
        assert len(finished.handoffs) == 1
    assert _escalate_steps(database_url) == 1
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_a_worker_killed_inside_the_escalation_step_does_not_escalate_twice(
    worker: Worker, database_url: str
) -> None:
    worker.escalate = 1.0
    worker.crash = 'after-escalate'
    worker.start()
    await anyio.to_thread.run_sync(worker.wait_crashed)
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await store.pending_records()
        assert len(await store.handoffs(record.key)) == 1  # committed, though DBOS never recorded the step
        assert _escalate_steps(database_url) == 0
        worker.crash = None
        worker.start(resume=True)
        await wait_until(lambda: _escalate_steps(database_url) == 1, 'the escalation step run again and recorded')
        assert len(await store.handoffs(record.key)) == 1
        await _answered_by_carol(store, worker, record.key)
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_an_approval_undecided_escalates_once_and_the_new_addressee_decides(
    database_url: str, tmp_path: Path
) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='ri-esc', escalate=1.0)
    worker.directory.mkdir()
    with worker:
        worker.start()
        async with DBOSQuestionStore(database_url) as store:

            async def escalated() -> PendingApproval | None:
                assert worker.process is None or worker.process.poll() is None, worker.log_text()
                found = await store.pending_approvals(visible_to=CAROL)
                return found[0] if found else None

            approval = await wait_until(escalated, 'the approval to escalate to team:oncall')
            assert approval.audience == ('owner-ri-esc', 'team:oncall')
            (handoff,) = await store.handoffs(approval.key)
            assert handoff.by is None
            assert handoff.note.startswith('Escalated: unanswered after 1 seconds.')
            (question,) = await store.pending_records()
            assert question.request.audience == ('owner-ri-esc',)  # the wait's question keeps its own audience
            await store.decide_wait(
                {approval.key: ApprovalDecision.approve(decided_by='carol')}, {question.key: pick('SQLite')}
            )
        await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output()['call_0'] == 'deployed 3 to production'
    assert _escalate_steps(database_url, 'external_event.%.escalate') == 1
