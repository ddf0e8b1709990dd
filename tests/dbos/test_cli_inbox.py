"""`ask-user inbox --db` as an operator runs it: the web inbox over a DBOS database, from one command.

Real parts: a DBOS worker whose run waits with a tool approval and a question (`request_input_worker.py
--approvals`, both addressed to `owner-<run>`), `ask-user inbox` served in a process of its own, `ask-user inbox
link` printing sign-in links in others, and Chromium signing in with them, answering and approving, until the run
finishes with what was decided. Every wait is for an output or an event, bounded by `WAIT`.
"""

from __future__ import annotations

import base64
import json
import re
import time
from pathlib import Path

import anyio
import httpx
import pytest
from durable_support import RequestInputWorker
from inbox_browser import chromium
from inbox_support import ask_user, inbox, link
from playwright.async_api import Browser, Page, expect
from test_approvals import pending_approvals_of
from waits import WAIT

from pydantic_ai_ask_user.dbos import DBOSQuestionStore

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take


async def signed_in(browser: Browser, url: str) -> Page:
    """A page in a browser context of its own (its own cookies), after opening `url`."""
    context = await browser.new_context()
    context.set_default_timeout(WAIT * 1000)
    page = await context.new_page()
    await page.goto(url)
    return page


async def test_people_sign_in_with_printed_links_and_each_decides_only_their_own_run(
    database_url: str, tmp_path: Path
) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='ib')
    key_file = str(tmp_path / 'inbox-key.json')
    with worker:
        worker.directory.mkdir()
        worker.start()
        async with DBOSQuestionStore(database_url) as store:
            [approval] = await pending_approvals_of(store, 1, [worker])
            [question] = await store.pending_records()
        source = ['--db', database_url, '--key-file', key_file]
        async with inbox(tmp_path, *source, '--title', 'Releases') as served, chromium() as browser:
            assert oct(Path(key_file).stat().st_mode & 0o777) == '0o600'
            owner = link(tmp_path, 'owner-ib', *source)
            bob = link(tmp_path, 'bob', '--group', 'team:ops', *source)
            assert owner.startswith(served.base + 'login?code=')

            # The owner signs in with their link and sees the run's approval and question, in the inbox's title.
            mine = await signed_in(browser, owner)
            await expect(mine).to_have_title(re.compile('Releases'))
            await expect(mine.locator('#approvals li')).to_have_count(1)
            await expect(mine.locator('#approvals li')).to_have_attribute('data-id', approval.key)
            await expect(mine.locator('#pending li')).to_have_count(1)

            # Bob, signed in with his, sees neither; their addresses are a 404 for him, page and API.
            theirs = await signed_in(browser, bob)
            await expect(theirs.locator('#live-status')).to_contain_text('appear here')
            await expect(theirs.locator('#approvals li')).to_have_count(0)
            await expect(theirs.locator('#pending li')).to_have_count(0)
            for path in (f'requests/{question.request.key}', f'approvals/{approval.key}'):
                shown = await theirs.goto(served.base + path)
                assert shown is not None
                assert shown.status == 404
                assert (await theirs.request.get(served.base + 'api/' + path)).status == 404

            # A used link does not sign in twice: a second browser opening the owner's link is refused.
            again = await signed_in(browser, owner)
            await expect(again.get_by_role('heading', name='This link does not work')).to_be_visible()
            await expect(again.get_by_text('ask-user inbox link')).to_be_visible()
            assert (await again.request.get(served.base + 'api/requests')).status == 401

            # The owner approves the deploy and answers the question; the run gets both.
            await mine.locator('#approvals a').click()
            await expect(mine.locator('#tool')).to_have_text('deploy_to')
            await mine.click('#approve')
            await expect(mine.locator('h1')).to_have_text('Approved: deploy_to runs')
            await mine.goto(served.base)
            await mine.locator('#pending a').click()
            await mine.get_by_label('SQLite').check()
            await mine.get_by_role('button', name='Submit').click()
            await expect(mine.get_by_text('Thank you, your answer was sent')).to_be_visible()
            await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output() == {'call_0': 'deployed 3 to production', 'call_1': {'Database': ['SQLite']}}
    who = [json.loads(line) for line in worker.lines('answered_by.txt')]
    assert who[0] == {'call_0': 'owner-ib', 'call_1': 'owner-ib'}
    assert served.lines[-1] == 'ask-user: stopped'


def _expires_at(url: str) -> float:
    """When the signed link `url` expires, as it says (its code's first part is base64 JSON)."""
    body = url.split('code=', 1)[1].split('.', 1)[0]
    return json.loads(base64.urlsafe_b64decode(body + '=' * (-len(body) % 4)))['exp']


async def test_an_administrator_link_sees_everything_once_and_an_expired_link_is_refused(tmp_path: Path) -> None:
    database = tmp_path / 'questions.sqlite'
    async with DBOSQuestionStore(f'sqlite:///{database}') as store:  # a question table, nothing waiting
        assert await store.count_pending() == 0
    source = ['--db', f'sqlite:///{database}']
    # Each client is a browser opening a link from another program (`Sec-Fetch-Site: none`); a mail scanner that
    # sends no such header gets the page that asks first (tests/web/test_web_signed_links.py).
    opened = {'sec-fetch-site': 'none'}
    first, second = httpx.AsyncClient(headers=opened), httpx.AsyncClient(headers=opened)
    async with inbox(tmp_path, *source) as served, first, second:
        # On this machine, the administrator's link was printed at start; it signs in one browser, once.
        signed = await first.get(served.admin_link)
        assert signed.status_code == 303
        listing = await first.get(served.base + 'api/requests')
        assert listing.status_code == 200, listing.text
        assert listing.json()['total'] == 0
        assert (await second.get(served.admin_link)).status_code == 403

        # The key file was made in the config directory, and `inbox link` finds it by the same --db.
        [key] = (tmp_path / 'config' / 'ask-user' / 'inbox').glob('*.json')
        assert oct(key.stat().st_mode & 0o777) == '0o600'
        admin = link(tmp_path, 'ops', '--admin', *source)
        async with httpx.AsyncClient(headers=opened) as third:
            assert (await third.get(admin)).status_code == 303
            assert (await third.get(served.base + 'api/approvals')).status_code == 200

        # A link that has expired is refused, however fresh its signature.
        short = link(tmp_path, 'carol', '--expires-in', '1', *source)
        with anyio.fail_after(WAIT):
            while time.time() <= _expires_at(short):  # the clock, not a guess of how long that takes
                await anyio.sleep(0.1)
        async with httpx.AsyncClient() as late:
            refused = await late.get(short)
            assert refused.status_code == 403
            assert 'This link does not work' in refused.text

        # A link signed with another key is refused too.
        (tmp_path / 'other.json').write_text(json.dumps({'key': 'not-the-key-of-this-inbox'}))
        other = link(tmp_path, 'mallory', '--admin', '--key-file', str(tmp_path / 'other.json'), '--url', served.base)
        async with httpx.AsyncClient() as forged:
            assert (await forged.get(other)).status_code == 403

        # Behind a proxy on this machine that ends HTTPS (believed by default: --forwarded-allow-ips 127.0.0.1),
        # the session cookie is Secure, and host-only.
        async with httpx.AsyncClient(headers=opened) as proxied:
            signed = await proxied.get(link(tmp_path, 'dana', *source), headers={'x-forwarded-proto': 'https'})
            assert signed.status_code == 303
            port = served.base.rstrip('/').rsplit(':', 1)[1]
            [session] = [c for c in signed.headers.get_list('set-cookie') if 'ask-user-session' in c]
            assert session.startswith(f'__Host-ask-user-session-{port}=')
            assert '; secure' in session.lower()

        # A second inbox on the same port cannot serve there: one line, exit 4.
        taken = await anyio.to_thread.run_sync(lambda: ask_user(tmp_path, 'inbox', *source, '--port', port))
        assert taken.returncode == 4, taken.stderr
        assert f'cannot serve the inbox on 127.0.0.1:{port}' in taken.stderr
    assert not any('may be read by other users' in line for line in served.lines)

    # A key file others may read is served, with a warning saying so.
    shared = tmp_path / 'shared.json'
    shared.write_text(json.dumps({'key': 'a-key-others-may-read-here'}))
    shared.chmod(0o644)
    async with inbox(tmp_path, *source, '--key-file', str(shared)) as served:
        assert f'ask-user: warning: {shared} may be read by other users of this machine' in '\n'.join(served.lines)


def test_bad_arguments_and_a_missing_database_are_said_in_one_line(tmp_path: Path) -> None:
    database = tmp_path / 'questions.sqlite'
    missing = ask_user(tmp_path, 'inbox', '--db', f'sqlite:///{tmp_path / "typo.sqlite"}', '--port', '0')
    assert missing.returncode == 4, missing.stderr
    assert 'there is no SQLite database at' in missing.stderr
    assert not (tmp_path / 'typo.sqlite').exists()  # nothing created: no database, no key file
    assert not (tmp_path / 'config').exists()

    for spec, said in (
        ('no-colon', '--authorize takes MODULE:FUNCTION'),
        ('no_such_module_here:check', 'cannot import no_such_module_here for --authorize: ModuleNotFoundError'),
        ('json:no_such_function', '--authorize: json has no no_such_function'),
        ('json:__name__', '--authorize: json:__name__ is not a function'),
    ):
        done = ask_user(tmp_path, 'inbox', '--db', f'sqlite:///{database}', '--authorize', spec)
        assert done.returncode == 2, (spec, done.stderr)
        assert said in done.stderr, (spec, done.stderr)
        assert len(done.stderr.splitlines()) == 1, done.stderr

    everywhere = ask_user(tmp_path, 'inbox', '--db', f'sqlite:///{database}', '--host', '0.0.0.0')
    assert everywhere.returncode == 2
    assert 'give --url' in everywhere.stderr

    no_server_yet = ask_user(tmp_path, 'inbox', 'link', 'alice', '--db', f'sqlite:///{database}')
    assert no_server_yet.returncode == 4
    assert 'no inbox key at' in no_server_yet.stderr
    hostile = ask_user(tmp_path, 'inbox', 'link', 'al\x1b[2Jice', '--db', f'sqlite:///{database}')
    assert hostile.returncode == 2
    assert '\x1b' not in hostile.stderr


async def test_an_authorize_hook_decides_who_is_who(tmp_path: Path) -> None:
    database = tmp_path / 'questions.sqlite'
    async with DBOSQuestionStore(f'sqlite:///{database}') as store:
        assert await store.count_pending() == 0
    (tmp_path / 'hooks').mkdir()
    (tmp_path / 'hooks' / 'team_auth.py').write_text(
        'from pydantic_ai_ask_user import Person\n'
        'def check(request):\n'
        '    name = request.headers.get("x-user")\n'
        '    return Person(name) if name else False\n'
    )
    hooks = ['--authorize', 'team_auth:check', '--app-dir', str(tmp_path / 'hooks')]
    async with inbox(tmp_path, '--db', f'sqlite:///{database}', *hooks) as served, httpx.AsyncClient() as client:
        assert 'signing in is up to team_auth:check' in served.lines[-2]
        assert not any('login?code=' in line for line in served.lines)
        assert (await client.get(served.base + 'api/requests')).status_code == 403
        assert (await client.get(served.base + 'api/requests', headers={'x-user': 'alice'})).status_code == 200
    assert not (tmp_path / 'config').exists()  # no key file: nobody signs in with links
