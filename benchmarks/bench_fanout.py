"""The web inbox's event stream with 1,000 people connected: a new question reaches its addressees, and only them.

This process serves the web app (`WebAnswerer`, whose `authorize` names each connection's person from a header)
with `serve` over loopback. A client process opens one `GET /api/events` stream per person, 1,000 people, each
signed in under their own name, the first hundred also in the group `team:ops`. Then questions are asked one at a
time: each addressed to one person chosen at random, then some addressed to the group. Measured, on the
system-wide monotonic clock both processes share: from `hub.ask` to the `requested` event read by the addressee
(for a group, by the last of its hundred members), and the server's CPU per question asked. Checked: no one else
received anything, not even an id.

Goal: a question reaches its addressee within 100 ms (p95) with 1,000 people connected, and no one else.
"""

from __future__ import annotations

import asyncio
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request

from benchmarks.quick import sized
from pydantic_ai_ask_user import AskUserRequest, Person, Question, QuestionOption
from pydantic_ai_ask_user.web import ServerLimits, WebAnswerer, serve

PEOPLE = sized(1_000, 10)
"""People connected to the event stream at once, each under their own name (10 in quick mode)."""

GROUP = 'team:ops'
"""The group the first `GROUP_SIZE` people belong to."""

GROUP_SIZE = sized(100, 3)
"""How many people are in `GROUP` (3 in quick mode)."""

ONE_PERSON_SAMPLES = sized(100, 3)
"""Questions asked, one at a time, each addressed to one person chosen at random (3 in quick mode)."""

GROUP_SAMPLES = sized(10, 1)
"""Questions asked, one at a time, addressed to `GROUP` (1 in quick mode)."""

LIMITS = ServerLimits(max_connections=PEOPLE + 200, max_connections_per_ip=PEOPLE + 200)
"""Room for every stream: by default a server holds 512 connections, 128 from one address (here all share one)."""

GOAL_P95_MS = 100.0
"""The goal for the p95 from a question asked to its addressee having read it."""


def _more_open_files() -> None:
    """A socket per person on each side: raise this process's open-file limit to its hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _name(n: int) -> str:
    return f'person-{n}'


def _authorize(request: Request) -> Person:
    name = request.headers['x-person']
    number = int(name.rpartition('-')[2])
    return Person(name, groups=[GROUP] if number < GROUP_SIZE else [])


def _request(n: int, audience: str) -> AskUserRequest:
    question = Question(
        header='Deploy',
        question=f'Deploy build {n} to production?',
        options=(QuestionOption(label='Yes'), QuestionOption(label='No')),
    )
    return AskUserRequest(questions=(question,), id=f'call_{n}', audience=(audience,))


# The client, run as `python -m benchmarks.bench_fanout BASE PEOPLE` in a process of its own.


async def _client(base: str, people: int) -> None:
    _more_open_files()
    host, port = base.removeprefix('http://').rstrip('/').split(':')
    received: dict[str, list[tuple[str, float]]] = {}
    connected = 0
    all_connected = asyncio.Event()

    async def listen(name: str) -> None:
        nonlocal connected
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            f'GET /api/events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n'
            f'x-person: {name}\r\n\r\n'.encode()
        )
        await writer.drain()
        status = await reader.readline()
        if b' 200 ' not in status:
            print(f'stream of {name} refused: {status!r}', flush=True)
            sys.exit(1)
        while (await reader.readline()) not in (b'\r\n', b''):
            pass
        connected += 1
        if connected == people:
            all_connected.set()
        mine = received.setdefault(name, [])
        buffered = b''
        while size := int((await reader.readline()).strip() or b'0', 16):  # chunked transfer: size, chunk, CRLF
            buffered += await reader.readexactly(size + 2)
            buffered = buffered[:-2] if buffered.endswith(b'\r\n') else buffered
            *events, buffered = buffered.replace(b'\r\n', b'\n').split(b'\n\n')
            for event in events:
                fields: dict[str, str] = {}
                for line in event.decode().split('\n'):
                    name_, _, value = line.partition(': ')
                    fields[name_] = value
                if fields.get('event') == 'requested':
                    mine.append((json.loads(fields['data'])['id'], time.monotonic()))

    tasks = [asyncio.create_task(listen(_name(n))) for n in range(people)]
    await all_connected.wait()
    print('connected', flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)  # the server says it is done
    for task in tasks:
        task.cancel()
    print(json.dumps(received), flush=True)


# The server: this process.


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _measure() -> dict[str, Any]:
    _more_open_files()
    web = WebAnswerer(authorize=_authorize)
    asked: dict[str, tuple[str, float]] = {}  # key -> (audience, asked at)
    rng = random.Random(7)
    cpu_before = cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    received: dict[str, list[tuple[str, float]]] = {}
    async with serve(web.app, limits=LIMITS) as base, anyio.create_task_group() as waiting:
        client = subprocess.Popen(
            [sys.executable, '-m', 'benchmarks.bench_fanout', base, str(PEOPLE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert client.stdin is not None
        assert client.stdout is not None
        with anyio.fail_after(300):
            line = await anyio.to_thread.run_sync(client.stdout.readline)
        assert line.strip() == 'connected', f'the client did not connect everyone: {line!r}'

        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        for n in range(ONE_PERSON_SAMPLES + GROUP_SAMPLES):
            audience = _name(rng.randrange(PEOPLE)) if n < ONE_PERSON_SAMPLES else GROUP
            request = _request(n, audience)
            asked[request.key] = (audience, time.monotonic())
            waiting.start_soon(web.hub.ask, request)
            await anyio.sleep(0.05)  # one at a time: each question's fan-out is done before the next
        await anyio.sleep(1.0)  # the last questions' events read
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        client.stdin.write('done\n')
        client.stdin.flush()
        received = json.loads(await anyio.to_thread.run_sync(client.stdout.readline))
        client.wait(timeout=60)
        waiting.cancel_scope.cancel()  # the questions were never to be answered
        web.close()
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    return {'asked': asked, 'received': received, 'cpu_ms_per_question': cpu * 1000 / len(asked)}


def _met(met: bool) -> str:
    return 'met' if met else 'NOT met'


def _figures(measured: dict[str, Any]) -> None:
    asked: dict[str, tuple[str, float]] = measured['asked']
    received: dict[str, list[tuple[str, float]]] = measured['received']
    group = {_name(n) for n in range(GROUP_SIZE)}
    strays = 0
    missed = 0
    one: list[float] = []
    whole_group: list[float] = []
    for key, (audience, at) in asked.items():
        addressees = group if audience == GROUP else {audience}
        times = [moment for name in addressees for got, moment in received.get(name, []) if got == key]
        missed += len(addressees) - len(times)
        strays += sum(1 for name, got in received.items() if name not in addressees for k, _ in got if k == key)
        if len(times) == len(addressees):
            (whole_group if audience == GROUP else one).append((max(times) - at) * 1000)
    if not one or not whole_group:
        print(f'too few questions reached all their addressees to measure: {missed} receptions missing')
        return
    p95 = _percentile(one, 0.95)
    print(
        f'one person of {PEOPLE} connected: p50 {statistics.median(one):6.1f} ms, p95 {p95:6.1f} ms '
        f'(goal p95 <= {GOAL_P95_MS:.0f} ms, {_met(p95 <= GOAL_P95_MS)})'
    )
    print(
        f'a group of {GROUP_SIZE}, until the last member has it: p50 {statistics.median(whole_group):6.1f} ms, '
        f'max {max(whole_group):6.1f} ms'
    )
    print(f'server CPU per question (to {PEOPLE} streams): {measured["cpu_ms_per_question"]:.1f} ms')
    print(f'events received by someone the question was not for: {strays} (goal 0, {_met(not strays)})')
    print(f'addressees who never received their question: {missed} (goal 0, {_met(not missed)})')


def main() -> None:
    _figures(anyio.run(_measure))


if __name__ == '__main__':
    if len(sys.argv) == 3:
        asyncio.run(_client(sys.argv[1], int(sys.argv[2])))
    else:
        main()
