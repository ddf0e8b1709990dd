"""Questions waiting in Temporal workflows, listed and answered from another process: `ask-user` and the web inbox."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from ask_user_support import free_port
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporal_server import TemporalServer
from temporal_support import (
    ALL_WORKFLOWS,
    ANSWER_PREFIX,
    CALL_ID,
    EVENTS,
    TASK_QUEUE,
    AnsweredAskWorkflow,
    Outcome,
    patient_worker,
)
from temporal_testing import ask_user_cli, history_kinds, listed_by_pending, start_run
from temporalio.client import Client, WorkflowHandle
from waits import WAIT, read_line

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Person
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.store import AlreadyAnsweredError
from pydantic_ai_ask_user.temporal import TemporalQuestionStore, TemporalRecord
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio

ANSWER_JSON = {'Database': ['SQLite'], 'Region': {'answer': ['US'], 'note': 'near the users'}}
"""The answer `ask-user answer --json -` reads, in the shape the model gets."""

ANSWER = AskUserResponse(
    answers=(
        AskUserAnswer(header='Database', selected=('SQLite',)),
        AskUserAnswer(header='Region', selected=('US',), note='near the users'),
    )
)
"""`ANSWER_JSON` as a response."""


async def _connect(address: str) -> Client:
    return await Client.connect(address, plugins=[PydanticAIPlugin()])


async def _start(client: Client, queue: str) -> WorkflowHandle[Any, Outcome]:
    return await start_run(client, queue, AnsweredAskWorkflow, prefix='inbox')


def _told(request: AskUserRequest, response: AskUserResponse) -> str:
    return ANSWER_PREFIX + json.dumps(ask_user_result(request, response), sort_keys=True)


@pytest.fixture
async def worker(temporal_address: str) -> AsyncIterator[tuple[Client, str]]:
    client = await _connect(temporal_address)
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    async with patient_worker(client, task_queue=queue, workflows=list(ALL_WORKFLOWS)):
        yield client, queue


async def test_ask_user_pending_lists_a_question_waiting_in_a_workflow_and_ask_user_answer_answers_it_once(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    handle = await _start(client, queue)
    line = await listed_by_pending(temporal_address, handle.id)
    assert line['tool_call_id'] == CALL_ID
    assert [question['header'] for question in line['questions']] == ['Database', 'Region']
    assert line['notes'] is True
    key = line['id']
    store = TemporalQuestionStore(client=client)
    records = await store.pending_records()
    [request] = [record.request for record in records if record.key == key]
    # An unaddressed question is anyone's: on a person's page, and in their count, which Temporal cannot take from
    # the memo, so it is counted by listing (exact); nobody's page is ever counted in waiting workflows.
    mine = await store.pending_page(limit=500, visible_to=Person('anyone'))
    assert key in [record.key for record in mine.records]
    assert mine.total_exact
    assert mine.total == await store.count_pending(visible_to=Person('anyone')) >= 1

    code, out, err = await ask_user_cli(
        'answer', key, '--temporal', temporal_address, '--json', '-', stdin=json.dumps(ANSWER_JSON)
    )
    assert (code, err) == (0, '')
    assert json.loads(out) == ask_user_result(request, ANSWER)
    outcome = await handle.result()
    assert outcome.output == _told(request, ANSWER)

    code, _, err = await ask_user_cli(
        'answer', key, '--temporal', temporal_address, '--json', '-', stdin='{"cancelled": true}'
    )
    assert code == 6, err
    assert 'already been answered' in err
    kinds = await history_kinds(handle)
    assert kinds.count('workflow_execution_update_accepted_event_attributes') == 1
    assert kinds.count('workflow_execution_completed_event_attributes') == 1


async def test_a_question_is_answered_by_its_key_only_never_by_the_tool_call_id_another_run_repeats(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    first, second = await _start(client, queue), await _start(client, queue)
    asked_first, asked_second = (
        await listed_by_pending(temporal_address, first.id),
        await listed_by_pending(temporal_address, second.id),
    )
    assert asked_first['tool_call_id'] == asked_second['tool_call_id'] == CALL_ID
    assert asked_first['id'] != asked_second['id']

    code, _, err = await ask_user_cli('answer', CALL_ID, '--temporal', temporal_address, '--json', '-', stdin='{}')
    # The bare tool call id would be either run's question (both said `call_0`): both are listed, none answered.
    assert code == 9, err
    assert err.startswith(f"ask-user: '{CALL_ID}' means 2 waiting items; give the whole id of the one you mean:")
    code, _, err = await ask_user_cli(
        'answer', asked_first['id'], '--temporal', temporal_address, '--json', '-', stdin=json.dumps(ANSWER_JSON)
    )
    assert code == 0, err
    assert (await first.result()).output.startswith(ANSWER_PREFIX)
    # The second run still waits for its own question, untouched by the answer to the first.
    assert (await listed_by_pending(temporal_address, second.id))['id'] == asked_second['id']
    store = TemporalQuestionStore(client=client)
    with pytest.raises(AlreadyAnsweredError):
        await store.respond(asked_first['id'], ANSWER)
    await store.respond(asked_second['id'], ANSWER)
    assert (await second.result()).output == (await first.result()).output


async def test_the_web_inbox_on_the_temporal_store_lists_the_question_and_an_answer_sent_through_it_resumes_the_run(
    temporal_address: str, worker: tuple[Client, str]
) -> None:
    client, queue = worker
    handle = await _start(client, queue)
    app = create_app(TemporalQuestionStore(temporal_address), access_token='s3cret-token')
    headers = {'Authorization': 'Bearer s3cret-token'}
    async with serve(app) as base, httpx.AsyncClient(base_url=base, headers=headers, timeout=WAIT) as web:
        item = await _until(lambda: _web_item(web, handle.id))
        assert [question['header'] for question in item['questions']] == ['Database', 'Region']
        assert (await web.post(f'api/requests/{CALL_ID}/answer', json=_body(ANSWER))).status_code == 404
        first = await web.post(f'api/requests/{item["id"]}/answer', json=_body(ANSWER))
        second = await web.post(f'api/requests/{item["id"]}/decline', json={})
        assert first.status_code == 200, first.text
        assert (second.status_code, second.json()['error']) == (409, 'already_answered')
        outcome = await handle.result()
        assert outcome.output.startswith(ANSWER_PREFIX)
        assert json.loads(outcome.output.removeprefix(ANSWER_PREFIX)) == {
            'Database': ['SQLite'],
            'Region': {'answer': ['US'], 'note': 'near the users'},
        }
        await _until(lambda: _web_item(web, handle.id, gone=True))


def _body(response: AskUserResponse) -> dict[str, Any]:
    from pydantic_ai_ask_user._json import response_to_json

    return response_to_json(response)


async def _web_item(web: httpx.AsyncClient, workflow_id: str, *, gone: bool = False) -> Any:
    """The inbox's item for the question of `workflow_id` (or `True` once it is gone, with `gone`); `None` else."""
    listed = await web.get('api/requests')
    assert listed.status_code == 200, listed.text
    mine = [item for item in listed.json()['requests'] if item['run'] == workflow_id]
    if gone:
        return True if not mine else None
    return mine[0] if mine else None


async def _until(look: Any) -> Any:
    """What `look()` returns once it is not `None`, looking again until `WAIT` runs out."""
    deadline = time.monotonic() + WAIT
    while (found := await look()) is None:
        assert time.monotonic() < deadline, f'not seen within {WAIT:.0f} s'
        await asyncio.sleep(0.1)  # the poll's pace, not a wait for time to pass
    return found


async def test_the_temporal_server_restarted_mid_wait_still_lists_the_question_and_it_is_answered_once(
    temporal_server: TemporalServer,
) -> None:
    EVENTS.clear()
    client = await _connect(temporal_server.address)
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    async with patient_worker(client, task_queue=queue, workflows=list(ALL_WORKFLOWS)):
        handle = await _start(client, queue)
        key = (await listed_by_pending(temporal_server.address, handle.id))['id']
        temporal_server.stop()  # kill -9: the question waits in the server's database file, and the worker retries
        temporal_server.start()  # the same port and file

        assert (await listed_by_pending(temporal_server.address, handle.id))['id'] == key
        code, out, err = await ask_user_cli(
            'answer', key, '--temporal', temporal_server.address, '--json', '-', stdin=json.dumps(ANSWER_JSON)
        )
        assert code == 0, err
        outcome = await handle.result()
    [request] = {event.request for event in EVENTS}
    assert request.key == key
    assert len(EVENTS) == 1  # asked once
    assert json.loads(out) == ask_user_result(request, ANSWER)
    assert outcome.output == _told(request, ANSWER)
    kinds = await history_kinds(handle)
    assert kinds.count('workflow_execution_update_accepted_event_attributes') == 1
    assert kinds.count('workflow_execution_completed_event_attributes') == 1


@pytest.mark.parametrize('temporal_server', [False], ids=['no-index'], indirect=True)
async def test_a_namespace_without_the_search_attribute_is_exit_4_saying_how_to_register_it_and_the_run_waits_for_it(
    temporal_server: TemporalServer,
) -> None:
    for command in (['pending'], ['answer', 'abc', '--json', '-']):
        code, out, err = await ask_user_cli(*command, '--temporal', temporal_server.address, stdin='{}')
        assert (code, out) == (4, ''), err
        assert 'no search attribute AskUserQuestions' in err
        assert '--name AskUserQuestions --type KeywordList' in err

    client = await _connect(temporal_server.address)
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    async with patient_worker(client, task_queue=queue, workflows=list(ALL_WORKFLOWS)):
        handle = await _start(client, queue)
        # The workflow task that records the question fails (the attribute is unknown), and Temporal retries it.
        await _until(lambda: _failed_task(handle))
        register = [str(temporal_server.binary), 'operator', 'search-attribute', 'create', '--address']
        register += [temporal_server.address, '--name', 'AskUserQuestions', '--type', 'KeywordList']
        await asyncio.to_thread(subprocess.run, register, check=True, capture_output=True, timeout=WAIT)
        key = (await listed_by_pending(temporal_server.address, handle.id))['id']
        code, _, err = await ask_user_cli(
            'answer', key, '--temporal', temporal_server.address, '--json', '-', stdin=json.dumps(ANSWER_JSON)
        )
        assert code == 0, err
        assert (await handle.result()).output.startswith(ANSWER_PREFIX)


async def _failed_task(handle: WorkflowHandle[Any, Any]) -> bool:
    history = await handle.fetch_history()
    return any(event.HasField('workflow_task_failed_event_attributes') for event in history.events)


async def test_an_unreachable_temporal_server_is_exit_4_every_time_never_an_abort_at_exit() -> None:
    address = f'127.0.0.1:{free_port()}'  # nothing listens there
    for _ in range(3):  # the client's runtime aborted the interpreter's clean-up in most such runs, before
        code, out, err = await ask_user_cli('pending', '--temporal', address)
        assert (code, out) == (4, ''), err
        assert err.startswith(f'ask-user: cannot read the questions in the Temporal namespace default at {address}')
        assert 'Fatal Python error' not in err


async def test_namespace_without_temporal_is_refused() -> None:
    code, _, err = await ask_user_cli('pending', '--namespace', 'prod')
    assert code == 4
    assert '--namespace is a Temporal namespace' in err


def _readme_files() -> dict[str, str]:
    """The files of the docs' complete Temporal example: each ```python block that starts `# NAME.py`."""
    readme = (Path(__file__).parents[2] / 'docs' / 'durable' / 'temporal.md').read_text(encoding='utf-8')
    # The section of the example: the other sections have files of their own.
    section = readme.split('\n## Ask inside a run\n', 1)[1].split('\n## ', 1)[0]
    blocks = re.findall(r'```python[^\n]*\n(# (\w+\.py)\n.*?)```', section, re.DOTALL)
    return {name: source for source, name in blocks}


async def test_the_docs_temporal_example_runs_as_copied_and_ask_user_answer_answers_it(
    temporal_address: str, tmp_path: Path
) -> None:
    files = _readme_files()
    assert set(files) == {'migrate.py', 'worker.py', 'start.py'}
    for name, source in files.items():
        (tmp_path / name).write_text(source, encoding='utf-8')
    env = {**os.environ, 'TEMPORAL_ADDRESS': temporal_address}
    started: list[subprocess.Popen[str]] = []

    def run(script: str) -> subprocess.Popen[str]:
        started.append(
            subprocess.Popen([sys.executable, script], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
        )
        return started[-1]

    try:
        worker = run('worker.py')
        assert worker.stdout is not None
        assert await asyncio.to_thread(read_line, worker.stdout, "worker.py's ready line") == 'worker ready\n'
        start = run('start.py')
        assert start.stdout is not None
        first = await asyncio.to_thread(read_line, start.stdout, "start.py's line naming the workflow")
        workflow_id, _, said = first.partition(' ')
        assert said == f'waits for an answer: ask-user pending --temporal {temporal_address}\n'
        key = (await listed_by_pending(temporal_address, workflow_id))['id']
        code, out, err = await ask_user_cli(
            'answer', key, '--temporal', temporal_address, '--json', '-', stdin='{"Database": ["SQLite"]}'
        )
        assert (code, json.loads(out)) == (0, {'Database': ['SQLite']}), err
        rest, _ = await asyncio.to_thread(start.communicate, timeout=WAIT)
        assert (start.returncode, rest) == (0, 'Migrating to SQLite.\n')
    finally:
        # start.py too: a run that fails here leaves it waiting for its workflow's result, which never comes.
        for process in started:
            process.kill()
            process.wait()


async def test_the_store_events_say_a_question_was_requested_then_answered(worker: tuple[Client, str]) -> None:
    client, queue = worker
    store = _ListingStore(client=client, events_poll_seconds=0.1)
    events = store.events()
    first = asyncio.ensure_future(anext(events))
    await asyncio.wait_for(store.listed.wait(), WAIT)  # what waits before is not news: start after the first look
    handle = await _start(client, queue)
    requested = await asyncio.wait_for(first, WAIT)
    while requested.request is None or requested.kind != 'requested':  # another test's workflow may end meanwhile
        requested = await asyncio.wait_for(anext(events), WAIT)
    assert requested.request.id == CALL_ID
    await store.respond(requested.request_id, ANSWER)
    settled = await asyncio.wait_for(anext(events), WAIT)
    assert (settled.kind, settled.request_id) == ('answered', requested.request_id)
    assert (await handle.result()).output.startswith(ANSWER_PREFIX)
    await events.aclose()


@dataclass
class _ListingStore(TemporalQuestionStore):
    """The store, telling when it has listed the waiting questions."""

    listed: asyncio.Event = field(default_factory=asyncio.Event, init=False)

    async def pending_records(self) -> Sequence[TemporalRecord]:
        records = await super().pending_records()
        self.listed.set()
        return records
