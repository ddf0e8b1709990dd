"""The web answerer's JSON API, served on the durable store in this process, answers a run in a worker process."""

from __future__ import annotations

import json
import time

import anyio
import httpx
import pytest
from durable_support import WAIT_SECONDS, Worker

from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio


async def test_the_web_api_on_the_durable_store_answers_a_run_waiting_in_another_process(
    worker: Worker, database_url: str
) -> None:
    worker.start()
    store = DBOSQuestionStore(database_url)
    app = create_app(store, access_token='s3cret-token')
    headers = {'Authorization': 'Bearer s3cret-token'}
    try:
        async with serve(app) as base, httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
            deadline = time.monotonic() + WAIT_SECONDS
            while not (listed := (await client.get('api/requests')).json()['requests']):
                assert time.monotonic() < deadline, worker.log_text()
                await anyio.sleep(0.1)
            (item,) = listed
            assert [question['header'] for question in item['questions']] == ['Database']
            answer = {'answers': [{'header': 'Database', 'selected': ['PostgreSQL']}]}
            first = await client.post(f'api/requests/{item["id"]}/answer', json=answer)
            second = await client.post(f'api/requests/{item["id"]}/decline', json={})
            assert first.status_code == 200, first.text
            assert second.status_code == 409
            assert second.json()['error'] == 'already_answered'
            outputs = await anyio.to_thread.run_sync(worker.wait_finished)
            assert json.loads(outputs['run-0']) == {'Database': ['PostgreSQL']}
            listed = (await client.get('api/requests')).json()
            assert listed == {'requests': [], 'next_cursor': None, 'total': 0, 'total_exact': True}
    finally:
        store.close()
