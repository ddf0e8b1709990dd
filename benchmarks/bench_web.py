"""The web answerer: memory per pending request, and answer-to-tool-return latency over loopback.

Goals: at most 5 KB per pending request with 10,000 pending; p99 at most 20 ms at 200 answers/s on 2 cores.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import threading
import time
import tracemalloc
from collections.abc import Callable

import anyio
import httpx

from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption, ask_user_result
from pydantic_ai_ask_user.web import QuestionHub, WebAnswerer, serve

PENDING = 10_000
RATE = 200.0
ANSWERS = 1_000


def _request() -> AskUserRequest:
    return AskUserRequest(
        questions=(
            Question(
                header='Database',
                question='Which database should the migration target?',
                options=(
                    QuestionOption(label='PostgreSQL', description='The production database.'),
                    QuestionOption(label='SQLite', description='A local file, for development.'),
                    QuestionOption(label='MySQL'),
                ),
            ),
        )
    )


async def _traced_per_item(start_all: Callable[[anyio.abc.TaskGroup], None], ready: Callable[[], bool]) -> float:
    gc.collect()
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    async with anyio.create_task_group() as group:
        start_all(group)
        while not ready():
            await anyio.sleep(0.01)
        gc.collect()
        loaded, _ = tracemalloc.get_traced_memory()
        group.cancel_scope.cancel()
    tracemalloc.stop()
    return (loaded - before) / PENDING


async def _memory() -> None:
    hub = QuestionHub()
    gc.collect()
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    requests = [_request() for _ in range(PENDING)]
    made, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    parked: list[int] = []

    async def park() -> None:
        # The least any waiting task costs: the run's tool call waits in a task whatever the answerer is.
        parked.append(1)
        await asyncio.get_running_loop().create_future()

    def park_all(group: anyio.abc.TaskGroup) -> None:
        for _ in range(PENDING):
            group.start_soon(park)

    def ask_all(group: anyio.abc.TaskGroup) -> None:
        for request in requests:
            group.start_soon(hub.ask, request)

    floor = await _traced_per_item(park_all, lambda: len(parked) == PENDING)
    waiting = await _traced_per_item(ask_all, lambda: len(hub) == PENDING)
    request_size = (made - start) / PENDING
    own = request_size + waiting - floor
    print(f'memory per pending request, {PENDING:,} pending in one process:')
    print(f'  the request and the hub: {own / 1024:.2f} KB (goal <= 5 KB)')
    entry = (waiting - floor) / 1024
    print(f'    the request object: {request_size / 1024:.2f} KB, the hub entry and its event: {entry:.2f} KB')
    print(f'  plus the waiting task itself, which any answerer needs: {floor / 1024:.2f} KB')


async def _latency() -> None:
    web = WebAnswerer()
    returned: dict[str, float] = {}
    sent: dict[str, float] = {}
    requests = [_request() for _ in range(ANSWERS)]

    async def ask(request: AskUserRequest) -> None:
        response = await web(request)
        ask_user_result(request, response)  # what the tool returns to the model
        returned[request.id] = time.perf_counter()

    async with serve(web.app) as base, anyio.create_task_group() as group:
        for request in requests:
            group.start_soon(ask, request)
        while len(web.hub) < ANSWERS:
            await anyio.sleep(0.01)

        def post_all() -> None:
            headers = {'authorization': f'Bearer {web.access_token}'}
            body = {'answers': [{'header': 'Database', 'selected': ['SQLite']}]}
            with httpx.Client(base_url=base, headers=headers) as client:
                begin = time.perf_counter()
                for index, request in enumerate(requests):
                    due = begin + index / RATE
                    if (pause := due - time.perf_counter()) > 0:
                        time.sleep(pause)
                    sent[request.id] = time.perf_counter()
                    client.post(f'api/requests/{request.id}/answer', json=body).raise_for_status()

        poster = threading.Thread(target=post_all)
        poster.start()
        while poster.is_alive() or len(returned) < ANSWERS:
            await anyio.sleep(0.005)
        poster.join()
    latencies = sorted((returned[r.id] - sent[r.id]) * 1000 for r in requests)
    p50 = statistics.median(latencies)
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    print(f'answer-to-tool-return latency, {ANSWERS:,} answers at {RATE:.0f}/s over loopback:')
    print(f'  p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {latencies[-1]:.2f} ms (goal p99 <= 20 ms)')


def main() -> None:
    anyio.run(_memory)
    anyio.run(_latency)


if __name__ == '__main__':
    main()
