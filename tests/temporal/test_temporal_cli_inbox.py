"""`ask-user inbox --temporal`: the web inbox over the questions waiting in Temporal workflows, from one command.

Real parts: the Temporal dev server of the fixtures, a worker running a workflow whose agent asks, `ask-user inbox
--temporal` in a process of its own, `ask-user inbox link` beside it, and a browser's requests (httpx, keeping the
session cookie) signing in with the printed links and answering through the JSON API.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from inbox_support import ask_user, inbox, link
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporal_support import (
    ALL_WORKFLOWS,
    ANSWER_PREFIX,
    TASK_QUEUE,
    AnsweredAskWorkflow,
    Outcome,
    Turn,
    patient_worker,
)
from temporalio.client import Client
from waits import WAIT

pytestmark = pytest.mark.anyio


@pytest.fixture
async def worker(temporal_address: str) -> AsyncIterator[tuple[Client, str]]:
    client = await Client.connect(temporal_address, plugins=[PydanticAIPlugin()])
    queue = f'{TASK_QUEUE}-{uuid.uuid4().hex}'
    async with patient_worker(client, task_queue=queue, workflows=list(ALL_WORKFLOWS)):
        yield client, queue


async def _listed(client: httpx.AsyncClient, base: str, workflow_id: str) -> dict[str, Any]:
    """The inbox's item for the question of `workflow_id`, once it is listed."""
    with anyio.fail_after(WAIT):
        while True:
            listed = await client.get(base + 'api/requests')
            assert listed.status_code == 200, listed.text
            mine = [item for item in listed.json()['requests'] if item['run'] == workflow_id]
            if mine:
                return mine[0]
            await anyio.sleep(0.2)  # the listing's pace: Temporal's visibility takes a moment to list a new workflow


async def test_the_inbox_serves_temporal_questions_to_people_signed_in_with_printed_links(
    temporal_address: str, worker: tuple[Client, str], tmp_path: Path
) -> None:
    client, queue = worker
    handle = await client.start_workflow(
        AnsweredAskWorkflow.run,
        Turn(prompt='Set up the service'),
        id=f'cli-inbox-{uuid.uuid4().hex}',
        task_queue=queue,
        execution_timeout=timedelta(seconds=WAIT * 3),
        result_type=Outcome,
    )
    source = ['--temporal', temporal_address]
    # Each client is a browser opening a link from another program (`Sec-Fetch-Site: none`): signed in at once.
    opened = {'sec-fetch-site': 'none'}
    async with (
        inbox(tmp_path, *source) as served,
        httpx.AsyncClient(headers=opened) as ops,
        httpx.AsyncClient(headers=opened) as alice,
    ):
        assert f'the Temporal namespace default at {temporal_address}' in served.said('team inbox of ')
        assert (await ops.get(served.admin_link)).status_code == 303
        item = await _listed(ops, served.base, handle.id)
        assert [question['header'] for question in item['questions']] == ['Database', 'Region']

        # alice, signed in with the link `inbox link` printed for her, sees the unaddressed question and answers it.
        assert (await alice.get(link(tmp_path, 'alice', *source))).status_code == 303
        assert (await _listed(alice, served.base, handle.id))['id'] == item['id']
        answer = {
            'answers': [
                {'header': 'Database', 'selected': ['SQLite']},
                {'header': 'Region', 'selected': ['US'], 'note': 'near the users'},
            ]
        }
        sent = await alice.post(served.base + f'api/requests/{item["id"]}/answer', json=answer)
        assert sent.status_code == 200, sent.text
        outcome = await handle.result()
    assert json.loads(outcome.output.removeprefix(ANSWER_PREFIX)) == {
        'Database': ['SQLite'],
        'Region': {'answer': ['US'], 'note': 'near the users'},
    }


async def test_an_unreachable_temporal_server_is_exit_4(tmp_path: Path) -> None:
    done = await anyio.to_thread.run_sync(lambda: ask_user(tmp_path, 'inbox', '--temporal', '127.0.0.1:1'))
    assert done.returncode == 4, done.stderr
    assert 'cannot read the questions in the Temporal namespace default at 127.0.0.1:1' in done.stderr
    assert not (tmp_path / 'config').exists()
