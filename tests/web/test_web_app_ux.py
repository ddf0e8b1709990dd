"""The app on a real server: an unreachable store, the favicon, an answer that lost the race to another
tab, and when and by which run each inbox row was asked."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from web_support import WAIT, Record, RecordingStore, ask_one, asking, assert_security_headers, bearer, csrf_of, single

from pydantic_ai_ask_user import AskUserResponse
from pydantic_ai_ask_user.web import WebAnswerer, create_app, serve

pytestmark = pytest.mark.anyio


# -- an unreachable store ------------------------------------------------------------------------


@pytest.mark.parametrize('path', ['/', '/requests/0123abcd'])
async def test_an_unreachable_database_gets_a_503_page_with_the_security_headers(tmp_path: Path, path: str) -> None:
    pytest.importorskip('dbos')
    from pydantic_ai_ask_user.dbos import DBOSQuestionStore

    store = DBOSQuestionStore(f'sqlite:///{tmp_path}/no/such/dir/db.sqlite')
    app = create_app(store, access_token='secret')
    async with serve(app) as base, httpx.AsyncClient(timeout=WAIT) as client:
        response = await client.get(base.rstrip('/') + path, headers={'authorization': 'Bearer secret'})
    assert response.status_code == 503
    assert response.headers['content-type'].startswith('text/html')
    assert 'The question store cannot be reached' in response.text
    assert str(tmp_path) not in response.text
    assert_security_headers(response)


@pytest.mark.parametrize('path', ['/api/requests', '/api/requests/0123abcd'])
async def test_an_unreachable_database_gets_a_503_json_error_on_the_api(tmp_path: Path, path: str) -> None:
    pytest.importorskip('dbos')
    from pydantic_ai_ask_user.dbos import DBOSQuestionStore

    store = DBOSQuestionStore(f'sqlite:///{tmp_path}/no/such/dir/db.sqlite')
    app = create_app(store, access_token='secret')
    async with serve(app) as base, httpx.AsyncClient(timeout=WAIT) as client:
        response = await client.get(base.rstrip('/') + path, headers={'authorization': 'Bearer secret'})
    assert response.status_code == 503
    assert response.json()['error'] == 'store_unavailable'
    assert str(tmp_path) not in response.text
    assert_security_headers(response)


# -- the favicon ---------------------------------------------------------------------------------


async def test_the_favicon_is_served_without_signing_in(web: WebAnswerer) -> None:
    async with serve(web.app) as base, httpx.AsyncClient(timeout=WAIT) as client:
        response = await client.get(base + 'favicon.ico')
    assert response.status_code == 200
    assert response.headers['content-type'].startswith('image/svg+xml')
    assert response.content.startswith(b'<svg')
    assert_security_headers(response)


# -- an answer that lost the race --------------------------------------------------------------


async def test_a_form_posted_after_another_answer_says_so_and_gives_back_what_was_written(web: WebAnswerer) -> None:
    async with serve(web.app) as base, httpx.AsyncClient(base_url=base, timeout=WAIT) as client, asking(web) as job:
        assert (await client.get(web.login_url(base))).status_code == 303
        token = csrf_of((await client.get(f'requests/{job.request.id}')).text)
        await web.hub.respond(job.request.id, AskUserResponse(cancelled=True))
        late = await client.post(
            f'requests/{job.request.id}',
            data={'csrf': token, 'action': 'answer', 'q0': 'other', 'q0-text': 'CockroachDB <3 regions>'},
        )
    assert late.status_code == 409
    assert 'answered in another tab or by someone else' in late.text
    assert 'CockroachDB &lt;3 regions&gt;' in late.text


# -- which run each inbox row belongs to ---------------------------------------------------------


async def test_inbox_rows_show_when_each_question_was_asked_and_by_which_run() -> None:
    now = time.time()
    records = [
        Record(ask_one(single()), 'migration-run-1', now - 7 * 60),
        Record(ask_one(single()), 'migration-run-2', now - 3 * 3600),
    ]
    app = create_app(RecordingStore(records), access_token='secret')
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=WAIT) as client:
        html = (await client.get('', headers={'authorization': 'Bearer secret'})).text
        listing = (await client.get('api/requests', headers={'authorization': 'Bearer secret'})).json()
    assert '7 minutes ago' in html
    assert '3 hours ago' in html
    assert 'migration-run-1' in html
    assert 'migration-run-2' in html
    # The oldest first (neither has a deadline).
    assert [item['run'] for item in listing['requests']] == ['migration-run-2', 'migration-run-1']
    assert listing['requests'][1]['asked_at'] == pytest.approx(now - 7 * 60)


async def test_inbox_rows_of_the_in_process_hub_show_the_short_request_id(web: WebAnswerer) -> None:
    async with (
        serve(web.app) as base,
        httpx.AsyncClient(base_url=base, timeout=WAIT) as client,
        asking(web) as one,
        asking(web) as two,
    ):
        html = (await client.get('', headers=bearer(web))).text
    assert f'…{one.request.id[-8:]}' in html
    assert f'…{two.request.id[-8:]}' in html
