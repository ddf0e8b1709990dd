"""Notifications over Temporal: a worker killed with -9 while the question waits, and the workflow replayed by the
next worker, tell the person once; a notifier restarted on its ledger tells nobody again; the message is updated
when the answer comes. On the real Temporal dev server, with worker processes killed for real.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporal_support import AnsweredAskWorkflow
from temporal_testing import ANSWER, events_delivered, finished_once, start_run, told, waiting_question
from temporalio.client import Client
from waits import wait_until

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
from pydantic_ai_ask_user.temporal import TemporalQuestionStore, answer_question

pytestmark = pytest.mark.anyio


@dataclass
class Recording:
    """A channel that records what it was given (only `keys`: the namespace may hold other tests' questions)."""

    keys: set[str]
    name: str = 'record'
    sent: list[str] = field(default_factory=list[str])
    finished_as: list[str] = field(default_factory=list[str])

    def reaches(self, recipient: Recipient) -> bool:
        return True

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        self.sent.extend(item.key for item in items if item.key in self.keys)
        return {item.key: item.key for item in items}

    async def finished(self, entry: LedgerEntry, finished: Finished) -> None:
        if finished.key in self.keys:
            self.finished_as.append(finished.outcome)


def _notifier(client: Client, channel: Recording, ledger: Path) -> Notifier:
    store = TemporalQuestionStore(client=client)
    store.events_poll_seconds = 0.2
    return Notifier(
        store,
        channels=[channel],
        directory=StaticDirectory([Recipient('alice')]),
        links=InboxLinks('http://127.0.0.1:8000/'),
        ledger=SQLiteLedger(ledger),
        gather_seconds=0,
        digest_seconds=0,
        resync_seconds=0.5,
    )


async def test_a_worker_killed_while_the_question_waits_and_replayed_tells_the_person_once(
    client: Client, start_worker: Any, tmp_path: Path
) -> None:
    first = start_worker()
    handle = await start_run(client, start_worker.queue, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    channel = Recording({request.key})
    ledger = tmp_path / 'notified.sqlite'
    async with anyio.create_task_group() as group:
        notifier = _notifier(client, channel, ledger)
        group.start_soon(notifier.run)
        await wait_until(lambda: channel.sent, 'alice to be told')
        await events_delivered(handle, tmp_path, request.key)
        first.kill()
        # A notifier restarted on the same ledger while no worker runs: it reads the waiting question, tells nobody.
        group.cancel_scope.cancel()
    again = Recording({request.key})
    async with anyio.create_task_group() as group:
        notifier = _notifier(client, again, ledger)
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        start_worker()  # the next worker replays the workflow's history
        assert await waiting_question(handle) == request
        await answer_question(handle, request, ANSWER)
        assert (await handle.result()).output == told(request, ANSWER)
        await wait_until(lambda: again.finished_as, 'the message to be updated')
        group.cancel_scope.cancel()
    assert channel.sent == [request.key]
    assert again.sent == []
    assert again.finished_as == ['answered']
    await finished_once(client, handle)
