"""A notifier in a process of its own, over a DBOS store, for the kill -9 tests (`test_notify_kill.py`).

Its channel, `record`, appends `sent <recipient> <key>` to `--out` (synced) for each item it is given, and
`finished <key> <outcome> <by>` when an item it told finished. `--block-before` makes the channel stop for good
before it writes (as a mail server that hangs mid-delivery), `--block-after` after it wrote but before it returns
(the moment between a delivered message and its ledger entry); each writes `<file>.reached` first, so the test
knows where the process stands when it kills it. Once the notifier has read every waiting item, it appends
`synced` to `--synced`.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from worker_support import append_line

from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.notify import (
    Finished,
    InboxLinks,
    LedgerEntry,
    Notifier,
    Recipient,
    SQLiteLedger,
    StaticDirectory,
    WaitingItem,
)


class Record:
    """A channel that writes a line per item told and per item finished."""

    name = 'record'

    def __init__(self, out: Path, block_before: Path | None, block_after: Path | None) -> None:
        self.out = out
        self.block_before = block_before
        self.block_after = block_after

    def reaches(self, recipient: Recipient) -> bool:
        return recipient.address(self.name) is not None

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        if self.block_before is not None:
            await _stop_here(self.block_before)
        for item in items:
            append_line(self.out, f'sent {recipient.name} {item.key}')
        if self.block_after is not None:
            await _stop_here(self.block_after)
        return {item.key: f'{recipient.name}/{item.key}' for item in items}

    async def finished(self, entry: LedgerEntry, finished: Finished) -> None:
        append_line(self.out, f'finished {finished.key} {finished.outcome} {finished.by}')


async def _stop_here(marker: Path) -> None:
    append_line(marker.with_name(marker.name + '.reached'), 'x')
    await asyncio.Event().wait()  # until killed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--db', required=True)
    parser.add_argument('--ledger', required=True, type=Path)
    parser.add_argument('--out', required=True, type=Path)
    parser.add_argument('--synced', required=True, type=Path)
    parser.add_argument('--block-before', type=Path)
    parser.add_argument('--block-after', type=Path)
    arguments = parser.parse_args()
    channel = Record(arguments.out, arguments.block_before, arguments.block_after)
    directory = StaticDirectory([Recipient('alice', addresses={'record': 'alice'})])
    async with DBOSQuestionStore(arguments.db, create_table=False) as store:
        notifier = Notifier(
            store,
            channels=[channel],
            directory=directory,
            links=InboxLinks('http://127.0.0.1:8000/'),
            ledger=SQLiteLedger(arguments.ledger),
            gather_seconds=0,
            digest_seconds=0,
            resync_seconds=0.5,
        )
        running = asyncio.create_task(notifier.run())
        await notifier.wait_synced()
        append_line(arguments.synced, 'synced')
        await running


if __name__ == '__main__':
    asyncio.run(main())
