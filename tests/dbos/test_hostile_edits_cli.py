"""`ask-user answer --args` against a tool schema with a backtracking `pattern`, and with NaN or Infinity.

A real DBOS run (`request_input_worker.py --approvals`) waits for its `deploy_to` approval; its recorded
parameters schema is then replaced in the store's table by one an app could have recorded (a `Field(pattern=...)`
Pydantic checks in linear time, a positive `amount`). The command must refuse quickly, with the reason, and
record nothing.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from cli_support import run_cli_process
from durable_support import RequestInputWorker
from sqlalchemy import text
from test_approvals import pending_approvals_of

from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._engine import create_engine
from pydantic_ai_ask_user.dbos._schema import EVENT_APPROVALS_TABLE_NAME

pytestmark = pytest.mark.anyio

PARAMETERS = {
    'type': 'object',
    'properties': {
        'env': {'enum': ['staging', 'production']},
        'replicas': {'type': 'integer'},
        'email': {'type': 'string', 'pattern': r'^([a-z0-9]+\.?)+@example\.com$'},
        'amount': {'type': 'number', 'exclusiveMinimum': 0},
    },
    'required': ['env', 'replicas'],
}


def record_parameters(database_url: str, key: str) -> None:
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(f'UPDATE {EVENT_APPROVALS_TABLE_NAME} SET parameters = :parameters WHERE id = :id'),
                {'parameters': json.dumps(PARAMETERS), 'id': key},
            )
    finally:
        engine.dispose()


async def test_answer_args_refuses_a_backtracking_match_quickly_and_nan_at_all(
    database_url: str, tmp_path: Path
) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='ri-hostile')
    worker.directory.mkdir()
    with worker:
        worker.start()
        async with DBOSQuestionStore(database_url) as store:
            [approval] = await pending_approvals_of(store, 1, [worker])
        await anyio.to_thread.run_sync(lambda: record_parameters(database_url, approval.key))

        def answer(args: dict[str, object] | str) -> tuple[subprocess.CompletedProcess[str], float]:
            given = args if isinstance(args, str) else json.dumps({'env': 'staging', 'replicas': 1, **args})
            started = time.perf_counter()
            done = run_cli_process('answer', approval.key, '--db', database_url, '--args', given)
            return done, time.perf_counter() - started

        benign, benign_seconds = await anyio.to_thread.run_sync(lambda: answer({'email': 'x!'}))
        hostile, hostile_seconds = await anyio.to_thread.run_sync(lambda: answer({'email': 'a' * 28 + '!'}))
        for refused in (benign, hostile):
            assert refused.returncode == 2, refused.stderr
            assert 'does not match' in refused.stderr
        # Both pay the command's start; the hostile match adds nothing to it (before: about 30 s, doubling per `a`).
        assert hostile_seconds / benign_seconds < 5, (hostile_seconds, benign_seconds)

        for number in ('NaN', 'Infinity', '-Infinity'):
            given = '{"env": "staging", "replicas": 1, "amount": ' + number + '}'
            refused, _ = await anyio.to_thread.run_sync(lambda given=given: answer(given))
            assert refused.returncode == 2, (number, refused.stdout, refused.stderr)
            assert 'NaN and Infinity are refused' in refused.stderr
        async with DBOSQuestionStore(database_url) as store:
            assert (await store.get_approval(approval.key)).key == approval.key  # still pending: nothing recorded
