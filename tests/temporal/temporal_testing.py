"""What the Temporal tests share on the client side: clients, worker processes to kill with -9, and waits.

Not imported by the workers (the workflows are in `temporal_support`): this is the test process's side.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from forked import forked_cli
from processes import WorkerProcess
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporal_support import (
    ALL_WORKFLOWS,
    ANSWER_PREFIX,
    DEPLOYED,
    EVENTS_FILE_VARIABLE,
    TASK_QUEUE,
    Outcome,
    Turn,
    patient_worker,
)
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from waits import WAIT, read_line, wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.temporal import pending_questions

WORKER_SCRIPT = Path(__file__).with_name('temporal_worker.py')

ANSWER = AskUserResponse(
    answers=(
        AskUserAnswer(header='Database', selected=('PostgreSQL',), note='only after the backup'),
        AskUserAnswer(header='Region', selected=('EU',)),
    )
)
"""The person's answer to `temporal_support.QUESTIONS`."""

T = TypeVar('T')


@pytest.fixture
async def client(temporal_address: str) -> Client:
    return await Client.connect(temporal_address, plugins=[PydanticAIPlugin()])


@pytest.fixture
async def worker(client: Client) -> AsyncIterator[str]:
    """A worker of every test workflow (`ALL_WORKFLOWS`) in this process, on a task queue of its own; yields the
    queue. A test module that needs other workflows has a `worker` of its own."""
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    DEPLOYED.clear()
    async with patient_worker(client, task_queue=queue, workflows=list(ALL_WORKFLOWS)):
        yield queue


async def waiting_one(look: Callable[[], Awaitable[list[T]]], what: str) -> T:
    """The one thing `look` (a Query) finds waiting, once there is one; each look is a round trip to the server."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            pending = await look()
        except RPCError:
            pending = []  # no worker has run the workflow's first task yet, or the one that had is gone
        if pending:
            [found] = pending
            return found
        await asyncio.sleep(0.1)  # the poll's pace, not a wait for time to pass
    raise AssertionError(f'no {what} was waiting within {WAIT:.0f} s')


async def user_error_of(result: Awaitable[Any]) -> str:
    """The message of the `UserError` that fails the workflow run whose result `result` awaits."""
    with pytest.raises(WorkflowFailureError) as failed:
        await result
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == 'UserError'
    return cause.message


async def waiting_question(handle: WorkflowHandle[Any, Any]) -> AskUserRequest:
    """The one question the workflow waits for, once it waits."""
    return await waiting_one(lambda: pending_questions(handle), 'question')


def told(request: AskUserRequest, response: AskUserResponse) -> str:
    """What the asking model says once it got `response` to `request`."""
    return ANSWER_PREFIX + json.dumps(ask_user_result(request, response), sort_keys=True)


@dataclass
class TemporalWorker(WorkerProcess):
    """`temporal_worker.py`, a worker of every test workflow, polling `queue` on the Temporal server at `server`;
    it prints `ready` once it polls."""

    queue: str = ''
    """The task queue it polls."""

    def command(self, *, resume: bool) -> list[str]:
        return [sys.executable, str(WORKER_SCRIPT), self.server, self.queue]


@pytest.fixture
def start_worker(temporal_address: str, tmp_path: Path) -> Iterator[Any]:
    """Starts worker processes on one task queue; yields `start(**environment) -> TemporalWorker`, kills them after."""
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    started: list[TemporalWorker] = []

    def start(**environment: str) -> TemporalWorker:
        worker = TemporalWorker(
            temporal_address,
            tmp_path,
            queue=queue,
            name=f'worker-{len(started)}',
            environment={**os.environ, EVENTS_FILE_VARIABLE: str(tmp_path / 'events'), **environment},
        )
        started.append(worker)
        worker.start(pipe=True)
        assert worker.stdout is not None
        # Start-up hashes every module the worker imported (Temporal's build id) and validates the workflows.
        assert read_line(worker.stdout, 'the worker saying it is ready', 2 * WAIT).strip() == 'ready'
        return worker

    start.queue = queue  # type: ignore[attr-defined]
    try:
        yield start
    finally:
        for worker in started:
            worker.stop()


def asked(tmp_path: Path) -> list[str]:
    """The keys of the questions the workers' event stream handlers were given, once per time asked."""
    events = tmp_path / 'events'
    return events.read_text().split() if events.exists() else []


async def wait_for_file(path: Path) -> None:
    """Return once `path` exists."""
    await wait_until(path.exists, f'{path.name} to appear')


async def history_kinds(handle: WorkflowHandle[Any, Any]) -> list[str]:
    """The kind of each event in the workflow's history, in order (`workflow_execution_completed_event_attributes`...)."""
    history = await handle.fetch_history()
    return [event.WhichOneof('attributes') for event in history.events]


async def accepted_updates(handle: WorkflowHandle[Any, Any]) -> int:
    """How many Updates the workflow accepted: one per decision or answer that reached the run."""
    return (await history_kinds(handle)).count('workflow_execution_update_accepted_event_attributes')


async def events_delivered(handle: WorkflowHandle[Any, Any], tmp_path: Path, key: str) -> None:
    """Return once the run's event stream handler was given the question `key` and the server recorded every one of
    its activities as completed. The handler runs in an activity, which Temporal runs at least once: a worker killed
    before the server recorded it complete (the question already waits by then) has it run again by the next one.
    """

    async def settled() -> bool:
        if key not in asked(tmp_path):
            return False
        history = await handle.fetch_history()
        handlers = {
            event.event_id
            for event in history.events
            if event.HasField('activity_task_scheduled_event_attributes')
            and event.activity_task_scheduled_event_attributes.activity_type.name.endswith('__event_stream_handler')
        }
        completed = {
            event.activity_task_completed_event_attributes.scheduled_event_id
            for event in history.events
            if event.HasField('activity_task_completed_event_attributes')
        }
        return bool(handlers) and handlers <= completed

    await wait_until(settled, "the event stream handler's activities to be recorded complete")


async def finished_once(client: Client, handle: WorkflowHandle[Any, Any]) -> None:
    """The run completed once: one execution of the workflow, and one accepted Update in its history."""
    kinds = await history_kinds(handle)
    assert kinds.count('workflow_execution_completed_event_attributes') == 1
    assert kinds.count('workflow_execution_update_accepted_event_attributes') == 1
    executions = [execution async for execution in client.list_workflows(f'WorkflowId = "{handle.id}"')]
    assert len(executions) == 1


async def ask_user_cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`ask-user ARGS` in a process of its own (the person's, not the worker's: its Temporal client starts and ends
    with it), `env` added to its environment; its exit code, stdout and stderr."""
    done = await asyncio.to_thread(functools.partial(forked_cli, *args, stdin=stdin, timeout=WAIT, env=env))
    return done.returncode, done.stdout, done.stderr


async def listed_by_pending(address: str, workflow_id: str) -> dict[str, Any]:
    """The line of `ask-user pending --temporal ADDRESS --json` for what waits in `workflow_id` (its question, or its
    wait; for a wait of approvals only, which is listed by its approvals, its one approval, `kind` `approval`, which
    has the wait's `token` too), once it is listed."""
    deadline = time.monotonic() + WAIT
    while True:
        code, out, err = await ask_user_cli('pending', '--temporal', address, '--json')
        assert code == 0, err
        *lines, trailer = map(json.loads, out.splitlines())
        assert trailer['total_exact'] is False  # the page's trailer: Temporal counts the waiting workflows
        mine = [line for line in lines if line.get('workflow_id') == workflow_id]
        mine = [line for line in mine if line['kind'] != 'approval'] or mine
        if mine:
            [line] = mine
            return line
        assert time.monotonic() < deadline, f'{workflow_id} was not listed within {WAIT:.0f} s: {out}'


async def start_run(
    client: Client,
    queue: str,
    workflow: Any,
    *,
    prefix: str = 'ask',
    prompt: str = 'Set up the service',
    owner: str | None = None,
) -> WorkflowHandle[Any, Outcome]:
    """Start one run of `workflow` (one of `temporal_support`'s) on `queue`, under a fresh id starting with `prefix`
    (and the owner's name, when the run is `owner`'s: its deps, to whom the owned agents address what they ask)."""
    return await client.start_workflow(
        workflow.run,
        Turn(prompt=prompt) if owner is None else Turn(prompt=prompt, owner=owner),
        id=f'{prefix}-{uuid.uuid4().hex}' if owner is None else f'{prefix}-{owner}-{uuid.uuid4().hex}',
        task_queue=queue,
        execution_timeout=timedelta(seconds=WAIT * 3),
        result_type=Outcome,
    )
