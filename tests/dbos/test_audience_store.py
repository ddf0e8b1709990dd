"""Who a durable question is for and where it comes from: stored in columns of their own, filtered in the store.

Against real databases (SQLite, and PostgreSQL where the suite runs it): an old table gets the columns at start-up,
each person lists only what is theirs, a name holding SQL's wildcards matches nothing else, and a damaged
audience column hides the question from everyone but the administrative view, never shows it to all.
"""

from __future__ import annotations

import json
import logging
import shlex
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa
from ask_user_support import make_request
from cli_support import run_cli_in_process
from test_answered_by_and_notes import ReadOnlySqliteDatabase, columns, old_database

from pydantic_ai_ask_user import AskUserRequest, Person, QuestionContext
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos import _store as dbos_store
from pydantic_ai_ask_user.dbos._addressees import ADDRESSEES_TABLE_NAME as ADDRESSEES
from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_table
from pydantic_ai_ask_user.dbos._questions import insert_pending, select_requests
from pydantic_ai_ask_user.dbos._schema import TABLE_NAME
from pydantic_ai_ask_user.dbos._tables import requests_table

pytestmark = pytest.mark.anyio

CONTEXT = QuestionContext(
    title='Refund for order 1042',
    summary='The customer **wants** a refund.\n\n- paid twice',
    link='https://support.example/tickets/1042',
    agent_name='support-bot',
    conversation_id='conv-7',
)


def _addressed(request_id: str, audience: object) -> AskUserRequest:
    return replace(make_request(id=request_id), audience=audience, context=CONTEXT)


def _publish(url: str, *requests: AskUserRequest) -> None:
    """Publish `requests`, each waited on by a live workflow in DBOS's own table (made here: no DBOS runs)."""
    engine = create_engine(url)
    try:
        ensure_table(engine)
        workflows = 'workflow_status'
        with engine.begin() as conn:
            if engine.dialect.name == 'postgresql':
                conn.execute(sa.text('CREATE SCHEMA IF NOT EXISTS dbos'))
                workflows = 'dbos.workflow_status'
            conn.execute(
                sa.text(f'CREATE TABLE IF NOT EXISTS {workflows} (workflow_uuid TEXT PRIMARY KEY, status TEXT)')
            )
            for request in requests:
                insert_pending(conn, request, f'wf-{request.id}')
                conn.execute(sa.text(f"INSERT INTO {workflows} VALUES ('wf-{request.id}', 'PENDING')"))
    finally:
        engine.dispose()


async def test_each_person_lists_only_what_is_theirs_with_its_context(database_url: str) -> None:
    _publish(
        database_url,
        _addressed('for-alice', 'alice'),
        _addressed('for-bob', ['bob']),
        _addressed('for-billing', ['team:billing', 'carol']),
        make_request(id='for-anyone'),
        # SQL's wildcards in a name must not match other names: `a%` is not `alice`, `b_b` is not `bob`.
        _addressed('for-wildcards', ['a%', 'b_b']),
    )
    async with DBOSQuestionStore(database_url, create_table=False) as store:

        async def ids(person: Person | None) -> set[str]:
            return {request.id for request in await store.pending(visible_to=person)}

        assert await ids(Person('alice')) == {'for-alice', 'for-anyone'}
        assert await ids(Person('bob', groups=['team:billing'])) == {'for-bob', 'for-billing', 'for-anyone'}
        assert await ids(Person('a%')) == {'for-wildcards', 'for-anyone'}
        assert await ids(Person('%')) == {'for-anyone'}
        assert await ids(Person('b_b')) == {'for-wildcards', 'for-anyone'}
        assert await ids(Person()) == {'for-anyone'}
        everyone = {'for-alice', 'for-bob', 'for-billing', 'for-anyone', 'for-wildcards'}
        assert await ids(Person(sees_all=True)) == everyone
        assert await ids(None) == everyone
        [record] = [record for record in await store.pending_records() if record.request.id == 'for-alice']
        assert record.request.audience == ('alice',)
        assert record.request.context == CONTEXT
        # `get` is by key, for whoever holds it: the front ends check the audience themselves.
        assert (await store.get(record.key)).audience == ('alice',)


async def test_an_old_table_gets_the_columns_and_its_rows_read_as_unaddressed(database_url: str) -> None:
    old_database(database_url)
    assert 'audience' not in columns(database_url)
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        record = await store.record('old-pending')
    assert (record.request.audience, record.request.context) == (None, None)
    assert {'audience', 'context'} <= set(columns(database_url))
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            listed = select_requests(conn, status='pending', visible_to=Person('alice'))
    finally:
        engine.dispose()
    assert [stored.request.id for stored in listed] == ['old-pending']  # unaddressed: anyone's


async def test_a_damaged_audience_hides_the_question_from_everyone_but_the_administrative_view(
    database_url: str,
) -> None:
    _publish(database_url, _addressed('damaged', 'alice'))
    engine = create_engine(database_url)
    try:
        for damage in ('not json', '"alice"', '[]', '{"alice": 1}'):
            with engine.begin() as conn:
                conn.execute(sa.update(requests_table).values(audience=damage))
                [stored] = select_requests(conn)
                assert stored.request.audience is not None
                assert not Person('alice').may_see(stored.request), damage
                assert select_requests(conn, visible_to=Person('alice')) == [], damage
                assert len(select_requests(conn, visible_to=Person(sees_all=True))) == 1
            async with DBOSQuestionStore(database_url, create_table=False) as store:
                # Her page reaches the question through its addressee row, but the audience column decides.
                page = await store.pending_page(visible_to=Person('alice'))
                assert (list(page.records), page.total, await store.count_pending(visible_to=Person('alice'))) == (
                    [],
                    0,
                    0,
                )
                assert (await store.pending_page(visible_to=Person(sees_all=True))).total == 1
            with engine.begin() as conn:
                conn.execute(
                    sa.update(requests_table).values(context='{"title": "\\u001b[31m", "link": "javascript:x"}')
                )
                [stored] = select_requests(conn)
                assert stored.request.context is None  # every field failed its check, so none is shown
    finally:
        engine.dispose()
    assert TABLE_NAME in sa.inspect(create_engine(database_url)).get_table_names()


def test_ask_user_pending_shows_who_and_where_and_filters_for_a_name(database_url: str) -> None:
    _publish(
        database_url, _addressed('for-alice', 'alice'), make_request(id='for-anyone'), _addressed('for-bob', 'bob')
    )
    code, out, err = run_cli_in_process(['pending', '--db', database_url, '--for', 'alice', '--json'])
    assert (code, err) == (0, '')
    *lines, trailer = [json.loads(line) for line in out.splitlines()]
    assert trailer == {'total': 2, 'total_exact': True}  # the page's count: bob's question is not counted either
    assert [line['tool_call_id'] for line in lines] == ['for-alice', 'for-anyone']
    assert lines[0]['audience'] == ['alice']
    assert lines[0]['context'] == {
        'title': 'Refund for order 1042',
        'summary': 'The customer **wants** a refund.\n\n- paid twice',
        'link': 'https://support.example/tickets/1042',
        'agent_name': 'support-bot',
        'conversation_id': 'conv-7',
    }
    assert 'audience' not in lines[1]
    code, out, err = run_cli_in_process(['pending', '--db', database_url, '--for', 'bob', '--limit', '1'])
    assert code == 0
    assert 'for-alice' not in out
    assert 'for-anyone' in out
    assert 'for-bob' not in out  # on the next page: one a page
    # The next page's command repeats this one's options, so that it can be pasted as it is.
    assert '1 of 2 waiting items shown; the next ones: ask-user pending --db ' in err
    command = shlex.split(err.split('the next ones: ', 1)[1])
    assert command[:2] == ['ask-user', 'pending']
    assert command[2:-2] == ['--db', database_url, '--for', 'bob', '--limit', '1']
    code, out, err = run_cli_in_process(command[1:])
    assert (code, 'for-bob' in out, 'for-alice' in out) == (0, True, False)
    assert '1 of 2 waiting items shown' in err
    code, out, err = run_cli_in_process(['pending', '--db', database_url])
    assert code == 0
    assert '3 of 3 waiting items shown' in err
    assert 'for alice' in out
    assert 'Refund for order 1042' in out
    assert 'asked by support-bot · conversation conv-7' in out
    assert '  | The customer **wants** a refund.' in out
    assert 'https://support.example/tickets/1042' in out
    code, _, err = run_cli_in_process(['pending', '--db', database_url, '--group', 'x'])
    assert code == 2
    assert '--group needs --for NAME' in err
    code, _, err = run_cli_in_process(['pending', '--db', database_url, '--for', 'evil\x1b[2J'])
    assert code == 2
    assert '\x1b' not in err


async def test_a_persons_pages_and_count_hold_only_their_questions(database_url: str) -> None:
    # Paging and the audience together, in SQL (sqlite3 on a SQLite file, SQLAlchemy on PostgreSQL): a page never
    # holds, and its total never counts, a question addressed to someone else; `x"alice` is not `alice`, nor `ALICE`.
    _publish(
        database_url,
        _addressed('a1', 'alice'),
        _addressed('b1', 'bob'),
        make_request(id='any'),
        _addressed('a2', ['alice', 'team:support']),
        _addressed('tricky', ['x"alice', 'ALICE', 'alice2']),
        _addressed('b2', ['bob']),
    )
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        for person, expected in (
            (Person('alice'), ['a1', 'any', 'a2']),
            # a2 is addressed to her and to her team: listed and counted once.
            (Person('alice', groups=['team:support', 'team:none']), ['a1', 'any', 'a2']),
            (Person('sam', groups=['team:support']), ['any', 'a2']),
            (Person(), ['any']),
            (Person('op', sees_all=True), ['a1', 'b1', 'any', 'a2', 'tricky', 'b2']),
        ):
            keys: list[str] = []
            cursor: str | None = None
            while True:
                page = await store.pending_page(limit=1, cursor=cursor, visible_to=person)
                assert (page.total, len(page.records)) == (len(expected), 1)
                keys.extend(record.request.id for record in page.records)
                if (cursor := page.next_cursor) is None:
                    break
            assert keys == expected
            assert await store.count_pending(visible_to=person) == len(expected)


def _addressee_rows(url: str) -> set[tuple[str, str]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {(key, name) for key, name in conn.execute(sa.text(f'SELECT request_id, name FROM {ADDRESSEES}'))}
    finally:
        engine.dispose()


def _as_the_previous_version_left_it(url: str) -> None:
    """The database as the version before the addressees left it: no addressee table, no unaddressed index."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP TABLE {ADDRESSEES}'))
            conn.execute(sa.text('DROP INDEX ix_ask_user_requests_unaddressed'))
    finally:
        engine.dispose()


def _earlier_questions(url: str) -> None:
    """Addressed questions as an earlier version published them (no addressees): pending, answered, damaged."""
    _publish(
        url,
        _addressed('a1', 'alice'),
        _addressed('team', ['team:support', 'zed']),
        _addressed('both', ['alice', 'team:support']),
        make_request(id='any'),
        _addressed('b1', 'bob'),
        _addressed('answered', 'alice'),
        _addressed('damaged', 'alice'),
        replace(_addressed('due', 'alice'), deadline=2_000_000_000.0),
    )
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(requests_table).where(requests_table.c.id == 'answered').values(status='answered'))
            conn.execute(sa.update(requests_table).where(requests_table.c.id == 'damaged').values(audience='alice'))
    finally:
        engine.dispose()
    _as_the_previous_version_left_it(url)


EARLIER_ADDRESSEES = {
    ('a1', 'alice'),
    ('team', 'team:support'),
    ('team', 'zed'),
    ('both', 'alice'),
    ('both', 'team:support'),
    ('b1', 'bob'),
    ('due', 'alice'),
}
"""The addressee rows of `_earlier_questions` once copied: the pending ones' names (not the answered question's, nor
the damaged audience's)."""


async def _pages(store: DBOSQuestionStore, person: Person) -> tuple[list[str], int]:
    """Every key `person` is shown, a page of one at a time, and the count."""
    keys: list[str] = []
    cursor: str | None = None
    while True:
        page = await store.pending_page(limit=1, cursor=cursor, visible_to=person)
        keys.extend(record.request.id for record in page.records)
        if (cursor := page.next_cursor) is None:
            return keys, page.total


async def test_a_database_of_the_previous_version_gets_the_addressees_of_its_waiting_questions(
    database_url: str,
) -> None:
    _earlier_questions(database_url)
    # `ask-user pending` first (on a SQLite file: sqlite3, without SQLAlchemy), then the store.
    code, out, err = await anyio.to_thread.run_sync(
        run_cli_in_process, ['pending', '--db', database_url, '--for', 'alice', '--json']
    )
    assert (code, err) == (0, '')
    *lines, trailer = [json.loads(line) for line in out.splitlines()]
    assert [line['tool_call_id'] for line in lines] == ['due', 'a1', 'both', 'any']
    assert trailer == {'total': 4, 'total_exact': True}
    assert _addressee_rows(database_url) == EARLIER_ADDRESSEES
    _as_the_previous_version_left_it(database_url)
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        assert await _pages(store, Person('alice', groups=['team:support'])) == (
            ['due', 'a1', 'team', 'both', 'any'],
            5,
        )
        assert await _pages(store, Person('zed')) == (['team', 'any'], 2)
        assert await _pages(store, Person('bob')) == (['any', 'b1'], 2)
        # Published after the upgrade: written with the question.
        _publish(database_url, _addressed('new', ['bob']))
        assert await _pages(store, Person('bob')) == (['any', 'b1', 'new'], 3)
    assert _addressee_rows(database_url) == {*EARLIER_ADDRESSEES, ('new', 'bob')}
    engine = create_engine(database_url)
    try:
        assert 'ix_ask_user_requests_unaddressed' in {
            index['name'] for index in sa.inspect(engine).get_indexes(TABLE_NAME)
        }
    finally:
        engine.dispose()


async def test_a_reader_that_may_not_make_the_addressees_is_warned_and_lists_each_persons_questions_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Root bypasses file modes, so the file is opened read-only (SQLite's `mode=ro`), as a reader that may not write.
    path = tmp_path / 'previous.sqlite'
    url = f'sqlite:///{path}'
    _earlier_questions(url)
    monkeypatch.setattr(dbos_store, 'open_database', lambda _url, **_: ReadOnlySqliteDatabase(url, str(path)))
    with caplog.at_level(logging.WARNING, logger='pydantic_ai_ask_user.dbos'):
        async with DBOSQuestionStore(url, create_table=False) as store:
            assert await _pages(store, Person('alice', groups=['team:support'])) == (
                ['due', 'a1', 'team', 'both', 'any'],
                5,
            )
            assert await _pages(store, Person('zed')) == (['team', 'any'], 2)
    [warning] = [record.getMessage() for record in caplog.records if ADDRESSEES in record.getMessage()]
    assert 'this database user cannot create it (attempt to write a readonly database)' in warning
    assert ADDRESSEES not in sa.inspect(create_engine(url)).get_table_names()


async def test_the_addressees_of_a_pruned_question_go_with_it(database_url: str) -> None:
    _publish(database_url, _addressed('done', ['alice', 'team:support']), _addressed('waiting', 'alice'))
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.update(requests_table).where(requests_table.c.id == 'done').values(status='answered', updated_at=0)
            )
    finally:
        engine.dispose()
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        assert _addressee_rows(database_url) == {('done', 'alice'), ('done', 'team:support'), ('waiting', 'alice')}
        assert await store.prune_finished() == 1
        assert _addressee_rows(database_url) == {('waiting', 'alice')}
        assert await _pages(store, Person('alice')) == (['waiting'], 1)
