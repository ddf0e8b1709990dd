"""Every security rule of the web answerer, each checked over ASGI."""

from __future__ import annotations

import httpx
import pytest
from starlette.requests import Request
from web_support import asgi_client, ask_one, asking, bearer, csrf_of, log_in

from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.web import CONTENT_SECURITY_POLICY, SESSION_COOKIE, WebAnswerer

pytestmark = pytest.mark.anyio

PROTECTED = ['/', '/requests/{id}', '/api/requests', '/api/requests/{id}', '/api/events']


@pytest.mark.parametrize('path', PROTECTED)
async def test_without_credentials_every_route_answers_401_and_shows_no_question(web: WebAnswerer, path: str) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.get(path.format(id=job.request.id))
    assert response.status_code == 401
    assert job.request.id not in response.text
    assert 'Database' not in response.text


@pytest.mark.parametrize('path', PROTECTED)
async def test_a_wrong_token_gets_403_and_shows_no_question(web: WebAnswerer, path: str) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.get(path.format(id=job.request.id), headers={'authorization': 'Bearer wrong'})
    assert response.status_code == 403
    assert job.request.id not in response.text


async def test_an_unauthenticated_answer_is_refused_and_changes_nothing(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.post(f'/api/requests/{job.request.id}/decline')
        assert response.status_code == 401
        assert [r.id for r in await web.hub.pending()] == [job.request.id]


async def test_the_token_is_accepted_in_its_own_header(web: WebAnswerer) -> None:
    async with asgi_client(web) as client:
        response = await client.get('/api/requests', headers={'x-ask-user-token': web.access_token or ''})
    assert response.status_code == 200


async def test_a_stale_session_cookie_is_refused(web: WebAnswerer) -> None:
    async with asgi_client(web) as client:
        client.cookies.set(f'{SESSION_COOKIE}-80', 'from-an-earlier-server')  # the port the test client addresses
        assert (await client.get('/')).status_code == 403


async def test_a_login_link_sets_an_httponly_samesite_cookie_and_drops_the_code_from_the_address(
    web: WebAnswerer,
) -> None:
    async with asgi_client(web) as client:
        response = await client.get('/' + web.app.login_path())
        assert response.status_code == 303
        assert response.headers['location'] == '/'
        cookie = next(c for c in response.headers.get_list('set-cookie') if c.startswith(SESSION_COOKIE))
        assert 'HttpOnly' in cookie
        assert 'SameSite=strict' in cookie
        assert (await client.get('/')).status_code == 200


async def test_a_login_link_works_only_once(web: WebAnswerer) -> None:
    link = '/' + web.app.login_path()
    async with asgi_client(web) as first:
        assert (await first.get(link)).status_code == 303
    async with asgi_client(web) as second:
        assert (await second.get(link)).status_code == 403
        assert (await second.get('/')).status_code == 401


async def test_a_login_link_never_redirects_off_the_app(web: WebAnswerer) -> None:
    code = web.app.login_path().partition('code=')[2]
    async with asgi_client(web) as client:
        response = await client.get('/login', params={'code': code, 'next': '//evil.example/'})
    assert response.headers['location'] == '/'


async def test_an_authorize_hook_decides_access_instead_of_the_token() -> None:
    def authorize(request: Request) -> bool:
        return request.headers.get('x-team') == 'ops'

    web = WebAnswerer(authorize=authorize)
    assert web.access_token is None
    async with asgi_client(web) as client:
        assert (await client.get('/api/requests', headers={'x-team': 'ops'})).status_code == 200
        assert (await client.get('/api/requests', headers={'x-team': 'dev'})).status_code == 403


async def test_an_async_authorize_hook_is_awaited() -> None:
    async def authorize(request: Request) -> bool:
        return request.client is not None

    async with asgi_client(WebAnswerer(authorize=authorize)) as client:
        assert (await client.get('/')).status_code == 200


async def test_a_form_post_without_the_csrf_token_is_refused(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        response = await client.post(f'/requests/{job.request.id}', data={'action': 'decline'})
        assert response.status_code == 403
        assert [r.id for r in await web.hub.pending()] == [job.request.id]


async def test_a_form_post_with_a_forged_csrf_token_is_refused(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        await client.get(f'/requests/{job.request.id}')
        response = await client.post(f'/requests/{job.request.id}', data={'action': 'decline', 'csrf': '0' * 64})
        assert response.status_code == 403


async def test_a_csrf_token_from_another_browser_is_refused(web: WebAnswerer) -> None:
    async with asking(web) as job, asgi_client(web) as alice, asgi_client(web) as mallory:
        await log_in(alice, web)
        await log_in(mallory, web)
        token = csrf_of((await mallory.get(f'/requests/{job.request.id}')).text)
        response = await alice.post(f'/requests/{job.request.id}', data={'action': 'decline', 'csrf': token})
        assert response.status_code == 403


@pytest.mark.parametrize('path', ['/', '/api/requests', '/static/style.css', '/nowhere'])
async def test_every_response_carries_the_strict_security_headers(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.headers['content-security-policy'] == CONTENT_SECURITY_POLICY
    assert response.headers['x-content-type-options'] == 'nosniff'
    assert "frame-ancestors 'none'" in response.headers['content-security-policy']


def test_the_policy_allows_no_inline_script_and_no_eval() -> None:
    script_src = next(p for p in CONTENT_SECURITY_POLICY.split(';') if p.strip().startswith('script-src'))
    assert script_src.split() == ['script-src', "'self'"]


HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'


def hostile_request() -> AskUserRequest:
    return AskUserRequest(
        questions=(
            Question(
                header='<b>h</b>"\'&',
                question=HOSTILE,
                options=(
                    QuestionOption(label='"><svg onload=alert(3)>', description=HOSTILE),
                    QuestionOption(label='javascript:alert(4)'),
                ),
            ),
        )
    )


async def test_model_written_strings_are_escaped_on_the_form(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web, hostile_request()) as job:
        html = (await client.get(f'/requests/{job.request.id}')).text
    assert '<script>alert' not in html
    assert '<img src=x' not in html
    assert '<svg' not in html
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in html
    assert '&lt;b&gt;h&lt;/b&gt;&#34;&#39;&amp;' in html


async def test_model_written_strings_are_escaped_in_the_inbox(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web, hostile_request()):
        html = (await client.get('/')).text
    assert '<b>h</b>' not in html
    assert '&lt;b&gt;h&lt;/b&gt;' in html


async def test_a_second_answer_gets_409(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        url = f'/api/requests/{job.request.id}/decline'
        assert (await client.post(url, headers=bearer(web))).status_code == 200
        second = await client.post(url, headers=bearer(web))
    assert second.status_code == 409
    assert second.json()['error'] == 'already_answered'


async def test_an_unknown_id_gets_404(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    response = await client.post('/api/requests/0123456789abcdef/decline', headers=bearer(web))
    assert response.status_code == 404
    assert response.json()['error'] == 'not_found'


async def test_a_withdrawn_request_gets_410(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        pass
    response = await client.post(f'/api/requests/{job.request.id}/decline', headers=bearer(web))
    assert response.status_code == 410
    assert response.json()['error'] == 'withdrawn'


async def test_a_body_over_the_cap_gets_413() -> None:
    web = WebAnswerer(max_body_bytes=2048)
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.post(
            f'/api/requests/{job.request.id}/answer',
            content=b'{"answers": [' + b' ' * 4096 + b']}',
            headers={**bearer(web), 'content-type': 'application/json'},
        )
        assert response.status_code == 413
        assert [r.id for r in await web.hub.pending()] == [job.request.id]


async def test_a_body_over_the_cap_without_a_length_gets_413() -> None:
    web = WebAnswerer(max_body_bytes=2048)

    async def chunks():  # no Content-Length: the body is counted as it streams
        for _ in range(8):
            yield b' ' * 1024

    async with asgi_client(web) as client, asking(web) as job:
        response = await client.post(
            f'/api/requests/{job.request.id}/answer',
            content=chunks(),
            headers={**bearer(web), 'content-type': 'application/json'},
        )
    assert response.status_code == 413


async def test_a_custom_answer_over_the_cap_gets_422() -> None:
    web = WebAnswerer(max_custom_answer_length=10)
    async with asgi_client(web) as client, asking(web) as job:
        body = {'answers': [{'header': 'Database', 'custom_answer': 'x' * 11}]}
        response = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
    assert response.status_code == 422
    assert 'most allowed is 10' in response.json()['message']


async def test_malformed_json_gets_400_with_a_message(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        response = await client.post(
            f'/api/requests/{job.request.id}/answer',
            content=b'{"answers": [',
            headers={**bearer(web), 'content-type': 'application/json'},
        )
    assert response.status_code == 400
    assert 'not valid JSON' in response.json()['message']


async def test_an_api_post_that_is_not_json_is_refused(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    # A cross-site form can send text/plain without a preflight; the API takes only application/json.
    async with asking(web) as job:
        response = await client.post(
            f'/api/requests/{job.request.id}/answer',
            content=b'{"cancelled": true}',
            headers={'content-type': 'text/plain'},
        )
    assert response.status_code == 415


async def test_request_ids_are_long_random_and_distinct(web: WebAnswerer) -> None:
    ids = {ask_one().id for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


async def test_an_id_that_cannot_be_an_id_is_unknown_without_reaching_the_store(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    response = await client.get('/api/requests/' + 'x' * 300, headers=bearer(web))
    assert response.status_code == 404
