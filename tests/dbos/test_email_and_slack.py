"""Issue 36's "done when": runs of DBOS workers reach alice by e-mail and bob by Slack, through `ask-user inbox
--notify`; alice answers from her mail's links in Chromium, bob from Slack button payloads signed as Slack signs
them; each run gets its decisions once, as theirs; bob's Slack message then shows the outcome, and alice's link,
opened again, says it was answered.

Real parts: two DBOS worker processes (each run waits with a tool approval and a question addressed to its owner),
an SMTP server (aiosmtpd), a server recording the Slack Web API calls, `ask-user inbox --db ... --notify
channels:make` in a process of its own, and Chromium.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from ask_user_support import wait_until
from durable_support import RequestInputWorker
from inbox_browser import chromium
from inbox_support import inbox
from playwright.async_api import expect
from slack_support import SECRET, action_of, button_click, form_body, signed_headers, slack_api, texts
from smtp_support import parts, smtp_server
from test_approvals import pending_approvals_of
from waits import WAIT

from pydantic_ai_ask_user.dbos import DBOSQuestionStore

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

CHANNELS = """
from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.notify import EmailChannel, Notifier, Recipient, StaticDirectory
from pydantic_ai_ask_user.notify.slack import SlackChannel

PEOPLE = [Recipient('owner-al', email='alice@example.com'), Recipient('owner-bo', slack_user='U0BOB')]


def make(store, links):
    return Notifier(
        store,
        channels=[
            EmailChannel('127.0.0.1', {port}, sender='inbox@example.com'),
            SlackChannel(token='xoxb-test', signing_secret={secret!r}, base_url={slack!r},
                         person_for={{'U0BOB': Person('owner-bo')}}),
        ],
        directory=StaticDirectory(PEOPLE),
        links=links,
        gather_seconds=0.2,
    )
"""
"""The application's module `--notify` names: alice by e-mail, bob by Slack."""


async def _slack_click(base: str, message: dict[str, Any], action_id: str) -> None:
    block_id, action = action_of(message['blocks'], action_id)
    body = form_body(button_click(message, 'U0BOB', block_id, action))
    async with httpx.AsyncClient() as slack:  # Slack itself, posting bob's click to the Request URL
        reply = await slack.post(base + 'notify/slack', content=body, headers=signed_headers(body, secret=SECRET))
    assert reply.status_code == 200, reply.text


async def test_a_dbos_run_reaches_alice_by_email_and_bob_by_slack_and_each_decides_their_own_once(
    database_url: str, tmp_path: Path
) -> None:
    alice_run = RequestInputWorker(database_url, tmp_path / 'al', approvals=True, workflow_id='al')
    bob_run = RequestInputWorker(database_url, tmp_path / 'bo', approvals=True, workflow_id='bo')
    with alice_run, bob_run, smtp_server() as (mail, port), slack_api() as api:
        for worker in (alice_run, bob_run):
            worker.directory.mkdir()
            worker.start()
        async with DBOSQuestionStore(database_url) as store:
            await pending_approvals_of(store, 2, [alice_run, bob_run])
            await wait_until(lambda: store.count_pending(), 'the questions to wait')
        (tmp_path / 'channels.py').write_text(CHANNELS.format(port=port, secret=SECRET, slack=api.url))
        source = ['--db', database_url, '--key-file', str(tmp_path / 'key.json'), '--app-dir', str(tmp_path)]
        async with inbox(tmp_path, *source, '--notify', 'channels:make') as served:
            # alice's mail: her approval and her question, with one-click links; nothing of bob's.
            await wait_until(
                lambda: 'SQLite' in '\n'.join(parts(m)[0] for m in mail.to('alice@example.com')), 'alice mailed'
            )
            text = '\n'.join(parts(message)[0] for message in mail.to('alice@example.com'))
            [approve] = re.findall(r'Approve: (\S+)', text)
            [sqlite] = re.findall(r'- SQLite[^\n]*?: (\S+act\?code=\S+)', text)
            async with chromium() as browser:
                page = await (await browser.new_context()).new_page()
                page.set_default_timeout(WAIT * 1000)
                await page.goto(approve)
                await expect(page.locator('h1')).to_have_text('Approve deploy_to?')
                await page.locator('#act-confirm').click()
                await expect(page.locator('h1')).to_have_text('Approved: deploy_to runs')
                await page.goto(sqlite)
                await expect(page.locator('h1')).to_have_text('Send this answer?')
                await page.locator('#act-confirm').click()
                await expect(page.locator('h1')).to_have_text('Thank you, your answer was sent')
                await anyio.to_thread.run_sync(alice_run.wait_succeeded)
                # The mail's link, opened again, shows the outcome: answered, and nothing is recorded twice.
                await page.goto(sqlite)
                await expect(page.locator('body')).to_contain_text('answered')

            # bob's Slack DM (a digest of his approval and his question), posted through the recording server.
            await wait_until(lambda: api.posted, 'bob to get his DM')
            [message] = api.posted
            assert all('alice' not in line for line in texts(message['blocks']))
            await _slack_click(served.base, message, 'ask_user:approve')
            await _slack_click(served.base, message, 'ask_user:answer:0')
            await anyio.to_thread.run_sync(bob_run.wait_succeeded)
            # bob's message shows the outcome, updated in place.
            await wait_until(lambda: len(api.called('chat.update')) >= 2, 'bob to see both decided')
            shown = ' '.join(' '.join(texts(update['blocks'])) for update in api.called('chat.update'))
            assert 'owner-bo' in shown
    assert alice_run.output() == {'call_0': 'deployed 3 to production', 'call_1': {'Database': ['SQLite']}}
    assert bob_run.output() == {'call_0': 'deployed 3 to production', 'call_1': {'Database': ['PostgreSQL']}}
    assert [json.loads(line) for line in alice_run.lines('answered_by.txt')] == [
        {'call_0': 'owner-al', 'call_1': 'owner-al'}
    ]
    assert [json.loads(line) for line in bob_run.lines('answered_by.txt')] == [
        {'call_0': 'owner-bo', 'call_1': 'owner-bo'}
    ]
    assert mail.to('bob@example.com') == []
