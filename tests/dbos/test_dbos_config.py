"""`dbos_config`: a worker's output is its own, not ~75 lines of DBOS start-up and schema migrations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pydantic_ai_ask_user.dbos import DEFAULT_LOG_LEVEL, dbos_config

WORKER = """
import sys
from dbos import DBOS
from pydantic_ai_ask_user.dbos import dbos_config

extra = {'log_level': sys.argv[2]} if len(sys.argv) > 2 else {}
DBOS(config=dbos_config(sys.argv[1], name='quiet-worker', application_version='1', **extra))
DBOS.launch()
DBOS.destroy()
print('worker done')
"""


def _launch_a_worker(tmp_path: Path, *log_level: str) -> subprocess.CompletedProcess[str]:
    database = f'sqlite:///{tmp_path}/worker.sqlite'
    return subprocess.run(
        [sys.executable, '-c', WORKER, database, *log_level], capture_output=True, text=True, timeout=120
    )


def test_dbos_logs_warnings_and_errors_only_by_default() -> None:
    assert DEFAULT_LOG_LEVEL == 'WARNING'
    assert dbos_config('sqlite:///x.sqlite', name='w-1', application_version='1')['log_level'] == 'WARNING'
    assert dbos_config('sqlite:///x.sqlite', name='w-1', application_version='1', log_level='info')['log_level'] == (
        'INFO'
    )


def test_a_worker_that_launches_dbos_on_a_new_database_prints_only_its_own_output(tmp_path: Path) -> None:
    done = _launch_a_worker(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'worker done\n'
    assert done.stderr == ''


def test_log_level_info_brings_dbos_start_up_lines_back(tmp_path: Path) -> None:
    done = _launch_a_worker(tmp_path, 'INFO')
    assert done.returncode == 0, done.stderr
    assert 'INFO' in done.stderr
    assert 'Initializing DBOS' in done.stderr


def test_a_log_level_dbos_does_not_know_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="log_level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, not 'LOUD'"):
        dbos_config('sqlite:///x.sqlite', name='w-1', application_version='1', log_level='LOUD')
