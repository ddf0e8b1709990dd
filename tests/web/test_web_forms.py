"""The form's field names from one place, the confirmation built by `ask_user_result`, store errors from their table."""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio
import httpx
import pytest
from inline_snapshot import snapshot
from web_support import WAIT, answer_body, ask_one, asking, bearer, csrf_of, multi, single

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.store import AlreadyAnsweredError, StoreError, UnknownRequestError, WithdrawnError
from pydantic_ai_ask_user.web import WebAnswerer
from pydantic_ai_ask_user.web._forms import FIELDS

pytestmark = pytest.mark.anyio


def _names(page: str) -> set[str]:
    return set(re.findall(r'\bname="([^"]+)"', page)) - {'viewport', 'referrer'}


def _status_page(page: str) -> tuple[str, str]:
    found = re.search(r'<div class="notice" id="status"[^>]*>\s*<h1>(.*?)</h1>\s*<p>(.*?)</p>', page, re.S)
    assert found, page
    return html_lib.unescape(found.group(1)), html_lib.unescape(found.group(2))


async def test_the_form_draws_every_field_name_and_value_from_the_form_fields(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web, ask_one(single(), multi())) as job:
        page = (await client.get(f'/requests/{job.request.id}')).text
        # The answer form's fields (the folded Forward form after it has its own: `to`, `note`, `add`).
        answer_form = page.split('<form id="answer-form"', 1)[1].split('</form>', 1)[0]
        assert _names(answer_form) == {
            FIELDS.csrf,
            FIELDS.action,
            FIELDS.choice(0),
            FIELDS.choice(1),
            FIELDS.other_text(0),
            FIELDS.other_text(1),
        }
        assert f'name="{FIELDS.choice(0)}" id="q0-other" value="{FIELDS.other}"' in page
        assert f'name="{FIELDS.action}" value="{FIELDS.answer}"' in page
        assert f'name="{FIELDS.action}" value="{FIELDS.decline}"' in page
        # What the page names, `read_form` reads: an answer posted under those names arrives.
        sent = await client.post(
            f'/requests/{job.request.id}',
            data={
                FIELDS.csrf: csrf_of(page),
                FIELDS.action: FIELDS.answer,
                FIELDS.choice(0): '1',
                FIELDS.choice(1): FIELDS.other,
                FIELDS.other_text(1): 'only the preview',
            },
        )
        assert sent.status_code == 200, sent.text
        response = await job.response()
    assert ask_user_result(job.request, response) == {'Database': ['SQLite'], 'Environments': ['only the preview']}


async def test_the_confirmation_shows_what_the_model_gets(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    async with asking(web, ask_one(single(), multi())) as job:
        page = (await client.get(f'/requests/{job.request.id}')).text
        sent = await client.post(
            f'/requests/{job.request.id}',
            data={
                FIELDS.csrf: csrf_of(page),
                FIELDS.action: FIELDS.answer,
                FIELDS.choice(0): FIELDS.other,
                FIELDS.other_text(0): 'Postgres <16>',
                FIELDS.choice(1): ['0', '2'],
            },
        )
        response = await job.response()
    shown = re.findall(r'<dt>(.*?)</dt>\s*<dd>(.*?)</dd>', sent.text)
    result = ask_user_result(job.request, response)
    assert isinstance(result, dict)
    assert [(html_lib.unescape(dt), html_lib.unescape(dd)) for dt, dd in shown] == [
        (header, ', '.join(values)) for header, values in result.items()
    ]
    assert shown == snapshot([('Database', 'Postgres &lt;16&gt;'), ('Environments', 'dev, production')])


@asynccontextmanager
async def _unknown(web: WebAnswerer) -> AsyncGenerator[str]:
    yield 'call_never_asked'


@asynccontextmanager
async def _answered(web: WebAnswerer) -> AsyncGenerator[str]:
    async with asking(web) as job:
        await web.hub.respond(job.request.id, AskUserResponse(cancelled=True))
        await job.response()
        yield job.request.id


@asynccontextmanager
async def _withdrawn(web: WebAnswerer) -> AsyncGenerator[str]:
    async with asking(web) as job:
        pass  # the block ends unanswered: the ask is cancelled, and the question withdrawn
    with anyio.fail_after(WAIT):
        while len(web.hub):
            await anyio.sleep(0.005)
    yield job.request.id


async def _api_get(client: httpx.AsyncClient, web: WebAnswerer, request_id: str) -> httpx.Response:
    return await client.get(f'/api/requests/{request_id}', headers=bearer(web))


async def _api_answer(client: httpx.AsyncClient, web: WebAnswerer, request_id: str) -> httpx.Response:
    return await client.post(f'/api/requests/{request_id}/answer', json=answer_body(), headers=bearer(web))


async def _api_decline(client: httpx.AsyncClient, web: WebAnswerer, request_id: str) -> httpx.Response:
    return await client.post(f'/api/requests/{request_id}/decline', headers=bearer(web))


STATES = [
    pytest.param(_unknown, UnknownRequestError, id='unknown'),
    pytest.param(_answered, AlreadyAnsweredError, id='answered'),
    pytest.param(_withdrawn, WithdrawnError, id='withdrawn'),
]
"""A request id in each state the store refuses, and the `StoreError` it refuses it with."""


@pytest.mark.parametrize(('state', 'error'), STATES)
async def test_the_form_page_of_a_request_not_waiting_comes_from_its_errors_table(
    client: httpx.AsyncClient,
    web: WebAnswerer,
    state: Callable[[WebAnswerer], AbstractAsyncContextManager[str]],
    error: type[StoreError],
) -> None:
    async with state(web) as request_id:
        page = await client.get(f'/requests/{request_id}')
    assert page.status_code == error.http_status
    assert _status_page(page.text) == (error.heading, error.page_text)


@pytest.mark.parametrize(('state', 'error'), STATES)
@pytest.mark.parametrize(
    'call',
    [
        pytest.param(_api_get, id='get'),
        pytest.param(_api_answer, id='answer'),
        pytest.param(_api_decline, id='decline'),
    ],
)
async def test_the_api_answer_for_a_request_not_waiting_comes_from_its_errors_table(
    client: httpx.AsyncClient,
    web: WebAnswerer,
    state: Callable[[WebAnswerer], AbstractAsyncContextManager[str]],
    error: type[StoreError],
    call: Callable[[httpx.AsyncClient, WebAnswerer, str], Awaitable[httpx.Response]],
) -> None:
    async with state(web) as request_id:
        response = await call(client, web, request_id)
    assert response.status_code == error.http_status
    assert response.json()['error'] == error.code


async def test_a_form_sent_after_another_answer_says_so_in_the_words_of_the_table(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    async with asking(web) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.id}')).text)
        await web.hub.respond(job.request.id, AskUserResponse(cancelled=True))
        late = await client.post(
            f'/requests/{job.request.id}',
            data={
                FIELDS.csrf: token,
                FIELDS.action: FIELDS.answer,
                FIELDS.choice(0): FIELDS.other,
                FIELDS.other_text(0): 'kept',
            },
        )
    assert late.status_code == AlreadyAnsweredError.http_status
    heading, message = _status_page(late.text)
    assert heading == AlreadyAnsweredError.heading
    assert message.startswith(AlreadyAnsweredError.page_text)
    assert message == snapshot(
        'This question has been answered already. '
        'It was answered in another tab or by someone else, so your answer was not sent.'
    )
    assert '<p class="written">kept</p>' in late.text


async def test_a_note_sent_after_another_answer_is_given_back_too(client: httpx.AsyncClient, web: WebAnswerer) -> None:
    request = AskUserRequest(questions=(single(),), notes=True)
    async with asking(web, request) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.id}')).text)
        await web.hub.respond(job.request.id, AskUserResponse(cancelled=True))
        late = await client.post(
            f'/requests/{job.request.id}',
            data={
                FIELDS.csrf: token,
                FIELDS.action: FIELDS.answer,
                FIELDS.choice(0): '0',
                FIELDS.note(0): 'only after <the backup>',
            },
        )
    assert late.status_code == AlreadyAnsweredError.http_status
    assert '<p class="written">only after &lt;the backup&gt;</p>' in late.text


async def test_other_with_ticked_options_sends_the_own_answer_as_the_page_and_the_terminal_do(
    client: httpx.AsyncClient, web: WebAnswerer
) -> None:
    # Without scripts nothing unticks the options when "Other" is chosen; the server reads it as the page does:
    # "Other" with words in its box replaces the options (the box says "instead of the options").
    async with asking(web, ask_one(multi())) as job:
        token = csrf_of((await client.get(f'/requests/{job.request.key}')).text)
        sent = await client.post(
            f'/requests/{job.request.key}',
            data={
                FIELDS.csrf: token,
                FIELDS.action: FIELDS.answer,
                FIELDS.choice(0): ['0', '2', FIELDS.other],
                FIELDS.other_text(0): 'only the preview environment',
            },
        )
        assert sent.status_code == 200, sent.text
        assert (await job.response()).answers == (
            AskUserAnswer('Environments', custom_answer='only the preview environment'),
        )
