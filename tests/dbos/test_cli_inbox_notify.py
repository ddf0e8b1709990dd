"""`ask-user inbox --notify`: the inbox runs your `Notifier` beside it, over the DBOS database, and answers its links.

Real parts: a DBOS worker whose run waits with a tool approval and a question (both addressed to `owner-nt`), an
SMTP server (aiosmtpd), `ask-user inbox --db ... --notify mailer:make` in a process of its own, importing the test's
`mailer.py`, which mails the owner through `EmailChannel`. The test reads the mail back, takes its Approve link and
its SQLite link, confirms each on the page they land on, and the run finishes with what was decided, as the owner.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import httpx
import pytest
from ask_user_support import wait_until
from durable_support import RequestInputWorker
from inbox_support import ask_user, inbox
from smtp_support import parts, smtp_server
from test_approvals import pending_approvals_of

from pydantic_ai_ask_user.dbos import DBOSQuestionStore

pytestmark = pytest.mark.anyio

MAILER = """
from pydantic_ai_ask_user.notify import EmailChannel, Notifier, Recipient, StaticDirectory


def make(store, links):
    return Notifier(
        store,
        channels=[EmailChannel('127.0.0.1', {port}, sender='inbox@example.com')],
        directory=StaticDirectory([Recipient('owner-nt', email='owner@example.com')]),
        links=links,
        gather_seconds=0.05,
    )


def broken(store, links):
    return 'not a notifier'
"""
"""The application's module `--notify` names, with the SMTP server's port."""


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, html
    return found.group(1)


async def _confirm(client: httpx.AsyncClient, url: str, heading: str) -> str:
    page = await client.get(url)
    assert page.status_code == 200, page.text
    assert heading in page.text
    done = await client.post(
        url.split('?', 1)[0], data={'code': httpx.URL(url).params['code'], 'csrf': _csrf(page.text)}
    )
    assert done.status_code == 200, done.text
    return done.text


async def test_the_inbox_mails_with_the_notifier_it_is_given_and_its_links_decide_the_run(
    database_url: str, tmp_path: Path
) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='nt')
    with worker, smtp_server() as (mail, port):
        worker.directory.mkdir()
        worker.start()
        async with DBOSQuestionStore(database_url) as store:
            await pending_approvals_of(store, 1, [worker])
            await wait_until(lambda: store.count_pending(), 'the question to wait')
        (tmp_path / 'mailer.py').write_text(MAILER.format(port=port))
        source = ['--db', database_url, '--key-file', str(tmp_path / 'key.json'), '--app-dir', str(tmp_path)]
        async with inbox(tmp_path, *source, '--notify', 'mailer:make') as served:
            assert any('telling people on email' in line for line in served.lines)
            await wait_until(lambda: mail.to('owner@example.com'), 'the mail to the owner')
            await wait_until(lambda: 'SQLite' in '\n'.join(parts(m)[0] for m in mail.to('owner@example.com')), 'both')
            text = '\n'.join(parts(message)[0] for message in mail.to('owner@example.com'))
            [approve] = re.findall(r'Approve: (\S+)', text)
            [sqlite] = re.findall(r'- SQLite[^\n]*?: (\S+act\?code=\S+)', text)
            assert approve.startswith(served.base + 'act?code=')
            async with httpx.AsyncClient() as owner:
                assert 'Approved: deploy_to runs' in await _confirm(owner, approve, 'Approve deploy_to?')
                assert 'Thank you, your answer was sent' in await _confirm(owner, sqlite, 'Send this answer?')
            await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output() == {'call_0': 'deployed 3 to production', 'call_1': {'Database': ['SQLite']}}
    who = [json.loads(line) for line in worker.lines('answered_by.txt')]
    assert who[0] == {'call_0': 'owner-nt', 'call_1': 'owner-nt'}


def test_a_notify_function_that_returns_no_notifier_stops_the_inbox(database_url: str, tmp_path: Path) -> None:
    anyio.run(_make_table, database_url)
    (tmp_path / 'mailer.py').write_text(MAILER.format(port=25))
    broken = ask_user(tmp_path, 'inbox', '--db', database_url, '--port', '0', *_notify(tmp_path, 'mailer:broken'))
    assert broken.returncode == 2, broken.stderr
    assert 'ask-user: --notify: mailer:broken returned str, not a Notifier' in broken.stderr
    missing = ask_user(tmp_path, 'inbox', '--db', database_url, '--port', '0', *_notify(tmp_path, 'mailer:nothing'))
    assert missing.returncode == 2, missing.stderr
    assert '--notify: mailer has no nothing' in missing.stderr
    assert 'is at' not in missing.stderr  # refused before anything was served


def _notify(tmp_path: Path, spec: str) -> list[str]:
    return ['--app-dir', str(tmp_path), '--notify', spec]


async def _make_table(database_url: str) -> None:
    async with DBOSQuestionStore(database_url) as store:
        await store.count_pending()
