"""A question belongs to its run: runs whose model repeats tool call ids, or sends none, each ask their own.

Agents run durably under DBOS in worker processes; their questions are answered from this one. Each test runs on
SQLite and on PostgreSQL (the `database_url` fixture). The models here give every call the id `call_0`, in every
run, as providers that number their calls per run do, or no id at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa
from cli_support import run_cli_in_process
from dbos import DBOSClient
from durable_support import WAIT_SECONDS, Worker, killed_while_waiting, pending_of, pick, publications_recorded
from test_answered_by_and_notes import old_database
from waits import wait_until

from pydantic_ai_ask_user import WITHDRAWN, AskUserRequest
from pydantic_ai_ask_user.dbos import DBOSQuestionStore, StoredRequest
from pydantic_ai_ask_user.dbos import _store as dbos_store
from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_table
from pydantic_ai_ask_user.dbos._questions import select_requests
from pydantic_ai_ask_user.dbos._schema import TABLE_NAME
from pydantic_ai_ask_user.store import AlreadyAnsweredError, WithdrawnError

pytestmark = pytest.mark.anyio


def _cli(database_url: str, *argv: str, stdin: str = '') -> subprocess.CompletedProcess[str]:
    """`ask-user ARGV --db DATABASE_URL` run in this process (these tests are about which question an id names, not
    about the program: a process of its own would cost ~1 s of CPU each); its output and exit code are the command's.
    """
    code, out, err = run_cli_in_process([*argv, '--db', database_url], stdin)
    return subprocess.CompletedProcess(['ask-user', *argv], code, out, err)


async def test_runs_whose_model_calls_every_question_call_0_each_ask_their_own_and_get_their_own_answer(
    worker: Worker, database_url: str
) -> None:
    # Before keys, the second run failed: "request id 'call_0' is already waiting in workflow 'run-0'".
    worker.call_id = 'call_0'
    worker.runs = 2
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        records = sorted(await pending_of(store, 2, worker), key=lambda record: record.workflow_id)
    assert [(record.workflow_id, record.request.id) for record in records] == [('run-0', 'call_0'), ('run-1', 'call_0')]
    first, second = records
    assert first.key != second.key
    assert first.request.run_id != second.request.run_id
    # `pending` shows each question by its key, with the tool call id and run beside it.
    listed = await anyio.to_thread.run_sync(lambda: _cli(database_url, 'pending', '--json'))
    *lines, trailer = map(json.loads, listed.stdout.splitlines())
    assert trailer['total'] == 2
    shown = {line['id']: line for line in lines}
    assert shown.keys() == {first.key, second.key}
    assert {(line['tool_call_id'], line['run_id']) for line in shown.values()} == {
        ('call_0', first.request.run_id),
        ('call_0', second.request.run_id),
    }
    # The bare tool call id would be either run's question: both are listed by their ids, and nothing is answered.
    ambiguous = await anyio.to_thread.run_sync(
        lambda: _cli(database_url, 'answer', 'call_0', '--json', '-', stdin='{"Database": ["SQLite"]}')
    )
    assert ambiguous.returncode == 9, ambiguous.stderr
    assert ambiguous.stderr.splitlines()[0] == (
        "ask-user: 'call_0' means 2 waiting items; give the whole id of the one you mean:"
    )
    assert {line.split()[0] for line in ambiguous.stderr.splitlines()[1:]} == {first.key, second.key}
    answered = await anyio.to_thread.run_sync(
        lambda: _cli(database_url, 'answer', second.key, '--json', '-', stdin='{"Database": ["PostgreSQL"]}')
    )
    assert answered.returncode == 0, answered.stderr
    async with DBOSQuestionStore(database_url) as store:
        await store.respond(first.key, pick('SQLite'))
        with pytest.raises(AlreadyAnsweredError):
            await store.respond(second.key, pick('SQLite'))
    outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert {run: json.loads(output) for run, output in outputs.items()} == {
        'run-0': {'Database': ['SQLite']},
        'run-1': {'Database': ['PostgreSQL']},
    }


async def test_a_run_whose_model_sends_no_call_id_survives_kill_9_and_waits_for_the_question_it_published(
    worker: Worker, database_url: str
) -> None:
    # With no id from the model, each execution of the tool makes one up. Before the published key was recorded,
    # the recovered run waited for a question nobody was shown, and never took the answer.
    worker.call_id = ''
    async with DBOSQuestionStore(database_url) as store:
        worker.start()
        (record,) = await pending_of(store, 1, worker)
        # Killed while waiting, after the publish step was recorded. Killed between the row's commit and that
        # record, a run whose model sends no id publishes again under a new key: not handled yet (README).
        await publications_recorded(database_url)
        worker.kill()
        worker.start(resume=True)
        await store.respond(record.key, pick('PostgreSQL'))
        outputs = await anyio.to_thread.run_sync(worker.wait_finished)
        assert [stored.key for stored in await store.pending_records()] == []
    assert json.loads(outputs['run-0']) == {'Database': ['PostgreSQL']}
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_a_run_cancelled_while_waiting_and_then_resumed_tells_the_model_the_question_was_withdrawn(
    worker: Worker, database_url: str
) -> None:
    # Before, the model was told the person declined; nobody had said anything.
    worker.call_id = 'call_0'
    worker.record_events = True
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        (record,) = await pending_of(store, 1, worker)
        client = DBOSClient(system_database_url=database_url)
        try:
            await client.cancel_workflow_async(record.workflow_id)
            # Whoever looks next (an inbox, `ask-user pending`) finds nobody waiting, and withdraws the question.
            assert await store.pending() == []
            with pytest.raises(WithdrawnError):
                await store.respond(record.key, pick('SQLite'))
            await client.resume_workflow_async(record.workflow_id)
        finally:
            client.destroy()
        outputs = await anyio.to_thread.run_sync(worker.wait_finished)
    assert outputs['run-0'] == WITHDRAWN
    events = worker.answered_events()
    assert events
    assert all(event['withdrawn'] and not event['failed'] and not event['timed_out'] for event in events)
    assert {(event['request_id'], event['run_id']) for event in events} == {('call_0', record.request.run_id)}
    assert worker.calls() == ['ask run-0', 'final run-0']


async def test_an_answer_racing_the_cancellation_of_its_run_is_refused_rather_than_recorded_for_nobody(
    worker: Worker, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with DBOSQuestionStore(database_url) as store:
        # The workflow stays PENDING, as it would while its worker restarts.
        (record,) = await killed_while_waiting(worker, store)
        client = DBOSClient(system_database_url=database_url)
        encode_response = dbos_store.encode_response

        def cancel_then_encode(*args: object) -> str:
            # The run is cancelled in the moment after the answer was checked and before it is claimed. The claim
            # used to trust a look at the workflow taken before this moment, and recorded the answer for nobody.
            client.cancel_workflow(record.workflow_id)
            return encode_response(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(dbos_store, 'encode_response', cancel_then_encode)
        try:
            with pytest.raises(WithdrawnError):
                await store.respond(record.key, pick('SQLite'))
        finally:
            client.destroy()
        stored = await store.record(record.key)
    assert (stored.status, stored.response) == ('withdrawn', None)


def _columns(database_url: str) -> list[str]:
    engine = create_engine(database_url)
    try:
        return [column['name'] for column in sa.inspect(engine).get_columns(TABLE_NAME)]
    finally:
        engine.dispose()


async def test_an_old_table_gets_the_run_and_call_columns_and_its_rows_keep_their_ids_as_keys(
    database_url: str,
) -> None:
    old_database(database_url)
    assert not {'run_id', 'tool_call_id'} & set(_columns(database_url))
    engine = create_engine(database_url)
    try:
        ensure_table(engine)
        ensure_table(engine)  # idempotent
        with engine.connect() as conn:
            rows: dict[str, StoredRequest] = {stored.key: stored for stored in select_requests(conn)}
    finally:
        engine.dispose()
    assert [_columns(database_url).count(name) for name in ('run_id', 'tool_call_id')] == [1, 1]
    # A row of an earlier version: its id was the tool call id, and it reads back as a request of no run, whose
    # key is that id, so `ask-user answer OLD-ID` still finds it.
    assert rows.keys() == {'old-answered', 'old-pending'}
    assert [(stored.request.id, stored.request.run_id) for stored in rows.values()] == [
        ('old-answered', None),
        ('old-pending', None),
    ]
    async with DBOSQuestionStore(database_url, create_table=False) as store:
        assert (await store.record('old-pending')).key == 'old-pending'
        with pytest.raises(AlreadyAnsweredError):
            await store.get('old-answered')


# --- Deferred mode across processes ---

DEFERRED_HOST = Path(__file__).with_name('deferred_host.py')


async def _pause_here_answer_and_resume_elsewhere(
    database_url: str, directory: Path, round_number: int, label: str
) -> tuple[StoredRequest, AskUserRequest]:
    """One round: pause a new run here, publish and resume it in a host process, answer with `ask-user answer`."""
    from deferred_host import deferred_agent, paused_json
    from pydantic_ai import DeferredToolRequests

    paused = await deferred_agent().run('migrate')  # a new run, whose model calls its question `call_0` again
    assert isinstance(paused.output, DeferredToolRequests)
    request = AskUserRequest.from_deferred(paused.output, 'call_0')
    assert (request.id, request.run_id) == ('call_0', paused.run_id)
    state = directory / f'paused-{round_number}.json'
    state.write_text(paused_json(paused.all_messages(), paused.output))
    out = directory / f'out-{round_number}.txt'
    log = directory / f'host-{round_number}.log'
    with log.open('wb') as handle:
        command = [sys.executable, str(DEFERRED_HOST), '--db', database_url, '--paused', str(state), '--out', str(out)]
        host = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    try:
        async with DBOSQuestionStore(database_url) as store:

            async def published() -> StoredRequest | bool:
                if host.poll() is not None:
                    return True  # the run ended without its question being shown
                fresh = [record for record in await store.pending_records() if record.request.id == 'call_0']
                return fresh[0] if fresh else False

            record = await wait_until(published, 'the deferred question to be published')
        assert isinstance(record, StoredRequest), f'resumed without anyone being asked: {out.read_text()}'
        answer = json.dumps({'Database': [label]})
        done = await anyio.to_thread.run_sync(
            lambda: _cli(database_url, 'answer', record.key, '--json', '-', stdin=answer)
        )
        assert done.returncode == 0, done.stderr
        code = await anyio.to_thread.run_sync(lambda: host.wait(timeout=WAIT_SECONDS))
        assert code == 0, log.read_text()
    finally:
        if host.poll() is None:
            host.kill()
    assert json.loads(out.read_text()) == {'Database': [label]}
    return record, request


async def test_a_deferred_question_paused_here_is_answered_and_resumed_elsewhere_twice_with_the_same_call_id(
    database_url: str, tmp_path: Path
) -> None:
    # Before, the second round's wait re-attached to the first round's finished wait (both were `call_0`), and the
    # second run was resumed with the first run's answer, without anyone being asked.
    rounds = [
        await _pause_here_answer_and_resume_elsewhere(database_url, tmp_path, 0, 'SQLite'),
        await _pause_here_answer_and_resume_elsewhere(database_url, tmp_path, 1, 'PostgreSQL'),
    ]
    # The host rebuilt each question with the run that deferred it: the key this process computes.
    for record, request in rounds:
        assert (record.key, record.request.id, record.request.run_id) == (request.key, 'call_0', request.run_id)
    assert rounds[0][1].run_id != rounds[1][1].run_id
