"""`Notifier`: watches a store and tells each waiting item's people on their channels, once, in digests.

It runs beside the store, never inside a run or a workflow: a run publishes its question and waits, and the notifier
(in the inbox process, or a process of its own) reads the store's events and, every `resync_seconds`, its waiting
items. So a slow or dead mail server or Slack delays no run and fails none, a workflow's replay sends nothing, and
what a crashed notifier had not yet recorded as sent in its ledger is sent when it starts again.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from pydantic_ai_ask_user._history import HistoryStore
from pydantic_ai_ask_user._question_store import (
    ApprovalStore,
    QuestionStore,
    StoreError,
    StoreEvent,
    page_approvals,
    page_pending,
)
from pydantic_ai_ask_user._text import printable

from ._items import Finished, Recipient, WaitingItem
from ._ledger import EntryState, LedgerEntry, MemoryLedger, NotificationLedger
from ._links import InboxLinks

__all__ = (
    'Channel',
    'UpdatingChannel',
    'ReceivingChannel',
    'DeliveryRefused',
    'Directory',
    'StaticDirectory',
    'NotificationFailure',
    'Notifier',
)

logger = logging.getLogger('pydantic_ai_ask_user.notify')
"""Where failed deliveries are logged (at WARNING)."""

_PAGE = 200
"""How many waiting items a resync reads per page."""

_NOT_HANDLED = ('',)
"""What `_handled` gives for an item this notifier has not handled: no audience is this (names are never empty)."""

_REMEMBER_FINISHED = 10_000
"""How many finished keys the notifier remembers, so as not to tell anyone of an item that just finished."""


class DeliveryRefused(Exception):
    """Raised by a channel when retrying cannot help (an address the server refuses, a revoked token)."""


@runtime_checkable
class Channel(Protocol):
    """A way to reach people: e-mail, Slack, a chat app through Apprise, or your own.

    `send` tells one recipient of one item or of several (a digest) in one message, and returns the channel's
    reference to the message for each item it may update later (or nothing). It raises to fail: `DeliveryRefused`
    is given up at once, anything else is retried with backoff by the `Notifier`.
    """

    @property
    def name(self) -> str:
        """The channel's name, as a `Recipient.channels` preference names it: `email`, `slack`, ..."""
        ...

    def reaches(self, recipient: Recipient) -> bool:
        """Whether this channel has an address for `recipient`."""
        ...

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        """Tell `recipient` of `items` (one, or several as a digest) in one message; references by item key."""
        ...


@runtime_checkable
class UpdatingChannel(Channel, Protocol):
    """A channel that can update a message it sent once its item finished ("answered by alice")."""

    async def finished(self, entry: LedgerEntry, finished: Finished) -> None:
        """Update the message `entry.ref` refers to: its item finished as `finished` says."""
        ...


@runtime_checkable
class ReceivingChannel(Channel, Protocol):
    """A channel people answer on (Slack's buttons): it has an HTTP endpoint that records what they do.

    `ask-user inbox --notify` mounts each one's `endpoint(store)` at `notify/<name>` under the inbox (Slack's
    Request URL is then `https://<inbox>/notify/slack`); an application mounts it where it likes.
    """

    def endpoint(self, store: QuestionStore) -> Callable[..., Awaitable[None]]:
        """An ASGI app that receives the channel's callbacks and records answers and decisions in `store`."""
        ...


@runtime_checkable
class Directory(Protocol):
    """Who the names of an audience are, with their addresses and preferences: your user directory's hook."""

    async def recipients(self, audience: tuple[str, ...] | None) -> Sequence[Recipient]:
        """The people to tell of an item addressed to `audience` (names of people and groups; `None`: anyone)."""
        ...


@dataclass(frozen=True)
class StaticDirectory:
    """A directory written out: the people, and who is in each group (besides the groups each person lists).

    An item addressed to nobody in particular (`audience=None`) goes to `everyone` (names), or, when that is `None`,
    to every person listed.
    """

    people: Sequence[Recipient]
    """Everyone who may be told, with their addresses."""

    groups: Mapping[str, Collection[str]] = field(default_factory=dict[str, Collection[str]])
    """Group name -> the names of its members, beside the groups each `Recipient` says they are in."""

    everyone: Collection[str] | None = None
    """Who is told of unaddressed items; `None` for every person listed."""

    _reached: dict[str, list[Recipient]] = field(
        init=False, repr=False, compare=False, default_factory=dict[str, list[Recipient]]
    )
    """Each name (a person's, a group's) -> the people it reaches, made once from the fields above."""

    _order: dict[str, int] = field(init=False, repr=False, compare=False, default_factory=dict[str, int])
    """Each person's place in `people`."""

    def __post_init__(self) -> None:
        # Indexed once: a name or a group finds its people in one look, however many are listed.
        reached: dict[str, list[Recipient]] = {}
        for person in self.people:
            for name in person.person.names:
                reached.setdefault(name, []).append(person)
        by_name = {person.name: person for person in self.people}
        for group, members in self.groups.items():
            reached.setdefault(group, []).extend(by_name[name] for name in members if name in by_name)
        object.__setattr__(self, '_reached', reached)
        object.__setattr__(self, '_order', {person.name: index for index, person in enumerate(self.people)})

    async def recipients(self, audience: tuple[str, ...] | None) -> Sequence[Recipient]:
        """The people `audience` reaches, in the order they are listed."""
        if audience is None:
            return [p for p in self.people if self.everyone is None or p.name in self.everyone]
        reached: dict[str, list[Recipient]] = self._reached
        order: dict[str, int] = self._order
        found = {person.name: person for name in audience for person in reached.get(name, ())}
        return sorted(found.values(), key=lambda person: order[person.name])


@dataclass(frozen=True)
class NotificationFailure:
    """A message that was given up on, as logged and handed to `Notifier(on_error=...)`."""

    channel: str
    """The channel's name."""

    recipient: str
    """The recipient's name."""

    keys: tuple[str, ...]
    """The items the message was about."""

    attempts: int
    """How many times the channel was called."""

    reason: str
    """What went wrong last (filtered with `printable`)."""


@dataclass
class _Outbox:
    """The messages waiting to go to one recipient on one channel: the digest being gathered."""

    recipient: Recipient
    channel: Channel
    items: dict[str, WaitingItem] = field(default_factory=dict[str, WaitingItem])
    sending: set[str] = field(default_factory=set[str])
    """The keys of the message being sent now: recorded `sending` in the ledger, but in flight, not interrupted."""
    last_sent: float = float('-inf')
    task: asyncio.Task[None] | None = None


DirectoryHook = Callable[[tuple[str, ...] | None], Awaitable[Sequence[Recipient]] | Sequence[Recipient]]
"""A directory as a plain function (sync or async) of the audience."""


class Notifier:
    """Tells the people each waiting item of `store` is addressed to, on the `channels` that reach them.

    - **Who.** `directory` (a `Directory`, or a function of the audience) turns an item's audience into
      `Recipient`s with their addresses and preferred channels. A hand-off (`forward`) tells the new addressees.
    - **Once.** `ledger` records each (item, recipient, channel) as it is sent: `SQLiteLedger(path)` survives kill -9
      and restarts (by default a `MemoryLedger`, which forgets on restart and sends again).
    - **Digests.** At most one message per recipient and channel every `digest_seconds`: the first item after a quiet
      spell waits `gather_seconds` for others that come with it, later ones are gathered into one message.
    - **Failures.** A failed `send` is retried `retries` times, `backoff` seconds first and twice as long each next
      time, while the item waits; then it is logged (`pydantic_ai_ask_user.notify`) and given to `on_error`.
    - **Finished.** Once an item is answered, decided or withdrawn, each `UpdatingChannel` updates its message.

    Run it with `await notifier.run()` (until cancelled), beside the inbox or in a process of its own.
    """

    def __init__(
        self,
        store: QuestionStore,
        *,
        channels: Sequence[Channel],
        directory: Directory | DirectoryHook,
        links: InboxLinks,
        ledger: NotificationLedger | None = None,
        digest_seconds: float = 60.0,
        gather_seconds: float = 2.0,
        retries: int = 4,
        backoff: float = 5.0,
        resync_seconds: float = 300.0,
        concurrency: int = 8,
        keep_seconds: float = 8 * 24 * 3600.0,
        on_error: Callable[[NotificationFailure], Awaitable[None] | None] | None = None,
    ) -> None:
        if not channels:
            raise ValueError('a Notifier needs at least one channel')
        names = [channel.name for channel in channels]
        if len(set(names)) != len(names):
            raise ValueError(f'two channels share a name: {names}')
        for what, value in (('digest_seconds', digest_seconds), ('gather_seconds', gather_seconds)):
            if not value >= 0:
                raise ValueError(f'{what} must not be negative, not {value!r}')
        if retries < 0 or not backoff >= 0:
            raise ValueError('retries and backoff must not be negative')
        if not resync_seconds > 0 or concurrency < 1 or not keep_seconds > 0:
            raise ValueError('resync_seconds and keep_seconds must be positive, concurrency at least 1')
        self.store = store
        """The store whose waiting items are told."""
        self.channels = tuple(channels)
        """The channels, in order."""
        self.links = links
        """The links the messages carry back to the inbox."""
        self.ledger: NotificationLedger = ledger if ledger is not None else MemoryLedger()
        """What was told to whom."""
        self.digest_seconds = digest_seconds
        """At most one message per recipient and channel in this many seconds."""
        self.gather_seconds = gather_seconds
        """How long the first item after a quiet spell waits for others to come with it."""
        self.retries = retries
        """How many more times a failed message is tried."""
        self.backoff = backoff
        """Seconds before the first retry; each next waits twice as long."""
        self.resync_seconds = resync_seconds
        """How often every waiting item is read again (what an event stream missed is told then)."""
        self.keep_seconds = keep_seconds
        """How long finished entries stay in the ledger."""
        self.on_error = on_error
        """Called (sync or async) with each `NotificationFailure`."""
        self._directory = directory
        self._outboxes: dict[tuple[str, str], _Outbox] = {}
        self._finished: dict[str, str] = {}  # the key of each item that finished, to the event's kind; oldest first
        self._finishing: set[str] = set()
        self._again: set[str] = set()  # finished again while `_finish` ran for it: it reads the ledger once more
        self._sending = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._synced = asyncio.Event()
        self._recovered = False
        self._handled: dict[str, tuple[str, ...] | None] = {}

    def __repr__(self) -> str:
        return f'Notifier({", ".join(c.name for c in self.channels)}; {self.ledger!r})'

    async def run(self) -> None:
        """Tell every item that waits and every one that starts waiting, until cancelled."""
        events = self.store.events()
        watching = asyncio.create_task(self._watch(events))
        try:
            while True:
                try:
                    await self.sync()
                except Exception:  # the store or the ledger could not be read: the next resync tries again
                    logger.exception('reading the waiting items failed; trying again in %s s', self.resync_seconds)
                await asyncio.sleep(self.resync_seconds)
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            for task in tuple(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await _close(events)

    async def wait_synced(self) -> None:
        """Wait until the first `sync` of `run` has read every waiting item (for tests and start-up)."""
        await self._synced.wait()

    async def drain(self) -> None:
        """Wait until every message gathered so far is sent or given up (tests; a graceful stop)."""
        while self._tasks:
            await asyncio.gather(*tuple(self._tasks), return_exceptions=True)

    async def sync(self) -> None:
        """Read every waiting item and tell who was not told yet.

        The first sync of a notifier also reads its ledger's open messages and updates those whose item finished
        while it was down; later ones skip the items this notifier already handled (a forward is an event of its
        own), so a resync over 100,000 waiting items costs a listing, not a ledger read each.
        """
        if not self._recovered:
            for entry in await self.ledger.in_state('sent'):
                if entry.key not in self._finished and not await self._waiting(entry.kind, entry.key):
                    await self._finish(entry.key, 'withdrawn')
            self._recovered = True
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            page = await page_pending(self.store, limit=_PAGE, cursor=cursor)
            for record in page.records:
                seen.add(record.request.key)
                await self._consider(WaitingItem.of_question(record.request))
            cursor = page.next_cursor
            if cursor is None:
                break
        if isinstance(self.store, ApprovalStore):
            cursor = None
            while True:
                approvals = await page_approvals(self.store, limit=_PAGE, cursor=cursor)
                for approval in approvals.records:
                    seen.add(approval.key)
                    await self._consider(WaitingItem.of_approval(approval))
                cursor = approvals.next_cursor
                if cursor is None:
                    break
        for key in self._handled.keys() - seen:  # finished while no event said so
            del self._handled[key]
        await self.ledger.prune(time.time() - self.keep_seconds)
        self._synced.set()

    async def waiting(self, item: WaitingItem) -> None:
        """Tell `item`'s recipients who were not told of it yet (gathered into their next message)."""
        if item.key in self._finished or self._handled.get(item.key, _NOT_HANDLED) == item.audience:
            return
        for recipient in await self._recipients(item.audience):
            for channel in self.channels:
                if not recipient.wants(channel.name) or not channel.reaches(recipient):
                    continue
                if self._queued(recipient, channel, item.key):
                    continue
                entry = await self.ledger.get(item.key, recipient.name, channel.name)
                # `sending` in the ledger but not in flight here: a send a crash interrupted, so sent again.
                if (entry is not None and entry.state != 'sending') or self._queued(recipient, channel, item.key):
                    continue
                box = self._outboxes.get((recipient.name, channel.name))
                if box is None:
                    box = self._outboxes[recipient.name, channel.name] = _Outbox(recipient, channel)
                box.recipient = recipient
                box.items[item.key] = item
                if box.task is None:
                    box.task = self._spawn(self._flush(box))
        self._handled[item.key] = item.audience

    async def _consider(self, item: WaitingItem) -> None:
        """`waiting(item)`, with a failure (your directory raised, the ledger could not be read) logged: the item is
        considered again at the next resync, and the others go on.
        """
        try:
            await self.waiting(item)
        except Exception:
            logger.exception('could not tell of %s; trying again at the next resync', printable(item.key))

    def _queued(self, recipient: Recipient, channel: Channel, key: str) -> bool:
        box = self._outboxes.get((recipient.name, channel.name))
        return box is not None and (key in box.items or key in box.sending)

    async def _recipients(self, audience: tuple[str, ...] | None) -> Sequence[Recipient]:
        directory = self._directory
        if isinstance(directory, Directory):
            found = await directory.recipients(audience)
        else:
            result = directory(audience)
            found = await result if inspect.isawaitable(result) else result
        unique: dict[str, Recipient] = {}
        for recipient in found:
            unique.setdefault(recipient.name, recipient)
        return list(unique.values())

    def _spawn(self, work: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _flush(self, box: _Outbox) -> None:
        try:
            while True:
                delay = max(self.gather_seconds, box.last_sent + self.digest_seconds - time.time())
                await asyncio.sleep(max(0.0, delay))
                items = [item for item in box.items.values() if item.key not in self._finished]
                box.items.clear()
                if items:
                    box.sending.update(item.key for item in items)
                    try:
                        await self._deliver(box.recipient, box.channel, items)
                    finally:
                        box.sending.difference_update(item.key for item in items)
                    box.last_sent = time.time()
                if not box.items:
                    break
        except Exception:  # a bug, or a ledger that failed: logged, never the run's failure
            logger.exception('notifying %s on %s failed', printable(box.recipient.name), box.channel.name)
        finally:
            box.task = None

    async def _deliver(self, recipient: Recipient, channel: Channel, items: list[WaitingItem]) -> None:
        attempts = 0
        reason = ''
        delay = self.backoff
        while True:
            items = [item for item in items if item.key not in self._finished]
            if not items:
                return
            attempts += 1
            await self.ledger.put(_entry(item, recipient, channel, 'sending', attempts) for item in items)
            try:
                async with self._sending:
                    refs = await channel.send(recipient, items, self.links)
            except DeliveryRefused as refused:
                reason = f'refused: {refused}'
                break
            except Exception as error:
                reason = f'{type(error).__name__}: {error}'
            else:
                await self.ledger.put(
                    _entry(item, recipient, channel, 'sent', attempts, ref=refs.get(item.key)) for item in items
                )
                # An item that finished while its message was on its way: `_finish` left the message to this
                # delivery (it had no reference yet), which updates it now that the ledger has one.
                for item in items:
                    if item.key in self._finished:
                        await self._finish(item.key, self._finished[item.key])
                return
            if attempts > self.retries:
                break
            logger.info('notifying %s on %s failed, retrying: %s', printable(recipient.name), channel.name, reason)
            await asyncio.sleep(delay)
            delay *= 2
        shown = printable(reason, allow_newline=False)[:500]
        await self.ledger.put(_entry(item, recipient, channel, 'failed', attempts, reason=shown) for item in items)
        failure = NotificationFailure(channel.name, recipient.name, tuple(i.key for i in items), attempts, shown)
        logger.warning(
            'gave up telling %s on %s of %d item(s) after %d attempt(s): %s',
            printable(recipient.name),
            channel.name,
            len(items),
            attempts,
            shown,
        )
        if self.on_error is not None:
            try:
                result = self.on_error(failure)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.exception('the notifier on_error callback raised')

    async def _watch(self, events: AsyncIterator[StoreEvent]) -> None:
        while True:
            try:
                async for event in events:
                    await self._on_event(event)
                return
            except asyncio.CancelledError:
                raise
            except Exception:  # the store was unreachable: the next resync catches up
                logger.exception('reading the store events failed; trying again')
                await asyncio.sleep(self.resync_seconds)
                events = self.store.events()

    async def _on_event(self, event: StoreEvent) -> None:
        if event.kind == 'requested':
            item = WaitingItem.of_event(event)
            if item is not None:
                await self._consider(item)
            return
        # A hand-off withdraws an item and asks it again of others: finished only when it no longer waits.
        if await self._waiting(event.item, event.request_id):
            return
        await self._finish(event.request_id, event.kind)

    async def _waiting(self, kind: str, key: str) -> bool:
        try:
            if kind == 'approval':
                if not isinstance(self.store, ApprovalStore):
                    return False
                await self.store.get_approval(key)
            else:
                await self.store.get(key)
        except StoreError:
            return False
        return True

    async def _finish(self, key: str, kind: str) -> None:
        self._remember_finished(key, kind)
        for box in self._outboxes.values():
            box.items.pop(key, None)
        if key in self._finishing:  # the one running goes over the ledger again when it is done (`_again`)
            self._again.add(key)
            return
        self._finishing.add(key)
        try:
            while True:
                self._again.discard(key)
                await self._close_entries(key, kind)
                if key not in self._again:
                    return
        finally:
            self._finishing.discard(key)

    async def _close_entries(self, key: str, kind: str) -> None:
        """Update and close the ledger's messages of `key`, which finished (`_finish`)."""
        # A message still on its way in this process is left to its delivery, which calls this again once it is
        # recorded as sent: closed now, its `sent` would come after, and the message would never be updated.
        # One left `sending` by an earlier process (which died mid-send) is closed.
        in_flight = any(key in box.sending for box in self._outboxes.values())
        entries = [
            entry
            for entry in await self.ledger.of_item(key)
            if entry.state == 'sent' or (entry.state == 'sending' and not in_flight)
        ]
        if not entries:
            return
        finished = await self._how_finished(entries[0], kind)
        closed: list[LedgerEntry] = []
        for entry in entries:
            channel = next((c for c in self.channels if c.name == entry.channel), None)
            if entry.state == 'sent' and entry.ref is not None and isinstance(channel, UpdatingChannel):
                try:
                    await channel.finished(entry, replace(finished, headline=entry.headline))
                except Exception as error:  # the message stays as it was; the item is finished all the same
                    logger.warning('updating the %s message of %s failed: %s', entry.channel, key, error)
            closed.append(replace(entry, state='closed'))
        await self.ledger.put(closed)

    async def _how_finished(self, entry: LedgerEntry, kind: str) -> Finished:
        # What the event says, when the store keeps no history: answered (a question), decided (an approval).
        outcome = 'withdrawn' if kind == 'withdrawn' else 'decided' if entry.kind == 'approval' else 'answered'
        if isinstance(self.store, HistoryStore):
            with contextlib.suppress(Exception):  # a history that cannot be read: the plain outcome
                page = await self.store.history_page(limit=50)
                for record in page.records:
                    if record.key == entry.key:
                        return Finished(entry.kind, entry.key, record.outcome, record.by)
        return Finished(entry.kind, entry.key, outcome)

    def _remember_finished(self, key: str, kind: str) -> None:
        self._handled.pop(key, None)
        if key in self._finished:
            return
        self._finished[key] = kind
        if len(self._finished) > _REMEMBER_FINISHED:
            del self._finished[next(iter(self._finished))]


def _entry(
    item: WaitingItem,
    recipient: Recipient,
    channel: Channel,
    state: EntryState,
    attempts: int,
    *,
    ref: str | None = None,
    reason: str = '',
) -> LedgerEntry:
    return LedgerEntry(
        key=item.key,
        kind=item.kind,
        recipient=recipient.name,
        channel=channel.name,
        state=state,
        ref=ref,
        attempts=attempts,
        reason=reason,
        headline=item.headline[:200],
    )


async def _close(events: AsyncIterator[StoreEvent]) -> None:
    close = getattr(events, 'aclose', None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
