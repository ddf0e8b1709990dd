"""The HTML pages without JavaScript: inbox, form, inline errors, confirmation, and pages for gone questions."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from web_support import asgi_client, ask_one, asking, csrf_of, log_in, multi, single

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio


async def post_form(client: httpx.AsyncClient, request_id: str, data: dict[str, str | list[str]]) -> httpx.Response:
    token = csrf_of((await client.get(f'/requests/{request_id}')).text)
    return await client.post(f'/requests/{request_id}', data={'csrf': token, **data})


async def test_the_inbox_links_each_pending_question(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web, ask_one(single(), multi())) as job:
        html = (await client.get('/')).text
    assert f'href="/requests/{job.request.id}"' in html
    assert 'Database, Environments' in html
    assert 'src="/static/inbox.js"' in html


async def test_the_inbox_says_when_nothing_is_waiting(client: httpx.AsyncClient) -> None:
    html = (await client.get('/')).text
    assert '<p id="empty" class="empty">' in html


async def test_the_form_has_a_fieldset_per_question_with_labelled_inputs(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web, ask_one(single(), multi())) as job:
        html = (await client.get(f'/requests/{job.request.id}')).text
    assert html.count('<fieldset') == 2
    assert '<legend>Database</legend>' in html
    assert 'type="radio" name="q0" id="q0-o0"' in html
    assert 'type="checkbox" name="q1" id="q1-o0"' in html
    assert '<label for="q0-o0">PostgreSQL</label>' in html
    assert '<p class="description" id="q0-o0-d">The production database.</p>' in html
    assert '<label for="q0-custom"' in html
    assert html.index('value="answer"') < html.index('value="decline"')


async def test_the_form_has_no_other_box_when_custom_answers_are_off() -> None:
    web = WebAnswerer(allow_custom_answers=False)
    async with asgi_client(web) as client, asking(web) as job:
        await log_in(client, web)
        html = (await client.get(f'/requests/{job.request.id}')).text
    assert 'q0-custom' not in html


async def test_submitting_the_form_answers_and_confirms(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web, ask_one(single(), multi())) as job:
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': '1', 'q1': ['0', '2']})
        assert response.status_code == 200
        assert 'your answer was sent' in response.text
        assert await job.response() == AskUserResponse(
            answers=(AskUserAnswer('Database', ('SQLite',)), AskUserAnswer('Environments', ('dev', 'production')))
        )


async def test_writing_in_the_other_box_sends_a_custom_answer(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        await post_form(client, job.request.id, {'action': 'answer', 'q0': 'other', 'q0-text': 'Oracle\r\n23ai'})
        assert (await job.response()).answers == (AskUserAnswer('Database', custom_answer='Oracle\n23ai'),)


async def test_the_decline_button_declines(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        response = await post_form(client, job.request.id, {'action': 'decline', 'q0': '1'})
        assert 'You declined to answer' in response.text
        assert await job.response() == AskUserResponse(cancelled=True)


async def test_a_missing_answer_is_shown_inline_keeping_what_was_entered(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web, ask_one(single(), multi())) as job:
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': '2'})
        assert response.status_code == 422
        assert 'Pick at least one option.' in response.text
        assert 'id="q0-o2" value="2" checked' in response.text
        assert 'id="error-summary"' in response.text
        assert [r.id for r in await web.hub.pending()] == [job.request.id]


async def test_other_ticked_with_an_empty_box_is_an_inline_error_keeping_the_tick(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': 'other', 'q0-text': '  '})
    assert response.status_code == 422
    assert 'Write your answer in the box' in response.text
    assert 'value="other" checked' in response.text


async def test_a_written_answer_with_an_option_picked_is_an_inline_error_keeping_the_text(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': '0', 'q0-text': 'my <words>'})
    assert response.status_code == 422
    assert 'choose &#34;Other&#34; to send it' in response.text
    assert '>my &lt;words&gt;</textarea>' in response.text


async def test_a_custom_answer_over_the_cap_is_an_inline_error() -> None:
    web = WebAnswerer(max_custom_answer_length=5)
    async with asgi_client(web) as client, asking(web) as job:
        await log_in(client, web)
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': 'other', 'q0-text': 'abcdefg'})
    assert response.status_code == 422
    assert 'keep it to 5' in response.text


async def test_a_tampered_option_value_is_an_inline_error(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': '9'})
    assert response.status_code == 422
    assert 'not one of the options' in response.text


async def test_two_radios_posted_for_a_single_select_question_is_an_inline_error(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        response = await post_form(client, job.request.id, {'action': 'answer', 'q0': ['0', '1']})
    assert response.status_code == 422
    assert 'Pick only one option.' in response.text


async def test_answering_again_says_it_was_already_answered(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.id}')).text)
        await client.post(f'/requests/{job.request.id}', data={'csrf': token, 'action': 'decline'})
        again = await client.post(f'/requests/{job.request.id}', data={'csrf': token, 'action': 'decline'})
    assert again.status_code == 409
    assert 'Already answered' in again.text


async def test_a_withdrawn_question_says_it_is_no_longer_waiting(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.id}')).text)
    page = await client.get(f'/requests/{job.request.id}')
    assert page.status_code == 410
    assert 'no longer waiting' in page.text
    late = await client.post(f'/requests/{job.request.id}', data={'csrf': token, 'action': 'decline'})
    assert late.status_code == 410


async def test_an_unknown_question_page_is_404(client: httpx.AsyncClient) -> None:
    page = await client.get('/requests/0123456789abcdef')
    assert page.status_code == 404
    assert 'No such question' in page.text


async def test_the_stylesheet_and_scripts_are_served_by_the_app(client: httpx.AsyncClient) -> None:
    for path, kind in [('style.css', 'text/css'), ('inbox.js', 'javascript'), ('form.js', 'javascript')]:
        response = await client.get(f'/static/{path}')
        assert response.status_code == 200
        assert kind in response.headers['content-type']


async def test_the_app_mounted_under_a_prefix_of_a_fastapi_application_links_inside_it(web: WebAnswerer) -> None:
    api = FastAPI()
    api.mount('/ask', web.app)
    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url='http://testserver') as client, asking(web) as job:
        login = await client.get('/ask/' + web.app.login_path(job.request.id))
        assert login.headers['location'] == f'/ask/requests/{job.request.id}'
        assert 'Path=/ask/' in login.headers['set-cookie']
        page = await client.get(login.headers['location'])
        assert 'href="/ask/static/style.css"' in page.text
        assert f'action="/ask/requests/{job.request.id}"' in page.text
        token = csrf_of(page.text)
        await client.post(f'/ask/requests/{job.request.id}', data={'csrf': token, 'action': 'answer', 'q0': '0'})
        assert (await job.response()).answers == (AskUserAnswer('Database', ('PostgreSQL',)),)
