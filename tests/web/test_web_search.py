"""Search and filter in the web API over the in-process hub: `/api/requests`, `/api/approvals` and `/api/history` take
`agent=`, `title=`, `conversation=`, `addressee=`, `kind=` and `q=`, never show more than the person may see, page with
the filter kept, and refuse a bad value with a 400 `bad_query`.
"""

from __future__ import annotations

import re
from dataclasses import replace

import anyio
import httpx
import pytest
from ask_user_support import ask_one, wait_until
from playwright.async_api import BrowserContext, expect
from starlette.requests import Request
from waits import WAIT
from web_support import asgi_client, bearer, client_as, waiting_in

from pydantic_ai_ask_user import AskUserRequest, Person, QuestionContext
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import PendingApproval, PendingFilter
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)


def who(request: Request) -> Person | bool:
    """The app's sign-in: a header its proxy sets; `admin` sees everything."""
    name = request.headers.get('x-user')
    if name == 'admin':
        return Person('admin', sees_all=True)
    return Person(name, groups=frozenset({'team:ops'})) if name in ('alice', 'bob') else False


def _question(key: str, agent: str, title: str, conversation: str, audience: tuple[str, ...] | None) -> AskUserRequest:
    context = QuestionContext(title=title, agent_name=agent, conversation_id=conversation)
    return replace(ask_one(), id=key, run_id=None, audience=audience, context=context)


QUESTIONS = (
    _question('r1', 'refunds', 'Refund 1042', 'c1', None),
    _question('r2', 'refunds', 'Refund 77', 'c2', ('alice',)),
    _question('r3', 'refunds', 'Chargeback', 'c1', ('bob',)),
    _question('d1', 'deploys', 'Deploy the API', 'c1', ('team:ops',)),
)


async def _ids(client: httpx.AsyncClient, path: str, key: str, **query: str) -> list[str]:
    ids: list[str] = []
    params = dict(query, limit='1')
    total = None
    while True:
        response = await client.get(path, params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        total = body['total'] if total is None else total
        ids += [each['id'] for each in body[key]]
        if body['next_cursor'] is None:
            assert total == len(ids)
            return sorted(ids)
        params['cursor'] = body['next_cursor']


async def test_the_hub_filters_its_pending_questions() -> None:
    hub = QuestionHub()
    async with waiting_in(hub, *QUESTIONS):
        alice = Person('alice', groups=frozenset({'team:ops'}))

        async def keys(where: PendingFilter, visible_to: Person | None = None) -> list[str]:
            page = await hub.pending_page(limit=10, where=where, visible_to=visible_to)
            assert page.total == len(page.records) == await hub.count_pending(where, visible_to=visible_to)
            return sorted(record.request.key for record in page.records)

        assert await keys(PendingFilter(agent='refunds')) == ['r1', 'r2', 'r3']
        assert await keys(PendingFilter(agent='refunds'), alice) == ['r1', 'r2']
        assert await keys(PendingFilter(title='refund')) == ['r1', 'r2']
        assert await keys(PendingFilter(conversation='c1', addressee='team:ops')) == ['d1']
        assert await keys(PendingFilter(text='1042')) == ['r1']
        assert await keys(PendingFilter(kind='approval')) == []
        assert await keys(PendingFilter(addressee='bob'), alice) == []


async def test_the_api_filters_requests_approvals_and_history() -> None:
    web = WebAnswerer(authorize=who)
    hub = web.hub
    approval = PendingApproval(
        'w1',
        'call_0',
        'rollback',
        {'release': 'v7'},
        audience=('bob',),
        context=QuestionContext(agent_name='deploys', conversation_id='c1'),
    )
    async with client_as(web, 'alice') as alice, client_as(web, 'bob') as bob, client_as(web, 'admin') as admin:
        async with waiting_in(hub, *QUESTIONS), anyio.create_task_group() as group:
            group.start_soon(lambda: hub.ask_wait('w1', [], [approval]))

            async def waiting() -> bool:
                return bool(await hub.pending_approvals())

            await wait_until(waiting, 'the approval to wait')
            assert await _ids(alice, '/api/requests', 'requests', agent='refunds') == ['r1', 'r2']
            assert await _ids(admin, '/api/requests', 'requests', agent='refunds') == ['r1', 'r2', 'r3']
            # `/api/requests` lists the questions, `/api/approvals` the approvals: `kind=` narrows each to itself or none.
            assert await _ids(admin, '/api/requests', 'requests', conversation='c1') == ['d1', 'r1', 'r3']
            assert await _ids(admin, '/api/requests', 'requests', kind='approval') == []
            assert await _ids(admin, '/api/approvals', 'approvals', conversation='c1') == [approval.key]
            assert await _ids(admin, '/api/approvals', 'approvals', kind='question') == []
            assert await _ids(bob, '/api/approvals', 'approvals', q='V7') == [approval.key]
            assert await _ids(alice, '/api/approvals', 'approvals', q='v7') == []
            assert await _ids(bob, '/api/approvals', 'approvals', agent='refunds') == []
            assert await _ids(admin, '/api/requests', 'requests', addressee='team:ops') == ['d1']
            assert await _ids(alice, '/api/requests', 'requests', title='REFUND') == ['r1', 'r2']
            for key in ('r1', 'r2', 'd1'):
                assert (await admin.post(f'/api/requests/{key}/decline', json={})).status_code == 200
            decided = await bob.post(f'/api/approvals/{approval.key}/decide', json='approve')
            assert decided.status_code == 200, decided.text
        assert await _ids(admin, '/api/history', 'history', agent='refunds') == ['r1', 'r2', 'r3']  # r3 withdrawn
        assert await _ids(alice, '/api/history', 'history', conversation='c1') == ['d1', 'r1']
        assert await _ids(bob, '/api/history', 'history', q='rollback') == [approval.key]
        assert await _ids(admin, '/api/history', 'history', agent='deploys', kind='question') == ['d1']

        for path in ('/api/requests', '/api/approvals', '/api/history'):
            for query in (
                {'agent': 'x' * 201},
                {'q': 'a\x1b[2Jb'},
                {'title': 'two\nlines'},
                {'conversation': 'a\u202eb'},
                {'kind': 'other'},
            ):
                response = await alice.get(path, params=query)
                assert (response.status_code, response.json()['error']) == (400, 'bad_query'), (path, query)
                assert '\x1b' not in response.text
                assert '\u202e' not in response.text
            assert (await alice.get(path, params={'q': '   '})).status_code == 200  # blank: no search


async def test_the_filter_form_in_chromium(web: WebAnswerer, context: BrowserContext) -> None:
    hostile = '<b>"x"</b>'
    async with serve(web.app) as base, asgi_client(web) as client:
        client.headers.update(bearer(web))
        page = await context.new_page()
        await page.goto(web.login_url(base, name='alice'))
        await expect(page.locator('#live-status')).to_contain_text('appear here')
        async with waiting_in(web.hub, *QUESTIONS):
            rows = page.locator('#pending > li')
            await expect(rows).to_have_count(2)  # r3 is bob's, d1 team:ops's
            # Folded beside the heading until opened (the list starts where it did without it), open while a
            # search is active.
            await expect(page.locator('#search input[name="agent"]')).to_be_hidden()
            await page.locator('#search-box summary').click()
            await page.locator('#search input[name="agent"]').fill('refunds')
            await page.locator('#search input[name="q"]').fill(hostile)
            await page.locator('#search button[type="submit"]').click()
            await expect(page.locator('#filtered')).to_be_visible()
            await expect(rows).to_have_count(0)
            # The value is kept in the form, as text, and the form is open.
            await expect(page.locator('#search input[name="q"]')).to_have_value(hostile)
            await expect(page.locator('#search input[name="q"]')).to_be_visible()
            await page.locator('#search input[name="q"]').fill('')
            await page.locator('#search button[type="submit"]').click()
            await expect(rows).to_have_count(2)
            await expect(page.locator('#filtered')).to_be_visible()
            # A question that arrives while the filter is active is not added, even one that would match.
            async with waiting_in(web.hub, _question('late', 'refunds', 'Refund late', 'c1', None)):
                await page.reload()
                await expect(rows).to_have_count(3)
                # The page as the server draws it (the page script would go on to load the next pages as soon as
                # its end is in view): one row, and the next page's link keeping the filter.
                drawn = await (await page.request.get(f'{base}?agent=refunds&limit=1')).text()
                pending = drawn.split('id="pending"', 1)[1].split('</ul>', 1)[0]
                assert pending.count('<li data-id=') == 1
                more = re.search(r'<a id="more" href="([^"]*)"', drawn)
                assert more is not None
                assert 'agent=refunds' in more.group(1)
            for key in ('r1', 'r2'):
                assert (await client.post(f'/api/requests/{key}/decline', json={})).status_code == 200
        await page.goto(f'{base}history')
        await page.locator('#search-box summary').click()
        await page.locator('#search input[name="title"]').fill('REFUND 1042')
        await page.locator('#search button[type="submit"]').click()
        history = page.locator('#history > li')
        await expect(history).to_have_count(1)
        await expect(history.nth(0)).to_have_attribute('data-id', 'r1')
        await expect(page.locator('#search input[name="title"]')).to_have_value('REFUND 1042')
