"""One damaged question row in `DBOSQuestionStore`'s table is quarantined, not contagious.

A row written by hand or by another program (control characters in a header, a header longer than any question
may have) used to take its person's inbox and `/api/requests` down with a 500, tell another person it existed (a
500 where a missing id is a 404), and make `ask-user pending` exit 4 without naming it. Now listings leave it out
and name it (a log line; a warning with its id on the command line) while serving the rest; to anyone but its
addressee it is a 404 like a missing one; its addressee gets a page saying it cannot be shown.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import replace
from pathlib import Path

import anyio
import httpx
import pytest
import sqlalchemy as sa
from ask_user_support import make_request
from cli_support import run_cli_process
from durable_support import dbos_workflows
from starlette.requests import Request

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import insert_pending
from pydantic_ai_ask_user.dbos._tables import requests_table
from pydantic_ai_ask_user.store import UnreadableRequestError
from pydantic_ai_ask_user.web import create_app

pytestmark = pytest.mark.anyio

MISSING = 'missing-0123456789abcdef0123456789abcdef'
"""A key no row has, of the damaged rows' own shape (a name and 32 hex digits: no run's key), so that a 404's text
differs from theirs only by the key."""

DAMAGES = {
    'control characters': lambda header: f'{header}\x1b[2J',
    'an over-long header': lambda header: header * 40,
}


def who(request: Request) -> Person | bool:
    name = request.headers.get('x-user')
    return Person(name) if name in ('alice', 'bob') else False


def publish(url: str, name: str, audience: str) -> str:
    # A key of its own in each test: a damaged row is logged once per process, not once per test.
    request = replace(make_request(name, id=f'{name}-{uuid.uuid4().hex}'), audience=(audience,))
    with shared_engine(url).begin() as conn:
        insert_pending(conn, request, 'wf')
    return request.key


def damage(url: str, key: str, how: str) -> None:
    with shared_engine(url).begin() as conn:
        text = conn.execute(sa.select(requests_table.c.questions).where(requests_table.c.id == key)).scalar_one()
        data = json.loads(text)
        data['questions'][0]['header'] = DAMAGES[how](data['questions'][0]['header'])
        conn.execute(sa.update(requests_table).where(requests_table.c.id == key).values(questions=json.dumps(data)))


@pytest.mark.parametrize('how', list(DAMAGES))
async def test_a_damaged_row_is_left_out_and_named_and_a_404_to_anyone_else(
    database_url: str, how: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    good = publish(database_url, 'Region', 'alice')
    bad = publish(database_url, 'Budget', 'alice')
    bobs = publish(database_url, 'Vendor', 'bob')
    damage(database_url, bad, how)
    caplog.set_level(logging.WARNING, logger='pydantic_ai_ask_user.dbos')
    async with DBOSQuestionStore(database_url) as store:
        page = await store.pending_page(visible_to=Person('alice'))
        assert [record.key for record in page.records] == [good]
        assert bad in caplog.text
        with pytest.raises(UnreadableRequestError) as caught:
            await store.get(bad)
        assert caught.value.audience == ('alice',)

        app = create_app(store, authorize=who)
        transport = httpx.ASGITransport(app=app)
        async with (
            httpx.AsyncClient(transport=transport, base_url='http://testserver', headers={'x-user': 'alice'}) as alice,
            httpx.AsyncClient(transport=transport, base_url='http://testserver', headers={'x-user': 'bob'}) as bob,
        ):
            listed = await alice.get('/api/requests')
            assert listed.status_code == 200, listed.text
            assert [row['id'] for row in listed.json()['requests']] == [good]
            inbox = await alice.get('/')
            assert inbox.status_code == 200
            assert good in inbox.text
            assert bad not in inbox.text
            # Its addressee is told it cannot be shown; bob is told what a missing id tells him.
            page_of_it = await alice.get(f'/requests/{bad}')
            assert page_of_it.status_code == 422
            assert 'This question cannot be shown' in page_of_it.text
            assert (await alice.get(f'/api/requests/{bad}')).json()['error'] == 'unreadable'
            for path in ('/requests/{}', '/api/requests/{}'):
                theirs, missing = await bob.get(path.format(bad)), await bob.get(path.format(MISSING))
                assert theirs.status_code == missing.status_code == 404
                assert theirs.text.replace(bad, MISSING) == missing.text
            assert [row['id'] for row in (await bob.get('/api/requests')).json()['requests']] == [bobs]

    listed_cli = await anyio.to_thread.run_sync(lambda: run_cli_process('pending', '--db', database_url))
    assert listed_cli.returncode == 0, listed_cli.stderr
    assert good in listed_cli.stdout
    assert bobs in listed_cli.stdout
    assert bad not in listed_cli.stdout
    assert f"warning: question '{bad}' is stored damaged" in listed_cli.stderr
    assert '\x1b' not in listed_cli.stderr
