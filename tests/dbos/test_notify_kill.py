"""Notifications are durable: kill -9 the notifier (mid-send, after sending) or the worker (after publishing), and
each person is told once, never lost; the one window where a message goes twice is the documented one.

A notifier runs as a process of its own (`notifier_process.py`) over `DBOSQuestionStore`, with a `SQLiteLedger`.
Each test runs on SQLite and on PostgreSQL (the `database_url` fixture).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio
import pytest
from durable_support import Worker, dbos_workflows, pending_of, pick, publish_question
from waits import wait_for

from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import claim_answer
from pydantic_ai_ask_user.notify import SQLiteLedger

pytestmark = pytest.mark.anyio

SCRIPT = Path(__file__).with_name('notifier_process.py')
"""The notifier's program."""


@dataclass
class NotifierProcess:
    """`notifier_process.py` on a database, with its ledger and its record of what it sent in `directory`."""

    database_url: str
    directory: Path
    process: subprocess.Popen[bytes] | None = field(default=None)
    starts: int = 0

    @property
    def out(self) -> Path:
        return self.directory / 'sent.txt'

    @property
    def ledger(self) -> Path:
        return self.directory / 'ledger.sqlite'

    def marker(self, name: str) -> Path:
        return self.directory / f'{name}-{self.starts}'

    def start(self, *, block: str | None = None) -> None:
        self.starts += 1
        command = [sys.executable, str(SCRIPT), '--db', self.database_url, '--ledger', str(self.ledger)]
        command += ['--out', str(self.out), '--synced', str(self.marker('synced'))]
        if block is not None:
            command += [f'--block-{block}', str(self.marker('block'))]
        log = (self.directory / f'notifier-{self.starts}.log').open('wb')
        self.process = subprocess.Popen(command, cwd=SCRIPT.parent, stdout=log, stderr=subprocess.STDOUT)

    def reached(self) -> Path:
        """The file the blocked channel writes once it stopped."""
        block = self.marker('block')
        return block.with_name(block.name + '.reached')

    def wait_file(self, name: str) -> None:
        path = self.reached() if name == 'block.reached' else self.marker(name)
        wait_for(lambda: path.exists() or self.died(), f'the notifier to reach {path.name}')
        assert path.exists(), self.log()

    def died(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def kill(self) -> None:
        assert self.process is not None
        assert self.process.poll() is None, self.log()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []

    def sent(self) -> list[str]:
        return [line for line in self.lines() if line.startswith('sent ')]

    def log(self) -> str:
        return '\n'.join(path.read_text(errors='replace') for path in sorted(self.directory.glob('notifier-*.log')))


@pytest.fixture
def notifier(database_url: str, tmp_path: Path) -> Iterator[NotifierProcess]:
    made = NotifierProcess(database_url, tmp_path / 'notifier')
    made.directory.mkdir()
    try:
        yield made
    finally:
        if made.process is not None and made.process.poll() is None:
            made.process.kill()
            made.process.wait()


async def _state(notifier: NotifierProcess, key: str) -> str | None:
    ledger = SQLiteLedger(notifier.ledger)
    try:
        entry = await ledger.get(key, 'alice', 'record')
    finally:
        ledger.close()
    return None if entry is None else entry.state


async def test_a_notifier_killed_mid_send_tells_on_restart_and_one_killed_after_sending_tells_nobody_again(
    notifier: NotifierProcess, database_url: str
) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    publish_question(database_url, 'q1')
    # Killed while the mail server hangs: recorded `sending`, nothing delivered.
    notifier.start(block='before')
    await anyio.to_thread.run_sync(notifier.wait_file, 'block.reached')
    assert await _state(notifier, 'q1') == 'sending'
    notifier.kill()
    assert notifier.sent() == []
    # Started again: the interrupted message is sent, once.
    notifier.start()
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: notifier.sent() or notifier.died(), 'alice to be told'))
    assert notifier.sent() == ['sent alice q1'], notifier.log()
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: _sync_state(notifier, 'q1') == 'sent', 'sent recorded'))
    notifier.kill()
    # Killed after sending and recording it: a third start reads every waiting item and tells nobody again.
    notifier.start()
    await anyio.to_thread.run_sync(notifier.wait_file, 'synced')
    # Answered as a run's own store records it (this database has no DBOS runtime to resume a run).
    with shared_engine(database_url).begin() as conn:
        assert claim_answer(conn, 'q1', encode_response(replace(pick('SQLite'), answered_by='alice')), 'alice')
    await anyio.to_thread.run_sync(
        lambda: wait_for(lambda: 'finished q1 answered alice' in notifier.lines(), 'the message to say answered')
    )
    assert notifier.sent() == ['sent alice q1']
    # The ledger closes the entry after the channel updated its message: waited for, not read at once.
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: _sync_state(notifier, 'q1') == 'closed', 'closed recorded'))


async def test_a_notifier_killed_between_delivering_and_recording_delivers_again_never_loses_it(
    notifier: NotifierProcess, database_url: str
) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    publish_question(database_url, 'q1')
    notifier.start(block='after')
    await anyio.to_thread.run_sync(notifier.wait_file, 'block.reached')
    assert notifier.sent() == ['sent alice q1']
    assert await _state(notifier, 'q1') == 'sending'
    notifier.kill()
    # The documented window of an outbox: delivered, not yet recorded, so delivered again; then recorded.
    notifier.start()
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: _sync_state(notifier, 'q1') == 'sent', 'sent recorded'))
    assert notifier.sent() == ['sent alice q1', 'sent alice q1']


async def test_a_worker_killed_after_publishing_and_replayed_is_told_once(
    notifier: NotifierProcess, worker: Worker, database_url: str
) -> None:
    worker.crash = 'after-publish'
    worker.start()
    await anyio.to_thread.run_sync(worker.wait_crashed)
    notifier.start()
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: notifier.sent() or notifier.died(), 'alice to be told'))
    (told,) = notifier.sent()
    # The worker comes back and its workflow replays: the same question, not a second message.
    worker.crash = None
    worker.start(resume=True)
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        (record,) = await pending_of(store, 1, worker)
        assert told == f'sent alice {record.key}'
        await store.respond(record.key, replace(pick('SQLite'), answered_by='alice'))
        await anyio.to_thread.run_sync(worker.wait_finished)
    await anyio.to_thread.run_sync(
        lambda: wait_for(
            lambda: f'finished {record.key} answered alice' in notifier.lines(), 'the message to say answered'
        )
    )
    assert notifier.sent() == [told]


def _sync_state(notifier: NotifierProcess, key: str) -> str | None:
    if not notifier.ledger.exists():
        return None
    import sqlite3

    with sqlite3.connect(notifier.ledger) as connection:
        row = connection.execute(
            "SELECT state FROM ask_user_notifications WHERE key = ? AND recipient = 'alice'", (key,)
        ).fetchone()
    return None if row is None else str(row[0])


if os.name != 'posix':  # pragma: no cover
    pytestmark = [pytest.mark.skip(reason='kill -9 is POSIX')]
