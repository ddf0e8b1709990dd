"""Each person sees and answers only the questions addressed to them: tried as an attacker, on every route.

Two customers, alice and bob, each with their own agent run asking through one `WebAnswerer`; the app's
`authorize` hook says who is signed in (a header, as a reverse proxy would set it). Bob tries every route with
alice's question id: the page, the form post, the JSON list, get, answer and decline, the event stream (which
drives the browser's notifications). A question addressed to someone else must look exactly like a missing one.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from ask_user_support import ask_call, question, script
from pydantic_ai import Agent
from starlette.requests import Request
from web_support import WAIT, asgi_client, csrf_of, sse_events

from pydantic_ai_ask_user import AskUser, AskUserRequest, Person, QuestionContext
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

MISSING = '0123456789abcdef0123456789abcdef'
"""A key no question has: what every answer about someone else's question must look like."""


def who(request: Request) -> Person | bool:
    """The app's own sign-in: a header set by its proxy. `team` members see what is addressed to their team."""
    name = request.headers.get('x-user')
    if name == 'admin':
        return Person('admin', sees_all=True)
    if name in ('alice', 'bob', 'carol'):
        return Person(name, groups=['team:billing'] if name == 'carol' else [])
    return name == 'anonymous'


@dataclass
class Customer:
    name: str
    order: int


def customer_agent(web: WebAnswerer) -> Agent[Customer, str]:
    model = script([ask_call(question('Refund', 'Yes', 'No'))]).model
    capability: AskUser[Customer] = AskUser(
        web,
        audience=lambda ctx: ctx.deps.name,
        context=lambda ctx: QuestionContext(
            title=f'Refund for order {ctx.deps.order}',
            summary=f'**{ctx.deps.name}** paid twice for order `{ctx.deps.order}`.',
            link=f'https://shop.example/orders/{ctx.deps.order}',
        ),
    )
    return Agent(model, name='support-bot', deps_type=Customer, capabilities=[capability])


@asynccontextmanager
async def customers(web: WebAnswerer, *names: str) -> AsyncIterator[dict[str, AskUserRequest]]:
    """One agent run per customer, each waiting for its question; yields each customer's request."""
    agent = customer_agent(web)
    async with anyio.create_task_group() as group:
        for order, name in enumerate(names, start=1000):
            group.start_soon(lambda name=name, order=order: agent.run('refund?', deps=Customer(name, order)))
        with anyio.fail_after(WAIT):
            while len(await web.hub.pending()) < len(names):
                await anyio.sleep(0.01)
        by_name = {request.audience[0]: request for request in await web.hub.pending() if request.audience}
        yield by_name
        group.cancel_scope.cancel()


def as_user(web: WebAnswerer, name: str) -> httpx.AsyncClient:
    client = asgi_client(web)
    client.headers['x-user'] = name
    return client


async def test_each_customer_lists_and_reads_only_their_own_question_with_its_context() -> None:
    web = WebAnswerer(authorize=who)
    async with customers(web, 'alice', 'bob') as asked, as_user(web, 'bob') as bob, as_user(web, 'admin') as admin:
        listed = (await bob.get('/api/requests')).json()['requests']
        assert [row['id'] for row in listed] == [asked['bob'].key]
        assert listed[0]['audience'] == ['bob']
        assert listed[0]['context'] == {
            'title': 'Refund for order 1001',
            'summary': '**bob** paid twice for order `1001`.',
            'link': 'https://shop.example/orders/1001',
            'agent_name': 'support-bot',
            'conversation_id': listed[0]['context']['conversation_id'],
        }
        inbox = (await bob.get('/')).text
        assert asked['bob'].key in inbox
        assert asked['alice'].key not in inbox
        assert 'Refund for order 1001' in inbox
        assert 'Refund for order 1000' not in inbox
        assert 'support-bot' in inbox
        page = (await bob.get(f'/requests/{asked["bob"].key}')).text
        assert '<strong>bob</strong> paid twice for order <code>1001</code>.' in page
        assert 'href="https://shop.example/orders/1001" rel="noopener noreferrer nofollow"' in page
        # The administrative view (here the hook's `sees_all`) sees both.
        assert len((await admin.get('/api/requests')).json()['requests']) == 2
        async with as_user(web, 'anonymous') as anonymous:
            assert (await anonymous.get('/api/requests')).json()['requests'] == []


async def test_someone_elses_question_is_indistinguishable_from_a_missing_one_on_every_route() -> None:
    web = WebAnswerer(authorize=who)
    async with customers(web, 'alice', 'bob') as asked, as_user(web, 'bob') as bob:
        alice_key = asked['alice'].key

        async def same_as_missing(send: Callable[[str], Awaitable[httpx.Response]]) -> None:
            theirs, missing = await send(alice_key), await send(MISSING)
            assert theirs.status_code == missing.status_code == 404
            assert theirs.text.replace(alice_key, MISSING) == missing.text
            assert theirs.headers.get('content-type') == missing.headers.get('content-type')

        await same_as_missing(lambda key: bob.get(f'/requests/{key}'))
        await same_as_missing(lambda key: bob.get(f'/api/requests/{key}'))
        body: dict[str, Any] = {'answers': [{'header': 'Refund', 'selected': ['Yes']}]}
        await same_as_missing(lambda key: bob.post(f'/api/requests/{key}/answer', json=body))
        await same_as_missing(lambda key: bob.post(f'/api/requests/{key}/decline', json={}))
        # The form post, with a valid CSRF token taken from bob's own form.
        token = csrf_of((await bob.get(f'/requests/{asked["bob"].key}')).text)
        form = {'csrf': token, 'q0': '0'}
        await same_as_missing(lambda key: bob.post(f'/requests/{key}', data=form))
        await same_as_missing(lambda key: bob.post(f'/requests/{key}', data={**form, 'action': 'decline'}))
        # Nothing bob sent reached alice's run; her question still waits, for her.
        assert asked['alice'] in await web.hub.pending()
        async with as_user(web, 'alice') as alice:
            answered = await alice.post(f'/api/requests/{alice_key}/answer', json=body)
            assert answered.status_code == 200, answered.text
            # Once answered, bob is still told it does not exist (no "already answered" that confirms it did).
            await same_as_missing(lambda key: bob.get(f'/api/requests/{key}'))
            await same_as_missing(lambda key: bob.post(f'/api/requests/{key}/answer', json=body))
            # Alice herself is told it was answered.
            again = await alice.post(f'/api/requests/{alice_key}/answer', json=body)
            assert again.status_code == 409


async def test_a_question_for_a_group_reaches_its_members_only() -> None:
    web = WebAnswerer(authorize=who)
    agent = Agent(
        script([ask_call(question('Approve', 'Yes', 'No'))]).model,
        capabilities=[AskUser(web, audience='team:billing')],
    )
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: agent.run('approve?'))
        with anyio.fail_after(WAIT):
            while not await web.hub.pending():
                await anyio.sleep(0.01)
        async with as_user(web, 'carol') as carol, as_user(web, 'bob') as bob:
            assert len((await carol.get('/api/requests')).json()['requests']) == 1
            assert (await bob.get('/api/requests')).json()['requests'] == []
        group.cancel_scope.cancel()


async def test_the_event_stream_tells_each_person_only_about_their_own_questions() -> None:
    web = WebAnswerer(authorize=who)
    async with (
        serve(web.app) as base,
        httpx.AsyncClient(base_url=base, headers={'x-user': 'bob'}) as bob,
        httpx.AsyncClient(base_url=base, headers={'x-user': 'alice'}) as alice,
    ):
        seen: list[tuple[str, str]] = []
        async with bob.stream('GET', '/api/events') as stream, customers(web, 'alice', 'bob') as asked:
            # Alice answers hers; then a new question for bob. Bob's stream must name only his own questions.
            body = {'answers': [{'header': 'Refund', 'selected': ['No']}]}
            assert (await alice.post(f'/api/requests/{asked["alice"].key}/answer', json=body)).status_code == 200
            assert (await bob.post(f'/api/requests/{asked["bob"].key}/decline', json={})).status_code == 200
            with anyio.fail_after(WAIT):
                async for kind, data in sse_events(stream):
                    seen.append((kind, data['id']))
                    assert asked['alice'].key not in json.dumps(data)
                    if (kind, data['id']) == ('answered', asked['bob'].key):
                        break
    assert seen == [('requested', asked['bob'].key), ('answered', asked['bob'].key)]


async def test_a_login_link_made_for_a_name_and_groups_signs_in_that_person() -> None:
    web = WebAnswerer()
    async with customers(web, 'alice', 'bob') as asked, asgi_client(web) as browser:
        link = web.app.login_path(name='bob', groups=['vip'])
        assert (await browser.get('/' + link)).status_code == 303
        listed = (await browser.get('/api/requests')).json()['requests']
        assert [row['id'] for row in listed] == [asked['bob'].key]
        assert (await browser.get(f'/requests/{asked["alice"].key}')).status_code == 404
        # The access token is the server's own secret: it sees every question.
        token = {'authorization': f'Bearer {web.access_token}'}
        assert len((await browser.get('/api/requests', headers=token)).json()['requests']) == 2
        # A link without a name sees only unaddressed questions: here, none.
        async with asgi_client(web) as stranger:
            assert (await stranger.get('/' + web.app.login_path())).status_code == 303
            assert (await stranger.get('/api/requests')).json()['requests'] == []
            assert re.search(r'Refund for order', (await stranger.get('/')).text) is None
