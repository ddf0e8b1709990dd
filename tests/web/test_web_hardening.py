"""Attacks on a real server: cookies across ports, cross-site declines, slow clients, inputs that used to 500."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import SocketStream
from playwright.async_api import Browser, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route
from web_support import WAIT, asgi_client, ask_one, asking, assert_security_headers, bearer, csrf_of, log_in

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.web import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    ServerLimits,
    WebAnswerer,
    create_app,
    serve,
)
from pydantic_ai_ask_user.web._security import MAX_SESSIONS

pytestmark = pytest.mark.anyio

# -- helpers ----------------------------------------------------------------------------------


def port_of(base: str) -> int:
    return httpx.URL(base).port or 80


@asynccontextmanager
async def raw_connection(base: str) -> AsyncIterator[SocketStream]:
    url = httpx.URL(base)
    assert url.host == '127.0.0.1'  # the slow clients below only ever talk to this machine
    async with await anyio.connect_tcp('127.0.0.1', url.port or 80) as stream:
        yield stream


async def read_until_closed(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b''
    while True:
        try:
            received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            return received


def post_head(path: str, port: int, length: int, *extra: str) -> bytes:
    lines = [
        f'POST {path} HTTP/1.1',
        f'Host: 127.0.0.1:{port}',
        'Content-Type: application/json',
        f'Content-Length: {length}',
        *extra,
    ]
    return ('\r\n'.join(lines) + '\r\n\r\n').encode()


# -- 2. session cookies: one per port, a fresh session per login -----------------------------


async def test_the_cookies_are_named_for_the_port_the_browser_sees(web: WebAnswerer, live: str) -> None:
    async with httpx.AsyncClient(base_url=live) as client:
        response = await client.get('/' + web.app.login_path())
    names = {cookie.partition('=')[0] for cookie in response.headers.get_list('set-cookie')}
    assert names == {f'{SESSION_COOKIE}-{port_of(live)}', f'{CSRF_COOKIE}-{port_of(live)}'}


async def test_each_login_mints_a_fresh_session(web: WebAnswerer) -> None:
    async with asgi_client(web) as first, asgi_client(web) as second:
        await log_in(first, web)
        await log_in(second, web)
        name = f'{SESSION_COOKIE}-80'
        assert first.cookies[name] != second.cookies[name]
        assert (await first.get('/')).status_code == 200
        assert (await second.get('/')).status_code == 200


async def test_a_second_login_in_the_same_browser_retires_the_session_it_replaces(web: WebAnswerer) -> None:
    async with asgi_client(web) as browser, asgi_client(web) as replay:
        await log_in(browser, web)
        name = f'{SESSION_COOKIE}-80'
        old = browser.cookies[name]
        await log_in(browser, web)
        assert browser.cookies[name] != old
        assert (await browser.get('/')).status_code == 200
        replay.cookies.set(name, old)
        assert (await replay.get('/')).status_code == 403


async def test_only_the_latest_sessions_are_kept(web: WebAnswerer) -> None:
    async with asgi_client(web) as oldest:
        await log_in(oldest, web)
        for _ in range(MAX_SESSIONS):
            async with asgi_client(web) as other:
                await log_in(other, web)
        assert (await oldest.get('/')).status_code == 403


async def test_a_session_cookie_of_one_server_is_refused_by_another() -> None:
    first, second = WebAnswerer(), WebAnswerer()
    async with serve(first.app) as one, serve(second.app) as two, httpx.AsyncClient() as client:
        await client.get(one + first.app.login_path())
        stolen = client.cookies[f'{SESSION_COOKIE}-{port_of(one)}']
        client.cookies.set(f'{SESSION_COOKIE}-{port_of(two)}', stolen)
        assert (await client.get(two + 'api/requests')).status_code == 403
        assert (await client.get(one + 'api/requests')).status_code == 200


@pytest.mark.browser
async def test_one_browser_stays_signed_in_to_two_servers_on_two_ports(browser: Browser) -> None:
    first, second = WebAnswerer(), WebAnswerer()
    context = await browser.new_context()
    context.set_default_timeout(WAIT * 1000)
    try:
        page = await context.new_page()
        async with serve(first.app) as one, serve(second.app) as two:
            await page.goto(first.login_url(one))
            await page.goto(second.login_url(two))
            for base in (one, two, one):
                response = await page.goto(base)
                assert response is not None
                assert response.status == 200, await page.content()
                await expect(page.locator('#empty')).to_be_visible()
    finally:
        await context.close()


# -- 5. CSRF: a cross-site decline is refused, a second login keeps open forms working ----------


async def test_a_cookie_session_cannot_decline_through_the_api_without_json(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        for headers in ({}, {'content-type': 'application/x-www-form-urlencoded'}, {'content-type': 'text/plain'}):
            response = await client.post(f'/api/requests/{job.request.id}/decline', headers=headers)
            assert response.status_code == 415, response.text
        assert [r.id for r in await web.hub.pending()] == [job.request.id]
        response = await client.post(f'/api/requests/{job.request.id}/decline', json={})
        assert response.json() == {'id': job.request.id, 'status': 'declined'}


async def test_a_bodiless_decline_with_the_token_in_a_header_still_works(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.post(f'/api/requests/{job.request.id}/decline', headers=bearer(web))
        assert response.status_code == 200
        assert (await job.response()).cancelled


@pytest.mark.browser
async def test_a_plain_form_on_another_port_of_the_same_host_cannot_decline(browser: Browser) -> None:
    web = WebAnswerer()
    context = await browser.new_context()
    context.set_default_timeout(WAIT * 1000)
    try:
        page = await context.new_page()
        async with serve(web.app) as base, asking(web) as job:
            target = f'{base}api/requests/{job.request.id}/decline'

            async def evil(request: Request) -> HTMLResponse:
                return HTMLResponse(f'<form method="post" action="{target}"><button>Win a prize</button></form>')

            async with serve(Starlette(routes=[Route('/', evil)])) as elsewhere:
                await page.goto(web.login_url(base))
                await page.goto(elsewhere)
                async with page.expect_response(target) as answer:
                    await page.get_by_role('button', name='Win a prize').click()
                assert (await answer.value).status == 415
                assert [r.id for r in await web.hub.pending()] == [job.request.id]
    finally:
        await context.close()


async def test_an_open_form_still_submits_after_a_second_login_link(web: WebAnswerer) -> None:
    async with asgi_client(web) as browser, asking(web) as first, asking(web, ask_one()) as second:
        await log_in(browser, web)
        token = csrf_of((await browser.get(f'/requests/{first.request.id}')).text)
        response = await browser.get('/' + web.app.login_path(second.request.id))
        assert response.status_code == 303
        response = await browser.post(f'/requests/{first.request.id}', data={'csrf': token, 'action': 'decline'})
        assert response.status_code == 200, response.text
        assert (await first.response()).cancelled


# -- 3. slow clients ------------------------------------------------------------------------------


async def test_an_unauthenticated_post_is_refused_before_its_body_arrives(live: str) -> None:
    async with raw_connection(live) as stream:
        await stream.send(post_head('/api/requests/x/answer', port_of(live), 10_000) + b'{"answers"')
        with anyio.fail_after(WAIT):
            received = await read_until_closed(stream)
    assert received.startswith(b'HTTP/1.1 401 ')
    assert b'connection: close' in received.lower()


async def test_a_stalled_body_is_cut_off_with_408() -> None:
    hub = QuestionHub()
    app = create_app(hub, access_token='secret', body_seconds=1.0)
    async with serve(app) as base, raw_connection(base) as stream:
        head = post_head('/api/requests/x/answer', port_of(base), 10_000, 'Authorization: Bearer secret')
        await stream.send(head + b'{"answers"')
        with anyio.fail_after(WAIT):
            received = await read_until_closed(stream)
    assert received.startswith(b'HTTP/1.1 408 ')
    assert b'"error":"timeout"' in received


async def test_a_connection_that_never_finishes_its_headers_is_closed(web: WebAnswerer) -> None:
    async with serve(web.app, limits=ServerLimits(header_seconds=1.0)) as base, raw_connection(base) as stream:
        await stream.send(b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n')
        with anyio.fail_after(WAIT):
            assert await read_until_closed(stream) == b''


async def test_headers_sent_a_byte_at_a_time_do_not_keep_a_connection_open(web: WebAnswerer) -> None:
    async with serve(web.app, limits=ServerLimits(header_seconds=1.0)) as base, raw_connection(base) as stream:
        closed = anyio.Event()

        async def trickle() -> None:
            for byte in b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + b'a' * 1000:
                if closed.is_set():
                    return
                try:
                    await stream.send(bytes([byte]))
                except (anyio.BrokenResourceError, ConnectionResetError):
                    return
                await anyio.sleep(0.1)  # the attacker's pace, not a wait for the server

        async with anyio.create_task_group() as group:
            group.start_soon(trickle)
            with anyio.fail_after(WAIT):
                assert await read_until_closed(stream) == b''
            closed.set()


SLOW_CLIENTS = 200
"""How many slow connections the load test holds open at once, all on 127.0.0.1: half stall in their
body, half in their headers. Each stops by itself when the server closes it, or when the test ends."""


async def test_two_hundred_slow_connections_do_not_keep_the_user_out(web: WebAnswerer) -> None:
    outcomes: list[bytes] = []
    opened = 0
    all_open = anyio.Event()

    async def slow_client(base: str, first_bytes: bytes) -> None:
        nonlocal opened
        async with raw_connection(base) as stream:
            await stream.send(first_bytes)
            opened += 1
            if opened == SLOW_CLIENTS:
                all_open.set()
            # Send nothing more: hold the connection until the server answers or closes it.
            outcomes.append(await read_until_closed(stream))

    async with serve(web.app, limits=ServerLimits(header_seconds=3.0)) as base:
        slow_body = post_head('/api/requests/x/decline', port_of(base), 60_000) + b'{'
        slow_head = f'GET /api/requests HTTP/1.1\r\nHost: 127.0.0.1:{port_of(base)}\r\n'.encode()
        with anyio.fail_after(WAIT * 2):
            async with anyio.create_task_group() as group, asking(web) as job:
                for index in range(SLOW_CLIENTS):
                    group.start_soon(slow_client, base, slow_body if index % 2 else slow_head)
                await all_open.wait()
                async with httpx.AsyncClient(base_url=base, headers=bearer(web)) as user:
                    response = await user.post(f'/api/requests/{job.request.id}/decline', json={})
                assert response.json() == {'id': job.request.id, 'status': 'declined'}
    assert len(outcomes) == SLOW_CLIENTS
    assert sum(outcome.startswith(b'HTTP/1.1 401 ') for outcome in outcomes) == SLOW_CLIENTS // 2
    assert outcomes.count(b'') == SLOW_CLIENTS // 2


# -- 4. inputs that used to answer 500 without the security headers -------------------------------


async def test_a_json_integer_over_4300_digits_gets_400_with_the_security_headers(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        body = b'{"answers": [], "cancelled": ' + b'9' * 5000 + b'}'
        response = await client.post(
            f'/api/requests/{job.request.id}/answer', content=body, headers={'content-type': 'application/json'}
        )
    assert response.status_code == 400
    assert response.json()['error'] == 'malformed_json'
    assert_security_headers(response)


async def test_deeply_nested_json_gets_400_with_the_security_headers(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        for route in ('answer', 'decline'):
            response = await client.post(
                f'/api/requests/{job.request.id}/{route}',
                content=b'[' * 30_000 + b']' * 30_000,
                headers={'content-type': 'application/json'},
            )
            assert response.status_code == 400, route
            assert 'nested too deeply' in response.json()['message']
            assert_security_headers(response)


async def test_a_form_choice_of_5000_digits_gets_422_with_the_security_headers(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.id}')).text)
        response = await client.post(f'/requests/{job.request.id}', data={'csrf': token, 'q0': '7' * 5000})
    assert response.status_code == 422
    assert 'That choice is not one of the options' in response.text
    assert_security_headers(response)


class BrokenStore(QuestionHub):
    """A store whose listing fails: a bug or an outage behind the app."""

    async def pending(self) -> list[AskUserRequest]:
        raise RuntimeError('secret detail of the outage at /srv/db')

    async def pending_records(self) -> list[Any]:
        raise RuntimeError('secret detail of the outage at /srv/db')

    async def pending_page(self, **_: object) -> Any:  # the inbox and the API list with this one
        raise RuntimeError('secret detail of the outage at /srv/db')


@pytest.mark.parametrize('path', ['/', '/api/requests'])
async def test_an_unexpected_error_gets_a_500_with_the_security_headers_and_no_traceback(path: str) -> None:
    app = create_app(BrokenStore(), access_token='secret')
    transport = httpx.ASGITransport(app=app)  # raises whatever escapes the app
    async with httpx.AsyncClient(transport=transport, base_url='http://testserver') as client:
        response = await client.get(path, headers={'authorization': 'Bearer secret'})
    assert response.status_code == 500
    assert_security_headers(response)
    assert 'secret detail' not in response.text
    assert 'Traceback' not in response.text


@pytest.mark.parametrize('host', ['[', '127.0.0.1:port', '127.0.0.1:99999', 'a b'])
async def test_a_host_header_that_names_no_host_gets_no_500(web: WebAnswerer, host: str) -> None:
    async with asgi_client(web) as client:
        for path in ('/', '/api/requests', '/login?code=x', '/nowhere'):
            response = await client.get(path, headers={'host': host, **bearer(web)})
            assert response.status_code < 500, (path, response.status_code)
            assert_security_headers(response)


BAD_BODIES: list[tuple[str, bytes]] = [
    ('application/json', b'\xff\xfe\x00'),
    ('application/json', b'{"answers": [{"header": "\\ud800", "custom_answer": "\\udfff"}]}'),
    ('application/json', b'{"answers": [{"header": "Database", "selected": [' + b'"x",' * 3000 + b'"x"]}]}'),
    ('application/json', b'{"answers": {"header": 1}, "cancelled": "yes"}'),
    ('application/json', b'"' + b'\\u0000' * 1000 + b'"'),
    ('application/json', json.dumps({'answers': [{'header': 'Database', 'custom_answer': 'x' * 50_000}]}).encode()),
    ('application/x-www-form-urlencoded', b'q0=%ff%fe&csrf=%00&action=' + b'9' * 5000),
    ('application/x-www-form-urlencoded', b'q0-text=' + b'%e2%80%ae' * 1000 + b'&q0=other'),
    ('multipart/form-data; boundary=x', b'--x\r\nContent-Disposition: form-data\r\n\r\nbroken'),
    ('multipart/form-data', b'no boundary'),
]
"""Bodies a fuzzer would try, sent to every route that reads one."""


@pytest.mark.parametrize(('kind', 'body'), BAD_BODIES)
async def test_no_route_answers_a_bad_body_with_a_500(
    client: httpx.AsyncClient, web: WebAnswerer, kind: str, body: bytes
) -> None:
    async with asking(web) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.id}')).text)
        for path in (f'/api/requests/{job.request.id}/answer', f'/api/requests/{job.request.id}/decline'):
            response = await client.post(path, content=body, headers={'content-type': kind})
            assert 400 <= response.status_code < 500, (path, response.status_code, response.text)
            assert_security_headers(response)
        form_body = body + b'&csrf=' + token.encode() if kind.startswith('application/x-www') else body
        response = await client.post(f'/requests/{job.request.id}', content=form_body, headers={'content-type': kind})
        assert 400 <= response.status_code < 500, (response.status_code, response.text)
        assert_security_headers(response)
        assert [r.id for r in await web.hub.pending()] == [job.request.id]
