"""Forwarding on `DBOSQuestionStore`: the audience column, the addressees and the hand-offs table change together,
the change feed tells open inboxes, history keeps each hand-off, and the waiting run gets its one answer.

The store-level tests run on a real SQLite file and on the private PostgreSQL server (`database_url`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import anyio
import pytest
import waits
from ask_user_support import make_request
from durable_support import dbos_workflows
from worker_support import dbos_launched

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person
from pydantic_ai_ask_user.dbos import DBOSAnswerer, DBOSQuestionStore
from pydantic_ai_ask_user.dbos._approvals import claim_approval, insert_approval
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending
from pydantic_ai_ask_user.dbos._waits import open_wait_row
from pydantic_ai_ask_user.store import (
    AlreadyAnsweredError,
    ApprovalDecision,
    PendingApproval,
    StoreEvent,
    UnknownRequestError,
    finished_json,
)

pytestmark = pytest.mark.anyio

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
ALICE = Person('alice')
BOB = Person('bob')
CAROL = Person('carol', groups=frozenset({'team:oncall'}))


def _ask(url: str, key: str, audience: tuple[str, ...] | None) -> None:
    with shared_engine(url).begin() as conn:
        insert_pending(conn, replace(make_request(id=key), audience=audience), 'wf')


async def _keys(store: DBOSQuestionStore, person: Person) -> tuple[list[str], list[str], int]:
    listed = [request.key for request in await store.pending(visible_to=person)]
    page = await store.pending_page(visible_to=person)
    return listed, [record.request.key for record in page.records], page.total


async def test_forward_replaces_the_audience_and_history_keeps_the_handoff(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _ask(database_url, 'q1', ('alice',))
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False) as store:
        assert await _keys(store, ALICE) == (['q1'], ['q1'], 1)
        handoff = await store.forward('q1', ['team:oncall'], note='Carol <b>knows</b>', by='alice')
        assert handoff.from_audience == ('alice',)
        assert handoff.to_audience == ('team:oncall',)
        assert await _keys(store, ALICE) == ([], [], 0)
        assert await _keys(store, CAROL) == (['q1'], ['q1'], 1)
        assert (await store.get('q1')).audience == ('team:oncall',)
        assert [each.note for each in await store.handoffs('q1')] == ['Carol <b>knows</b>']
        added = await store.forward('q1', ['bob'], replace=False)
        assert added.to_audience == ('bob', 'team:oncall')
        assert await _keys(store, BOB) == (['q1'], ['q1'], 1)
        with shared_engine(database_url).begin() as conn:
            assert claim_answer(conn, 'q1', encode_response(replace(PICK, answered_by='carol')), 'carol')
        with pytest.raises(AlreadyAnsweredError):
            await store.forward('q1', ['alice'])
        with pytest.raises(UnknownRequestError):
            await store.forward('nope', ['alice'])
        with pytest.raises(ValueError, match='control'):
            await store.forward('q1', ['bob'], note='\x1b[2J')
        (record,) = (await store.history_page(visible_to=CAROL)).records
        assert record.by == 'carol'
        assert [(each.by, each.from_audience, each.to_audience) for each in record.handoffs] == [
            ('alice', ('alice',), ('team:oncall',)),
            (None, ('team:oncall',), ('bob', 'team:oncall')),
        ]
        assert [each['note'] for each in finished_json(record)['handoffs']] == ['Carol <b>knows</b>', '']
        assert (await store.history_page(visible_to=ALICE)).records == []


async def test_forward_an_approval(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    approval = PendingApproval('tok', 'call_0', 'deploy', {'env': 'prod'}, workflow_id='wf', audience=('alice',))
    with shared_engine(database_url).begin() as conn:
        open_wait_row(conn, 'tok', 'wf')
        insert_approval(conn, approval)
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False) as store:
        await store.forward(approval.key, ['bob'], note='yours', by='alice')
        assert await store.pending_approvals(visible_to=ALICE) == []
        (shown,) = await store.pending_approvals(visible_to=BOB)
        assert shown.audience == ('bob',)
        assert (await store.pending_approvals_page(visible_to=BOB)).total == 1
        with shared_engine(database_url).begin() as conn:
            assert claim_approval(conn, shown, ApprovalDecision.approve(decided_by='bob'))
        with pytest.raises(AlreadyAnsweredError):
            await store.forward(approval.key, ['carol'])
        (record,) = (await store.history_page(visible_to=BOB)).records
        assert record.kind == 'approval'
        assert [(each.note, each.to_audience) for each in record.handoffs] == [('yours', ('bob',))]


async def test_the_change_feed_carries_the_forward(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _ask(database_url, 'q2', ('alice',))
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False, events_poll_seconds=0.05) as store:
        await store.forward('q2', ['bob'])
        seen: list[StoreEvent] = []
        with anyio.fail_after(waits.WAIT):
            # From the start of the log: the question published, then requested anew, addressed to Bob.
            async for event in store.events_after('0'):
                seen.append(event)
                if len(seen) == 2:
                    break
    assert [(event.kind, event.request_id) for event in seen] == [('requested', 'q2'), ('requested', 'q2')]
    assert seen[-1].request is not None
    assert seen[-1].request.audience == ('bob',)


@pytest.fixture(scope='module')
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """DBOS launched in this process on a fresh SQLite file; yields the database URL."""
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "questions.sqlite"}'
    with dbos_launched(url, 'ask-user-forward-tests', 'forward-tests-1'):
        yield url


async def test_the_waiting_run_gets_one_answer_from_the_new_addressee(launched: str) -> None:
    answerer = DBOSAnswerer(launched, recheck_seconds=30)
    request = replace(make_request(id=f'fwd-{time.time_ns()}'), audience=('alice',))
    got: list[AskUserResponse] = []

    async def ask() -> None:
        got.append(await answerer(request))

    async with DBOSQuestionStore(launched, events_poll_seconds=0.05) as store:

        async def waiting() -> bool:
            return request.key in {each.key for each in await store.pending()}

        with anyio.fail_after(waits.WAIT * 2):
            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                await waits.wait_until(waiting, 'the question to wait')
                await store.forward(request.key, ['bob'], note='over to you', by='alice')
                assert list(await store.pending(visible_to=ALICE)) == []
                await store.respond(request.key, replace(PICK, answered_by='bob'))
    assert len(got) == 1
    assert got[0].answered_by == 'bob'
    assert got[0].answers == PICK.answers


async def test_a_database_of_an_earlier_version_gets_the_handoffs_table(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _ask(database_url, 'old', ('alice',))
    with shared_engine(database_url).begin() as conn:
        conn.exec_driver_sql('DROP TABLE ask_user_handoffs')
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False) as store:
        assert await store.handoffs('old') == ()
        assert (await store.history_page()).records == []
        await store.forward('old', ['bob'], note='still works')
        assert [each.note for each in await store.handoffs('old')] == ['still works']
