"""Agents run durably under DBOS in worker processes; their questions are answered from this one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from dbos import DBOSClient
from durable_support import WAIT_SECONDS, Worker, killed_while_waiting, pending_of, pick

from pydantic_ai_ask_user import TIMED_OUT
from pydantic_ai_ask_user.dbos import DBOSQuestionStore, StoredRequest
from pydantic_ai_ask_user.store import WithdrawnError

pytestmark = pytest.mark.anyio


async def test_a_question_answered_from_another_process_completes_the_run(worker: Worker, database_url: str) -> None:
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        assert record.workflow_id == 'run-0'
        assert [question.header for question in record.request.questions] == ['Database']
        await store.respond(record.key, pick('SQLite'))
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['SQLite']}


async def test_a_worker_killed_while_waiting_resumes_with_the_answer_without_repeating_the_first_model_call(
    worker: Worker, database_url: str
) -> None:
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await killed_while_waiting(worker, store)
        assert worker.calls() == ['ask run-0']
        worker.start(resume=True)
        # The recovered run waits for the same question, under the same id, before it is answered.
        await anyio.sleep(1.0)
        assert [r.key for r in await store.pending_records()] == [record.key]
        await store.respond(record.key, pick('PostgreSQL'))
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': ['PostgreSQL']}
    assert worker.calls() == ['ask run-0', 'final run-0']


def _answer_in_subprocess(database_url: str, request_id: str, label: str, directory: Path) -> subprocess.Popen[bytes]:
    answer = directory / f'answer-{label}.json'
    answer.write_text(json.dumps({'Database': [label]}))
    command = [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'answer', '--db', database_url, request_id]
    return subprocess.Popen(
        [*command, '--json', str(answer)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=directory
    )


async def test_a_question_is_answered_once_when_several_processes_answer_at_the_same_time(
    worker: Worker, database_url: str, tmp_path: Path
) -> None:
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
    labels = ['PostgreSQL', 'SQLite', 'PostgreSQL', 'SQLite']
    answerers = [
        _answer_in_subprocess(database_url, record.key, label, tmp_path / str(index))
        for index, label in enumerate(labels)
        if (tmp_path / str(index)).mkdir() is None
    ]
    results = [await anyio.to_thread.run_sync(lambda p=p: p.communicate(timeout=WAIT_SECONDS)) for p in answerers]
    codes = [process.returncode for process in answerers]
    assert sorted(codes) == [0, 6, 6, 6], [err.decode() for _, err in results]
    winner = labels[codes.index(0)]
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert json.loads(outputs['run-0']) == {'Database': [winner]}
    for (_, err), code in zip(results, codes, strict=True):
        if code == 6:
            assert b'already been answered' in err


async def test_a_durable_wait_that_times_out_tells_the_model_and_refuses_a_late_answer(
    worker: Worker, database_url: str
) -> None:
    worker.timeout = 2.0
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        outputs = await anyio.to_thread.run_sync(worker.wait_finished)
        assert outputs['run-0'] == TIMED_OUT
        with pytest.raises(WithdrawnError):
            await store.respond(record.key, pick('SQLite'))
        assert await store.pending() == []
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_a_hundred_concurrent_waiting_runs_are_each_answered_exactly_once(
    worker: Worker, database_url: str
) -> None:
    worker.runs = 100
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        records = await pending_of(store, 100, worker)
        expected: dict[str, str] = {}

        async def answer(record: StoredRequest) -> None:
            label = 'PostgreSQL' if int(record.workflow_id.split('-')[1]) % 2 else 'SQLite'
            expected[record.workflow_id] = label
            await store.respond(record.key, pick(label))

        async with anyio.create_task_group() as group:
            for record in records:
                group.start_soon(answer, record)
        assert await store.pending() == []
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert {run: json.loads(output) for run, output in outputs.items()} == {
        run: {'Database': [label]} for run, label in expected.items()
    }
    calls = worker.calls()
    assert sorted(calls) == sorted([f'ask run-{i}' for i in range(100)] + [f'final run-{i}' for i in range(100)])


async def test_a_question_whose_workflow_was_cancelled_is_withdrawn_and_refuses_an_answer(
    worker: Worker, database_url: str
) -> None:
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await killed_while_waiting(worker, store)
        client = DBOSClient(system_database_url=database_url)
        try:
            await client.cancel_workflow_async(record.workflow_id)
        finally:
            client.destroy()
        assert await store.pending() == []
        with pytest.raises(WithdrawnError):
            await store.respond(record.key, pick('SQLite'))
        assert (await store.record(record.key)).status == 'withdrawn'
