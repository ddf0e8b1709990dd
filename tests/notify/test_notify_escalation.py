"""An escalation tells its new addressees: the hub's escalation is a hand-off, whose events a `Notifier` reads as it
reads a forward's, so the person on call hears of a question nobody answered in time, and the first addressee is not
told twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import anyio
import pytest
from ask_user_support import ask_one, wait_until

from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.notify import (
    Finished,
    InboxLinks,
    LedgerEntry,
    Notifier,
    Recipient,
    StaticDirectory,
    WaitingItem,
)
from pydantic_ai_ask_user.store import Escalation

pytestmark = pytest.mark.anyio

ALICE = Recipient('alice', email='alice@example.com')
BOB = Recipient('bob', email='bob@example.com', groups={'team:oncall'})


@dataclass
class Recording:
    """A channel that records whom it told of which items."""

    name: str = 'email'
    sent: list[tuple[str, tuple[str, ...]]] = field(default_factory=list[tuple[str, tuple[str, ...]]])

    def reaches(self, recipient: Recipient) -> bool:
        return recipient.address(self.name) is not None

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        self.sent.append((recipient.name, tuple(item.key for item in items)))
        return {item.key: f'{recipient.name}:{item.key}' for item in items}

    async def finished(self, entry: LedgerEntry, finished: Finished) -> None:
        return None

    def told(self, name: str) -> list[str]:
        return [key for who, keys in self.sent if who == name for key in keys]


async def test_an_escalation_tells_the_person_on_call_and_nobody_twice() -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = Notifier(
        hub,
        channels=[channel],
        directory=StaticDirectory([ALICE, BOB]),
        links=InboxLinks('https://inbox.example/', key=b'k' * 32),
        gather_seconds=0.05,
        digest_seconds=0.5,
    )
    request = replace(ask_one(), id='late', run_id=None, audience=('alice',))
    request = replace(request, escalate=(Escalation(after=0.3, to='team:oncall'),))
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, request)
        await wait_until(lambda: channel.told('alice') == [request.key], 'alice to be told')
        await wait_until(lambda: channel.told('bob') == [request.key], 'bob (on call) to be told of the escalation')
        await notifier.drain()
        assert channel.told('alice') == [request.key]
        assert len(await hub.handoffs(request.key)) == 1
        group.cancel_scope.cancel()
