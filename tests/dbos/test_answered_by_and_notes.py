"""Who answered, notes, recommended options and deadlines, through the durable store: on real SQLite and PostgreSQL.

Databases made by an earlier version (no `answered_by` column) get the column at start-up, however many
processes start at once, and their old rows read back as they were written.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from ask_user_support import make_request
from durable_support import WAIT_SECONDS

from pydantic_ai_ask_user import (
    TIMED_OUT,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._encoding import decode_request, encode_request, encode_response
from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_columns, ensure_table, shared_engine, transaction
from pydantic_ai_ask_user.dbos._inbox import completed_results, expire_token
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending, select_requests
from pydantic_ai_ask_user.dbos._schema import TABLE_NAME, MissingColumnError
from pydantic_ai_ask_user.dbos._sqlite import SqliteDatabase
from pydantic_ai_ask_user.dbos._waits import insert_event_request, open_wait_row

pytestmark = pytest.mark.anyio

ALICE = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),), answered_by='alice@laptop')

OLD_SCHEMA = sa.MetaData()
sa.Table(
    TABLE_NAME,
    OLD_SCHEMA,
    sa.Column('id', sa.String(200), primary_key=True),
    sa.Column('workflow_id', sa.String(500), nullable=False),
    sa.Column('questions', sa.Text(), nullable=False),
    sa.Column('status', sa.String(16), nullable=False, index=True),
    sa.Column('response', sa.Text(), nullable=True),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
)
"""The questions table as versions before `answered_by` created it."""

OLD_QUESTIONS = json.dumps(
    {
        'questions': [
            {'header': 'Database', 'question': 'Which?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}
        ]
    }
)


def noted_request(request_id: str) -> AskUserRequest:
    question = Question(
        header='Database',
        question='Which database?',
        options=(QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite')),
        recommended='SQLite',
    )
    return AskUserRequest(questions=(question,), id=request_id, notes=True, deadline=2_000_000_000.5)


def old_database(url: str) -> None:
    """A database as an earlier version left it: the old table, one answered row and one pending."""
    engine = create_engine(url)
    try:
        OLD_SCHEMA.create_all(engine)
        now = time.time()
        old_answer = json.dumps({'answers': [{'header': 'Database', 'selected': ['PostgreSQL']}], 'cancelled': False})
        with engine.begin() as conn:
            table = OLD_SCHEMA.tables[TABLE_NAME]
            conn.execute(
                table.insert(),
                [
                    {'id': 'old-answered', 'workflow_id': 'wf', 'questions': OLD_QUESTIONS, 'status': 'answered',
                     'response': old_answer, 'created_at': now, 'updated_at': now},
                    {'id': 'old-pending', 'workflow_id': 'wf', 'questions': OLD_QUESTIONS, 'status': 'pending',
                     'response': None, 'created_at': now, 'updated_at': now},
                ],
            )  # fmt: skip
    finally:
        engine.dispose()


def columns(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        return [column['name'] for column in sa.inspect(engine).get_columns(TABLE_NAME)]
    finally:
        engine.dispose()


def test_a_request_keeps_notes_recommended_and_deadline_and_an_old_row_reads_as_without_notes() -> None:
    request = noted_request('r1')
    decoded = decode_request(encode_request(request), 'r1')
    assert (decoded, decoded.notes, decoded.deadline) == (request, True, 2_000_000_000.5)
    assert decoded.questions[0].recommended == 'SQLite'
    plain = make_request(id='r2')
    assert json.loads(encode_request(plain)).keys() == {'questions'}  # as earlier versions wrote every row
    old = decode_request(OLD_QUESTIONS, 'r3')
    assert (old.notes, old.deadline, old.questions[0].recommended) == (False, None, None)
    # A deadline no date can show (a row not written by us) reads as none rather than breaking every page.
    stored = json.loads(encode_request(request))
    for unshowable in (1e13, -5, 'soon'):
        assert decode_request(json.dumps({**stored, 'deadline': unshowable}), 'r4').deadline is None


def test_an_old_database_gets_the_column_at_start_up_and_its_rows_read_back(database_url: str) -> None:
    old_database(database_url)
    assert 'answered_by' not in columns(database_url)
    engine = create_engine(database_url)
    try:
        ensure_table(engine)
        ensure_table(engine)  # idempotent
        with engine.begin() as conn:
            rows = {stored.request.id: stored for stored in select_requests(conn)}
            assert rows['old-answered'].answered_by is None
            assert rows['old-answered'].response is not None
            assert rows['old-answered'].response.answers[0].selected == ('PostgreSQL',)
            assert rows['old-pending'].request.notes is False
            assert claim_answer(conn, 'old-pending', encode_response(ALICE), ALICE.answered_by)
            [answered] = select_requests(conn, request_id='old-pending')
    finally:
        engine.dispose()
    assert columns(database_url).count('answered_by') == 1
    assert (answered.answered_by, answered.response) == ('alice@laptop', ALICE)


def test_workers_starting_at_once_on_an_old_database_all_start(database_url: str) -> None:
    old_database(database_url)
    engines = [create_engine(database_url) for _ in range(6)]
    barrier = threading.Barrier(len(engines))
    errors: list[BaseException] = []

    def start(engine: sa.Engine) -> None:
        try:
            barrier.wait(timeout=WAIT_SECONDS)
            ensure_table(engine)
        except BaseException as error:  # pragma: no cover - the failure the test looks for
            errors.append(error)

    threads = [threading.Thread(target=start, args=(engine,), daemon=True) for engine in engines]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=WAIT_SECONDS * 2)
    finally:
        for engine in engines:
            engine.dispose()
    assert not [thread for thread in threads if thread.is_alive()], f'not all started within {WAIT_SECONDS * 2:.0f} s'
    assert errors == []
    assert columns(database_url).count('answered_by') == 1


async def test_a_store_that_may_not_create_adds_the_column_to_an_old_table_and_answers_there(
    database_url: str,
) -> None:
    old_database(database_url)
    # `ask-user pending` and `answer` open the store without creating tables; the old table still gets its column.
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        record = await store.record('old-answered')
    assert record.answered_by is None
    assert 'answered_by' in columns(database_url)


def test_the_answers_of_a_request_input_wait_carry_who_gave_each(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "questions.sqlite"}'
    with transaction(url) as conn:
        for request_id in ('q1', 'q2'):
            insert_pending(conn, make_request(id=request_id), 'wf')
            insert_event_request(conn, request_id, 'tok')
        open_wait_row(conn, 'tok', 'wf')
        claim_answer(conn, 'q1', encode_response(ALICE), ALICE.answered_by)
        assert completed_results(conn, 'tok') is None
        unnamed = replace(ALICE, answered_by=None)
        claim_answer(conn, 'q2', encode_response(unnamed), None)
        message = completed_results(conn, 'tok')
    assert message is not None
    payload = json.loads(message)['payload']
    assert payload == {
        'calls': {'q1': {'Database': ['SQLite']}, 'q2': {'Database': ['SQLite']}},
        'answered_by': {'q1': 'alice@laptop'},
    }
    with transaction(url) as conn:
        insert_pending(conn, make_request(id='q3'), 'wf')
        insert_event_request(conn, 'q3', 'late')
        insert_pending(conn, make_request(id='q4'), 'wf')
        insert_event_request(conn, 'q4', 'late')
        open_wait_row(conn, 'late', 'wf')
        claim_answer(conn, 'q3', encode_response(ALICE), ALICE.answered_by)
    assert expire_token(url, 'late') == {
        'calls': {'q3': {'Database': ['SQLite']}, 'q4': TIMED_OUT},
        'answered_by': {'q3': 'alice@laptop'},
    }
    shared_engine(url).dispose()


class ReadOnlySqliteDatabase(SqliteDatabase):
    """A SQLite file through `sqlite3`, opened read-only (`mode=ro`)."""

    def _open(self) -> sqlite3.Connection:
        return sqlite3.connect(f'file:{self.path}?mode=ro', uri=True)


@pytest.mark.parametrize('way', ['sqlalchemy', 'sqlite3'])
def test_a_user_that_may_not_alter_the_old_table_is_told_what_to_run(tmp_path: Path, way: str) -> None:
    # Root bypasses file modes, so the database is opened read-only (SQLite's `mode=ro`), as a role that does not
    # own the table would find it: the ALTER fails, and the error names the statement for the table's owner.
    path = tmp_path / 'old.sqlite'
    old_database(f'sqlite:///{path}')
    if way == 'sqlite3':
        with pytest.raises(MissingColumnError) as refused:
            ReadOnlySqliteDatabase(f'sqlite:///{path}', str(path)).ensure_columns()
    else:
        read_only = sa.create_engine(f'sqlite:///file:{path}?mode=ro&uri=true')
        try:
            with pytest.raises(MissingColumnError) as refused:
                ensure_columns(read_only)
        finally:
            read_only.dispose()
    message = str(refused.value)
    assert 'was made by an earlier version and lacks the column answered_by' in message
    assert 'readonly' in message
    assert message.endswith(
        f"have the table's owner run once: ALTER TABLE {TABLE_NAME} ADD COLUMN answered_by VARCHAR(200)"
    )
    assert 'answered_by' not in columns(f'sqlite:///{path}')
