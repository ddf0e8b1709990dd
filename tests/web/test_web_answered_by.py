"""Who answered: the name bound to the login link or the session, the `authorize` hook's, or the option's; never the client's."""

from __future__ import annotations

import httpx
import pytest
from starlette.requests import Request
from web_support import answer_body, asgi_client, asking, bearer, csrf_of

from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio


async def _sign_in(client: httpx.AsyncClient, web: WebAnswerer, name: str | None) -> None:
    response = await client.get('/' + web.app.login_path(name=name))
    assert response.status_code == 303, response.text


async def _submit(client: httpx.AsyncClient, request_id: str, **extra: str) -> httpx.Response:
    page = await client.get(f'/requests/{request_id}')
    fields = {'csrf': csrf_of(page.text), 'action': 'answer', 'q0': '1', **extra}
    return await client.post(f'/requests/{request_id}', data=fields)


async def test_each_session_records_the_name_its_login_link_was_made_for() -> None:
    web = WebAnswerer()
    async with asgi_client(web) as alice, asgi_client(web) as bob:
        await _sign_in(alice, web, 'alice')
        await _sign_in(bob, web, 'bob@ops')
        async with asking(web) as first:
            assert (await _submit(bob, first.request.id)).status_code == 200
            assert (await first.response()).answered_by == 'bob@ops'
        async with asking(web) as second:
            assert (await _submit(alice, second.request.id)).status_code == 200
            assert (await second.response()).answered_by == 'alice'


async def test_a_form_field_named_answered_by_is_ignored() -> None:
    web = WebAnswerer()
    async with asgi_client(web) as client, asking(web) as job:
        await _sign_in(client, web, 'alice')
        assert (await _submit(client, job.request.id, answered_by='mallory')).status_code == 200
        assert (await job.response()).answered_by == 'alice'


async def test_a_decline_records_who_declined() -> None:
    web = WebAnswerer()
    async with asgi_client(web) as client, asking(web) as job:
        await _sign_in(client, web, 'carol')
        page = await client.get(f'/requests/{job.request.id}')
        await client.post(f'/requests/{job.request.id}', data={'csrf': csrf_of(page.text), 'action': 'decline'})
        response = await job.response()
        assert response.cancelled
        assert response.answered_by == 'carol'


async def test_the_json_api_refuses_an_answered_by_in_the_body_and_records_the_server_side_name() -> None:
    web = WebAnswerer(answered_by='deploy-bot')
    async with asgi_client(web) as client, asking(web) as job:
        spoofed = {**answer_body(), 'answered_by': 'the CEO'}
        refused = await client.post(f'/api/requests/{job.request.id}/answer', json=spoofed, headers=bearer(web))
        assert refused.status_code == 422
        assert refused.json()['error'] == 'invalid_answer'
        assert 'answered_by' in refused.json()['message']
        assert not job.done.is_set()
        sent = await client.post(f'/api/requests/{job.request.id}/answer', json=answer_body(), headers=bearer(web))
        assert sent.status_code == 200, sent.text
        assert (await job.response()).answered_by == 'deploy-bot'


async def test_with_the_access_token_and_no_default_nobody_is_named() -> None:
    web = WebAnswerer()
    async with asgi_client(web) as client, asking(web) as job:
        await client.post(f'/api/requests/{job.request.id}/answer', json=answer_body(), headers=bearer(web))
        assert (await job.response()).answered_by is None


async def test_a_link_made_without_a_name_records_the_default() -> None:
    web = WebAnswerer(answered_by='on-call')
    async with asgi_client(web) as client, asking(web) as job:
        await _sign_in(client, web, None)
        await _submit(client, job.request.id)
        assert (await job.response()).answered_by == 'on-call'


async def test_the_authorize_hook_may_return_the_persons_name() -> None:
    def who(request: Request) -> bool | str:
        user = request.headers.get('x-forwarded-user')
        return user if user else False

    web = WebAnswerer(authorize=who)
    async with asgi_client(web) as client, asking(web) as job:
        assert (await client.get('/')).status_code == 403
        headers = {'x-forwarded-user': 'dana'}
        sent = await client.post(f'/api/requests/{job.request.id}/answer', json=answer_body(), headers=headers)
        assert sent.status_code == 200, sent.text
        assert (await job.response()).answered_by == 'dana'


async def test_an_authorize_hook_returning_an_unrecordable_name_refuses_access() -> None:
    web = WebAnswerer(authorize=lambda request: 'two\nlines')
    async with asgi_client(web) as client:
        assert (await client.get('/api/requests')).status_code == 403


@pytest.mark.parametrize('name', ['', 'a\nb', 'x' * 201, '\x1b[31mred'])
def test_a_login_link_for_a_name_that_cannot_be_recorded_is_a_value_error(name: str) -> None:
    with pytest.raises(ValueError, match='answered_by'):
        WebAnswerer().login_url('http://127.0.0.1:8000/', name=name)


def test_a_default_name_that_cannot_be_recorded_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='answered_by'):
        WebAnswerer(answered_by='a\nb')
