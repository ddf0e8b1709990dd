"""The history's index (`dbos/_history_index.py`): a person's history read through it is the history the items' own
tables give, page for page, with an exact total, for every filter; it is written with each finish, in its transaction,
back-filled once for a database that finished items before it, pruned with the items, and read by ranges of its keys.

Each test runs on a real SQLite file and on the private PostgreSQL server (`database_url`).
"""

from __future__ import annotations

import json
import logging
import random
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
import sqlalchemy as sa
import waits
from ask_user_support import make_request
from durable_support import dbos_workflows
from test_answered_by_and_notes import ReadOnlySqliteDatabase
from waits import wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user._history import page_history_in_memory
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos import _history as dbos_history
from pydantic_ai_ask_user.dbos import _store as dbos_store
from pydantic_ai_ask_user.dbos._addressees import insert_addressees
from pydantic_ai_ask_user.dbos._approvals import claim_approval, insert_approval, withdraw_approvals
from pydantic_ai_ask_user.dbos._db import open_database
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._history import backfill_history_index
from pydantic_ai_ask_user.dbos._history_index import (
    BACKFILL_TABLE_NAME,
    HISTORY_COMPLETE_INDEX,
    HISTORY_TABLE_NAME,
    HISTORY_VIEWERS_TABLE_NAME,
    history_statement,
)
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending, withdraw_pending
from pydantic_ai_ask_user.dbos._waits import insert_event_request, open_wait_row
from pydantic_ai_ask_user.store import ApprovalDecision, FinishedRecord, HistoryFilter, PendingApproval

pytestmark = pytest.mark.anyio

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
DECLINE = AskUserResponse(answers=(), cancelled=True)

AGENTS = ('billing-bot', 'deploy-bot', 'Support')
TITLES = ('Refund for order 1234', 'Straße closure', 'DEPLOY the api', None)
NAMES = ('alice', 'bob', 'carol', 'team:billing', 'team:ops')
PEOPLE = [
    Person('alice'),
    Person('bob', groups=['team:billing']),
    Person('carol', groups=['team:billing', 'team:ops']),
    Person(groups=['team:ops']),
    Person(),
    Person('zed'),
]
"""Who looks: names, groups, both, neither, someone nobody addressed."""

FILTERS = [
    HistoryFilter(),
    HistoryFilter(kind='question'),
    HistoryFilter(kind='approval'),
    HistoryFilter(agent='billing-bot'),
    HistoryFilter(conversation='c1'),
    HistoryFilter(title='refund'),
    HistoryFilter(title='STRASSE'),  # folded as Python folds: ß is ss
    HistoryFilter(addressee='team:billing'),
    HistoryFilter(text='sqlite'),  # an option's label
    HistoryFilter(text='prod'),  # an approval's arguments
    HistoryFilter(text='deploy', kind='approval', agent='deploy-bot'),
    HistoryFilter(addressee='alice', title='order'),
]
"""Each search field alone, and some together."""


def _context(index: int) -> QuestionContext:
    return QuestionContext(
        title=TITLES[index % len(TITLES)],
        agent_name=AGENTS[index % len(AGENTS)],
        conversation_id=f'c{index % 4}',
        summary='A customer asks' if index % 5 == 0 else None,
    )


def _audience(generator: random.Random) -> tuple[str, ...] | None:
    if generator.random() < 0.25:
        return None
    return tuple(generator.sample(NAMES, generator.randint(1, 2)))


async def _finish_everything(url: str, count: int, seed: int = 7) -> int:
    """`count` questions and as many approvals, finished every way the store finishes them, some forwarded first; how
    many were forwarded."""
    generator = random.Random(seed)
    forwarded = 0
    dbos_workflows(url, {'wf': 'PENDING'})
    engine = shared_engine(url)
    for index in range(count):
        key, token = f'q{index:03}', f't{index:03}'
        request = replace(make_request(id=key), audience=_audience(generator), context=_context(index))
        approval = PendingApproval(
            token,
            'call_0',
            'deploy' if index % 2 else 'refund',
            {'env': 'prod' if index % 3 else 'staging', 'n': index},
            workflow_id='wf',
            audience=_audience(generator),
            context=_context(index + 1),
        )
        by = generator.choice([None, *NAMES[:3]])
        way = index % 4
        with engine.begin() as conn:
            open_wait_row(conn, token, 'wf')
            insert_approval(conn, approval)
            if way == 3:  # recorded withdrawn at once: the answerer's own withdrawal of a question never published
                insert_pending(conn, request, 'wf', status='withdrawn')
            else:
                insert_pending(conn, request, 'wf')
                insert_event_request(conn, key, token)
        if index % 6 == 1:  # handed on first: the history shows who it went to
            async with DBOSQuestionStore(url) as store:
                for forward in (key, approval.key) if way != 3 else (approval.key,):
                    await store.forward(forward, ['team:ops'], note='over to ops', by='alice')
                    forwarded += 1
        with engine.begin() as conn:
            if way == 0:
                assert claim_answer(conn, key, encode_response(DECLINE if index % 8 == 0 else PICK), by)
            elif way == 1:
                assert withdraw_pending(conn, [key]) == 1
            elif way == 2:
                assert withdraw_pending(conn, token=token) == 1
            if index % 3 == 0:
                assert withdraw_approvals(conn, token) == 1
            else:
                decision = (
                    ApprovalDecision.approve(decided_by=by) if index % 2 else ApprovalDecision.deny(decided_by=by)
                )
                assert claim_approval(conn, approval, decision)
    return forwarded


async def _pages(store: DBOSQuestionStore, limit: int, **kwargs: Any) -> tuple[list[str], list[int]]:
    keys: list[str] = []
    totals: list[int] = []
    cursor = None
    while True:
        page = await store.history_page(limit=limit, cursor=cursor, **kwargs)
        assert len(page.records) <= limit
        keys += [record.key for record in page.records]
        totals.append(page.total)
        if (cursor := page.next_cursor) is None:
            return keys, totals


async def _everything(store: DBOSQuestionStore) -> list[FinishedRecord]:
    records: list[FinishedRecord] = []
    cursor = None
    while True:
        page = await store.history_page(limit=200, cursor=cursor)
        records += page.records
        if (cursor := page.next_cursor) is None:
            return records


def _expected(records: list[FinishedRecord], limit: int, where: HistoryFilter, person: Person) -> tuple[list[str], int]:
    keys: list[str] = []
    cursor = None
    while True:
        page = page_history_in_memory(records, limit=limit, cursor=cursor, where=where, visible_to=person)
        keys += [record.key for record in page.records]
        if (cursor := page.next_cursor) is None:
            return keys, page.total


def _entries(url: str) -> int:
    with shared_engine(url).connect() as conn:
        return conn.execute(sa.text(f'SELECT count(*) FROM {HISTORY_TABLE_NAME}')).scalar_one()


async def test_a_persons_history_through_the_index_is_the_items_history_for_every_filter(database_url: str) -> None:
    forwarded = await _finish_everything(database_url, 48)
    assert _entries(database_url) == 96  # each finish wrote its item's entry, in its own transaction
    async with DBOSQuestionStore(database_url) as store:
        # The administrator's history reads the items' tables themselves: the reference.
        everything = await _everything(store)
        assert len(everything) == 96
        assert sum(1 for record in everything if record.handoffs) == forwarded > 0
        for person in PEOPLE:
            for where in FILTERS:
                expected, total = _expected(everything, 5, where, person)
                keys, totals = await _pages(store, 5, where=where, visible_to=person)
                assert keys == expected, (person, where)
                assert set(totals) == {total}, (person, where)  # exact, on every page
                first = await store.history_page(limit=50, where=where, visible_to=person)
                assert first.total_exact
        # Something to find for each filter, and not everything.
        for where in FILTERS:
            totals = [(await store.history_page(where=where, visible_to=person)).total for person in PEOPLE]
            assert 0 < max(totals) < 96, (where, totals)
        # What a forward handed on shows its hand-off, and who it went to sees it.
        [handed] = [record for record in everything if record.key == 'q001']
        assert [handoff.to_audience for handoff in handed.handoffs] == [('team:ops',)]
        ops = await store.history_page(limit=200, visible_to=Person(groups=['team:ops']))
        assert 'q001' in {record.key for record in ops.records}
        assert next(record for record in ops.records if record.key == 'q001').handoffs == handed.handoffs


def _complete(url: str) -> bool:
    return HISTORY_COMPLETE_INDEX in {
        index['name'] for index in sa.inspect(shared_engine(url)).get_indexes(HISTORY_TABLE_NAME)
    }


def _as_before_the_index(url: str) -> None:
    """The database as an earlier version left it: no history index, items finished, and their addressee rows (which
    this version deletes once the index has their entries)."""
    with shared_engine(url).begin() as conn:
        for table in (HISTORY_VIEWERS_TABLE_NAME, HISTORY_TABLE_NAME, BACKFILL_TABLE_NAME):
            conn.execute(sa.text(f'DROP TABLE {table}'))
        finished = conn.execute(
            sa.text("SELECT id, audience, due_at, created_at FROM ask_user_requests WHERE status <> 'pending'")
        ).all()
        insert_addressees(
            conn,
            [
                (key, json.loads(audience), due_at, created_at)
                for key, audience, due_at, created_at in finished
                if audience
            ],
        )


async def test_a_database_that_finished_items_before_the_index_is_back_filled_once_in_the_background(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger='pydantic_ai_ask_user.dbos')
    await _finish_everything(database_url, 12)
    _as_before_the_index(database_url)
    alice = Person('alice', groups=['team:billing'])
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        # Opening made the tables, empty and not complete: the items' tables answer, and the back-fill starts.
        assert _entries(database_url) == 0
        everything = await _everything(store)
        expected = _expected(everything, 4, HistoryFilter(), alice)
        keys, totals = await _pages(store, 4, visible_to=alice)
        assert (keys, totals[0]) == expected
        await wait_until(lambda: _complete(database_url), 'the back-fill to complete')
        assert _entries(database_url) == 24
        # From the index now, the same pages.
        keys, totals = await _pages(store, 4, visible_to=alice)
        assert (keys, totals[0]) == expected
    assert not caplog.records
    # Once: a new store finds it complete and writes nothing (an entry deleted by hand stays deleted).
    with shared_engine(database_url).begin() as conn:
        conn.execute(sa.text(f"DELETE FROM {HISTORY_TABLE_NAME} WHERE item_id = 'q000'"))
    async with DBOSQuestionStore(database_url) as store:
        await store.history_page(visible_to=alice)
    assert _entries(database_url) == 23


KILLED_BACKFILL = """
import os, signal, sys
from pydantic_ai_ask_user.dbos import _history
from pydantic_ai_ask_user.dbos._db import open_database

_history._BACKFILL_BATCH = 2
where, calls = sys.argv[2], 0
patched = 'save_backfill_position' if where == 'in its transaction' else 'history_entry'
original = getattr(_history, patched)


def killed(*args):
    global calls
    calls += 1
    if calls == (3 if where == 'in its transaction' else 7):
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args)


setattr(_history, patched, killed)
_history.backfill_history_index(open_database(sys.argv[1], pooled=False), approvals=True)
"""
"""A back-fill in batches of two, killed with -9 in its third batch's transaction (its entries and its position
written, not committed), or while decoding its fourth batch (three committed)."""


@pytest.mark.parametrize('where', ['in its transaction', 'between batches'])
async def test_a_back_fill_killed_goes_on_from_its_last_batch(database_url: str, where: str) -> None:
    await _finish_everything(database_url, 6)
    _as_before_the_index(database_url)
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        everything = await _everything(store)  # everyone's unsearched history: no back-fill started
    killed = subprocess.run(
        [sys.executable, '-c', KILLED_BACKFILL, database_url, where], capture_output=True, timeout=waits.WAIT
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    written = 4 if where == 'in its transaction' else 6  # the batches committed, both of a batch or neither
    assert _entries(database_url) == written
    assert not _complete(database_url)
    # The next back-fill reads only what is left (of the six questions, then the six approvals), and completes.
    assert backfill_history_index(open_database(database_url, pooled=False), approvals=True) == 12 - written
    assert (_entries(database_url), _complete(database_url)) == (12, True)
    alice = Person('alice', groups=['team:billing'])
    async with DBOSQuestionStore(database_url) as store:
        keys, totals = await _pages(store, 2, visible_to=alice)
    assert (keys, totals[0]) == _expected(everything, 2, HistoryFilter(), alice)


async def test_a_back_fill_that_fails_is_said_once_and_the_next_process_completes_it(
    database_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger='pydantic_ai_ask_user.dbos')
    await _finish_everything(database_url, 6)
    _as_before_the_index(database_url)

    def fail() -> str:
        raise sa.exc.OperationalError('CREATE INDEX', {}, Exception('disk I/O error'))

    # Its last statement fails, after every entry was written: the history is read from the items' tables, as before.
    monkeypatch.setattr(dbos_history, 'complete_statement', fail)
    alice = Person('alice')
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        everything = await _everything(store)
        keys, _ = await _pages(store, 3, visible_to=alice)
        await wait_until(lambda: 'this process could not complete it (' in caplog.text, 'the warning')
        assert (await _pages(store, 3, visible_to=alice))[0] == keys
    assert keys == _expected(everything, 3, HistoryFilter(), alice)[0]
    assert [record.getMessage() for record in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert (_entries(database_url), _complete(database_url)) == (12, False)
    monkeypatch.undo()
    async with DBOSQuestionStore(database_url) as store:
        await store.history_page(visible_to=alice)  # starts it again: every row done, it only completes
        await wait_until(lambda: _complete(database_url), 'the back-fill to complete')
        assert (await _pages(store, 3, visible_to=alice))[0] == keys


async def test_an_entry_that_cannot_be_written_takes_its_answer_with_it(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        insert_pending(conn, replace(make_request(id='q'), audience=('alice',)), 'wf')
    # The entry is written in the transaction that answers: where it fails, the answer is not recorded either.
    with engine.begin() as conn:
        conn.execute(sa.text(f'ALTER TABLE {HISTORY_VIEWERS_TABLE_NAME} RENAME TO elsewhere'))
        conn.execute(sa.text(f'CREATE TABLE {HISTORY_VIEWERS_TABLE_NAME} (viewer TEXT NOT NULL)'))
    with pytest.raises(sa.exc.DBAPIError), engine.begin() as conn:
        claim_answer(conn, 'q', encode_response(PICK), 'alice')
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT status FROM ask_user_requests WHERE id = 'q'")).scalar_one() == 'pending'
        assert conn.execute(sa.text(f'SELECT count(*) FROM {HISTORY_TABLE_NAME}')).scalar_one() == 0


async def test_pruning_takes_the_entries_with_their_items_and_keeps_those_an_open_wait_still_reads(
    database_url: str,
) -> None:
    await _finish_everything(database_url, 8)
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        # t005's wait is still open: its approval is kept, and so is its entry.
        conn.execute(sa.text("UPDATE ask_user_event_waits SET status = 'pending' WHERE token = 't005'"))
        conn.execute(sa.text("UPDATE ask_user_event_waits SET status = 'resolved' WHERE token <> 't005'"))
    async with DBOSQuestionStore(database_url) as store:
        await store.prune_finished(older_than=0)
        left = await _everything(store)
        assert {(record.kind, record.key) for record in left} == {
            ('approval', PendingApproval('t005', 'call_0', 'x', {}).key),
            ('question', 'q005'),
        }
        with engine.connect() as conn:
            indexed = conn.execute(sa.text(f'SELECT kind, item_id FROM {HISTORY_TABLE_NAME}')).all()
            viewers = conn.execute(sa.text(f'SELECT DISTINCT kind, item_id FROM {HISTORY_VIEWERS_TABLE_NAME}')).all()
        assert set(indexed) == set(viewers) == {(record.kind, record.key) for record in left}


def _plan(url: str, statement: str, parameters: dict[str, Any]) -> str:
    engine = shared_engine(url)
    with engine.begin() as conn:
        if engine.dialect.name == 'postgresql':
            conn.execute(sa.text('SET LOCAL enable_seqscan = off'))
            rows = conn.execute(sa.text(f'EXPLAIN {statement}'), parameters).scalars().all()
        else:
            rows = [row[-1] for row in conn.execute(sa.text(f'EXPLAIN QUERY PLAN {statement}'), parameters).all()]
    return '\n'.join(str(row) for row in rows)


async def test_a_persons_page_reads_ranges_of_their_names_never_every_entry(database_url: str) -> None:
    await _finish_everything(database_url, 40)
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        # Everyone else's entries, 20,000 of them: on a table of a hundred, reading it all is the cheapest plan.
        others = [{'v': f'to:other-{n % 500}', 'f': 1000.0 + n, 'i': f'x{n}', 'k': 'question'} for n in range(20_000)]
        conn.execute(
            sa.text(
                f'INSERT INTO {HISTORY_VIEWERS_TABLE_NAME} (viewer, finished_at, item_id, kind, body) '
                "VALUES (:v, :f, :i, :k, '')"
            ),
            others,
        )
        conn.execute(
            sa.text(f"INSERT INTO {HISTORY_TABLE_NAME} (kind, item_id, finished_at, body) VALUES (:k, :i, :f, '')"),
            others,
        )
        conn.execute(sa.text('ANALYZE'))
    carol = Person('carol', groups=['team:billing', 'team:ops'])
    for where in (HistoryFilter(), HistoryFilter(text='prod', addressee='alice'), HistoryFilter(kind='approval')):
        with engine.connect() as conn:
            statement, parameters = history_statement(conn, carol, where, (1e12, 'q'), 50)
        plan = _plan(database_url, statement, parameters)
        # The viewers by their key (a range a name), the items by theirs: never a scan of either table.
        assert f'{HISTORY_VIEWERS_TABLE_NAME}_pkey' in plan or 'PRIMARY KEY' in plan or 'sqlite_autoindex' in plan, plan
        assert 'Seq Scan' not in plan, plan
        assert not [
            line
            for line in plan.splitlines()
            if line.startswith(('SCAN v', 'SCAN h', f'SCAN {HISTORY_TABLE_NAME}', f'SCAN {HISTORY_VIEWERS_TABLE_NAME}'))
        ], plan


async def test_a_reader_that_may_not_make_the_index_reads_each_persons_history_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / 'previous.sqlite'
    url = f'sqlite:///{path}'
    await _finish_everything(url, 6)
    async with DBOSQuestionStore(url) as store:
        everything = await _everything(store)
    _as_before_the_index(url)
    # Root bypasses file modes, so the file is opened read-only (SQLite's `mode=ro`), as a reader that may not write.
    monkeypatch.setattr(dbos_store, 'open_database', lambda _url, **_: ReadOnlySqliteDatabase(url, str(path)))
    alice = Person('alice', groups=['team:billing'])
    with caplog.at_level(logging.WARNING, logger='pydantic_ai_ask_user.dbos'):
        async with DBOSQuestionStore(url, create_table=False) as store:
            keys, totals = await _pages(store, 2, visible_to=alice)
    assert (keys, totals[0]) == _expected(everything, 2, HistoryFilter(), alice)
    assert f'has no {HISTORY_TABLE_NAME} table and this database user cannot create it' in caplog.text


async def test_a_new_database_has_its_index_complete_from_the_start(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    engine = shared_engine(database_url)
    # Nothing had finished when the tables were made: nothing to back-fill.
    assert HISTORY_COMPLETE_INDEX in {index['name'] for index in sa.inspect(engine).get_indexes(HISTORY_TABLE_NAME)}
    with engine.begin() as conn:
        insert_pending(conn, replace(make_request(id='q'), audience=('alice',)), 'wf')
        assert claim_answer(conn, 'q', encode_response(PICK), 'bob')
    async with DBOSQuestionStore(database_url) as store:
        page = await store.history_page(visible_to=Person('alice'))
        assert ([record.key for record in page.records], page.total) == (['q'], 1)
        assert [record.key for record in (await store.history_page(visible_to=Person('bob'))).records] == ['q']
        assert (await store.history_page(visible_to=Person('carol'))).total == 0


async def test_closing_the_store_stops_its_back_fill_after_the_batch_and_the_next_store_goes_on(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _finish_everything(database_url, 6)
    _as_before_the_index(database_url)
    monkeypatch.setattr(dbos_history, '_BACKFILL_BATCH', 2)
    writing, release = threading.Event(), threading.Event()
    original = dbos_history.insert_entries

    def held(conn: Any, entries: Any) -> None:
        writing.set()
        assert release.wait(waits.WAIT)
        original(conn, entries)

    monkeypatch.setattr(dbos_history, 'insert_entries', held)
    alice = Person('alice')
    store = DBOSQuestionStore(database_url, create_table=False)
    await store.history_page(visible_to=alice)  # read from the items' tables; the back-fill starts
    await anyio.to_thread.run_sync(writing.wait, waits.WAIT)
    closing = threading.Thread(target=store.close)
    closing.start()  # asks it to stop, and waits for its batch
    release.set()
    await anyio.to_thread.run_sync(closing.join, waits.WAIT)
    assert not closing.is_alive()
    assert (_entries(database_url), _complete(database_url)) == (2, False)  # its one batch, and no more
    monkeypatch.undo()
    async with DBOSQuestionStore(database_url) as store:
        await store.history_page(visible_to=alice)
        await wait_until(lambda: _complete(database_url), 'the back-fill to complete')
    assert _entries(database_url) == 12
