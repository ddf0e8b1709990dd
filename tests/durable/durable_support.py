"""Helpers and fixtures for the durable tests: a private PostgreSQL server, fresh databases, worker processes."""

from __future__ import annotations

import glob
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import waits

WORKER = Path(__file__).with_name('worker.py')
"""The worker program the tests run, kill and restart."""

WAIT_SECONDS = waits.WAIT
"""How long a test waits for a condition before failing; generous, the machine is shared and noisy."""


def wait_for(condition: Callable[[], Any], what: str, timeout: float = WAIT_SECONDS) -> Any:
    """Poll `condition` until it returns something truthy, and return it."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout:.0f}s waiting for {what}')
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


def pg_bin() -> Path:
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    if not found:
        raise RuntimeError('PostgreSQL is not installed; run scripts/bootstrap.sh test (apt-get install postgresql)')
    return Path(found[-1]).parent


def as_postgres(command: list[str]) -> list[str]:
    # initdb refuses to run as root: run the server as the unprivileged `postgres` user then.
    return ['runuser', '-u', 'postgres', '--', *command] if os.geteuid() == 0 else command


_database_numbers = itertools.count()


def fresh_postgres_database(server: str) -> str:
    """A new, empty database on `server`, as a URL."""
    name = f'ask_user_{os.getpid()}_{next(_database_numbers)}'
    with psycopg.connect(f'{server}/postgres', autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE {name}')  # pyright: ignore[reportArgumentType]
    return f'{server}/{name}'


@dataclass
class Worker:
    """A worker process running durable agents, which a test can kill with SIGKILL and restart."""

    database_url: str
    directory: Path
    runs: int = 1
    timeout: float | None = None
    answerer: str = 'dbos'
    crash: str | None = None
    call_id: str | None = None
    record_events: bool = False
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    logs: list[Path] = field(default_factory=list[Path])

    @property
    def calls_file(self) -> Path:
        return self.directory / 'calls.txt'

    @property
    def out_file(self) -> Path:
        return self.directory / 'out.txt'

    @property
    def events_file(self) -> Path:
        return self.directory / 'events.jsonl'

    def answered_events(self) -> list[dict[str, Any]]:
        """The `AskUserAnsweredEvent`s of every run so far, as the worker recorded them."""
        if not self.events_file.exists():
            return []
        return [json.loads(line) for line in self.events_file.read_text().splitlines() if line.strip()]

    def start(self, *, resume: bool = False) -> None:
        command = [sys.executable, str(WORKER), '--db', self.database_url, '--calls', str(self.calls_file)]
        command += ['--out', str(self.out_file), '--runs', str(self.runs)]
        if self.timeout is not None:
            command += ['--timeout', str(self.timeout)]
        if resume:
            command.append('--resume')
        command += ['--answerer', self.answerer]
        if self.crash is not None:
            command += ['--crash', self.crash]
        if self.call_id is not None:
            command += ['--call-id', self.call_id]
        if self.record_events:
            command += ['--events', str(self.events_file)]
        self.starts += 1
        log = self.directory / f'worker-{self.starts}.log'
        self.logs.append(log)
        with open(log, 'wb') as handle:
            self.process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, cwd=self.directory)

    def wait_crashed(self, timeout: float = WAIT_SECONDS) -> None:
        """Wait for the worker to kill itself at its crash point."""
        assert self.process is not None
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f'the worker did not crash:\n{self.log_text()}') from None
        assert code == -signal.SIGKILL, f'the worker ended with {code}, not SIGKILL:\n{self.log_text()}'

    def asked(self) -> list[str]:
        """The request ids the plain answerer was called with, in order (one line per time a person was asked)."""
        path = self.directory / 'asked.txt'
        return path.read_text().splitlines() if path.exists() else []

    def answer_plainly(self, request_id: str, label: str) -> None:
        """What the person picks at the plain answerer's UI."""
        answer = {'answers': [{'header': 'Database', 'selected': [label]}]}
        path = self.directory / f'answer-{request_id}.json'
        temporary = path.with_suffix('.tmp')
        temporary.write_text(json.dumps(answer))
        temporary.replace(path)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def calls(self) -> list[str]:
        return self.calls_file.read_text().splitlines() if self.calls_file.exists() else []

    def outputs(self) -> dict[str, str]:
        if not self.out_file.exists():
            return {}
        lines = [json.loads(line) for line in self.out_file.read_text().splitlines() if line.strip()]
        return {line['run']: line['output'] for line in lines}

    def wait_finished(self, timeout: float = WAIT_SECONDS) -> dict[str, str]:
        assert self.process is not None
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f'the worker did not finish:\n{self.log_text()}') from None
        assert code == 0, f'the worker failed with exit code {code}:\n{self.log_text()}'
        return self.outputs()

    def log_text(self) -> str:
        return '\n'.join(log.read_text(errors='replace')[-3000:] for log in self.logs if log.exists())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
