"""The notification ledger: which item was told to whom on which channel, so that a restart neither loses a
notification nor sends it again.

A row is `(key, recipient, channel)`. It is written `sending` just before the channel is called, `sent` (with the
channel's reference to its message) once it returned, `failed` once every retry failed, and `closed` once the item
finished and the channel was told. After a crash, a `sending` row is sent again: the one window where a message
can go twice is between the channel accepting it and the ledger recording that (an outbox is at least once).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

__all__ = ('LedgerEntry', 'NotificationLedger', 'MemoryLedger', 'SQLiteLedger', 'EntryState')

EntryState = Literal['sending', 'sent', 'failed', 'closed']
"""Where a notification stands: being sent, sent, given up on, or sent and since updated as finished."""


@dataclass(frozen=True)
class LedgerEntry:
    """One item told (or being told) to one recipient on one channel."""

    key: str
    """The item's key."""

    kind: Literal['question', 'approval']
    """Whether the item is a question or an approval."""

    recipient: str
    """The recipient's name."""

    channel: str
    """The channel's name."""

    state: EntryState
    """Where it stands."""

    ref: str | None = None
    """The channel's reference to the message it sent (a Slack channel and timestamp), to update it later."""

    attempts: int = 0
    """How many times the channel was called for it."""

    reason: str = ''
    """Why the last attempt failed, when it did (filtered: printable, never a secret)."""

    headline: str = ''
    """The item's headline when it was told, for the message that says it finished."""

    updated_at: float = 0.0
    """When the entry last changed, in epoch seconds."""


class NotificationLedger(Protocol):
    """Where a `Notifier` records what it told whom: `MemoryLedger` for one process, `SQLiteLedger` to survive it."""

    async def get(self, key: str, recipient: str, channel: str) -> LedgerEntry | None:
        """The entry of this item, recipient and channel, or `None` when it was never told."""
        ...

    async def put(self, entries: Iterable[LedgerEntry]) -> None:
        """Write these entries (replacing those of the same key, recipient and channel), all at once."""
        ...

    async def of_item(self, key: str) -> Sequence[LedgerEntry]:
        """Every entry of the item `key`."""
        ...

    async def in_state(self, *states: EntryState) -> Sequence[LedgerEntry]:
        """Every entry in one of `states`: the `sent` ones still open, the `sending` ones a crash interrupted."""
        ...

    async def prune(self, before: float) -> int:
        """Forget the `closed` and `failed` entries last changed before `before`; how many were forgotten."""
        ...


class MemoryLedger:
    """A ledger in this process's memory: what a restart forgets, it sends again."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], LedgerEntry] = {}

    async def get(self, key: str, recipient: str, channel: str) -> LedgerEntry | None:
        """The entry, or `None`."""
        return self._entries.get((key, recipient, channel))

    async def put(self, entries: Iterable[LedgerEntry]) -> None:
        """Write the entries."""
        for entry in entries:
            self._entries[entry.key, entry.recipient, entry.channel] = _stamped(entry)

    async def of_item(self, key: str) -> Sequence[LedgerEntry]:
        """The item's entries."""
        return [entry for entry in self._entries.values() if entry.key == key]

    async def in_state(self, *states: EntryState) -> Sequence[LedgerEntry]:
        """The entries in these states."""
        return [entry for entry in self._entries.values() if entry.state in states]

    async def prune(self, before: float) -> int:
        """Forget old finished entries."""
        old = [k for k, e in self._entries.items() if e.state in ('closed', 'failed') and e.updated_at < before]
        for k in old:
            del self._entries[k]
        return len(old)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS ask_user_notifications (
    key TEXT NOT NULL,
    recipient TEXT NOT NULL,
    channel TEXT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    ref TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    headline TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL,
    PRIMARY KEY (key, recipient, channel)
);
CREATE INDEX IF NOT EXISTS ask_user_notifications_state ON ask_user_notifications (state);
"""

_COLUMNS = 'key, kind, recipient, channel, state, ref, attempts, reason, headline, updated_at'


class SQLiteLedger:
    """A ledger in a SQLite file (created with mode 0600): what a `Notifier` told survives kill -9 and restarts.

    Each write is committed before `put` returns (WAL, synchronous FULL). One file serves one notifier at a time
    per store; the standard library's `sqlite3` is all it needs.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        """The SQLite file."""
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch(mode=0o600)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._connection.execute('PRAGMA journal_mode=WAL')
        self._connection.execute('PRAGMA synchronous=FULL')
        self._connection.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f'SQLiteLedger({str(self.path)!r})'

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._connection.close()

    def _read(self, sql: str, parameters: Sequence[object]) -> list[LedgerEntry]:
        with self._lock:
            rows = self._connection.execute(sql, parameters).fetchall()
        return [
            LedgerEntry(
                key=row[0],
                kind=row[1],
                recipient=row[2],
                channel=row[3],
                state=row[4],
                ref=row[5],
                attempts=row[6],
                reason=row[7],
                headline=row[8],
                updated_at=row[9],
            )
            for row in rows
        ]

    async def get(self, key: str, recipient: str, channel: str) -> LedgerEntry | None:
        """The entry, or `None`."""
        found = await asyncio.to_thread(
            self._read,
            f'SELECT {_COLUMNS} FROM ask_user_notifications WHERE key = ? AND recipient = ? AND channel = ?',
            (key, recipient, channel),
        )
        return found[0] if found else None

    def _put(self, entries: list[LedgerEntry]) -> None:
        with self._lock:
            self._connection.execute('BEGIN IMMEDIATE')
            try:
                self._connection.executemany(
                    f'INSERT OR REPLACE INTO ask_user_notifications ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                    [_row(e) for e in entries],
                )
            except BaseException:
                self._connection.execute('ROLLBACK')
                raise
            self._connection.execute('COMMIT')

    async def put(self, entries: Iterable[LedgerEntry]) -> None:
        """Write the entries in one transaction."""
        stamped = [_stamped(entry) for entry in entries]
        if stamped:
            await asyncio.to_thread(self._put, stamped)

    async def of_item(self, key: str) -> Sequence[LedgerEntry]:
        """The item's entries."""
        return await asyncio.to_thread(
            self._read, f'SELECT {_COLUMNS} FROM ask_user_notifications WHERE key = ?', (key,)
        )

    async def in_state(self, *states: EntryState) -> Sequence[LedgerEntry]:
        """The entries in these states."""
        marks = ', '.join('?' for _ in states)
        return await asyncio.to_thread(
            self._read, f'SELECT {_COLUMNS} FROM ask_user_notifications WHERE state IN ({marks})', states
        )

    def _prune(self, before: float) -> int:
        with self._lock:
            cursor = self._connection.execute(
                "DELETE FROM ask_user_notifications WHERE state IN ('closed', 'failed') AND updated_at < ?", (before,)
            )
            return cursor.rowcount

    async def prune(self, before: float) -> int:
        """Forget old finished entries."""
        return await asyncio.to_thread(self._prune, before)


def _stamped(entry: LedgerEntry) -> LedgerEntry:
    return replace(entry, updated_at=time.time())


def _row(e: LedgerEntry) -> tuple[object, ...]:
    return (e.key, e.kind, e.recipient, e.channel, e.state, e.ref, e.attempts, e.reason, e.headline, e.updated_at)
