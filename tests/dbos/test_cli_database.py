"""`ask-user pending` and `ask-user answer` on a database that is missing, somebody else's, or goes away.

The command line never creates a database or a table: a typo in `--db` is exit 4 with a message, not an
empty list. A failure after the question was read is exit 4 too, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from ask_user_support import free_port
from cli_support import run_cli_in_process, run_recording
from durable_support import as_postgres, fresh_postgres_database, pg_bin

from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.dbos import DBOSQuestionStore, NotAQuestionDatabaseError, shown_database_url
from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_table
from pydantic_ai_ask_user.dbos._questions import insert_pending


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return sorted(row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')"))


_QUESTIONS = {
    'questions': [
        {'header': 'Database', 'question': 'Which database?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}
    ]
}
"""One question, as the tool's arguments."""


def _question() -> AskUserRequest:
    options = (QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite'))
    return AskUserRequest(questions=(Question(header='Database', question='Which database?', options=options),))


@pytest.mark.parametrize(
    'command',
    [['pending'], ['pending', '--json'], ['answer', 'abc', '--json', '-'], ['resolve', 'dbos1.abc.wf', '--fail', 'x']],
)
def test_a_sqlite_file_that_does_not_exist_exits_4_and_is_not_created(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / 'typo.sqlite'
    code, out, err = run_cli_in_process(
        [command[0], '--db', f'sqlite:///{typo}', *command[1:]], '{"Database": ["SQLite"]}'
    )
    assert (code, out) == (4, '')
    assert err == f'ask-user: cannot read the questions in sqlite:///{typo}: there is no SQLite database at {typo}\n'
    assert not typo.exists()


def test_an_in_memory_sqlite_database_exits_4() -> None:
    code, _, err = run_cli_in_process(['pending', '--db', 'sqlite://'])
    assert code == 4
    assert 'is not a SQLite file' in err


@pytest.mark.parametrize('command', [['pending'], ['answer', 'abc', '--json', '-']])
def test_a_foreign_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path, command: list[str]) -> None:
    foreign = tmp_path / 'notes.sqlite'
    with sqlite3.connect(foreign) as conn:
        conn.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
    before = _tables(foreign)
    code, _, err = run_cli_in_process(
        [command[0], '--db', f'sqlite:///{foreign}', *command[1:]], '{"Database": ["SQLite"]}'
    )
    assert code == 4
    assert err == (
        f'ask-user: cannot read the questions in sqlite:///{foreign}: sqlite:///{foreign} is not a question '
        'database: it has neither the ask_user_requests table nor the tables of DBOS\n'
    )
    assert _tables(foreign) == before == ['notes']


def _launch_dbos(url: str) -> None:
    """Launch DBOS on `url` once, in a process of its own, as a worker would: its tables, and no question's."""
    launch = (
        'import sys\n'
        'from dbos import DBOS\n'
        'from pydantic_ai_ask_user.dbos import dbos_config\n'
        "DBOS(config=dbos_config(sys.argv[1], name='cli-db-test', application_version='1'))\n"
        'DBOS.launch()\n'
        'DBOS.destroy()\n'
    )
    subprocess.run([sys.executable, '-c', launch, url], check=True, capture_output=True)


def test_a_dbos_database_where_nothing_was_asked_lists_nothing_and_gets_no_table(tmp_path: Path) -> None:
    database = tmp_path / 'dbos.sqlite'
    _launch_dbos(f'sqlite:///{database}')
    before = _tables(database)
    assert 'workflow_status' in before
    assert run_cli_in_process(['pending', '--db', f'sqlite:///{database}']) == (0, '', 'nothing is waiting\n')
    code, _, err = run_cli_in_process(
        ['answer', '--db', f'sqlite:///{database}', 'abc', '--json', '-'], '{"Database": "SQLite"}'
    )
    assert code == 5, err
    assert _tables(database) == before


def test_a_store_asked_to_create_still_creates_its_table(tmp_path: Path) -> None:
    database = tmp_path / 'fresh.sqlite'

    async def pending() -> Any:
        async with DBOSQuestionStore(f'sqlite:///{database}') as store:
            return await store.pending()

    assert anyio.run(pending) == []
    assert 'ask_user_requests' in _tables(database)


@pytest.mark.postgres
def test_an_empty_postgres_database_is_refused_and_gets_no_table(postgres_server: str) -> None:
    url = fresh_postgres_database(postgres_server)
    code, _, err = run_cli_in_process(['pending', '--db', url])
    assert code == 4
    assert 'is not a question database' in err
    assert 'Traceback' not in err
    with psycopg.connect(url) as conn:
        count = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        assert count.fetchone() == (0,)


@contextmanager
def _private_postgres() -> Iterator[tuple[str, Any]]:
    """A PostgreSQL server of this test's own, and a function that stops it."""
    bin_dir = pg_bin()
    root = Path(tempfile.mkdtemp(prefix='ask-user-pg-stop-'))
    root.chmod(0o755)
    data = root / 'data'
    if os.geteuid() == 0:
        shutil.chown(root, 'postgres', 'postgres')
    port = free_port()
    initdb = [str(bin_dir / 'initdb'), '-D', str(data), '-A', 'trust', '-U', 'postgres', '--no-sync']
    subprocess.run(as_postgres(initdb), check=True, capture_output=True)
    options = f'-h 127.0.0.1 -p {port} -k {root} -F -c fsync=off'
    pg_ctl = str(bin_dir / 'pg_ctl')
    start = [pg_ctl, '-D', str(data), '-o', options, '-l', str(root / 'log'), '-w', '-t', '120', 'start']
    subprocess.run(as_postgres(start), check=True, capture_output=True)

    def stop() -> None:
        subprocess.run(as_postgres([pg_ctl, '-D', str(data), '-m', 'immediate', '-w', 'stop']), capture_output=True)

    try:
        yield f'postgresql://postgres@127.0.0.1:{port}', stop
    finally:
        stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.postgres
def test_postgres_stopped_between_reading_the_question_and_sending_the_answer_exits_4(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with _private_postgres() as (server, stop):
        url = fresh_postgres_database(server)
        engine = create_engine(url)
        request = _question()
        try:
            ensure_table(engine)
            with engine.begin() as conn:
                insert_pending(conn, request, 'some-workflow')
        finally:
            engine.dispose()
        read = DBOSQuestionStore.get

        async def read_then_stop(self: DBOSQuestionStore, request_id: str) -> AskUserRequest:
            found = await read(self, request_id)
            stop()
            return found

        monkeypatch.setattr(DBOSQuestionStore, 'get', read_then_stop)
        code, out, err = run_cli_in_process(
            ['answer', '--db', url, request.id, '--json', '-'], '{"Database": ["SQLite"]}'
        )
    assert (code, out) == (4, '')
    assert err.startswith(f'ask-user: cannot send the answer to {url}: ')
    assert err.endswith('; `ask-user pending` shows whether the question still waits\n')
    assert err.count('\n') == 1
    assert 'Traceback' not in err


def test_a_store_that_may_not_create_raises_on_a_missing_file_and_creates_nothing(tmp_path: Path) -> None:
    typo = tmp_path / 'typo.sqlite'

    async def pending() -> Any:
        return await DBOSQuestionStore(f'sqlite:///{typo}', create_table=False).pending()

    with pytest.raises(NotAQuestionDatabaseError, match='there is no SQLite database at'):
        anyio.run(pending)
    assert not typo.exists()


@pytest.mark.parametrize('command', [['pending'], ['answer', 'abc', '--json', '-']])
def test_a_database_that_cannot_be_reached_is_named_without_its_password(command: list[str]) -> None:
    port = free_port()  # nothing listens on it: the connection is refused at once
    url = f'postgresql://ask:hunter2@127.0.0.1:{port}/questions'
    code, out, err = run_cli_in_process([command[0], '--db', url, *command[1:]], '{"Database": ["SQLite"]}')
    assert (code, out) == (4, '')
    assert f'postgresql://ask:***@127.0.0.1:{port}/questions' in err
    assert 'hunter2' not in err


@pytest.mark.parametrize(
    'url',
    [
        pytest.param('sqlite:///{path}', id='plain'),
        pytest.param('sqlite:///{path}?timeout=3', id='options'),
        pytest.param('sqlite+pysqlite:///{path}', id='driver'),
    ],
)
@pytest.mark.parametrize(
    'command',
    [['pending'], ['pending', '--json'], ['answer', 'abc', '--json', '-'], ['resolve', 'dbos1.abc.wf', '--fail', 'x']],
)
def test_a_missing_sqlite_file_is_said_before_any_heavy_import(tmp_path: Path, url: str, command: list[str]) -> None:
    # Whatever the URL's spelling, a missing file is read as SQLAlchemy reads it, without importing it (nor DBOS).
    typo = tmp_path / 'typo.sqlite'
    database = url.format(path=typo)
    done, heavy = run_recording(tmp_path / 'modules.json', command[0], '--db', database, *command[1:], stdin='{}')
    assert heavy == set(), done.stderr
    assert (done.returncode, done.stdout) == (4, ''), done.stderr
    assert done.stderr == (
        f'ask-user: cannot read the questions in {shown_database_url(database)}: there is no SQLite database at {typo}\n'
    )
    assert not typo.exists()


@pytest.mark.postgres
@pytest.mark.parametrize(
    'args',
    [
        pytest.param(['pending'], id='pending'),
        pytest.param(['pending', '--json'], id='pending-json'),
        pytest.param(['answer', 'call-1', '--json', '-'], id='answer'),
        pytest.param(['resolve', 'dbos1.xyz.none', '--fail', 'no'], id='resolve'),
    ],
)
def test_the_commands_read_and_write_postgres_through_psycopg_alone(
    postgres_server: str, tmp_path: Path, args: list[str]
) -> None:
    # A plain PostgreSQL URL: the question table read, the answer recorded and sent to its workflow (DBOS's SQL
    # function), with psycopg only: no SQLAlchemy, no DBOS, no Pydantic AI.
    url = fresh_postgres_database(postgres_server)
    _launch_dbos(url)  # DBOS's schema
    engine = create_engine(url)
    try:
        ensure_table(engine)
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO dbos.workflow_status (workflow_uuid, status) VALUES ('wf-ask', 'PENDING')"
            )
            insert_pending(conn, AskUserRequest.from_tool_args(_QUESTIONS, id='call-1'), 'wf-ask')
    finally:
        engine.dispose()
    done, heavy = run_recording(tmp_path / 'modules.json', *args, '--db', url, stdin='{"Database": ["SQLite"]}')
    assert heavy == set(), done.stderr
    if args[0] == 'pending':
        assert done.returncode == 0, done.stderr
        assert 'call-1' in done.stdout
    elif args[0] == 'answer':
        assert (done.returncode, done.stdout) == (0, '{"Database":["SQLite"]}\n'), done.stderr
        with psycopg.connect(url) as conn:
            sent = conn.execute('SELECT destination_uuid, topic FROM dbos.notifications').fetchall()
        assert sent == [('wf-ask', 'ask_user:call-1')]
    else:
        assert done.returncode == 7, done.stderr
