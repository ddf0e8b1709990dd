"""kill -9 at every point where a durable write and its record can part: asked once, the person's answer used.

Each test runs on SQLite and on PostgreSQL (the `database_url` fixture).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
import waits
from durable_support import WAIT_SECONDS, Worker, killed_while_waiting, pending_of, pick
from waits import wait_for

from pydantic_ai_ask_user import TIMED_OUT
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.store import AlreadyAnsweredError, WithdrawnError

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize('point', ['before-publish', 'after-publish'])
async def test_a_worker_killed_while_publishing_shows_one_question_and_the_run_takes_its_answer(
    worker: Worker, database_url: str, point: str
) -> None:
    worker.crash = point
    worker.start()
    await anyio.to_thread.run_sync(worker.wait_crashed)
    worker.crash = None
    worker.start(resume=True)
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        await store.respond(record.key, pick('SQLite'))
        # No ghost: one question for one tool call, whatever the crash left behind.
        assert await store.pending() == []
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['SQLite']}
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_a_worker_killed_after_the_answer_resumes_with_it_and_asks_nobody_again(
    worker: Worker, database_url: str
) -> None:
    worker.crash = 'after-answer'
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        await store.respond(record.key, pick('SQLite'))
        await anyio.to_thread.run_sync(worker.wait_crashed)
        worker.crash = None
        worker.start(resume=True)
        outputs = await anyio.to_thread.run_sync(worker.wait_finished)
        assert (await store.record(record.key)).status == 'answered'
        assert await store.pending() == []
    assert json.loads(outputs['run-0']) == {'Database': ['SQLite']}
    assert worker.calls() == ['ask run-0', 'final run-0', 'final run-0']


async def test_an_ordinary_answerer_under_dbos_is_asked_once_and_its_first_answer_is_kept(
    worker: Worker, database_url: str
) -> None:
    worker.answerer = 'plain'
    worker.crash = 'after-answer'
    worker.start()
    (request_id,) = await anyio.to_thread.run_sync(lambda: wait_for(worker.asked, 'the person to be asked'))
    worker.answer_plainly(request_id, 'SQLite')
    await anyio.to_thread.run_sync(worker.wait_crashed)
    # Were the person asked again, they would now pick differently.
    worker.answer_plainly(request_id, 'PostgreSQL')
    worker.crash = None
    worker.start(resume=True)
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['SQLite']}
    assert worker.asked() == [request_id]


async def test_an_ordinary_answerer_killed_before_the_person_answered_asks_again_under_the_same_id(
    worker: Worker, database_url: str
) -> None:
    worker.answerer = 'plain'
    worker.start()
    (request_id,) = await anyio.to_thread.run_sync(lambda: wait_for(worker.asked, 'the person to be asked'))
    worker.kill()
    worker.start(resume=True)
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: len(worker.asked()) == 2, 'the question again'))
    assert worker.asked() == [request_id, request_id]
    worker.answer_plainly(request_id, 'PostgreSQL')
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['PostgreSQL']}
    assert worker.calls() == ['ask run-0', 'final run-0']


_KILLED_WRITER = """
import os, signal, sys
import pydantic_ai_ask_user.dbos._store as store
from pydantic_ai_ask_user._cli import main

original = store.send_message

def die_mid_transaction(*args, **kwargs):
    original(*args, **kwargs)  # the row is claimed and DBOS's message written, not yet committed
    os.kill(os.getpid(), signal.SIGKILL)

store.send_message = die_mid_transaction
sys.exit(main(sys.argv[1:]))
"""


async def test_an_answer_cli_killed_while_writing_leaves_the_question_waiting_for_a_real_answer(
    worker: Worker, database_url: str, tmp_path: Path
) -> None:
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        answer = tmp_path / 'answer.json'
        answer.write_text(json.dumps({'Database': ['SQLite']}))
        command = [sys.executable, '-c', _KILLED_WRITER, 'answer', '--db', database_url, record.key]
        killed = await anyio.to_thread.run_sync(
            lambda: subprocess.run([*command, '--json', str(answer)], capture_output=True, timeout=WAIT_SECONDS)
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr.decode(errors='replace')
        # Nothing half-written: the question still waits, once, and the run still waits for it.
        assert [r.key for r in await store.pending_records()] == [record.key]
        await store.respond(record.key, pick('PostgreSQL'))
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['PostgreSQL']}


async def test_answers_around_the_deadline_are_either_used_or_refused_never_accepted_and_dropped(
    worker: Worker, database_url: str
) -> None:
    worker.runs = 12
    # Long enough for all twelve to be published before the first deadline, however loaded the machine.
    worker.timeout = timeout = waits.scaled(10.0)
    worker.start()
    accepted: dict[str, str] = {}
    refused: set[str] = set()
    async with DBOSQuestionStore(database_url) as store:
        records = await pending_of(store, 12, worker)

        async def answer_near_the_deadline(index: int, workflow_id: str, request_id: str, created_at: float) -> None:
            # Spread over the half-second each side of the deadline.
            await anyio.sleep(max(0.0, created_at + timeout - 0.5 + index / 12 - time.time()))
            label = 'PostgreSQL' if index % 2 else 'SQLite'
            try:
                await store.respond(request_id, pick(label))
            except WithdrawnError:
                refused.add(workflow_id)
            else:
                accepted[workflow_id] = label

        async with anyio.create_task_group() as group:
            for index, record in enumerate(records):
                group.start_soon(answer_near_the_deadline, index, record.workflow_id, record.key, record.created_at)
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert len(accepted) + len(refused) == 12
    for run, output in outputs.items():
        if run in accepted:
            assert json.loads(output) == {'Database': [accepted[run]]}, run
        else:
            assert output == TIMED_OUT, run


async def test_a_recovered_wait_keeps_the_deadline_of_the_first_publication(worker: Worker, database_url: str) -> None:
    # The restarted worker's clock runs past the deadline counted from the first publication, without the test
    # sleeping through it: a recovered wait that kept that deadline times out at once; one that counted its
    # timeout from the restart would wait ten times longer than the test waits for the run to finish.
    worker.timeout = timeout = 10 * WAIT_SECONDS
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await killed_while_waiting(worker, store)
        worker.clock_offset = record.created_at + timeout - time.time() + 1
        worker.start(resume=True)
        outputs = await anyio.to_thread.run_sync(worker.wait_finished)
        assert outputs['run-0'] == TIMED_OUT
        with pytest.raises(WithdrawnError):
            await store.respond(record.key, pick('SQLite'))
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_a_second_answer_after_a_crash_is_refused_as_already_answered(worker: Worker, database_url: str) -> None:
    worker.crash = 'after-answer'
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        await store.respond(record.key, pick('SQLite'))
        await anyio.to_thread.run_sync(worker.wait_crashed)
        with pytest.raises(AlreadyAnsweredError):
            await store.respond(record.key, pick('PostgreSQL'))
        worker.crash = None
        worker.start(resume=True)
        outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['SQLite']}
