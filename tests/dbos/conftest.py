"""Fixtures for the durable tests: a private PostgreSQL server, fresh databases, and worker processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from ask_user_support import free_port
from durable_support import RequestInputWorker, Worker, as_postgres, fresh_postgres_database, pg_bin


@pytest.fixture(scope='session')
def postgres_server() -> Iterator[str]:
    """A private PostgreSQL server on 127.0.0.1 and a free port, for this test session only."""
    bin_dir = pg_bin()
    root = Path(tempfile.mkdtemp(prefix='ask-user-pg-'))
    os.chmod(root, 0o755)
    data = root / 'data'
    if os.geteuid() == 0:
        shutil.chown(root, 'postgres', 'postgres')
    port = free_port()
    subprocess.run(
        as_postgres([str(bin_dir / 'initdb'), '-D', str(data), '-A', 'trust', '-U', 'postgres', '--no-sync']),
        check=True,
        capture_output=True,
    )
    options = f'-h 127.0.0.1 -p {port} -k {root} -F -c max_connections=300 -c fsync=off'
    subprocess.run(
        as_postgres(
            [
                str(bin_dir / 'pg_ctl'),
                '-D',
                str(data),
                '-o',
                options,
                '-l',
                str(root / 'log'),
                '-w',
                '-t',
                '60',
                'start',
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield f'postgresql://postgres@127.0.0.1:{port}'
    finally:
        subprocess.run(
            as_postgres([str(bin_dir / 'pg_ctl'), '-D', str(data), '-m', 'immediate', '-w', 'stop']),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=['sqlite', pytest.param('postgres', marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path, anyio_backend: str) -> str:
    """A fresh, empty DBOS database: a SQLite file, or a database on the private PostgreSQL server.

    It names `anyio_backend` so that anyio's plugin keeps this fixture's parameters on async tests.
    """
    if request.param == 'sqlite':
        return f'sqlite:///{tmp_path / "questions.sqlite"}'
    return fresh_postgres_database(request.getfixturevalue('postgres_server'))


@pytest.fixture
def worker(database_url: str, tmp_path: Path) -> Iterator[Worker]:
    """A worker on the test's database; killed at the end if still running."""
    with Worker(database_url, tmp_path) as made:
        yield made


@pytest.fixture
def request_input_worker(database_url: str, tmp_path: Path) -> Iterator[RequestInputWorker]:
    """A worker whose run waits through `RequestInput`, on the test's database; killed at the end if still running."""
    with RequestInputWorker(database_url, tmp_path) as made:
        yield made
