"""The pending list of `DBOSQuestionStore` a page at a time: keyset order, counts, cursors, indexes, migration, pruning.

Each test runs on a real SQLite file and on the private PostgreSQL server (`database_url`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa
from ask_user_support import make_request
from durable_support import dbos_workflows, publish_question

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person
from pydantic_ai_ask_user._question_store import NO_DEADLINE_ORDER, encode_cursor
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._pending_statements import count_pending_statement, pending_page_statement
from pydantic_ai_ask_user.dbos._questions import (
    claim_answer,
    count_pending_rows,
    insert_pending,
    select_pending_page,
)
from pydantic_ai_ask_user.dbos._schema import TABLE_NAME
from pydantic_ai_ask_user.dbos._tables import requests_table
from pydantic_ai_ask_user.store import BadCursorError, PendingFilter

pytestmark = pytest.mark.anyio

ANSWER = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


def _answer(url: str, key: str) -> None:
    with shared_engine(url).begin() as conn:
        assert claim_answer(conn, key, encode_response(ANSWER))


async def _all_pages(store: DBOSQuestionStore, limit: int, **kwargs: object) -> list[str]:
    keys: list[str] = []
    cursor: str | None = None
    while True:
        page = await store.pending_page(limit=limit, cursor=cursor, **kwargs)  # pyright: ignore[reportArgumentType]
        assert len(page.records) <= limit
        keys.extend(record.key for record in page.records)
        if (cursor := page.next_cursor) is None:
            return keys


async def test_pages_come_in_deadline_order_then_age_then_key_and_the_count_reads_no_row(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    now = time.time()
    # Two without a deadline asked at the same instant: the key breaks the tie.
    publish_question(database_url, 'no-deadline-b', asked_at=now - 50)
    publish_question(database_url, 'no-deadline-a', asked_at=now - 50)
    publish_question(database_url, 'no-deadline-old', asked_at=now - 100)
    publish_question(database_url, 'due-later', deadline=now + 600)
    publish_question(database_url, 'due-soon', deadline=now + 60)
    async with DBOSQuestionStore(database_url) as store:
        expected = ['due-soon', 'due-later', 'no-deadline-old', 'no-deadline-a', 'no-deadline-b']
        for limit in (1, 2, 5, 50):
            assert await _all_pages(store, limit) == expected
        first = await store.pending_page(limit=2)
        assert (first.total, first.total_exact) == (5, True)
        assert first.next_cursor is not None
        assert await store.count_pending() == 5
        last = await store.pending_page(limit=5)
        assert last.next_cursor is None  # exactly one page: no empty page after it


async def test_paging_survives_questions_asked_and_answered_between_pages(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    now = time.time()
    for index in range(20):
        publish_question(database_url, f'q{index:02d}', deadline=now + 100 + index)
    async with DBOSQuestionStore(database_url) as store:
        page = await store.pending_page(limit=6)
        seen = [record.key for record in page.records]
        assert seen == [f'q{index:02d}' for index in range(6)]
        # Between two pages: one shown is answered, two not yet shown are answered, one is asked that sorts before
        # the cursor (it belongs to a page already read), one that sorts after it, and one with no deadline.
        for key in ('q02', 'q07', 'q15'):
            _answer(database_url, key)
        publish_question(database_url, 'early', deadline=now + 1)
        publish_question(database_url, 'middle', deadline=now + 110.5)
        publish_question(database_url, 'undated')
        cursor = page.next_cursor
        while cursor is not None:
            page = await store.pending_page(limit=6, cursor=cursor)
            seen.extend(record.key for record in page.records)
            cursor = page.next_cursor
        assert len(seen) == len(set(seen)), 'a question was shown twice'
        survivors = [f'q{index:02d}' for index in range(6, 20) if index not in (7, 15)]
        assert seen[6:] == [*survivors[:4], 'middle', *survivors[4:], 'undated']
        assert not {'early', 'q07', 'q15'} & set(seen)
        assert (await store.pending_page(limit=1)).total == 20 - 3 + 3


async def test_a_page_withdraws_the_questions_of_ended_workflows_and_fills_their_places(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING', 'gone': 'CANCELLED'})
    now = time.time()
    for index in range(6):
        publish_question(database_url, f'q{index}', deadline=now + index, workflow='gone' if index in (1, 2) else 'wf')
    async with DBOSQuestionStore(database_url) as store:
        assert await store.count_pending() == 6  # not withdrawn until a listing reads them
        page = await store.pending_page(limit=3)
        assert [record.key for record in page.records] == ['q0', 'q3', 'q4']
        assert page.total == 4
        assert await _all_pages(store, 3) == ['q0', 'q3', 'q4', 'q5']
        assert [record.key for record in await store.pending_records()] == ['q0', 'q3', 'q4', 'q5']


async def test_the_age_filters_narrow_the_pages_and_the_count(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    now = time.time()
    for index, age in enumerate((10, 100, 1000, 10000)):
        publish_question(database_url, f'aged-{age}', asked_at=now - age, deadline=now + index)
    async with DBOSQuestionStore(database_url) as store:
        older = PendingFilter(asked_before=now - 50)
        younger = PendingFilter(asked_after=now - 500)
        assert await _all_pages(store, 1, where=older) == ['aged-100', 'aged-1000', 'aged-10000']
        assert await _all_pages(store, 2, where=younger) == ['aged-10', 'aged-100']
        both = PendingFilter(asked_before=now - 50, asked_after=now - 5000)
        assert await _all_pages(store, 5, where=both) == ['aged-100', 'aged-1000']
        assert [await store.count_pending(where) for where in (older, younger, both)] == [3, 2, 2]
        assert (await store.pending_page(where=older)).total == 3


@pytest.mark.parametrize(
    'cursor',
    [
        'not base64 at all!',
        'e30',  # {} in base64
        encode_cursor([1.0, 2.0]),  # too short
        encode_cursor(['x', 2.0, 'key']),  # not a number
        encode_cursor([1.0, 2.0, 'bad key with spaces']),
        encode_cursor([1.0, 2.0, 'k' * 201]),
        encode_cursor([1.0, True, 'key']),
        'W10',  # [] in base64
        'WzIsMSwyLCJrZXkiXQ',  # [2,1,2,"key"]: another version
        'A' * 3000,
        'é',
    ],
)
async def test_a_cursor_it_did_not_write_is_refused_with_a_clear_error(database_url: str, cursor: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    publish_question(database_url, 'q')
    async with DBOSQuestionStore(database_url) as store:
        with pytest.raises(BadCursorError, match='not one this server gave out'):
            await store.pending_page(cursor=cursor)


@pytest.mark.parametrize('limit', [0, -1, 501, 10**9])
async def test_a_page_size_out_of_range_is_refused(database_url: str, limit: int) -> None:
    async with DBOSQuestionStore(database_url) as store:
        with pytest.raises(ValueError, match='from 1 to 500'):
            await store.pending_page(limit=limit)


def _plan(url: str, build: Callable[[sa.Connection], tuple[str, dict[str, Any]]]) -> str:
    """The query plan of the SQL text `build` makes for a connection (the text both ways to the database run)."""
    engine = shared_engine(url)
    with engine.begin() as conn:
        statement, parameters = build(conn)
        if engine.dialect.name == 'postgresql':
            # On a small table a sequential scan is cheaper; what is checked is that the index serves the query.
            conn.execute(sa.text('SET LOCAL enable_seqscan = off'))
            conn.execute(sa.text('SET LOCAL enable_sort = off'))
            rows = conn.execute(sa.text(f'EXPLAIN {statement}'), parameters).scalars().all()
        else:
            rows = [row[-1] for row in conn.execute(sa.text(f'EXPLAIN QUERY PLAN {statement}'), parameters).all()]
    return '\n'.join(str(row) for row in rows)


async def test_the_list_the_count_the_change_feed_and_lookups_use_indexes(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for index in range(30):
        publish_question(database_url, f'q{index}', deadline=time.time() + index if index % 2 else None)
    after = (NO_DEADLINE_ORDER, time.time(), 'q1')
    before = PendingFilter(asked_before=time.time())
    # A person whose store could not make the addressees (`addressees=False`): the audience is a condition on the rows
    # of the same index.
    alice = Person('alice', groups=['team:support'])
    page = _plan(database_url, lambda conn: pending_page_statement(conn, after=after, limit=50, where=before))
    first = _plan(database_url, lambda conn: pending_page_statement(conn, after=None, limit=50))
    hers = _plan(
        database_url,
        lambda conn: pending_page_statement(conn, after=after, limit=50, visible_to=alice, addressees=False),
    )
    count = _plan(database_url, lambda conn: count_pending_statement(conn))
    since = {'since': time.time() - 1}
    changes = _plan(database_url, lambda _: (f'SELECT id FROM {TABLE_NAME} WHERE updated_at >= :since', since))
    lookup = _plan(database_url, lambda _: (f'SELECT * FROM {TABLE_NAME} WHERE id = :id', {'id': 'q1'}))
    for plan in (page, first, hers):
        assert 'ix_ask_user_requests_pending_order' in plan, plan
        assert 'TEMP B-TREE' not in plan, plan  # the index gives the order: no sort
        assert 'Sort' not in plan, plan
    assert 'ix_ask_user_requests_' in count, count  # an index only, never the table's rows
    assert 'ix_ask_user_requests_updated_at' in changes, changes
    assert 'sqlite_autoindex_ask_user_requests_1' in lookup or 'ask_user_requests_pkey' in lookup, lookup


async def test_a_persons_page_and_count_read_the_addressees_and_the_unaddressed_index_never_every_row(
    database_url: str,
) -> None:
    # 1,200 questions for 120 other people, a few for alice, her team and anyone: her page and her count must start
    # from her names (the addressees' index) and the unaddressed questions' own index, and look her questions up by
    # key, never read the pending questions one by one (by the status or the pending-order index, or the table).
    engine = shared_engine(database_url)
    now = time.time()
    audiences: list[tuple[str, ...] | None] = [(f'person-{index % 120}',) for index in range(1200)]
    audiences += [('alice',), ('alice', 'team:support'), ('team:support',), None, None]
    with engine.begin() as conn:
        for index, audience in enumerate(audiences):
            request = replace(
                make_request(id=f'q{index}'), audience=audience, deadline=now + index if index % 2 else None
            )
            insert_pending(conn, request, 'wf')
    if engine.dialect.name == 'postgresql':
        with engine.begin() as conn:
            conn.execute(sa.text('ANALYZE'))
    alice = Person('alice', groups=['team:support'])
    after = (NO_DEADLINE_ORDER, 0.0, '')
    before = PendingFilter(asked_before=now + 60)
    plans = {
        'first page': lambda conn: pending_page_statement(conn, after=None, limit=50, visible_to=alice),
        'next page': lambda conn: pending_page_statement(conn, after=after, limit=50, where=before, visible_to=alice),
        'count': lambda conn: count_pending_statement(conn, visible_to=alice),
        'count of the old': lambda conn: count_pending_statement(conn, before, visible_to=alice),
    }
    for what, build in plans.items():
        plan = _plan(database_url, build)
        assert 'ix_ask_user_addressees_order' in plan, (what, plan)
        assert 'ix_ask_user_requests_unaddressed' in plan, (what, plan)
        for every_row in ('ix_ask_user_requests_status', 'ix_ask_user_requests_pending_order', 'Seq Scan'):
            assert every_row not in plan, (what, plan)
        assert not [
            line for line in plan.splitlines() if line.startswith(('SCAN a', 'SCAN q', f'SCAN {TABLE_NAME}'))
        ], (
            what,
            plan,
        )
    with engine.connect() as conn:
        keys = [row.key for row in select_pending_page(conn, after=None, limit=50, visible_to=alice)]
        assert sorted(keys) == ['q1200', 'q1201', 'q1202', 'q1203', 'q1204']
        assert count_pending_rows(conn, visible_to=alice) == 5
        assert count_pending_rows(conn, visible_to=Person('person-7')) == 10 + 2


async def test_a_table_of_an_earlier_version_gets_the_column_its_deadlines_and_the_indexes(database_url: str) -> None:
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP TABLE {TABLE_NAME}'))
        # The table as version 0.x made it: no deadline column, only the index on the status.
        conn.execute(
            sa.text(
                f'CREATE TABLE {TABLE_NAME} (id VARCHAR(200) PRIMARY KEY, workflow_id VARCHAR(500) NOT NULL, '
                'questions TEXT NOT NULL, status VARCHAR(16) NOT NULL, response TEXT, created_at FLOAT NOT NULL, '
                'updated_at FLOAT NOT NULL)'
            )
        )
        now = time.time()
        for key, data in (
            ('dated', f'{{"questions": [], "deadline": {now + 5}}}'),
            ('undated', '{"questions": []}'),
            ('out-of-range', '{"questions": [], "deadline": 1e15}'),
        ):
            conn.execute(
                sa.text(f"INSERT INTO {TABLE_NAME} VALUES (:id, 'wf', :q, 'pending', NULL, :t, :t)"),
                {'id': key, 'q': data, 't': now},
            )
    store = DBOSQuestionStore(database_url, create_table=False)
    async with store:
        pass
    with engine.connect() as conn:
        due = dict(conn.execute(sa.text(f'SELECT id, due_at FROM {TABLE_NAME}')).all())
    assert due == {'dated': pytest.approx(now + 5), 'undated': NO_DEADLINE_ORDER, 'out-of-range': NO_DEADLINE_ORDER}
    names = {index['name'] for index in sa.inspect(engine).get_indexes(TABLE_NAME)}
    assert {'ix_ask_user_requests_pending_order', 'ix_ask_user_requests_updated_at'} <= names


async def test_finished_questions_are_pruned_after_their_retention_and_pending_ones_never(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    long_ago = time.time() - 30 * 24 * 3600
    for key in ('old-answered', 'old-pending', 'new-answered'):
        publish_question(database_url, key, asked_at=long_ago if key.startswith('old') else None)
    engine = shared_engine(database_url)
    for key in ('old-answered', 'new-answered'):
        _answer(database_url, key)
    with engine.begin() as conn:
        conn.execute(sa.update(requests_table).where(requests_table.c.id == 'old-answered').values(updated_at=long_ago))
    async with DBOSQuestionStore(database_url) as store:
        assert store.finished_retention_seconds == 7 * 24 * 3600
        assert await store.prune_finished() == 1
        with engine.connect() as conn:
            left = set(conn.execute(sa.select(requests_table.c.id)).scalars())
        assert left == {'old-pending', 'new-answered'}
        assert await store.prune_finished(older_than=0) == 1
        assert [record.key for record in await store.pending_records()] == ['old-pending']
    never = DBOSQuestionStore(database_url, finished_retention_seconds=None)
    assert await never.prune_finished() == 0
    never.close()


@pytest.mark.postgres
async def test_more_pending_questions_than_postgresql_takes_bound_parameters_still_page(postgres_url: str) -> None:
    """One bound parameter per waiting workflow used to fail past 65,535 of them; a page binds one per row it shows."""
    dbos_workflows(postgres_url, {})
    engine = shared_engine(postgres_url)
    count = 66_000
    questions = '{"questions": [{"header": "H", "question": "Q?", "options": [{"label": "a"}, {"label": "b"}]}]}'
    with engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO dbos.workflow_status SELECT 'wf-' || n, 'PENDING' FROM generate_series(1, :n) AS n"),
            {'n': count},
        )
        conn.execute(
            sa.text(
                f'INSERT INTO {TABLE_NAME} (id, workflow_id, questions, status, created_at, updated_at, due_at) '
                "SELECT 'q-' || n, 'wf-' || n, :q, 'pending', n, n, 1e12 FROM generate_series(1, :n) AS n"
            ),
            {'n': count, 'q': questions},
        )
    async with DBOSQuestionStore(postgres_url) as store:
        first = await store.pending_page(limit=500)
        assert (len(first.records), first.total) == (500, count)
        assert first.records[0].key == 'q-1'
        page = await store.pending_page(limit=500, cursor=first.next_cursor)
        assert page.records[0].key == 'q-501'


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    from durable_support import fresh_postgres_database

    return fresh_postgres_database(postgres_server)


async def test_decided_approvals_are_pruned_after_their_retention_never_pending_ones_nor_those_of_an_open_wait(
    database_url: str,
) -> None:
    from pydantic_ai_ask_user.dbos._approvals import insert_approval
    from pydantic_ai_ask_user.dbos._engine import ensure_table
    from pydantic_ai_ask_user.dbos._tables import event_approvals_table
    from pydantic_ai_ask_user.dbos._waits import claim_wait, open_wait_row
    from pydantic_ai_ask_user.store import PendingApproval

    engine = shared_engine(database_url)
    ensure_table(engine)
    names = {index['name'] for index in sa.inspect(engine).get_indexes(event_approvals_table.name)}
    assert {'ix_ask_user_event_approvals_pending_order', 'ix_ask_user_event_approvals_updated_at'} <= names
    long_ago = time.time() - 30 * 24 * 3600
    calls = {
        'closed': ('old-decided', 'old-withdrawn', 'new-decided', 'old-pending'),
        'open': ('old-decided',),  # its wait still reads every decision of its approvals when it ends
    }
    table = event_approvals_table
    with engine.begin() as conn:
        for token, call_ids in calls.items():
            open_wait_row(conn, token, f'wf-{token}')
            for call_id in call_ids:
                approval = PendingApproval(token, call_id, 'deploy', {}, workflow_id=f'wf-{token}')
                insert_approval(conn, approval)
        assert claim_wait(conn, 'closed')
        decided = table.c.tool_call_id.in_(['old-decided', 'new-decided'])
        conn.execute(sa.update(table).where(decided).values(status='decided'))
        conn.execute(sa.update(table).where(table.c.tool_call_id == 'old-withdrawn').values(status='withdrawn'))
        old = table.c.tool_call_id.startswith('old-')
        conn.execute(sa.update(table).where(old).values(updated_at=long_ago))
    async with DBOSQuestionStore(database_url) as store:
        await store.prune_finished()
    with engine.connect() as conn:
        left = {tuple(row) for row in conn.execute(sa.select(table.c.token, table.c.tool_call_id))}
    assert left == {('closed', 'new-decided'), ('closed', 'old-pending'), ('open', 'old-decided')}
