"""`ask-user history` where it cannot list: a Temporal server that is not there, a database that is not there, and the
arguments it refuses, each with its exit code and one line on stderr. What it lists, on SQLite and PostgreSQL, is
`tests/dbos/test_cli_history.py`.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import run_cli_process


def test_history_of_a_temporal_server_that_is_not_there_is_exit_4() -> None:
    done = run_cli_process('history', '--temporal', '127.0.0.1:9')  # the discard port: nothing listens
    assert (done.returncode, done.stdout) == (4, '')
    assert 'cannot' in done.stderr
    assert 'not available yet' not in done.stderr


def test_a_database_that_is_not_there_is_exit_4_and_none_is_made(tmp_path: Path) -> None:
    missing = tmp_path / 'missing.sqlite'
    done = run_cli_process('history', '--db', f'sqlite:///{missing}')
    assert (done.returncode, done.stdout) == (4, '')
    assert len(done.stderr.splitlines()) == 1
    assert not missing.exists()


def test_groups_need_a_person_and_the_namespace_needs_temporal() -> None:
    done = run_cli_process('history', '--group', 'team:billing')
    assert (done.returncode, done.stdout) == (2, '')
    assert '--group needs --for NAME' in done.stderr
    namespace = run_cli_process('history', '--namespace', 'default')
    assert namespace.returncode == 4
    assert '--namespace is a Temporal namespace' in namespace.stderr
