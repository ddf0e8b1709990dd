"""The durable inbox's event streams: what the change feed costs, and what open streams cost everyone else.

A DBOS system database on SQLite (the tables made by the store; a waiting workflow row per question, no DBOS run)
holds `WAITING` questions addressed to one person, `heavy`, and a few to another, `light`.

1. The change feed (`DBOSQuestionStore.events()`, read from the change log by id): one idle poll's read of the log,
   and the time from a question's commit to the `requested` event of an open iteration (polling every 0.25 s, the
   default, so its p50 is about half a poll period).
2. Streams cost nothing up front: the web app (`create_app` on the store, served over loopback) is asked for
   `light`'s `GET /api/requests` with no stream open (the floor), then while `STREAMS` streams of `heavy` open
   (each `GET /api/events`, all at once, as a team's tabs reconnecting after a deploy) and stay open. Printed: the
   p95 of each, and the ratio to the floor.

Goals: `light`'s p95 under 100 ms with 128 streams of a person with 10,000 waiting (issue 33); a question reaches an
open stream within a second of its commit (p95), however late it commits.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import anyio
import anyio.to_thread
import httpx
from starlette.requests import Request

from benchmarks.quick import sized
from pydantic_ai_ask_user import AskUserRequest, Person, Question, QuestionOption
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._questions import insert_pending
from pydantic_ai_ask_user.web import ServerLimits, create_app, serve

WAITING = sized(10_000, 200)
"""Questions waiting for `heavy` (200 in quick mode)."""

STREAMS = sized(128, 8)
"""Event streams `heavy` opens at once (8 in quick mode)."""

SAMPLES = sized(200, 10)
"""`light`'s API calls measured in each phase (10 in quick mode)."""

FEED_SAMPLES = sized(40, 3)
"""Questions published one at a time to time commit-to-event (3 in quick mode)."""

GOAL_P95_MS = 100.0
GOAL_FEED_P95_MS = 1000.0


def _authorize(request: Request) -> Person:
    return Person(request.headers['x-user'])


def _request(key: str, person: str) -> AskUserRequest:
    question = Question(
        header='Deploy', question=f'Deploy {key}?', options=(QuestionOption(label='Yes'), QuestionOption(label='No'))
    )
    return AskUserRequest(questions=(question,), id=key, audience=(person,))


def _publish(store: DBOSQuestionStore, requests: list[AskUserRequest]) -> None:
    """Publish `requests` in one transaction, each waited on by the one live workflow `wf`."""
    with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
        for request in requests:
            insert_pending(conn, request, 'wf')


def _seed(store: DBOSQuestionStore) -> None:
    with store._connect().begin() as conn:  # pyright: ignore[reportPrivateUsage]
        conn.execute('CREATE TABLE IF NOT EXISTS workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)')  # pyright: ignore[reportAttributeAccessIssue,reportUnknownMemberType]
        conn.execute("INSERT INTO workflow_status VALUES ('wf', 'PENDING')")  # pyright: ignore[reportAttributeAccessIssue,reportUnknownMemberType]
    for start in range(0, WAITING, 1000):
        _publish(store, [_request(f'h{n}', 'heavy') for n in range(start, min(start + 1000, WAITING))])
    _publish(store, [_request(f'l{n}', 'light') for n in range(5)])


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _met(met: bool) -> str:
    return 'met' if met else 'NOT met'


async def _feed(store: DBOSQuestionStore) -> None:
    started = time.perf_counter()
    for _ in range(sized(20, 3)):
        await anyio.to_thread.run_sync(store._read_log, [], 10**15)  # pyright: ignore[reportPrivateUsage]
    idle_ms = (time.perf_counter() - started) / sized(20, 3) * 1000
    latencies: list[float] = []
    committed: dict[str, float] = {}
    events = store.events()
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            async for event in events:
                if event.kind == 'requested' and event.request_id in committed:
                    latencies.append((time.perf_counter() - committed[event.request_id]) * 1000)
                    if len(latencies) == FEED_SAMPLES:
                        return

        group.start_soon(watch)
        while not store._feed._subscribers:  # pyright: ignore[reportPrivateUsage]
            await anyio.sleep(0.01)
        for n in range(FEED_SAMPLES):
            key = f'f{n}'
            await anyio.to_thread.run_sync(_publish, store, [_request(key, 'light')])
            committed[key] = time.perf_counter()
            while len(latencies) <= n:
                await anyio.sleep(0.005)
    await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
    p50, p95 = statistics.median(latencies), _p95(latencies)
    print(f'change feed: one idle poll of the log {idle_ms:6.2f} ms, with {WAITING:,} waiting', flush=True)
    print(
        f'  commit to event p50 {p50:6.1f} ms, p95 {p95:6.1f} ms (poll every 250 ms)'
        f'  goal p95 <= {GOAL_FEED_P95_MS:.0f} ms: {_met(p95 <= GOAL_FEED_P95_MS)}',
        flush=True,
    )


async def _light_p95(client: httpx.AsyncClient) -> float:
    samples: list[float] = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        response = await client.get('api/requests', headers={'x-user': 'light'})
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return _p95(samples)


async def _streams(store: DBOSQuestionStore) -> None:
    app = create_app(store, authorize=_authorize)
    limits = ServerLimits(max_connections=STREAMS + 50, max_connections_per_ip=STREAMS + 50)
    async with serve(app, limits=limits) as base, httpx.AsyncClient(base_url=base, timeout=60) as client:
        floor = await _light_p95(client)
        opened = 0
        # One client for every stream (a client each would spend this process's time making TLS contexts).
        pool = httpx.Limits(max_connections=STREAMS + 10, max_keepalive_connections=0)

        async def stream(own: httpx.AsyncClient) -> None:
            nonlocal opened
            async with own.stream('GET', 'api/events', headers={'x-user': 'heavy'}) as response:
                opened += 1
                async for _ in response.aiter_lines():
                    pass

        async with (
            httpx.AsyncClient(base_url=base, timeout=None, limits=pool) as streams,
            anyio.create_task_group() as group,
        ):
            started = time.perf_counter()
            for _ in range(STREAMS):
                group.start_soon(stream, streams)
            opening = await _light_p95(client)
            while opened < STREAMS:
                await anyio.sleep(0.01)
            open_seconds = time.perf_counter() - started
            steady = await _light_p95(client)
            group.cancel_scope.cancel()
    print(f'streams: {STREAMS} of a person with {WAITING:,} waiting, all open in {open_seconds:.2f} s', flush=True)
    print(f"  another person's GET /api/requests p95, no stream open (floor) {floor:6.1f} ms", flush=True)
    for name, value in (('while they open', opening), ('while they are open', steady)):
        print(
            f'  {name:<20} p95 {value:6.1f} ms, {value / floor:4.1f}x the floor'
            f'  goal < {GOAL_P95_MS:.0f} ms: {_met(value < GOAL_P95_MS)}',
            flush=True,
        )


async def _main() -> None:
    with tempfile.TemporaryDirectory() as root:
        url = f'sqlite:///{Path(root) / "streams.sqlite"}'
        async with DBOSQuestionStore(url) as store:
            await anyio.to_thread.run_sync(_seed, store)
            await _feed(store)
            await _streams(store)


def main() -> None:
    anyio.run(_main)
