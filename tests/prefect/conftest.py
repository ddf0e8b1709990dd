"""Fixtures for the Prefect tests: a private Prefect server, one per session and worker."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ask_user_support import free_port, unmeasured
from prefect_support import prefect_server_env
from waits import WAIT


@pytest.fixture(scope='session')
def prefect_api_url() -> Iterator[str]:
    """`PREFECT_API_URL` of a real Prefect server (`prefect server start`) on a free port with a private SQLite database."""
    binary = Path(sys.executable).with_name('prefect')
    if not binary.is_file():
        pytest.fail('the prefect CLI is not installed beside this interpreter: run `uv sync --group dev`')
    root = Path(tempfile.mkdtemp(prefix='ask-user-prefect-'))
    port = free_port()
    env = unmeasured(prefect_server_env(root))
    env.pop('PREFECT_API_URL', None)
    env['PREFECT_API_DATABASE_CONNECTION_URL'] = f'sqlite+aiosqlite:///{root / "prefect.db"}'
    command = [str(binary), 'server', 'start', '--host', '127.0.0.1', '--port', str(port), '--no-ui', '--analytics-off']
    log = (root / 'server.log').open('wb')
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=root, env=env)
    url = f'http://127.0.0.1:{port}/api'
    try:
        deadline = time.monotonic() + WAIT * 2  # migrations of a new database come first
        while True:
            if server.poll() is not None:
                pytest.fail(
                    f'the Prefect server exited with {server.returncode}:\n{(root / "server.log").read_text()[-3000:]}'
                )
            try:
                if httpx.get(f'{url}/health', timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass  # not listening yet: each probe is a connect attempt with its own timeout
            if time.monotonic() > deadline:
                pytest.fail(
                    f'the Prefect server did not serve within {WAIT * 2:.0f} s:\n{(root / "server.log").read_text()[-3000:]}'
                )
            time.sleep(0.2)
        yield url
    finally:
        server.kill()
        server.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)
