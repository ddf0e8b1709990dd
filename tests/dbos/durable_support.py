"""Helpers for the durable tests: a private PostgreSQL server, fresh databases, the worker processes a test
starts, kills and restarts, and the questions they leave pending.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio.to_thread
import psycopg
import sqlalchemy as sa
import waits
from ask_user_support import make_request
from processes import WorkerProcess
from waits import wait_for, wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse
from pydantic_ai_ask_user.dbos import DBOSQuestionStore, StoredRequest
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import insert_pending
from pydantic_ai_ask_user.dbos._tables import requests_table

WORKER = Path(__file__).with_name('worker.py')
"""The worker program the tests run, kill and restart."""

REQUEST_INPUT_WORKER = Path(__file__).with_name('request_input_worker.py')
"""The worker program whose run waits through `RequestInput`."""

WAIT_SECONDS = waits.WAIT
"""How long a test waits for a condition before failing; generous, the machine is shared and noisy."""


def pg_bin() -> Path:
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    if not found:
        raise RuntimeError('PostgreSQL is not installed; run scripts/bootstrap.sh test (apt-get install postgresql)')
    return Path(found[-1]).parent


def as_postgres(command: list[str]) -> list[str]:
    # initdb refuses to run as root: run the server as the unprivileged `postgres` user then.
    return ['runuser', '-u', 'postgres', '--', *command] if os.geteuid() == 0 else command


_database_numbers = itertools.count()


def fresh_postgres_database(server: str) -> str:
    """A new, empty database on `server`, as a URL."""
    name = f'ask_user_{os.getpid()}_{next(_database_numbers)}'
    with psycopg.connect(f'{server}/postgres', autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE {name}')  # pyright: ignore[reportArgumentType]
    return f'{server}/{name}'


@dataclass
class DBOSWorkerProcess(WorkerProcess):
    """A DBOS worker program: its `server` is the DBOS system database it runs on."""

    @property
    def database_url(self) -> str:
        """The DBOS system database the worker runs on."""
        return self.server


@dataclass
class Worker(DBOSWorkerProcess):
    """`worker.py`: runs DBOS-durable agents that ask one question each, answered by `DBOSAnswerer` or a plain one."""

    runs: int = 1
    """How many runs it starts, `run-0` to `run-N`."""

    timeout: float | None = None
    """`AskUser(timeout=...)` of its agent."""

    answerer: str = 'dbos'
    """`dbos` for `DBOSAnswerer`, `plain` for an async function standing in for a person at some UI."""

    crash: str | None = None
    """Where it kills itself with SIGKILL, once: `before-publish`, `after-publish`, `after-answer` or
    `after-escalate`."""

    call_id: str | None = None
    """The tool call id of every call its model makes (`''` for none); a new one each call when `None`."""

    record_events: bool = False
    """Whether it records the runs' `AskUserAnsweredEvent`s (see `answered_events`)."""

    clock_offset: float = 0.0
    """How many seconds ahead of the real wall clock its next start's clock runs (a restart that late)."""

    escalate: float | None = None
    """When set, its question is for `alice` (or `audience`) and escalates to `team:oncall` this many seconds after it
    was asked."""

    audience: str | None = None
    """Whom its question is addressed to; `None` for anyone (for `alice` with `escalate`)."""

    title: str | None = None
    """The title of its question's context; none when `None`."""

    prefix: str = 'run'
    """Its runs are `PREFIX-0` to `PREFIX-N`; another prefix than `run` gives it an executor of its own, so that it
    runs beside other workers on one database without recovering their runs at launch."""

    @property
    def calls_file(self) -> Path:
        return self.directory / 'calls.txt'

    @property
    def out_file(self) -> Path:
        return self.directory / 'out.txt'

    @property
    def events_file(self) -> Path:
        return self.directory / 'events.jsonl'

    def answered_events(self) -> list[dict[str, Any]]:
        """The `AskUserAnsweredEvent`s of every run so far, as the worker recorded them."""
        return [json.loads(line) for line in self.lines(self.events_file.name) if line.strip()]

    def command(self, *, resume: bool) -> list[str]:
        command = [sys.executable, str(WORKER), '--db', self.database_url, '--calls', str(self.calls_file)]
        command += ['--out', str(self.out_file), '--runs', str(self.runs)]
        if self.timeout is not None:
            command += ['--timeout', str(self.timeout)]
        if resume:
            command.append('--resume')
        command += ['--answerer', self.answerer]
        if self.crash is not None:
            command += ['--crash', self.crash]
        if self.call_id is not None:
            command += ['--call-id', self.call_id]
        if self.record_events:
            command += ['--events', str(self.events_file)]
        if self.clock_offset:
            command += ['--clock-offset', str(self.clock_offset)]
        if self.escalate is not None:
            command += ['--escalate', str(self.escalate)]
        command += ['--audience', self.audience] if self.audience is not None else []
        command += ['--title', self.title] if self.title is not None else []
        return [*command, '--prefix', self.prefix]

    def asked(self) -> list[str]:
        """The request ids the plain answerer was called with, in order (one line per time a person was asked)."""
        return self.lines('asked.txt')

    def answer_plainly(self, request_id: str, label: str) -> None:
        """What the person picks at the plain answerer's UI."""
        answer = {'answers': [{'header': 'Database', 'selected': [label]}]}
        path = self.directory / f'answer-{request_id}.json'
        temporary = path.with_suffix('.tmp')
        temporary.write_text(json.dumps(answer))
        temporary.replace(path)

    def calls(self) -> list[str]:
        """The model calls so far, one line each: `ask RUN` before the question, `final RUN` after it."""
        return self.lines(self.calls_file.name)

    def outputs(self) -> dict[str, str]:
        """The output of every finished run, by run name."""
        lines = [json.loads(line) for line in self.lines(self.out_file.name) if line.strip()]
        return {line['run']: line['output'] for line in lines}

    def wait_finished(self, timeout: float = WAIT_SECONDS) -> dict[str, str]:
        """Wait for every run to finish and the worker to exit with 0; the runs' outputs."""
        self.wait_succeeded(timeout)
        return self.outputs()


@dataclass
class RequestInputWorker(DBOSWorkerProcess):
    """`request_input_worker.py`: one DBOS-durable run (`workflow_id`) whose calls wait through a waiting handler.

    Without `inbox` the run needs a tool approval and an answer, and its `ask` writes the token and the pending
    calls to `token.json`; with it, the model asks two questions (`q-1`, `q-2`) that `ask_through_store` puts in
    the question table.
    """

    inbox: bool = False
    """Whether its questions wait in the question table (`ask_through_store`)."""

    approvals: bool = False
    """Whether its model calls `deploy_to` (`call_0`, needing approval) and asks one question (`call_1`), both
    published by `ask_through_store`."""

    timeout: float | None = None
    """The waiting handler's `timeout`, in seconds."""

    spelling: str = 'current'
    """How its waiting handler is written (without `inbox` and `approvals`): `'current'` (this Pydantic AI's own,
    `waiting_handler`), `'handle'` (`HandleDeferredToolCalls`) or `'request-input'` (`RequestInput`)."""

    handler_first: bool = False
    """Whether the waiting handler is listed before `DBOSExternalEvents` (without `inbox` and `approvals`)."""

    crash_after_ask: bool = False
    """Whether it kills itself with SIGKILL once, after `ask` ran and before DBOS recorded it."""

    workflow_id: str = 'ri-0'
    """The run's workflow id."""

    escalate: float | None = None
    """With `approvals`: its approval escalates to `team:oncall` when undecided this many seconds."""

    def command(self, *, resume: bool) -> list[str]:
        command = [sys.executable, str(REQUEST_INPUT_WORKER), '--db', self.database_url, '--dir', str(self.directory)]
        command += ['--workflow-id', self.workflow_id]
        command += ['--crash-after-ask'] if self.crash_after_ask else []
        command += ['--inbox'] if self.inbox else []
        command += ['--approvals'] if self.approvals else []
        command += ['--timeout', str(self.timeout)] if self.timeout is not None else []
        command += ['--escalate', str(self.escalate)] if self.escalate is not None else []
        command += ['--spelling', self.spelling] + (['--handler-first'] if self.handler_first else [])
        return [*command, *(['--resume'] if resume else [])]

    async def pending_calls(self) -> dict[str, Any]:
        """What its `ask` was handed, once it was: `{"token": ..., "approvals": [...], "calls": [...]}`."""
        token_file = self.directory / 'token.json'
        await anyio.to_thread.run_sync(lambda: wait_for(token_file.exists, 'the token to be handed out'))
        return json.loads(token_file.read_text())

    def output(self) -> Any:
        """What the run's model got, as its final response says (JSON)."""
        return json.loads(self.lines('out.txt')[0])


async def pending_of(store: DBOSQuestionStore, count: int, worker: WorkerProcess) -> Sequence[StoredRequest]:
    """The questions pending in `store`, once there are `count` of them; fails at once if `worker` dies first."""

    async def enough() -> Sequence[StoredRequest] | None:
        assert worker.process is None or worker.process.poll() is None, worker.log_text()
        records = await store.pending_records()
        return records if len(records) >= count else None

    return await wait_until(enough, f'{count} pending question(s)')


async def killed_while_waiting(
    worker: WorkerProcess, store: DBOSQuestionStore, count: int = 1
) -> Sequence[StoredRequest]:
    """Start `worker`, wait until its `count` questions are pending in `store`, then kill it with SIGKILL.

    The runs are left waiting, as after a crash; returns their questions, as published before it.
    """
    worker.start()
    records = await pending_of(store, count, worker)
    worker.kill()
    return records


async def publications_recorded(database_url: str, count: int = 1) -> None:
    """Wait until DBOS has recorded `count` `ask_user.publish` steps: the runs wait, their questions' keys recorded.

    Between a question's row and the record of its publish step there is a moment when a crash makes the
    recovered run publish again; a test of a crash *while waiting* kills only after it.
    """
    from sqlalchemy import text

    from pydantic_ai_ask_user.dbos._engine import create_engine

    table = 'dbos.operation_outputs' if database_url.startswith('postgresql') else 'operation_outputs'
    engine = create_engine(database_url)

    def recorded() -> int:
        with engine.connect() as conn:
            query = text(f"SELECT count(*) FROM {table} WHERE function_name = 'ask_user.publish'")
            return int(conn.execute(query).scalar_one())

    async def enough() -> bool | None:
        return True if await anyio.to_thread.run_sync(recorded) >= count else None

    try:
        await wait_until(enough, f'{count} recorded publication(s)')
    finally:
        engine.dispose()


def pick(label: str) -> AskUserResponse:
    """The answer that picks `label` for the workers' one question, `Database`."""
    return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=(label,)),))


def dbos_workflows(url: str, live: dict[str, str]) -> None:
    """DBOS's `workflow_status` table (the two columns a store reads), with these workflows and statuses."""
    engine = shared_engine(url)
    with engine.begin() as conn:
        if engine.dialect.name == 'postgresql':
            conn.execute(sa.text('CREATE SCHEMA IF NOT EXISTS dbos'))
            table = 'dbos.workflow_status'
        else:
            table = 'workflow_status'
        conn.execute(sa.text(f'CREATE TABLE IF NOT EXISTS {table} (workflow_uuid TEXT PRIMARY KEY, status TEXT)'))
        for workflow, status in live.items():
            conn.execute(sa.text(f'INSERT INTO {table} VALUES (:w, :s)'), {'w': workflow, 's': status})


def publish_question(
    url: str, key: str, *, deadline: float | None = None, workflow: str = 'wf', asked_at: float | None = None
) -> None:
    """Publish a question of `make_request` under `key`, waited for by `workflow`, asked at `asked_at` (else now)."""
    request = make_request(id=key)
    if deadline is not None:
        request = replace(request, deadline=deadline)
    with shared_engine(url).begin() as conn:
        insert_pending(conn, request, workflow)
        if asked_at is not None:
            conn.execute(
                sa.update(requests_table)
                .where(requests_table.c.id == key)
                .values(created_at=asked_at, updated_at=asked_at)
            )
