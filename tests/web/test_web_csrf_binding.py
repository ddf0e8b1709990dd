"""A form's CSRF token is signed with the session: another person's CSRF cookie and token do not work with mine.

A same-site origin (a sibling subdomain, another port) can set cookies for the inbox's host, so it can plant its own
CSRF cookie, and the token its own session was given, in alice's browser. Before, alice's session with bob's CSRF
cookie and form token denied alice's approval, recorded as decided by alice. Over HTTPS at the root of its host,
the cookies carry the `__Host-` prefix, which a sibling subdomain cannot set at all.
"""

from __future__ import annotations

import anyio
import httpx
import pytest
from starlette.requests import Request
from web_support import asgi_client, asking, csrf_of

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.store import PendingApproval
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio


def cookies_of(client: httpx.AsyncClient, start: str) -> dict[str, str]:
    return {name: value for name, value in client.cookies.items() if name.startswith(start)}


async def test_a_csrf_cookie_and_token_from_another_session_are_refused() -> None:
    web = WebAnswerer()
    async with asking(web) as job, asgi_client(web) as alice, asgi_client(web) as bob:
        for client, name in ((alice, 'alice'), (bob, 'bob')):
            assert (await client.get('/' + web.app.login_path(name=name))).status_code == 303
        form = f'/requests/{job.request.key}'
        bobs_token = csrf_of((await bob.get(form)).text)
        alices_token = csrf_of((await alice.get(form)).text)
        [(csrf_name, bobs_csrf)] = cookies_of(bob, 'ask-user-csrf').items()
        # Bob's CSRF cookie planted in alice's browser (her session kept), with the token bob's page carried.
        alice.cookies.set(csrf_name, bobs_csrf)
        planted = await alice.post(form, data={'csrf': bobs_token, 'action': 'decline'})
        assert planted.status_code == 403
        assert 'This form has expired' in planted.text
        assert job.request in await web.hub.pending()  # nothing recorded
        # Her own token does not fit bob's cookie either; with her own cookie back, her form works.
        assert (await alice.post(form, data={'csrf': alices_token, 'action': 'decline'})).status_code == 403
        alice.cookies.clear()
        assert (await alice.get('/' + web.app.login_path(name='alice'))).status_code == 303
        fresh = csrf_of((await alice.get(form)).text)
        assert (await alice.post(form, data={'csrf': fresh, 'action': 'decline'})).status_code == 200


def who(request: Request) -> Person | bool:
    name = request.headers.get('x-user')
    return Person(name) if name in ('alice', 'bob') else False


async def test_with_an_authorize_hook_the_token_is_bound_to_who_the_hook_let_in() -> None:
    web = WebAnswerer(authorize=who)
    approval = PendingApproval('w1', 'call_0', 'deploy', {}, parameters={'type': 'object'})
    async with anyio.create_task_group() as group:
        group.start_soon(web.hub.ask_wait, 'w1', [], [approval])
        with anyio.fail_after(30):
            while not await web.hub.pending_approvals():
                await anyio.sleep(0.01)
        async with asgi_client(web) as alice, asgi_client(web) as bob:
            alice.headers['x-user'], bob.headers['x-user'] = 'alice', 'bob'
            page = f'/approvals/{approval.key}'
            bobs_token = csrf_of((await bob.get(page)).text)
            [(csrf_name, bobs_csrf)] = cookies_of(bob, 'ask-user-csrf').items()
            alice.cookies.set(csrf_name, bobs_csrf)
            planted = await alice.post(page, data={'csrf': bobs_token, 'action': 'deny'})
            assert planted.status_code == 403
            assert len(await web.hub.pending_approvals()) == 1
        group.cancel_scope.cancel()


async def test_over_https_at_the_root_the_cookies_are_host_only() -> None:
    web = WebAnswerer()
    async with asking(web) as job, asgi_client(web, base_url='https://inbox.example') as client:
        signed_in = await client.get('/' + web.app.login_path(name='alice'))
        assert signed_in.status_code == 303
        set_cookies = signed_in.headers.get_list('set-cookie')
        assert any(line.startswith('__Host-ask-user-session-443=') for line in set_cookies), set_cookies
        for line in set_cookies:
            assert line.startswith('__Host-')
            assert '; Secure' in line
            assert '; Path=/' in line
            assert 'Domain' not in line
        form = f'/requests/{job.request.key}'
        token = csrf_of((await client.get(form)).text)
        assert (await client.post(form, data={'csrf': token, 'action': 'decline'})).status_code == 200
    # Over plain HTTP (a loopback inbox) a browser would refuse a `__Host-` cookie: the names stay as they were.
    other = WebAnswerer()
    async with asgi_client(other) as plain:
        response = await plain.get('/' + other.app.login_path(name='alice'))
        assert all(line.startswith('ask-user-') for line in response.headers.get_list('set-cookie'))
