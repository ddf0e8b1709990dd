"""`examples/team_inbox/app.py` as a user runs it: uvicorn in a process of its own, two people in Chromium, the CLI.

Real parts: the FastAPI app served by uvicorn, its DBOS workflows on a SQLite database of its own, the inbox
mounted in it behind the app's own sign-in, two browser contexts (alice and bob, each signed in through the app's
form), and `ask-user pending`/`answer` run as commands against the same database while the app serves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect
from web_support import WAIT, Served, csrf_of, served

pytestmark = [pytest.mark.anyio, pytest.mark.browser]
expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take

EXAMPLE = Path(__file__).resolve().parents[2] / 'examples' / 'team_inbox'

LAUNCHER = "import uvicorn\nuvicorn.run('app:api', host='127.0.0.1', port=0, app_dir={app_dir!r})\n"
"""`uvicorn app:api --app-dir examples/team_inbox`, on a free port."""


@dataclass
class App:
    """The example served by uvicorn in its own process, and its database."""

    served: Served
    database: str

    @property
    def base(self) -> str:
        """Where it listens, without the trailing `/`."""
        return self.served.base.rstrip('/')


@asynccontextmanager
async def example(tmp_path: Path, users: str | None = None) -> AsyncIterator[App]:
    database = f'sqlite:///{tmp_path}/team-inbox.sqlite'
    env = {'TEAM_INBOX_DB': database, 'TEAM_INBOX_SECRET': 'a-test-secret', 'PATH': '/usr/bin:/bin'}
    if users is not None:
        env['TEAM_INBOX_USERS'] = users
    launcher = LAUNCHER.format(app_dir=str(EXAMPLE))
    async with served([sys.executable, '-c', launcher], cwd=tmp_path, env=env) as server:
        yield App(server, database)


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    async with example(tmp_path) as served_app:
        yield served_app


async def sign_in(context: BrowserContext, app: App, user: str) -> Page:
    page = await context.new_page()
    await page.goto(app.base + '/')
    await page.get_by_label('Name').fill(user)
    await page.get_by_label('Password').fill(f'{user}-pw')
    await page.get_by_role('button', name='Sign in').click()
    await expect(page.get_by_role('heading', name=f'Hello {user}')).to_be_visible()
    return page


async def start(page: Page, app: App, agent: str, order: int) -> str:
    """Start a run of `agent` from the home page's form; returns its run id."""
    await page.goto(app.base + '/')
    form = page.locator(f'form[action="/runs/{agent}"]')
    await form.get_by_label('Order').fill(str(order))
    async with page.expect_response(f'**/runs/{agent}') as response:
        await form.get_by_role('button').click()
    started: dict[str, str] = await (await response.value).json()
    return started['run_id']


async def finished(page: Page, app: App, run_id: str) -> dict[str, Any]:
    """The run's status once it has finished, polled from the app as the person who started it."""
    with anyio.fail_after(WAIT):
        while True:
            reply = await page.request.get(f'{app.base}/runs/{run_id}')
            assert reply.ok, await reply.text()
            status: dict[str, Any] = await reply.json()
            if status['status'] not in ('PENDING', 'ENQUEUED'):
                return status
            await anyio.sleep(0.2)


def listed(result: subprocess.CompletedProcess[str], kind: str = 'question') -> list[dict[str, Any]]:
    """The questions (or approvals) `ask-user pending --json` listed; its last line, the page's total (of every kind:
    one page here holds them all), is left out."""
    assert result.returncode == 0, result.stderr
    *items, trailer = [json.loads(line) for line in result.stdout.splitlines()]
    assert trailer['total'] == len(items), trailer
    return [item for item in items if item['kind'] == kind]


def ask_user(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', 'pydantic_ai_ask_user._cli', *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


async def test_two_people_each_see_and_answer_only_their_own_questions_in_the_browser_and_from_the_cli(
    app: App, two_people: tuple[BrowserContext, BrowserContext]
) -> None:
    alice = await sign_in(two_people[0], app, 'alice')
    bob = await sign_in(two_people[1], app, 'bob')
    alice_run = await start(alice, app, 'billing', 1042)
    bob_run = await start(bob, app, 'delivery', 2001)
    bob_billing = await start(bob, app, 'billing', 1043)

    # Alice's inbox: her one question, in its context; none of bob's two.
    await alice.goto(app.base + '/inbox/')
    await expect(alice.locator('#pending li')).to_have_count(1)
    await expect(alice.locator('#pending .title')).to_have_text('Refund for order 1042')
    await expect(alice.locator('#pending .agent')).to_have_text('billing-bot')
    await bob.goto(app.base + '/inbox/')
    await expect(bob.locator('#pending li')).to_have_count(2)
    await expect(bob.get_by_text('Refund for order 1042')).to_have_count(0)

    # The CLI (administrative) sees all three; --for narrows to one person's.
    assert len(listed(ask_user('pending', '--db', app.database, '--json'))) == 3
    bob_questions = listed(ask_user('pending', '--db', app.database, '--for', 'bob', '--json'))
    assert sorted(question['context']['title'] for question in bob_questions) == [
        'Late parcel, order 2001',
        'Refund for order 1043',
    ]
    [alice_question] = listed(ask_user('pending', '--db', app.database, '--for', 'alice', '--json'))

    # Bob, given the address of alice's question, finds nothing there: the page and the API are a plain 404.
    shown = await bob.goto(f'{app.base}/inbox/requests/{alice_question["id"]}')
    assert shown is not None
    assert shown.status == 404
    await expect(bob.get_by_role('heading', name='No such question')).to_be_visible()
    api = await bob.request.get(f'{app.base}/inbox/api/requests/{alice_question["id"]}')
    assert api.status == 404
    # Nor may he see how her run went.
    assert (await bob.request.get(f'{app.base}/runs/{alice_run}')).status == 404

    # Alice answers hers in the browser, after reading its context.
    await alice.goto(app.base + '/inbox/')
    await alice.locator('#pending a').click()
    await expect(alice.locator('#context strong')).to_have_text('twice')
    await alice.get_by_label('Keep as credit').check()
    await alice.get_by_role('button', name='Submit').click()
    await expect(alice.get_by_text('Thank you, your answer was sent')).to_be_visible()
    assert (await finished(alice, app, alice_run)) == {'status': 'SUCCESS', 'output': '{"Refund":["Keep as credit"]}'}

    # Bob answers his delivery question from a terminal, with the id `pending` showed him, his inbox open.
    await bob.goto(app.base + '/inbox/')
    await expect(bob.locator('#pending li')).to_have_count(2)
    [delivery] = [question for question in bob_questions if question['context']['agent_name'] == 'delivery-bot']
    answered = ask_user(
        'answer', '--db', app.database, delivery['id'], '--json', '-', stdin='{"Delivery": "Send again"}'
    )
    assert answered.returncode == 0, answered.stderr
    assert (await finished(bob, app, bob_run)) == {'status': 'SUCCESS', 'output': '{"Delivery":["Send again"]}'}
    # His open inbox, live, is down to the one he has not answered.
    await expect(bob.locator('#pending li')).to_have_count(1)
    await expect(bob.locator('#pending .title')).to_have_text('Refund for order 1043')
    status = await (await bob.request.get(f'{app.base}/runs/{bob_billing}')).json()
    assert status == {'status': 'PENDING', 'output': None}


async def test_each_person_decides_only_their_own_refund_approval_in_the_browser_and_from_the_cli(
    app: App, two_people: tuple[BrowserContext, BrowserContext]
) -> None:
    alice = await sign_in(two_people[0], app, 'alice')
    bob = await sign_in(two_people[1], app, 'bob')
    alice_run = await start(alice, app, 'returns', 1042)
    bob_run = await start(bob, app, 'returns', 1043)
    with anyio.fail_after(WAIT):
        while len(approvals := listed(ask_user('pending', '--db', app.database, '--json'), 'approval')) < 2:
            await anyio.sleep(0.2)
    mine = {approval['audience'][0]: approval for approval in approvals}
    assert mine['alice']['tool_name'] == 'refund'
    assert mine['alice']['args'] == {'order': 1042, 'amount': 49.9}
    assert mine['alice']['context']['title'] == 'Refund of order 1042'
    assert [
        a['id'] for a in listed(ask_user('pending', '--db', app.database, '--for', 'bob', '--json'), 'approval')
    ] == [mine['bob']['id']]

    # Alice's inbox lists her approval only; bob's is a 404 for her, page and API.
    await alice.goto(app.base + '/inbox/')
    await expect(alice.locator('#approvals li')).to_have_count(1)
    await expect(alice.locator('#approvals li')).to_have_attribute('data-id', mine['alice']['id'])
    shown = await alice.goto(f'{app.base}/inbox/approvals/{mine["bob"]["id"]}')
    assert shown is not None
    assert shown.status == 404
    assert (await alice.request.get(f'{app.base}/inbox/api/approvals/{mine["bob"]["id"]}')).status == 404

    # She opens hers, reads the tool, its arguments and the context, and approves a smaller refund.
    await alice.goto(app.base + '/inbox/')
    await alice.locator('#approvals a').click()
    await expect(alice.locator('#tool')).to_have_text('refund')
    assert json.loads(await alice.text_content('#args') or '') == {'order': 1042, 'amount': 49.9}
    await expect(alice.locator('#context strong')).to_have_text('unopened')
    await alice.click('#edit-choice summary')  # the other choices open on demand
    await alice.fill('#edited', '{"order": 1042, "amount": "a lot"}')
    await alice.click('#edit')
    await expect(alice.locator('#error-summary')).to_contain_text('amount')
    await alice.fill('#edited', '{"order": 1042, "amount": 20}')
    await alice.click('#edit')
    await expect(alice.locator('h1')).to_have_text('Approved with your arguments: refund runs')
    await expect(alice.locator('#ran-with')).to_contain_text('20')
    assert (await finished(alice, app, alice_run)) == {'status': 'SUCCESS', 'output': 'Refunded 20.00 for order 1042.'}

    # Bob denies his from a terminal, saying why; the model is told the reason, and the tool never runs.
    denied = ask_user('answer', '--db', app.database, mine['bob']['id'], '--deny', 'I would rather have credit')
    assert denied.returncode == 1, denied.stderr  # as a declined question: decided, and not as asked
    assert json.loads(denied.stdout)['decision'] == 'denied'
    assert (await finished(bob, app, bob_run)) == {'status': 'SUCCESS', 'output': 'I would rather have credit'}


CROSS_SITE = {'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site'}
"""What a browser sends with a form another site's page posts."""


@pytest.mark.parametrize('name', ['José', '김민준', 'ｊｏｓé'])
async def test_the_sign_in_form_refuses_another_site_and_takes_any_name_exactly(tmp_path: Path, name: str) -> None:
    users = 'alice:alice-pw,José:jose-pw,김민준:kim-pw'
    async with example(tmp_path, users) as served_app, httpx.AsyncClient(base_url=served_app.base) as browser:
        password = {'José': 'jose-pw', '김민준': 'kim-pw'}.get(name, 'jose-pw')
        token = csrf_of((await browser.get('/')).text)
        # Login CSRF: another site's form, even with the right name and password, signs nobody in.
        forged = await browser.post('/signin', data={'user': 'alice', 'password': 'alice-pw'}, headers=CROSS_SITE)
        assert forged.status_code == 403
        assert 'team_inbox_user' not in forged.headers.get('set-cookie', '')
        signed_in = await browser.post('/signin', data={'user': name, 'password': password, 'csrf': token})
        if name == 'ｊｏｓé':  # full width: another name than José, as audiences compare names; no 500
            assert signed_in.status_code == 403
            return
        assert signed_in.status_code == 303, signed_in.text
        home = await browser.get('/')
        assert f'Hello {name}' in home.text
        assert (await browser.get('/inbox/api/requests')).status_code == 200
