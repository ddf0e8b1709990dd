"""The durable store's change feed is lossless (issue 33, item 3): ordered by the change log's ids, not by time.

Against real databases (SQLite, and PostgreSQL where the suite runs it): a question whose transaction commits two
seconds after it was written (stamped then) still reaches an open `events()` iteration, on PostgreSQL even when a
later question committed first (a gap, read again until it fills); and an iteration resumed from an event's
`position` gets every change after it, once, as the web API resumes a page from `Last-Event-ID`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import anyio
import anyio.to_thread
import httpx
import pytest
from ask_user_support import make_request
from inbox_browser import authorize
from waits import WAIT

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._changes import Position
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending
from pydantic_ai_ask_user.store import StoreEvent
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio

HELD_SECONDS = 2.0
"""How long the slow transaction stays open after writing its question: longer than the old one-second window."""


def _question(request_id: str) -> AskUserRequest:
    return make_request(id=request_id)


async def _subscribed(store: DBOSQuestionStore, count: int = 1) -> None:
    with anyio.fail_after(WAIT):
        while len(store._feed._subscribers) < count:  # pyright: ignore[reportPrivateUsage]
            await anyio.sleep(0.01)


def _publish(store: DBOSQuestionStore, request: AskUserRequest) -> None:
    with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
        insert_pending(conn, request, f'wf-{request.id}')


async def _next(events: AsyncIterator[StoreEvent], wanted: set[str]) -> StoreEvent:
    """The next event about one of `wanted` (other rows of the same database are not this test's)."""
    with anyio.fail_after(WAIT):
        async for event in events:
            if event.request_id in wanted:
                return event
    raise AssertionError('the events ended')


async def test_a_question_committed_late_is_still_seen(database_url: str) -> None:
    async with DBOSQuestionStore(database_url) as store:
        slow, quick = _question('slow'), _question('quick')
        written = threading.Event()
        quick_seen = threading.Event()
        warm_seen = anyio.Event()
        postgres = database_url.startswith('postgresql')

        def slow_transaction() -> None:
            with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
                insert_pending(conn, slow, 'wf-slow')  # stamped now, committed later
                written.set()
                if postgres:
                    # A later question commits first: its id is above the slow one's, which is a gap until then.
                    assert quick_seen.wait(WAIT), 'the quick question was not seen'
                time.sleep(HELD_SECONDS)  # the delayed commit itself, the point of the test

        events = store.events()
        first = anyio.create_task_group()
        seen: list[str] = []
        async with first:

            async def watch() -> None:
                with anyio.fail_after(WAIT + HELD_SECONDS):
                    async for event in events:
                        if event.kind == 'requested':
                            seen.append(event.request_id)
                            if event.request_id == 'warm':
                                warm_seen.set()
                            if event.request_id == 'quick':
                                quick_seen.set()
                            if event.request_id == 'slow':
                                return

            first.start_soon(watch)
            await _subscribed(store)
            # A first question seen: the feed has made its first poll (which prunes, so it would wait for the slow
            # writer's lock on SQLite and see its row anyway); from here on a poll only reads.
            await anyio.to_thread.run_sync(_publish, store, _question('warm'))
            await warm_seen.wait()
            first.start_soon(anyio.to_thread.run_sync, slow_transaction)
            if postgres:
                await anyio.to_thread.run_sync(lambda: written.wait(WAIT))
                await anyio.to_thread.run_sync(_publish, store, quick)
        await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        assert seen[-1] == 'slow'
        assert seen == (['warm', 'quick', 'slow'] if postgres else ['warm', 'slow'])


async def test_a_resumed_iteration_gets_what_it_missed_once(database_url: str) -> None:
    async with DBOSQuestionStore(database_url) as store:
        names = {'one', 'two', 'three', 'four'}
        events = store.events()
        task = anyio.create_task_group()
        got: list[StoreEvent] = []
        async with task:

            async def first() -> None:
                got.append(await _next(events, names))

            task.start_soon(first)
            await _subscribed(store)
            await anyio.to_thread.run_sync(_publish, store, _question('one'))
        await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        (one,) = got
        assert (one.kind, one.request_id) == ('requested', 'one')
        assert one.position is not None
        # While no page listens: two new questions, and the first one answered.
        await anyio.to_thread.run_sync(_publish, store, _question('two'))
        await anyio.to_thread.run_sync(_publish, store, _question('three'))

        def answer_one() -> None:
            with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
                assert claim_answer(conn, 'one', encode_response(AskUserResponse(cancelled=True)), 'x')

        await anyio.to_thread.run_sync(answer_one)
        resumed = store.events_after(one.position)
        missed = [await _next(resumed, names) for _ in range(3)]
        assert [(event.kind, event.request_id) for event in missed] == [
            ('requested', 'two'),
            ('requested', 'three'),
            ('answered', 'one'),
        ]
        # Then live, with nothing repeated.
        await anyio.to_thread.run_sync(_publish, store, _question('four'))
        after = await _next(resumed, names)
        assert (after.kind, after.request_id) == ('requested', 'four')
        await resumed.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        # Each position is past the one before.
        positions = [Position.decode(event.position or '') for event in [one, *missed, after]]
        assert all(position is not None for position in positions)
        assert [p.floor for p in positions if p is not None] == sorted(p.floor for p in positions if p is not None)


async def test_a_position_that_is_not_one_starts_from_now(database_url: str) -> None:
    async with DBOSQuestionStore(database_url) as store:
        await anyio.to_thread.run_sync(_publish, store, _question('before'))
        for bad in ['', 'x', '1.2-1', '9' * 40, '999999999']:
            events = store.events_after(bad)
            got: list[StoreEvent] = []
            async with anyio.create_task_group() as group:

                async def watch(
                    events: AsyncIterator[StoreEvent] = events, got: list[StoreEvent] = got, bad: str = bad
                ) -> None:
                    got.append(await _next(events, {'before', f'after-{bad}'}))

                group.start_soon(watch)
                await _subscribed(store)
                await anyio.to_thread.run_sync(_publish, store, _question(f'after-{bad}'))
            await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
            assert [event.request_id for event in got] == [f'after-{bad}']


async def _stream(
    base: str, who: str, heard: list[tuple[str, str, str | None]], ready: anyio.Event, last_id: str | None = None
) -> None:
    """`GET /api/events` as `who` (resuming after `last_id`): every `(event, id, data)` it sends, until cancelled."""
    headers = {'x-user': who} | ({'last-event-id': last_id} if last_id else {})
    async with (
        httpx.AsyncClient(base_url=base, headers=headers, timeout=None) as client,
        client.stream('GET', 'api/events') as stream,
    ):
        ready.set()
        event, event_id = 'message', None
        async for line in stream.aiter_lines():
            if line.startswith('event:'):
                event = line.partition(':')[2].strip()
            elif line.startswith('id:'):
                event_id = line.partition(':')[2].strip()
            elif line.startswith('data:'):
                heard.append((event, json.loads(line.partition(':')[2])['id'], event_id))
                event, event_id = 'message', None


async def _heard(heard: list[tuple[str, str, str | None]], count: int) -> None:
    with anyio.fail_after(WAIT):
        while len(heard) < count:
            await anyio.sleep(0.02)


def _for(request_id: str, *names: str) -> AskUserRequest:
    return replace(make_request(id=request_id), audience=names)


async def test_the_event_stream_sends_ids_and_resumes_from_last_event_id(database_url: str) -> None:
    async with DBOSQuestionStore(database_url, events_poll_seconds=0.1) as store:
        app = create_app(store, authorize=authorize)
        async with serve(app) as base:
            heard: list[tuple[str, str, str | None]] = []
            async with anyio.create_task_group() as group:
                ready = anyio.Event()
                group.start_soon(_stream, base, 'alice', heard, ready)
                await ready.wait()
                await _subscribed(store)
                await anyio.to_thread.run_sync(_publish, store, _for('a1', 'alice'))
                await _heard(heard, 1)
                group.cancel_scope.cancel()
            ((kind, key, last_id),) = heard
            assert (kind, key) == ('requested', 'a1')
            assert last_id
            # The page is away: one question for alice, one for bob, and alice's first answered.
            await anyio.to_thread.run_sync(_publish, store, _for('b1', 'bob'))
            await anyio.to_thread.run_sync(_publish, store, _for('a2', 'alice'))

            def answer_a1() -> None:
                with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
                    assert claim_answer(conn, 'a1', encode_response(AskUserResponse(cancelled=True)), 'alice')

            await anyio.to_thread.run_sync(answer_a1)
            resumed: list[tuple[str, str, str | None]] = []
            async with anyio.create_task_group() as group:
                ready = anyio.Event()
                group.start_soon(_stream, base, 'alice', resumed, ready, last_id)
                await _heard(resumed, 2)
                await anyio.to_thread.run_sync(_publish, store, _for('a3', 'alice'))
                await _heard(resumed, 3)
                group.cancel_scope.cancel()
            # What it missed, in order, nothing of bob's, nothing twice; then live.
            assert [(kind, key) for kind, key, _ in resumed] == [
                ('requested', 'a2'),
                ('answered', 'a1'),
                ('requested', 'a3'),
            ]
            assert all(event_id for _, _, event_id in resumed)


async def test_without_the_log_events_still_carry_their_question(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A database user who may not make the log: the table is read by time, and a finished question's event still
    # carries the question, so a person's stream can tell it is theirs without a list of keys.
    async with DBOSQuestionStore(database_url) as store:
        monkeypatch.setattr(store, '_uses_log', lambda: False)
        events = store.events()
        got: list[StoreEvent] = []
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                got.append(await _next(events, {'mine'}))
                got.append(await _next(events, {'mine'}))

            group.start_soon(watch)
            await _subscribed(store)
            await anyio.to_thread.run_sync(_publish, store, _for('mine', 'alice'))
            with anyio.fail_after(WAIT):
                while not got:
                    await anyio.sleep(0.02)

            def answer() -> None:
                with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
                    assert claim_answer(conn, 'mine', encode_response(AskUserResponse(cancelled=True)), 'alice')

            await anyio.to_thread.run_sync(answer)
        await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        assert [(event.kind, event.position) for event in got] == [('requested', None), ('answered', None)]
        assert got[1].request is not None
        assert got[1].request.audience == ('alice',)


async def test_a_rolled_back_write_is_given_up_and_the_position_stays_short(database_url: str) -> None:
    # PostgreSQL hands the rolled-back transaction's id out for good: a gap below the later change, read again
    # until `events_gap_seconds` pass, then given up, so positions do not grow. (SQLite reuses the id: no gap.)
    async with DBOSQuestionStore(database_url, events_gap_seconds=0.3) as store:
        names = {'after', 'later'}
        events = store.events()
        got: list[StoreEvent] = []
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                got.append(await _next(events, names))
                got.append(await _next(events, names))

            group.start_soon(watch)
            await _subscribed(store)

            def rolled_back_then_committed() -> None:
                transaction = store._connect().begin()  # pyright: ignore[reportPrivateUsage]
                with contextlib.suppress(_RolledBack), transaction as conn:
                    insert_pending(conn, _question('rolled'), 'wf-rolled')
                    if database_url.startswith('postgresql'):  # SQLite has one writer: this would wait for us
                        _publish(store, _question('after'))  # commits while the first still holds its id
                    raise _RolledBack
                if not database_url.startswith('postgresql'):
                    _publish(store, _question('after'))

            await anyio.to_thread.run_sync(rolled_back_then_committed)
            with anyio.fail_after(WAIT):
                while not got:
                    await anyio.sleep(0.02)
                poll = store._feed._poll  # pyright: ignore[reportPrivateUsage]
                while getattr(poll, 'gaps', None):  # given up once events_gap_seconds pass
                    await anyio.sleep(0.02)
            await anyio.to_thread.run_sync(_publish, store, _question('later'))
        await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        assert [event.request_id for event in got] == ['after', 'later']
        assert got[0].position is not None
        assert got[1].position is not None
        if database_url.startswith('postgresql'):
            assert '.' in got[0].position  # `after` was taken above the gap of the rolled-back id
        assert '.' not in got[1].position  # nothing left above the floor


class _RolledBack(Exception):
    """Raised in a transaction to roll it back."""
