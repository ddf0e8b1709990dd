"""The `Notifier` over the in-process hub: who is told, once, in digests, retried, updated when finished."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from ask_user_support import ask_one, wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Person
from pydantic_ai_ask_user._action_codes import read_action_code, sign_action_code
from pydantic_ai_ask_user._login_links import read_login_code
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.notify import (
    DeliveryRefused,
    Finished,
    InboxLinks,
    LedgerEntry,
    NotificationFailure,
    Notifier,
    Recipient,
    SQLiteLedger,
    StaticDirectory,
    WaitingItem,
)
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval

pytestmark = pytest.mark.anyio

KEY = b'k' * 32
ALICE = Recipient('alice', email='alice@example.com')
BOB = Recipient('bob', email='bob@example.com', groups={'team:oncall'})
CAROL = Recipient('carol', email='carol@example.com', channels=('slack',))
DIRECTORY = StaticDirectory([ALICE, BOB, CAROL], groups={'team:db': ['alice', 'bob']})


@dataclass
class Recording:
    """A channel that records each message, and fails as told."""

    name: str = 'email'
    sent: list[tuple[str, tuple[str, ...]]] = field(default_factory=list[tuple[str, tuple[str, ...]]])
    updated: list[tuple[str, Finished]] = field(default_factory=list[tuple[str, Finished]])
    failures: list[Exception] = field(default_factory=list[Exception])
    calls: int = 0

    def reaches(self, recipient: Recipient) -> bool:
        return recipient.address(self.name) is not None

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append((recipient.name, tuple(item.key for item in items)))
        return {item.key: f'{recipient.name}:{item.key}' for item in items}

    async def finished(self, entry: LedgerEntry, finished: Finished) -> None:
        self.updated.append((entry.ref or '', finished))

    def told(self, name: str) -> list[str]:
        return [key for who, keys in self.sent if who == name for key in keys]


def _request(name: str, audience: tuple[str, ...] | None) -> AskUserRequest:
    return replace(ask_one(), id=name, run_id=None, audience=audience)


def _answer(request: AskUserRequest, by: str) -> AskUserResponse:
    question = request.questions[0]
    return AskUserResponse(
        answers=(AskUserAnswer(header=question.header, selected=(question.options[0].label,)),), answered_by=by
    )


def _notifier(hub: QuestionHub, channel: Recording, **options: Any) -> Notifier:
    settings: dict[str, Any] = {'gather_seconds': 0.05, 'digest_seconds': 0.5, 'backoff': 0.01} | options
    return Notifier(
        hub, channels=[channel], directory=DIRECTORY, links=InboxLinks('https://inbox.example/', key=KEY), **settings
    )


async def test_each_addressee_is_told_once_and_the_message_updates_when_answered() -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = _notifier(hub, channel)
    first, second = _request('first', ('team:db',)), _request('second', ('bob',))
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, first)
        group.start_soon(hub.ask, second)
        await wait_until(lambda: sorted(channel.told('bob')) == [first.key, second.key], 'bob to be told of both')
        await wait_until(lambda: channel.told('alice') == [first.key], 'alice to be told of the first')
        # Bob's two questions came within gather_seconds of each other: one message, not two.
        # Bob's two came together: one message, or two when the second missed the first's gathering.
        assert 1 <= len([keys for who, keys in channel.sent if who == 'bob']) <= 2
        await hub.respond(first.key, _answer(first, 'bob'))
        await wait_until(lambda: len(channel.updated) == 2, 'both messages about the first to be updated')
        assert {ref for ref, _ in channel.updated} == {f'alice:{first.key}', f'bob:{first.key}'}
        assert {(f.outcome, f.by) for _, f in channel.updated} == {('answered', 'bob')}
        await notifier.sync()  # a resync tells nobody again
        await notifier.drain()
        assert sorted(channel.told('bob')) == sorted([first.key, second.key])
        assert channel.told('carol') == []  # carol wants slack only
        group.cancel_scope.cancel()


async def test_a_burst_is_one_message_per_person() -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = _notifier(hub, channel, gather_seconds=0.3, digest_seconds=60)
    requests = [_request(f'burst{n}', ('alice',)) for n in range(50)]
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        for request in requests:
            group.start_soon(hub.ask, request)
        await wait_until(lambda: len(channel.told('alice')) >= 1, 'alice to be told')
        # The first message goes after gather_seconds; whatever came later waits for the digest, not 49 messages.
        assert len(channel.sent) <= 2
        assert len(channel.sent[0][1]) >= 1
        group.cancel_scope.cancel()
    assert channel.calls == len(channel.sent) <= 2


async def test_a_failing_channel_is_retried_and_a_refusal_is_given_up() -> None:
    hub = QuestionHub()
    channel = Recording(failures=[OSError('connection refused'), TimeoutError('slow')])
    failures: list[NotificationFailure] = []
    notifier = _notifier(hub, channel, on_error=failures.append)
    request = _request('retried', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, request)
        await wait_until(lambda: channel.told('alice') == [request.key], 'alice to be told after two failures')
        assert channel.calls == 3
        entry = await notifier.ledger.get(request.key, 'alice', 'email')
        assert entry is not None
        assert (entry.state, entry.attempts) == ('sent', 3)

        channel.failures.append(DeliveryRefused('550 no such mailbox'))
        refused = _request('refused', ('bob',))
        group.start_soon(hub.ask, refused)
        await wait_until(lambda: failures, 'the refusal to be given up')
        assert failures[0].recipient == 'bob'
        assert failures[0].attempts == 1
        assert '550 no such mailbox' in failures[0].reason
        entry = await notifier.ledger.get(refused.key, 'bob', 'email')
        assert entry is not None
        assert entry.state == 'failed'
        group.cancel_scope.cancel()


async def test_a_restart_with_the_ledger_tells_nobody_twice_and_resends_an_interrupted_send(tmp_path: Path) -> None:
    hub = QuestionHub()
    ledger_file = tmp_path / 'notified.sqlite'
    told, interrupted = _request('told', ('alice',)), _request('interrupted', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, told)
        group.start_soon(hub.ask, interrupted)
        await wait_until(lambda: len(hub) == 2, 'both to wait')
        first = Recording()
        notifier = _notifier(hub, first, ledger=SQLiteLedger(ledger_file))
        await notifier.sync()
        await notifier.drain()
        assert sorted(first.told('alice')) == sorted([told.key, interrupted.key])
        # As if the process died between calling the channel and recording it: the entry stays `sending`.
        ledger = SQLiteLedger(ledger_file)
        entry = await ledger.get(interrupted.key, 'alice', 'email')
        assert entry is not None
        await ledger.put([replace(entry, state='sending')])

        again = Recording()
        restarted = _notifier(hub, again, ledger=SQLiteLedger(ledger_file))
        await restarted.sync()
        await restarted.drain()
        assert again.sent == [('alice', (interrupted.key,))]
        group.cancel_scope.cancel()


async def test_a_forward_tells_the_new_addressees_and_only_them() -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = _notifier(hub, channel)
    request = _request('handed', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, request)
        await wait_until(lambda: channel.told('alice') == [request.key], 'alice to be told')
        await hub.forward(request.key, ['team:oncall'], by='alice')
        await wait_until(lambda: channel.told('bob') == [request.key], 'bob (on call) to be told')
        await notifier.drain()
        assert channel.told('alice') == [request.key]
        assert channel.updated == []  # still waiting: nothing finished
        group.cancel_scope.cancel()


async def test_unaddressed_items_go_to_everyone_listed_and_approvals_are_told() -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = Notifier(
        hub,
        channels=[channel],
        directory=StaticDirectory([ALICE, BOB], everyone=['bob']),
        links=InboxLinks('https://inbox.example/'),
        gather_seconds=0,
        digest_seconds=0,
    )
    approval = PendingApproval(token='t1', tool_call_id='c1', tool_name='refund', args={'amount': 5}, run_id='r1')
    request = _request('anyone', None)
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, request)
        group.start_soon(hub.ask_wait, 't1', [], [approval])
        await wait_until(lambda: sorted(channel.told('bob')) == sorted([request.key, approval.key]), 'bob told')
        assert channel.told('alice') == []
        await hub.decide(approval.key, ApprovalDecision(approved=True, decided_by='bob'))
        await wait_until(lambda: len(channel.updated) == 1, 'the approval message to be updated')
        assert channel.updated[0][1].kind == 'approval'
        group.cancel_scope.cancel()


def test_inbox_links_sign_the_recipient_in_and_actions_read_back_only_as_actions() -> None:
    links = InboxLinks('https://inbox.example/team', key=KEY)
    request = replace(_request('linked', ('alice',)), deadline=time.time() + 600)
    item = WaitingItem.of_question(request)
    page = links.page(ALICE, item)
    assert page.startswith('https://inbox.example/team/login?code=')
    assert 'next=requests%2F' in page
    login_code = page.split('code=')[1].split('&')[0]
    login = read_login_code(KEY, _unquote(login_code), now=time.time())
    assert login is not None
    assert login.person == Person('alice')
    assert login.expires_at <= request.deadline + 1
    act = links.action(ALICE, item, 'answer', question=0, option=1)
    assert act is not None
    assert act.startswith('https://inbox.example/team/act?code=')
    code = _unquote(act.split('code=')[1])
    action = read_action_code(KEY, code, now=time.time())
    assert action is not None
    assert (action.key, action.act, action.question, action.option, action.person.name) == (
        request.key,
        'answer',
        0,
        1,
        'alice',
    )
    assert read_action_code(KEY, code, now=request.deadline + 1) is None  # expired with the question
    assert read_action_code(b'x' * 32, code, now=time.time()) is None  # another key
    assert read_action_code(KEY, _unquote(login_code), now=time.time()) is None  # a login code is no action
    assert read_login_code(KEY, code, now=time.time()) is None  # and an action code is no login
    tampered = code.replace(code[2], 'A' if code[2] != 'A' else 'B', 1)
    assert read_action_code(KEY, tampered, now=time.time()) is None
    assert InboxLinks('https://inbox.example').action(ALICE, item, 'answer', question=0, option=0) is None
    with pytest.raises(ValueError, match='approval'):
        sign_action_code(KEY, Person('alice'), kind='question', item_key='k', act='approve', expires_at=time.time())
    with pytest.raises(ValueError, match='absolute'):
        InboxLinks('/relative')


def _unquote(text: str) -> str:
    from urllib.parse import unquote

    return unquote(text)


async def test_an_item_seen_by_the_event_and_by_every_resync_at_once_is_told_once() -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = _notifier(hub, channel, gather_seconds=0)
    request = _request('seen-often', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_until(lambda: len(hub) == 1, 'the question to wait')
        item = WaitingItem.of_question(request)
        for _ in range(20):
            group.start_soon(notifier.waiting, item)
            group.start_soon(notifier.sync)
        await wait_until(lambda: channel.sent, 'alice to be told')
        await notifier.drain()
        for _ in range(5):
            await notifier.sync()
        await notifier.drain()
        assert channel.sent == [('alice', (request.key,))]
        group.cancel_scope.cancel()


async def test_a_store_that_cannot_be_read_for_a_while_stops_nothing(caplog: pytest.LogCaptureFixture) -> None:
    hub = QuestionHub()
    channel = Recording()
    notifier = _notifier(hub, channel, resync_seconds=0.05)
    broken = [True]
    real = hub.pending_page

    async def flaky(**arguments: Any) -> Any:
        if broken[0]:
            raise ConnectionError('the database is restarting')
        return await real(**arguments)

    hub.pending_page = flaky  # type: ignore[method-assign]
    request = _request('later', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        group.start_soon(notifier.run)
        await wait_until(lambda: 'reading the waiting items failed' in caplog.text, 'the failure to be logged')
        broken[0] = False
        await wait_until(lambda: channel.told('alice') == [request.key], 'alice to be told once it can be read')
        group.cancel_scope.cancel()


async def test_a_directory_that_fails_for_one_item_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    hub = QuestionHub()
    channel = Recording()

    def directory(audience: tuple[str, ...] | None) -> list[Recipient]:
        if audience == ('nobody-known',):
            raise LookupError('the user directory is down for this team')
        return [ALICE]

    notifier = Notifier(
        hub,
        channels=[channel],
        directory=directory,
        links=InboxLinks('https://inbox.example/'),
        gather_seconds=0,
        digest_seconds=0,
    )
    failing, fine = _request('failing', ('nobody-known',)), _request('fine', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, failing)
        await wait_until(lambda: 'could not tell of' in caplog.text, 'the failure to be logged')
        group.start_soon(hub.ask, fine)
        await wait_until(lambda: channel.told('alice') == [fine.key], 'alice to be told of the other one')
        group.cancel_scope.cancel()


@dataclass
class Held(Recording):
    """A channel whose sends wait until the test lets them go: the message is on its way meanwhile."""

    started: anyio.Event = field(default_factory=anyio.Event)
    go: anyio.Event = field(default_factory=anyio.Event)

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        self.started.set()
        await self.go.wait()
        return await super().send(recipient, items, links)


async def test_an_item_that_finishes_while_its_message_is_on_its_way_updates_the_message_once_it_is_sent() -> None:
    # Seen under load with Slack: the answer's event came between the channel's send and the ledger's `sent`, found
    # no message to update, closed the entry, and the message kept its buttons. Now the delivery updates it.
    hub = QuestionHub()
    channel = Held()
    notifier = _notifier(hub, channel)
    request = _request('on-its-way', ('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, request)
        with anyio.fail_after(60):
            await channel.started.wait()
        await hub.respond(request.key, _answer(request, 'bob'))
        # The notifier has taken the answer's event (its own record of what finished) while the send still waits.
        await wait_until(lambda: request.key in notifier._finished, 'the notifier to see the answer')  # pyright: ignore[reportPrivateUsage]
        channel.go.set()
        await wait_until(lambda: len(channel.updated) == 1, 'the message to be updated once it was sent')
        [(ref, finished)] = channel.updated
        assert (ref, finished.key, finished.outcome, finished.by) == (
            f'alice:{request.key}',
            request.key,
            'answered',
            'bob',
        )
        await notifier.drain()
        assert len(channel.updated) == 1
        assert [entry.state for entry in await notifier.ledger.of_item(request.key)] == ['closed']
        group.cancel_scope.cancel()
