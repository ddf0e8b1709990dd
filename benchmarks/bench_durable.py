"""Durable questions on DBOS: answer-to-resume latency and answers per second, on SQLite and PostgreSQL.

Each backend runs in its own process (DBOS is one instance per process): a `DBOSAnswerer` waits in
DBOS workflows there, and a `DBOSQuestionStore` answers through the database, as another process
would. Latency is from the call to `respond()` until the waiting answerer has returned the answer.

Goals, printed beside each figure: on SQLite an answer wakes its workflow through DBOS's polling, so its
p50 answer-to-resume latency is at most one polling interval plus 20 ms; on PostgreSQL (LISTEN/NOTIFY, no
polling) at most 20 ms; and every backend answers at least 50 questions per second.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.quick import sized

LATENCY_SAMPLES = sized(40, 2)
"""Questions asked and answered one at a time, for the latency figures (2 in quick mode)."""

THROUGHPUT_QUESTIONS = sized(200, 3)
"""Questions waiting at once, all answered as fast as the store allows, for the answers-per-second figure (3 in
quick mode)."""

GOAL_EXTRA_MS = 20.0
"""The p50 answer-to-resume goal beyond the polling interval (SQLite) or alone (PostgreSQL), in milliseconds."""

GOAL_ANSWERS_PER_SECOND = 50.0
"""The answers-per-second goal of every backend."""


def _measure(database_url: str, polling_seconds: float) -> dict[str, Any]:
    import anyio
    from dbos import DBOS

    from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
    from pydantic_ai_ask_user.dbos import DBOSAnswerer, DBOSQuestionStore, dbos_config

    DBOS(
        config=dbos_config(
            database_url, name='ask-user-bench', application_version='bench-1', polling_seconds=polling_seconds
        )
    )
    DBOS.launch()
    answerer = DBOSAnswerer(database_url)
    options = (QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite'))
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))

    def request() -> AskUserRequest:
        # With a run, as every request `AskUser` makes has: stored and answered under its key.
        question = Question(header='Database', question='Which one?', options=options)
        return AskUserRequest(questions=(question,), run_id='bench-run')

    async def wait_pending(store: DBOSQuestionStore, count: int) -> list[str]:
        while len(pending := await store.pending()) < count:
            await anyio.sleep(0.005)
        return [item.key for item in pending]

    async def run() -> dict[str, Any]:
        async with DBOSQuestionStore(database_url) as store:
            latencies: list[float] = []
            for _ in range(LATENCY_SAMPLES):
                done = anyio.Event()
                question = request()

                async def ask(question: AskUserRequest = question, done: anyio.Event = done) -> None:
                    await answerer(question)
                    done.set()

                async with anyio.create_task_group() as group:
                    group.start_soon(ask)
                    await wait_pending(store, 1)
                    started = time.perf_counter()
                    await store.respond(question.key, response)
                    await done.wait()
                    latencies.append((time.perf_counter() - started) * 1000)

            async with anyio.create_task_group() as group:
                for _ in range(THROUGHPUT_QUESTIONS):
                    group.start_soon(answerer, request())
                ids = await wait_pending(store, THROUGHPUT_QUESTIONS)
                started = time.perf_counter()
                limiter = anyio.CapacityLimiter(8)

                async def answer(request_id: str) -> None:
                    async with limiter:
                        await store.respond(request_id, response)

                async with anyio.create_task_group() as answering:
                    for request_id in ids:
                        answering.start_soon(answer, request_id)
            elapsed = time.perf_counter() - started
        latencies.sort()
        return {
            'p50_ms': statistics.median(latencies),
            'p90_ms': latencies[int(len(latencies) * 0.9) - 1],
            'max_ms': latencies[-1],
            'answers_per_second': THROUGHPUT_QUESTIONS / elapsed,
        }

    try:
        return anyio.run(run)
    finally:
        DBOS.destroy(workflow_completion_timeout_sec=0)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _as_postgres(command: list[str]) -> list[str]:
    return ['runuser', '-u', 'postgres', '--', *command] if os.geteuid() == 0 else command


def _start_postgres(root: Path) -> tuple[str, list[str]] | None:
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    if not found:
        return None
    bin_dir = Path(found[-1]).parent
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        shutil.chown(root, 'postgres', 'postgres')
    data, port = root / 'data', _free_port()
    initdb = [str(bin_dir / 'initdb'), '-D', str(data), '-A', 'trust', '-U', 'postgres', '--no-sync']
    subprocess.run(_as_postgres(initdb), check=True, capture_output=True)
    options = f'-h 127.0.0.1 -p {port} -k {root} -c max_connections=300'
    pg_ctl = [str(bin_dir / 'pg_ctl'), '-D', str(data), '-l', str(root / 'log'), '-w']
    subprocess.run(_as_postgres([*pg_ctl, '-o', options, 'start']), check=True, capture_output=True)
    return f'postgresql://postgres@127.0.0.1:{port}/postgres', _as_postgres([*pg_ctl, '-m', 'fast', 'stop'])


def _child(database_url: str, polling_seconds: float) -> dict[str, Any]:
    command = [sys.executable, '-m', 'benchmarks.bench_durable', database_url, str(polling_seconds)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parent.parent, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f'the benchmark of {database_url} failed:\n{done.stderr[-3000:]}')
    return json.loads(done.stdout.strip().splitlines()[-1])


def _print(name: str, figures: dict[str, Any], polling_seconds: float | None) -> None:
    """One backend's figures, each with its goal and whether this run met it."""
    goal_ms = GOAL_EXTRA_MS + (polling_seconds * 1000 if polling_seconds is not None else 0.0)
    p50, rate = figures['p50_ms'], figures['answers_per_second']
    print(
        f'{name:<34} answer-to-resume p50 {p50:6.1f} ms (goal <= {goal_ms:.0f} ms, {_met(p50 <= goal_ms)})  '
        f'p90 {figures["p90_ms"]:6.1f} ms  max {figures["max_ms"]:6.1f} ms   '
        f'{rate:7.1f} answers/s (goal >= {GOAL_ANSWERS_PER_SECOND:.0f}, {_met(rate >= GOAL_ANSWERS_PER_SECOND)})',
        flush=True,
    )


def _met(met: bool) -> str:
    return 'met' if met else 'NOT met'


def main() -> None:
    """Print the figures for SQLite (two polling intervals) and for PostgreSQL."""
    with tempfile.TemporaryDirectory(prefix='ask-user-bench-') as directory:
        for polling in (0.05, 0.01):
            url = f'sqlite:///{directory}/sqlite-{polling}.sqlite'
            _print(f'SQLite, polling every {polling * 1000:.0f} ms', _child(url, polling), polling)
        root = Path(tempfile.mkdtemp(prefix='ask-user-bench-pg-'))
        started = _start_postgres(root)
        if started is None:
            print('PostgreSQL                         not installed (scripts/bootstrap.sh test installs it)')
            return
        url, stop = started
        try:
            _print('PostgreSQL (LISTEN/NOTIFY)', _child(url, 0.05), None)
        finally:
            subprocess.run(stop, capture_output=True)
            shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    if len(sys.argv) == 3:
        print(json.dumps(_measure(sys.argv[1], float(sys.argv[2]))))
    else:
        main()
