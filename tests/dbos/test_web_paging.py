"""The web inbox and `/api/requests` on the durable store a page at a time: cursors, totals, 400 for bad ones."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from durable_support import dbos_workflows, publish_question

from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.web import create_app

pytestmark = pytest.mark.anyio

TOKEN = 's3cret-token'


@pytest.fixture
async def client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    now = time.time()
    for index in range(7):
        publish_question(database_url, f'q{index}', deadline=now + 100 - index if index < 3 else None)
    store = DBOSQuestionStore(database_url)
    app = create_app(store, access_token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    headers = {'Authorization': f'Bearer {TOKEN}'}
    try:
        async with httpx.AsyncClient(transport=transport, base_url='http://t', headers=headers) as client:
            yield client
    finally:
        store.close()


async def test_the_api_pages_with_a_next_cursor_and_a_total(client: httpx.AsyncClient) -> None:
    first = (await client.get('/api/requests', params={'limit': 3})).json()
    assert [item['id'] for item in first['requests']] == ['q2', 'q1', 'q0']  # the nearest deadline first
    assert (first['total'], first['total_exact']) == (7, True)
    assert isinstance(first['requests'][0]['asked_at'], float)
    second = (await client.get('/api/requests', params={'limit': 3, 'cursor': first['next_cursor']})).json()
    assert [item['id'] for item in second['requests']] == ['q3', 'q4', 'q5']
    last = (await client.get('/api/requests', params={'limit': 3, 'cursor': second['next_cursor']})).json()
    assert ([item['id'] for item in last['requests']], last['next_cursor']) == (['q6'], None)
    everything = (await client.get('/api/requests')).json()  # 50 by default
    assert (len(everything['requests']), everything['next_cursor']) == (7, None)
    assert (await client.get('/api/requests', params={'older_than': 3600})).json()['total'] == 0
    assert (await client.get('/api/requests', params={'newer_than': 3600})).json()['total'] == 7


@pytest.mark.parametrize(
    'cursor',
    [
        'garbage',
        base64.urlsafe_b64encode(b'[1, 2, 3, "x y"]').decode(),
        base64.urlsafe_b64encode(b'{"a": 1}').decode(),
        base64.urlsafe_b64encode(b'[1, "NaN", 2, "k"]').decode(),
        base64.urlsafe_b64encode(b'[' * 5000).decode()[:1900],
        '%00',
    ],
)
async def test_a_tampered_cursor_is_a_clear_400_never_a_500(client: httpx.AsyncClient, cursor: str) -> None:
    response = await client.get('/api/requests', params={'cursor': cursor})
    assert response.status_code == 400
    assert response.json() == {
        'error': 'bad_cursor',
        'message': 'the cursor is not one this server gave out; start again from the first page',
    }
    page = await client.get('/', params={'cursor': cursor}, headers={'Accept': 'text/html'})
    assert page.status_code == 400
    assert 'This page of questions does not exist' in page.text
    assert cursor not in page.text  # the input is not echoed into the page


@pytest.mark.parametrize(
    ('query', 'message'),
    [
        ({'limit': '0'}, 'limit must be a whole number from 1 to 500'),
        ({'limit': '501'}, 'limit must be a whole number from 1 to 500'),
        ({'limit': '1e3'}, 'limit must be a whole number from 1 to 500'),
        ({'limit': '９'}, 'limit must be a whole number from 1 to 500'),
        ({'limit': '9' * 400}, 'limit must be a whole number from 1 to 500'),
        ({'older_than': '-5'}, 'older_than must be a number of seconds, 0 or more'),
        ({'newer_than': 'nan'}, 'newer_than must be a number of seconds, 0 or more'),
        ({'older_than': 'inf'}, 'older_than must be a number of seconds, 0 or more'),
    ],
)
async def test_a_bad_limit_or_age_is_a_400_that_says_what_is_wrong(
    client: httpx.AsyncClient, query: dict[str, str], message: str
) -> None:
    response = await client.get('/api/requests', params=query)
    assert response.status_code == 400
    assert response.json() == {'error': 'bad_query', 'message': message}


async def test_the_inbox_page_draws_one_page_the_total_and_a_link_to_the_next(client: httpx.AsyncClient) -> None:
    html = (await client.get('/', params={'limit': 2})).text
    assert html.count('<li data-id=') == 2
    assert '7 questions waiting' in html
    assert '<title>(7) ' in html
    assert 'id="more"' in html
    assert 'data-cursor="' in html
    start = html.index('data-cursor="') + len('data-cursor="')
    cursor = html[start : html.index('"', start)]
    following = (await client.get('/', params={'limit': 5, 'cursor': cursor})).text
    assert [f'data-id="q{index}"' in following for index in (3, 4, 5, 6)] == [True] * 4
    assert 'data-id="q2"' not in following
    assert '<p id="more-wrap" hidden>' in following


async def test_opening_one_question_counts_the_waiting_ones_without_listing_them(
    client: httpx.AsyncClient, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_listing(*args: object, **kwargs: object) -> None:
        raise AssertionError('the form listed every waiting question')

    monkeypatch.setattr(DBOSQuestionStore, 'pending', no_listing)
    monkeypatch.setattr(DBOSQuestionStore, 'pending_records', no_listing)
    monkeypatch.setattr(DBOSQuestionStore, 'pending_page', no_listing)
    form = await client.get('/requests/q4', headers={'Accept': 'text/html'})
    assert form.status_code == 200
    assert '<title>(7) ' in form.text
