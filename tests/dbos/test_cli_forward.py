"""`ask-user forward`, run as a subprocess on a real SQLite file and the private PostgreSQL server: the question is
handed on, the hand-off printed and kept in `ask-user history`; exit codes as `answer`'s.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from ask_user_support import make_request
from cli_support import run_cli_process
from durable_support import dbos_workflows

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending

pytestmark = pytest.mark.anyio

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),), answered_by='bob')


async def test_forward_from_the_command_line(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    key = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'
    with shared_engine(database_url).begin() as conn:
        insert_pending(conn, replace(make_request(id=key), audience=('alice',)), 'wf')
        insert_pending(conn, replace(make_request(id='a1b2ffff'), audience=('alice',)), 'wf')
    done = run_cli_process('forward', key[:8], '--to', 'bob', '--note', 'yours\x1b[2J', '--db', database_url)
    assert done.returncode == 2, done.stderr
    assert 'control' in done.stderr
    done = run_cli_process('forward', 'a1b2', '--to', 'bob', '--db', database_url)
    assert done.returncode == 9, done.stderr
    done = run_cli_process('forward', 'nothing-here', '--to', 'bob', '--db', database_url)
    assert done.returncode == 5, done.stderr
    done = run_cli_process(
        'forward', key[:8], '--to', 'bob', '--to', 'team:db', '--note', 'yours', '--db', database_url
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed['id'] == key
    assert printed['handoff']['to'] == ['bob', 'team:db']
    assert printed['handoff']['from'] == ['alice']
    async with DBOSQuestionStore(database_url, create_table=False, pooled=False) as store:
        assert [request.key for request in await store.pending(visible_to=Person('bob'))] == [key]
        assert key not in [request.key for request in await store.pending(visible_to=Person('alice'))]
    with shared_engine(database_url).begin() as conn:
        assert claim_answer(conn, key, encode_response(PICK), 'bob')
    done = run_cli_process('forward', key, '--to', 'carol', '--db', database_url)
    assert done.returncode == 6, done.stderr
    done = run_cli_process('forward', key, '--to', 'carol', '--temporal', 'localhost:7233')
    assert done.returncode == 4
    assert 'localhost:7233' in done.stderr  # nothing serves there: forwarding on Temporal is the server's to refuse
    history = run_cli_process('history', '--db', database_url)
    assert history.returncode == 0, history.stderr
    assert 'handed on to bob, team:db by ' in history.stdout
    assert 'note: yours' in history.stdout
    lines = run_cli_process('history', '--json', '--db', database_url).stdout.splitlines()
    (record,) = [json.loads(line) for line in lines if key in line]
    assert [each['note'] for each in record['handoffs']] == ['yours']
