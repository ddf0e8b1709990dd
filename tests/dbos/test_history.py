"""The history of `DBOSQuestionStore`: finished questions and approvals, newest first, paged, addressed, indexed,
pruned after their retention.

Each test runs on a real SQLite file and on the private PostgreSQL server (`database_url`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from ask_user_support import make_request
from durable_support import dbos_workflows

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person
from pydantic_ai_ask_user._history import encode_history_position, finished_json
from pydantic_ai_ask_user._question_store import encode_cursor
from pydantic_ai_ask_user.dbos import DBOSAnswerer, DBOSQuestionStore
from pydantic_ai_ask_user.dbos._approvals import claim_approval, insert_approval, withdraw_approvals
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._history import (
    count_finished_statement,
    finished_approvals_statement,
    finished_questions_statement,
    select_finished_questions,
)
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending, withdraw_pending
from pydantic_ai_ask_user.dbos._schema import APPROVAL_INDEXES, INDEXES, TABLE_NAME
from pydantic_ai_ask_user.dbos._tables import event_approvals_table
from pydantic_ai_ask_user.dbos._waits import open_wait_row
from pydantic_ai_ask_user.receipts import sign_receipt
from pydantic_ai_ask_user.store import (
    ApprovalDecision,
    BadCursorError,
    FinishedRecord,
    HistoryFilter,
    HistoryStore,
    PendingApproval,
    record_receipt,
)

pytestmark = pytest.mark.anyio

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


def _ask(url: str, key: str, audience: tuple[str, ...] | None = None) -> None:
    with shared_engine(url).begin() as conn:
        insert_pending(conn, replace(make_request(id=key), audience=audience), 'wf')


def _answer(url: str, key: str, response: AskUserResponse = PICK, by: str | None = None) -> None:
    _ask(url, key)
    with shared_engine(url).begin() as conn:
        assert claim_answer(conn, key, encode_response(response), by)


def _withdraw(url: str, key: str) -> None:
    _ask(url, key)
    with shared_engine(url).begin() as conn:
        assert withdraw_pending(conn, [key]) == 1


def _approval(url: str, token: str, audience: tuple[str, ...] | None = None) -> PendingApproval:
    approval = PendingApproval(token, 'call_0', 'deploy', {'env': 'prod'}, workflow_id='wf', audience=audience)
    with shared_engine(url).begin() as conn:
        open_wait_row(conn, token, 'wf')
        insert_approval(conn, approval)
    return approval


def _decide(url: str, token: str, decision: ApprovalDecision | None, audience: tuple[str, ...] | None = None) -> None:
    approval = _approval(url, token, audience)
    with shared_engine(url).begin() as conn:
        if decision is None:
            assert withdraw_approvals(conn, token) == 1
        else:
            assert claim_approval(conn, approval, decision)


def _name(record: FinishedRecord) -> str:
    """The question's key, or the approval's token: what each test named it."""
    return record.approval.token if record.approval is not None else record.key


async def _all(store: DBOSQuestionStore, limit: int, **kwargs: Any) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await store.history_page(limit=limit, cursor=cursor, **kwargs)
        assert len(page.records) <= limit
        names += [_name(record) for record in page.records]
        if (cursor := page.next_cursor) is None:
            return names


async def test_every_outcome_with_who_when_and_what_newest_first(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _ask(database_url, 'still-pending')
    _answer(database_url, 'answered', replace(PICK, answered_by='alice'), by='alice')
    _answer(database_url, 'declined', AskUserResponse(cancelled=True), by='bob')
    _withdraw(database_url, 'withdrawn')
    _decide(database_url, 'approved', ApprovalDecision.approve(decided_by='ann'))
    _decide(database_url, 'edited', ApprovalDecision.edit({'env': 'staging'}, decided_by='ann'))
    _decide(database_url, 'denied', ApprovalDecision.deny('not now'))
    _decide(database_url, 'responded', ApprovalDecision.respond('use staging'))
    _decide(database_url, 'ignored', ApprovalDecision.ignore())
    _decide(database_url, 'a-withdrawn', None)
    _approval(database_url, 'a-pending')
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False) as store:
        assert isinstance(store, HistoryStore)
        page = await store.history_page()
    assert page.total == 9
    assert page.next_cursor is None
    order = [(record.finished_at, record.key) for record in page.records]
    assert order == sorted(order, reverse=True)
    found = {_name(record): record for record in page.records}
    assert {name: record.outcome for name, record in found.items()} == {
        'answered': 'answered',
        'declined': 'declined',
        'withdrawn': 'withdrawn',
        'approved': 'approved',
        'edited': 'edited',
        'denied': 'denied',
        'responded': 'responded',
        'ignored': 'ignored',
        'a-withdrawn': 'withdrawn',
    }
    answered = found['answered']
    assert (answered.kind, answered.by, answered.response, answered.workflow_id) == (
        'question',
        'alice',
        replace(PICK, answered_by='alice'),
        'wf',
    )
    assert answered.request is not None
    assert answered.request.questions == make_request().questions
    assert answered.asked_at <= answered.finished_at
    assert (found['declined'].by, found['withdrawn'].by, found['withdrawn'].response) == ('bob', None, None)
    edited = found['edited']
    assert edited.decision is not None
    assert edited.decision.override_args == {'env': 'staging'}
    assert (edited.kind, edited.by, edited.approval and edited.approval.args) == ('approval', 'ann', {'env': 'prod'})
    assert found['responded'].decision == ApprovalDecision.respond('use staging')
    assert found['denied'].decision == ApprovalDecision.deny('not now')
    assert found['a-withdrawn'].decision is None

    async with DBOSQuestionStore(database_url) as store:
        questions = await store.history_page(where=HistoryFilter(kind='question'))
        approvals = await store.history_page(where=HistoryFilter(kind='approval'))
        middle = page.records[4].finished_at
        older = await store.history_page(where=HistoryFilter(finished_before=middle))
        newer = await store.history_page(where=HistoryFilter(finished_after=middle))
    assert (questions.total, {record.kind for record in questions.records}) == (3, {'question'})
    assert (approvals.total, {record.kind for record in approvals.records}) == (6, {'approval'})
    assert older.total + newer.total == 9
    assert newer.total >= 5


async def test_pages_of_both_kinds_neither_repeat_nor_skip_with_items_finishing_between_them(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for index in range(4):
        _answer(database_url, f'q{index}')
        _decide(database_url, f'a{index}', ApprovalDecision.approve())
    async with DBOSQuestionStore(database_url) as store:
        expected = [_name(record) for record in (await store.history_page()).records]
        assert expected == ['a3', 'q3', 'a2', 'q2', 'a1', 'q1', 'a0', 'q0']
        names: list[str] = []
        cursor = None
        while True:
            page = await store.history_page(limit=3, cursor=cursor)
            names += [_name(record) for record in page.records]
            # Finished between two pages: newer than every page, so on none of the following ones.
            _answer(database_url, f'late-{len(names)}')
            _decide(database_url, f'late-a-{len(names)}', ApprovalDecision.deny())
            if (cursor := page.next_cursor) is None:
                break
        assert names == expected
        assert page.total == 8 + 2 * 3 - 2
        assert len(await _all(store, 2)) == 8 + 2 * 3


async def test_a_person_sees_what_was_addressed_to_them_or_what_they_finished(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _ask(database_url, 'for-alice', ('alice',))
    _ask(database_url, 'for-team', ('team:billing',))
    _ask(database_url, 'for-bob', ('bob',))
    _ask(database_url, 'for-many', ('alice', 'team:billing'))
    with shared_engine(database_url).begin() as conn:
        for key, by in (('for-alice', None), ('for-team', None), ('for-bob', 'alice'), ('for-many', 'carol')):
            assert claim_answer(conn, key, encode_response(PICK), by)
    _answer(database_url, 'for-anyone')
    _ask(database_url, 'pending-for-alice', ('alice',))
    _decide(database_url, 'deploy-bob', ApprovalDecision.approve(decided_by='bob'), ('bob',))
    _decide(database_url, 'deploy-dan', ApprovalDecision.approve(decided_by='alice'), ('dan',))
    _decide(database_url, 'deploy-any', ApprovalDecision.deny())
    everything = {'for-alice', 'for-team', 'for-bob', 'for-many', 'for-anyone', 'deploy-bob', 'deploy-dan'}
    everything.add('deploy-any')
    async with DBOSQuestionStore(database_url) as store:

        async def names(person: Person | None) -> tuple[int, set[str]]:
            page = await store.history_page(visible_to=person)
            shown = {_name(record) for record in page.records}
            assert len(shown) == len(page.records)  # each once, however many of their names it reaches
            assert await _all(store, 1, visible_to=person) == [_name(record) for record in page.records]
            return page.total, shown

        assert await names(None) == (8, everything)
        assert await names(Person('root', sees_all=True)) == (8, everything)
        alice = {'for-alice', 'for-bob', 'for-many', 'for-anyone', 'deploy-dan', 'deploy-any'}
        assert await names(Person('alice')) == (6, alice)
        carol = {'for-team', 'for-many', 'for-anyone', 'deploy-any'}
        assert await names(Person('carol', groups=['team:billing'])) == (4, carol)
        assert await names(Person('bob')) == (4, {'for-bob', 'for-anyone', 'deploy-bob', 'deploy-any'})
        assert await names(Person()) == (2, {'for-anyone', 'deploy-any'})
        # A name holding SQL's wildcards matches nothing else.
        assert await names(Person('a%', groups=['b_b'])) == (2, {'for-anyone', 'deploy-any'})
    # Where the addressees could not be made, the same history from the audience column.
    with shared_engine(database_url).connect() as conn:
        plain, _ = select_finished_questions(conn, before=None, limit=50, visible_to=Person('alice'), addressees=False)
    assert {record.key for record in plain} == {'for-alice', 'for-bob', 'for-many', 'for-anyone'}


async def test_a_damaged_row_is_left_out_and_the_pages_go_on_past_it(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for name in ('q0', 'q1', 'q2', 'q3'):
        _answer(database_url, name)
    with shared_engine(database_url).begin() as conn:
        conn.execute(sa.text(f"UPDATE {TABLE_NAME} SET questions = 'not json' WHERE id IN ('q1', 'q2')"))
    async with DBOSQuestionStore(database_url) as store:
        first = await store.history_page(limit=1)
        assert [record.key for record in first.records] == ['q3']
        # A page of one reads two rows: q3 and q2, left out; the next page goes on after q2, never stops there.
        second = await store.history_page(limit=1, cursor=first.next_cursor)
        assert [record.key for record in second.records] == ['q0']
        assert second.total == 4  # counted without decoding
        assert await _all(store, 1) == ['q3', 'q0']
        # Two damaged rows in a row: a page that reads only them comes empty, with a cursor past them, not the end.
    with shared_engine(database_url).begin() as conn:
        conn.execute(sa.text(f"UPDATE {TABLE_NAME} SET questions = 'not json' WHERE id = 'q3'"))
    async with DBOSQuestionStore(database_url) as store:  # a new store: one remembers what it decoded
        empty = await store.history_page(limit=1)
        assert empty.records == []
        assert empty.next_cursor is not None
        assert await _all(store, 1) == ['q0']


@pytest.mark.parametrize(
    'cursor',
    [
        'garbage',
        encode_cursor([0.0, 1.0, 'q']),  # a pending page's
        encode_cursor(['approval', 1.0, 'q']),  # a pending approvals page's
        encode_cursor(['history', 'x', 'q']),
        encode_cursor(['history', 1.0, 'no spaces']),
    ],
)
async def test_a_cursor_it_did_not_write_is_refused(database_url: str, cursor: str) -> None:
    async with DBOSQuestionStore(database_url) as store:
        with pytest.raises(BadCursorError, match='not one this server gave out'):
            await store.history_page(cursor=cursor)
        with pytest.raises(ValueError, match='from 1 to 500'):
            await store.history_page(limit=501)
        # A history cursor is no pending list's either.
        with pytest.raises(BadCursorError):
            await store.pending_page(cursor=encode_history_position((1.0, 'q')))


async def test_history_ends_where_the_retention_prunes_finished_items(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _answer(database_url, 'old-answered')
    _decide(database_url, 'old-approved', ApprovalDecision.approve())
    _answer(database_url, 'new-answered')
    long_ago = time.time() - 8 * 24 * 3600
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {TABLE_NAME} SET updated_at = :t WHERE id = 'old-answered'"), {'t': long_ago})
        conn.execute(sa.update(event_approvals_table).values(updated_at=long_ago))
        # Its wait is over: a decided approval of an open wait is kept (its wait reads it when it ends).
        conn.execute(sa.text("UPDATE ask_user_event_waits SET status = 'resolved'"))
    async with DBOSQuestionStore(database_url) as store:
        assert await store.history_page(limit=1)
        assert (await store.history_page()).total == 3
        await store.prune_finished()  # the default retention: a week
        page = await store.history_page()
        assert ([_name(record) for record in page.records], page.total) == (['new-answered'], 1)
        await store.prune_finished(older_than=0)
        assert (await store.history_page()).total == 0


def _plan(url: str, build: Callable[[Any], tuple[str, dict[str, Any]]], *, sorts: bool = False) -> str:
    """The query plan of the SQL text `build` makes (PostgreSQL told to prefer indexes, as on a big table, and to
    sort nothing unless `sorts`: a person's page sorts the few rows its branches read)."""
    engine = shared_engine(url)
    with engine.begin() as conn:
        statement, parameters = build(conn)
        if engine.dialect.name == 'postgresql':
            # On a small table a sequential scan, or another index and a sort, is cheaper; what is checked is that the
            # history's indexes serve the query.
            for setting in ('enable_seqscan', *(() if sorts else ('enable_sort', 'enable_incremental_sort'))):
                conn.execute(sa.text(f'SET LOCAL {setting} = off'))
            rows = conn.execute(sa.text(f'EXPLAIN {statement}'), parameters).scalars().all()
        else:
            rows = [row[-1] for row in conn.execute(sa.text(f'EXPLAIN QUERY PLAN {statement}'), parameters).all()]
    return '\n'.join(str(row) for row in rows)


async def test_the_history_reads_ranges_of_its_indexes_never_every_row(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        for index in range(300):
            audience = None if index % 10 == 0 else (f'person-{index % 30}',)
            request = replace(make_request(id=f'q{index}'), audience=audience)
            insert_pending(conn, request, 'wf')
            if index % 3:
                claim_answer(conn, f'q{index}', encode_response(PICK), f'person-{index % 7}')
    if engine.dialect.name == 'postgresql':
        with engine.begin() as conn:
            conn.execute(sa.text('ANALYZE'))
    before = (time.time(), 'q5')
    alice = Person('alice', groups=['team:support'])
    window = HistoryFilter(finished_after=time.time() - 3600)
    admin = {
        'first page': lambda conn: finished_questions_statement(conn, before=None, limit=50),
        'next page': lambda conn: finished_questions_statement(conn, before=before, limit=50, where=window),
        'count': lambda conn: count_finished_statement(conn),
    }
    for what, build in admin.items():
        plan = _plan(database_url, build)
        if what == 'count':  # an index only, never the table's rows (SQLite counts by the status index as well)
            assert 'ix_ask_user_requests_' in plan, (what, plan)
            assert 'Seq Scan' not in plan, (what, plan)
            continue
        assert 'ix_ask_user_requests_finished' in plan, (what, plan)
        assert 'TEMP B-TREE' not in plan, (what, plan)
        assert 'Sort' not in plan, (what, plan)
    for what, build in {
        'her page': lambda conn: finished_questions_statement(conn, before=before, limit=50, visible_to=alice),
        'her count': lambda conn: count_finished_statement(conn, visible_to=alice),
    }.items():
        plan = _plan(database_url, build, sorts=True)
        assert 'ix_ask_user_requests_finished_by' in plan, (what, plan)
        # The unaddressed ones from an index of those only (PostgreSQL may take the pending list's, as small).
        assert 'ix_ask_user_requests_finished_unaddressed' in plan or 'ix_ask_user_requests_unaddressed' in plan, (
            what,
            plan,
        )
        assert 'ix_ask_user_addressees_order' in plan or 'ask_user_addressees_pkey' in plan, (what, plan)
        assert 'Seq Scan' not in plan, (what, plan)
        assert not [line for line in plan.splitlines() if line.startswith(('SCAN a', 'SCAN q', f'SCAN {TABLE_NAME}'))]
    approvals = _plan(database_url, lambda conn: finished_approvals_statement(conn, before=before, limit=50))
    assert 'ix_ask_user_event_approvals_finished' in approvals, approvals


@pytest.mark.parametrize('pooled', [False, True], ids=['bare driver', 'sqlalchemy'])
async def test_a_database_of_an_earlier_version_gets_the_history_indexes_at_start_up(
    database_url: str, pooled: bool
) -> None:
    """Opened by `ask-user` (`create_table=False`: no table made, the indexes added) or by an inbox (SQLAlchemy's
    engine on PostgreSQL; SQLite is read through `sqlite3` either way)."""
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _answer(database_url, 'q')
    _decide(database_url, 'a', ApprovalDecision.approve())
    engine = shared_engine(database_url)
    ours = [name for name, _, rows in (*INDEXES, *APPROVAL_INDEXES) if rows is not None and 'pending' in rows]
    with engine.begin() as conn:
        for name in ours:
            conn.execute(sa.text(f'DROP INDEX {name}'))
    async with DBOSQuestionStore(database_url, create_table=not pooled, pooled=pooled) as store:
        assert (await store.history_page()).total == 2
    inspector = sa.inspect(engine)
    names = {
        index['name'] for table in (TABLE_NAME, event_approvals_table.name) for index in inspector.get_indexes(table)
    }
    assert set(ours) <= names


RECEIPT_KEY = b'the key the runs sign receipts with'
"""What the runs' `AskUser(receipt_key=...)` would sign with."""


async def test_a_kept_receipt_reads_back_verified_and_one_changed_in_the_database_does_not_verify(
    database_url: str,
) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    alice = replace(PICK, answered_by='alice')
    for key in ('kept', 'receipt-changed', 'answer-changed', 'garbage', 'unsigned'):
        _answer(database_url, key, alice, by='alice')
    _ask(database_url, 'waiting')
    answerer = DBOSAnswerer(database_url)
    try:
        for key in ('kept', 'receipt-changed', 'answer-changed', 'garbage'):
            request = make_request(id=key)
            receipt = sign_receipt(request, alice, key=RECEIPT_KEY)
            assert await answerer.keep_receipt(request, receipt) == receipt
            # The first kept stays: a replay that signs the answer again, at another time, gets it back.
            later = sign_receipt(request, alice, key=RECEIPT_KEY, at=receipt.answered_at + timedelta(seconds=5))
            assert await answerer.keep_receipt(request, later) == receipt
        # A question not answered keeps nothing (the receipt is given back as it is).
        waiting = sign_receipt(make_request(id='waiting'), alice, key=RECEIPT_KEY)
        assert await answerer.keep_receipt(make_request(id='waiting'), waiting) == waiting
    finally:
        answerer.close()
    with shared_engine(database_url).begin() as conn:
        kept = dict(conn.execute(sa.text(f'SELECT id, receipt FROM {TABLE_NAME}')).all())
        assert kept['waiting'] is None  # not answered: nothing to keep it with
        changes = (
            ('receipt', '"alice"', '"mallory"', 'receipt-changed'),
            ('response', 'SQLite', 'PostgreSQL', 'answer-changed'),
        )
        for column, old, new, key in changes:
            statement = f'UPDATE {TABLE_NAME} SET {column} = replace({column}, :old, :new) WHERE id = :id'
            conn.execute(sa.text(statement), {'old': old, 'new': new, 'id': key})
        conn.execute(sa.text(f"UPDATE {TABLE_NAME} SET receipt = 'not a receipt' WHERE id = 'garbage'"))
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False) as store:
        found = {
            record.key: record for record in (await store.history_page(where=HistoryFilter(kind='question'))).records
        }
    checked = {key: record_receipt(record, RECEIPT_KEY) for key, record in found.items()}
    assert {key: None if status is None else status.check for key, status in checked.items()} == {
        'kept': 'verified',
        'receipt-changed': 'not_verified',
        'answer-changed': 'not_verified',
        'garbage': 'not_verified',
        'unsigned': None,
    }
    problems = {key: status.problem for key, status in checked.items() if status is not None}
    assert problems['receipt-changed'] == 'the signature does not match: wrong key, or who or when was changed'
    assert problems['answer-changed'] == 'the receipt was signed for another response'
    assert str(problems['garbage']).startswith('the kept receipt is malformed')
    without_key = record_receipt(found['kept'], None)
    assert without_key is not None
    assert (without_key.check, without_key.problem) == ('not_checked', None)
    assert finished_json(found['kept'], receipt_key=RECEIPT_KEY)['receipt_check'] == 'verified'
    assert finished_json(found['garbage'])['receipt'] == 'not a receipt'
    assert 'receipt' not in finished_json(found['unsigned'], receipt_key=RECEIPT_KEY)
