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
from cli_support import run_cli_in_process
from durable_support import as_postgres, fresh_postgres_database, pg_bin

from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.dbos import DBOSQuestionStore, NotAQuestionDatabaseError
from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_table
from pydantic_ai_ask_user.dbos._questions import insert_pending


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return sorted(row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')"))


def _question() -> AskUserRequest:
    options = (QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite'))
    return AskUserRequest(questions=(Question(header='Database', question='Which database?', options=options),))


@pytest.mark.parametrize('command', [['pending'], ['pending', '--json'], ['answer', 'abc', '--json', '-']])
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


def test_a_dbos_database_where_nothing_was_asked_lists_nothing_and_gets_no_table(tmp_path: Path) -> None:
    database = tmp_path / 'dbos.sqlite'
    launch = (
        'import sys\n'
        'from dbos import DBOS\n'
        'from pydantic_ai_ask_user.dbos import dbos_config\n'
        "DBOS(config=dbos_config(sys.argv[1], name='cli-db-test', application_version='1'))\n"
        'DBOS.launch()\n'
        'DBOS.destroy()\n'
    )
    subprocess.run([sys.executable, '-c', launch, f'sqlite:///{database}'], check=True, capture_output=True)
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
