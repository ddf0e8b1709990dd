"""The history in the web inbox: `GET /api/history` and the History tab, over the answerer's own hub.

Each person sees what was addressed to them (or to anyone) and what they answered or decided themselves, never anybody
else's; the administrator (the access token) sees all. Answered over HTTP, so `by` is who was signed in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import httpx
import pytest
from ask_user_support import Watch, ask_call, ask_one, question, script, wait_until
from playwright.async_api import BrowserContext, expect
from pydantic_ai import Agent
from starlette.requests import Request
from waits import WAIT
from web_support import answer_body, asgi_client, bearer, client_as, waiting_in

from pydantic_ai_ask_user import AskUser, AskUserAnsweredEvent, AskUserRequest, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.receipts import receipt_to_json, sign_receipt
from pydantic_ai_ask_user.store import HistoryFilter, PendingApproval
from pydantic_ai_ask_user.web import WebAnswerer, create_app, serve

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)

HOSTILE = '<script>alert(1)</script>'
"""Model text that must be drawn as text."""


def who(request: Request) -> Person | bool:
    """The app's sign-in: a header its proxy sets; `admin` sees everything."""
    name = request.headers.get('x-user')
    if name == 'admin':
        return Person('admin', sees_all=True)
    return Person(name) if name in ('alice', 'bob') else False


def _question(name: str, audience: tuple[str, ...] | None) -> AskUserRequest:
    context = QuestionContext(title=f'{HOSTILE} {name}', agent_name='support-bot')
    return replace(ask_one(), id=name, run_id=None, audience=audience, context=context)


async def test_the_api_lists_what_each_person_may_see_newest_first_with_who_and_what() -> None:
    web = WebAnswerer(authorize=who)
    hub = web.hub
    schema = {'type': 'object', 'properties': {'amount': {'type': 'integer'}}, 'required': ['amount']}
    approval = PendingApproval('w1', 'call_0', 'refund', {'amount': 30}, parameters=schema, audience=('bob',))
    async with client_as(web, 'alice') as alice, client_as(web, 'bob') as bob, client_as(web, 'admin') as admin:
        async with waiting_in(hub, _question('for-alice', ('alice',)), _question('for-bob', ('bob',))):
            sent = await alice.post('/api/requests/for-alice/answer', json=answer_body(custom=HOSTILE))
            assert sent.status_code == 200, sent.text
            assert (await bob.post('/api/requests/for-bob/decline', json={})).status_code == 200
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: hub.ask_wait('w1', [], [approval]))

            async def waiting() -> bool:
                return bool(await hub.pending_approvals())

            await wait_until(waiting, 'the approval to wait')
            decided = await bob.post(f'/api/approvals/{approval.key}/decide', json={'args': {'amount': 20}})
            assert decided.status_code == 200, decided.text

        mine = (await alice.get('/api/history')).json()
        assert (mine['total'], mine['next_cursor']) == (1, None)
        [record] = mine['history']
        assert {key: record[key] for key in ('kind', 'id', 'outcome', 'by', 'workflow_id')} == {
            'kind': 'question',
            'id': 'for-alice',
            'outcome': 'answered',
            'by': 'alice',
            'workflow_id': None,
        }
        assert record['response']['answers'] == [{'header': 'Database', 'custom_answer': HOSTILE}]
        assert record['questions'][0]['header'] == 'Database'
        assert record['audience'] == ['alice']
        assert record['context']['title'] == f'{HOSTILE} for-alice'
        assert record['asked_at'] <= record['finished_at']

        bobs = (await bob.get('/api/history')).json()
        assert [(each['kind'], each['outcome'], each['by']) for each in bobs['history']] == [
            ('approval', 'edited', 'bob'),
            ('question', 'declined', 'bob'),
        ]
        edited = bobs['history'][0]
        assert (edited['tool_name'], edited['args'], edited['decision']) == (
            'refund',
            {'amount': 30},
            {'approved': True, 'override_args': {'amount': 20}},
        )
        everything = (await admin.get('/api/history')).json()
        assert everything['total'] == 3
        assert [each['id'] for each in (await admin.get('/api/history?kind=question')).json()['history']] == [
            'for-bob',
            'for-alice',
        ]
        first = (await admin.get('/api/history?limit=2')).json()
        second = (await admin.get(f'/api/history?limit=2&cursor={first["next_cursor"]}')).json()
        assert [each['id'] for each in first['history'] + second['history']] == [
            each['id'] for each in everything['history']
        ]
        assert second['next_cursor'] is None

        for query, code in (('limit=0', 'bad_query'), ('kind=other', 'bad_query'), ('cursor=nope', 'bad_cursor')):
            response = await alice.get(f'/api/history?{query}')
            assert (response.status_code, response.json()['error']) == (400, code)
        pending_cursor = httpx.QueryParams({'cursor': (await hub.pending_page(limit=1)).next_cursor or 'x'})
        assert (await alice.get(f'/api/history?{pending_cursor}')).status_code == 400
        # Someone the sign-in refuses gets no history either.
        async with client_as(web, 'mallory') as mallory:
            assert (await mallory.get('/api/history')).status_code in (401, 403)


async def test_a_store_without_history_says_so() -> None:
    class Earlier:
        """A `QuestionStore` written before the history: no `history_page`."""

        async def pending(self, *, visible_to: Person | None = None) -> list[AskUserRequest]:
            return []

        async def get(self, key: str) -> AskUserRequest:
            raise KeyError(key)

        async def respond(self, key: str, response: AskUserResponse) -> None:
            raise KeyError(key)

        def events(self) -> Any:
            return QuestionHub().events()

    app = create_app(Earlier(), access_token='t' * 32)  # pyright: ignore[reportArgumentType]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://testserver') as client:
        headers = {'authorization': 'Bearer ' + 't' * 32}
        response = await client.get('/api/history', headers=headers)
        assert (response.status_code, response.json()['error']) == (501, 'no_history')
        page = await client.get('/history', headers=headers)
        assert page.status_code == 501
        assert 'keeps no history' in page.text


async def test_the_history_page_escapes_model_text_and_pages_with_a_link(web: WebAnswerer) -> None:
    async with asgi_client(web) as client:
        client.headers.update(bearer(web))
        async with waiting_in(web.hub, _question('one', None), _question('two', None)):
            for name in ('one', 'two'):
                answered = await client.post(f'/api/requests/{name}/answer', json=answer_body(custom=HOSTILE))
                assert answered.status_code == 200
        page = await client.get('/history?limit=1')
        assert page.status_code == 200
        assert HOSTILE not in page.text
        assert '&lt;script&gt;alert(1)&lt;/script&gt;' in page.text
        assert 'data-id="two"' in page.text
        assert 'data-id="one"' not in page.text
        assert 'id="more"' in page.text
        assert (await client.get('/history?cursor=bad')).status_code == 400


async def test_the_history_page_lists_each_hand_off_with_its_note_as_text(web: WebAnswerer) -> None:
    async with asgi_client(web) as client:
        client.headers.update(bearer(web))
        async with waiting_in(web.hub, _question('handed', ('alice',))):
            await web.hub.forward('handed', ['bob'], note=f'over to you {HOSTILE}', by='alice')
            await web.hub.forward('handed', ['team:oncall'], replace=False)
            answered = await client.post('/api/requests/handed/answer', json=answer_body(selected=['SQLite']))
            assert answered.status_code == 200
        page = (await client.get('/history')).text
        drawn = page.split('data-id="handed"', 1)[1].split('</li>', 1)[0]
        assert HOSTILE not in drawn
        assert drawn.count('class="handoff"') == 2
        assert 'alice to bob: <span class="handoff-note">over to you &lt;script&gt;' in drawn
        assert 'someone to bob, team:oncall</dd>' in drawn  # a hand-off by nobody named, without a note


async def test_the_history_tab_in_chromium(context: BrowserContext) -> None:
    web = WebAnswerer(receipt_key=RECEIPT_KEY)
    approval = PendingApproval('w1', 'call_0', 'refund', {'amount': 30})
    async with serve(web.app) as base, asgi_client(web) as client:
        client.headers.update(bearer(web))
        page = await context.new_page()
        await page.goto(web.login_url(base, name='alice'))
        await expect(page.locator('#live-status')).to_contain_text('appear here')
        async with waiting_in(web.hub, _question('first', None), _question('second', ('alice',))):
            for name in ('first', 'second'):
                answered = await client.post(f'/api/requests/{name}/answer', json=answer_body(selected=['SQLite']))
                assert answered.status_code == 200
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: web.hub.ask_wait('w1', [], [approval]))

            async def waiting() -> bool:
                return bool(await web.hub.pending_approvals())

            await wait_until(waiting, 'the approval to wait')
            decided = await client.post(f'/api/approvals/{approval.key}/decide', json={'deny': 'too much'})
            assert decided.status_code == 200

        # The receipts the runs signed (as `AskUser(receipt_key=...)` hands them to the answerer): the second's with
        # the inbox's key, the first's with another, which does not verify here.
        for record in (await web.hub.history_page(where=HistoryFilter(kind='question'))).records:
            assert record.request is not None
            assert record.response is not None
            signing_key = RECEIPT_KEY if record.key == 'second' else b'a key this inbox does not have'
            receipt = sign_receipt(record.request, record.response, key=signing_key, answered_by='alice')
            await web.keep_receipt(record.request, receipt)

        await page.get_by_role('link', name='History', exact=True).click()
        await expect(page).to_have_url(f'{base}history')
        rows = page.locator('#history > li')
        await expect(rows).to_have_count(3)
        await expect(rows.nth(0).locator('.receipt')).to_have_count(0)  # a tool call: no receipt, nothing said
        await expect(rows.nth(1).locator('.receipt')).to_have_text('Signed by the run, verified')
        await expect(rows.nth(2).get_by_role('alert')).to_have_text('Receipt does not verify')
        await rows.nth(2).locator('summary').click()
        await expect(rows.nth(2).locator('.receipt-problem')).to_contain_text('the signature does not match')
        await expect(rows.nth(0)).to_have_attribute('data-outcome', 'denied')
        await expect(rows.nth(0).locator('.outcome')).to_have_text('Denied')
        await expect(rows.nth(1).locator('.outcome')).to_have_text('Answered')
        await expect(rows.nth(1).locator('.title')).to_have_text(f'{HOSTILE} second')
        # The details open on a click: the answer, and for the denial its reason.
        await expect(rows.nth(1).get_by_text('Database: SQLite')).to_be_hidden()
        await rows.nth(1).locator('summary').click()
        await expect(rows.nth(1).get_by_text('Database: SQLite')).to_be_visible()
        await rows.nth(0).locator('summary').click()
        await expect(rows.nth(0).get_by_text('too much')).to_be_visible()
        # Only the questions; then a page of one, and the link to the next.
        await page.get_by_role('link', name='Questions', exact=True).click()
        await expect(rows).to_have_count(2)
        await page.goto(f'{base}history?limit=1')
        await expect(rows).to_have_count(1)
        await page.locator('#more').click()
        await expect(rows).to_have_count(1)
        await expect(rows.nth(0)).to_have_attribute('data-outcome', 'answered')
        # And back to what waits.
        await page.get_by_role('link', name='Waiting', exact=True).click()
        await expect(page.locator('h1')).to_have_text('Waiting for you')


RECEIPT_KEY = b'the key the runs sign receipts with'
"""What the agent's `AskUser(receipt_key=...)` signs with, and the inbox verifies with."""


async def test_a_receipt_the_run_signs_is_kept_and_shown_verified_not_checked_or_not_verifying() -> None:
    web = WebAnswerer(authorize=who, receipt_key=RECEIPT_KEY)
    watch = Watch()
    agent = Agent(
        script([ask_call(question(), call_id='call_1')]).model,
        capabilities=[AskUser(answerer=web, receipt_key=RECEIPT_KEY), watch],
    )
    async with client_as(web, 'alice') as alice, anyio.create_task_group() as group:
        group.start_soon(agent.run, 'migrate')
        key = (await wait_until(web.hub.pending, 'the question to wait'))[0].key
        sent = await alice.post(f'/api/requests/{key}/answer', json=answer_body(selected=['SQLite']))
        assert sent.status_code == 200, sent.text
    async with waiting_in(web.hub, _question('unsigned', None)), client_as(web, 'bob') as bob:
        assert (await bob.post('/api/requests/unsigned/decline', json={})).status_code == 200
    [answered] = [event for event in watch.events if isinstance(event, AskUserAnsweredEvent)]
    assert answered.receipt is not None

    async def history(app: Any) -> tuple[dict[str, dict[str, Any]], str]:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url='http://testserver', headers={'x-user': 'admin'}
        ) as client:
            records = {each['id']: each for each in (await client.get('/api/history')).json()['history']}
            return records, (await client.get('/history')).text

    records, page = await history(web.app)
    signed, unsigned = records[key], records['unsigned']
    # Kept as the run signed it (the event's receipt), verified against the stored question and answer.
    assert signed['receipt'] == receipt_to_json(answered.receipt)
    assert (signed['receipt']['answered_by'], signed['receipt_check']) == ('alice', 'verified')
    assert 'receipt_problem' not in signed
    assert not {'receipt', 'receipt_check'} & unsigned.keys()  # no receipt, nothing said
    assert 'Signed by the run, verified' in page
    assert page.count('class="receipt ') == 1
    # Without the key: signed, not checked. With another key: does not verify, loudly.
    records, page = await history(create_app(web.hub, authorize=who))
    assert (records[key]['receipt_check'], 'receipt_problem' in records[key]) == ('not_checked', False)
    assert 'Signed, not checked (no key)' in page
    records, page = await history(create_app(web.hub, authorize=who, receipt_key=b'another key, not the runs one'))
    assert records[key]['receipt_check'] == 'not_verified'
    assert 'signature does not match' in records[key]['receipt_problem']
    assert 'role="alert">Receipt does not verify' in page
    # A receipt changed where it is kept (who answered, in hostile text) no longer verifies, and is drawn as text.
    kept: dict[str, Any] = web.hub._history[key].receipt  # pyright: ignore[reportPrivateUsage]
    web.hub._history[key] = replace(web.hub._history[key], receipt=kept | {'answered_by': HOSTILE})  # pyright: ignore[reportPrivateUsage]
    records, page = await history(web.app)
    assert (records[key]['receipt_check'], records[key]['receipt']['answered_by']) == ('not_verified', HOSTILE)
    assert HOSTILE not in page
    assert 'signed for &lt;script&gt;' in page
    with pytest.raises(ValueError, match='receipt_key: a signing key must be at least 16 bytes'):
        WebAnswerer(receipt_key='short')
