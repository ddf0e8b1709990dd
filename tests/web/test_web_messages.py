"""What the pages and the API say when they refuse: each heading, sentence and error as a person or client sees it."""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Awaitable, Callable, Sequence

import httpx
import pytest
from inline_snapshot import snapshot
from starlette.requests import Request
from web_support import asgi_client, asking, log_in

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user._question_store import EVERYTHING
from pydantic_ai_ask_user.hub import HubRecord, QuestionHub
from pydantic_ai_ask_user.store import PendingFilter, PendingPage
from pydantic_ai_ask_user.web import AskUserApp, WebAnswerer, create_app

pytestmark = pytest.mark.anyio


class LostDatabase(QuestionHub):
    """A store whose database went away: every read fails the way a lost connection does."""

    async def pending(self) -> Sequence[AskUserRequest]:
        raise ConnectionRefusedError(111, 'Connection refused: db.internal:5432')

    async def pending_records(self) -> Sequence[HubRecord]:
        raise ConnectionRefusedError(111, 'Connection refused: db.internal:5432')

    async def pending_page(self, **_: object) -> PendingPage[HubRecord]:
        raise ConnectionRefusedError(111, 'Connection refused: db.internal:5432')

    async def count_pending(self, where: PendingFilter = EVERYTHING) -> int:
        raise ConnectionRefusedError(111, 'Connection refused: db.internal:5432')

    async def get(self, request_id: str) -> AskUserRequest:
        raise ConnectionRefusedError(111, 'Connection refused: db.internal:5432')


def _said(page: str) -> tuple[str, str]:
    found = re.search(r'<h1>(.*?)</h1>\s*<p>(.*?)</p>', page, re.S)
    assert found, page
    return html_lib.unescape(found.group(1)), html_lib.unescape(found.group(2))


async def _not_signed_in(web: WebAnswerer) -> httpx.Response:
    async with asgi_client(web) as client:
        return await client.get('/')


async def _not_allowed(web: WebAnswerer) -> httpx.Response:
    app = create_app(QuestionHub(), authorize=_nobody)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://testserver') as client:
        return await client.get('/')


async def _used_link(web: WebAnswerer) -> httpx.Response:
    async with asgi_client(web) as client:
        path = '/' + web.app.login_path()
        await client.get(path)
        return await client.get(path)


async def _stale_form(web: WebAnswerer) -> httpx.Response:
    async with asgi_client(web) as client, asking(web) as job:
        await log_in(client, web)
        return await client.post(f'/requests/{job.request.id}', data={'csrf': 'forged', 'action': 'decline'})


async def _lost_database(web: WebAnswerer) -> httpx.Response:
    app = create_app(LostDatabase(), access_token='secret')
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://testserver') as client:
        return await client.get('/', headers={'authorization': 'Bearer secret'})


def _nobody(request: Request) -> bool:
    return False


@pytest.mark.parametrize(
    ('visit', 'status', 'said'),
    [
        pytest.param(
            _not_signed_in,
            401,
            snapshot(
                (
                    'Not signed in',
                    'Open the link that was printed when the question server started; it signs this browser in. '
                    'Ask whoever gave you the link for a new one, or use the browser you signed in with.',
                )
            ),
            id='not-signed-in',
        ),
        pytest.param(
            _not_allowed, 403, snapshot(('No access', 'You are not allowed to see these questions.')), id='no-access'
        ),
        pytest.param(
            _used_link,
            403,
            snapshot(
                (
                    'This link does not work',
                    'Each sign-in link works once. '
                    'Ask whoever gave you the link for a new one, or use the browser you signed in with.',
                )
            ),
            id='used-link',
        ),
        pytest.param(
            _stale_form,
            403,
            snapshot(
                (
                    'This form has expired',
                    'The page was not sent by this server, or it is too old. Reload the question and answer again.',
                )
            ),
            id='stale-form',
        ),
        pytest.param(
            _lost_database,
            503,
            snapshot(
                (
                    'The question store cannot be reached',
                    'This server cannot reach the database the questions are kept in, so it can neither show them '
                    'nor take answers right now. Reload the page in a moment.',
                )
            ),
            id='lost-database',
        ),
    ],
)
async def test_each_refusal_page_says_what_happened_and_what_to_do(
    web: WebAnswerer, visit: Callable[[WebAnswerer], Awaitable[httpx.Response]], status: int, said: tuple[str, str]
) -> None:
    response = await visit(web)
    assert response.status_code == status
    assert response.headers['content-type'].startswith('text/html')
    assert _said(response.text) == said
    assert 'db.internal' not in response.text


def _app_for(kind: str, web: WebAnswerer) -> AskUserApp:
    if kind == 'authorize':
        return create_app(QuestionHub(), authorize=_nobody)
    if kind == 'lost':
        return create_app(LostDatabase(), access_token='secret')
    return web.app


@pytest.mark.parametrize(
    ('kind', 'headers', 'expected'),
    [
        pytest.param(
            'token',
            {},
            snapshot(
                (
                    401,
                    {'error': 'unauthorized', 'message': 'send the access token as "Authorization: Bearer <token>"'},
                )
            ),
            id='no-token',
        ),
        pytest.param(
            'token',
            {'authorization': 'Bearer wrong'},
            snapshot((403, {'error': 'forbidden', 'message': 'these credentials do not give access to the questions'})),
            id='wrong-token',
        ),
        pytest.param(
            'authorize',
            {},
            snapshot((403, {'error': 'forbidden', 'message': 'these credentials do not give access to the questions'})),
            id='authorize-says-no',
        ),
        pytest.param(
            'lost',
            {'authorization': 'Bearer secret'},
            snapshot(
                (
                    503,
                    {
                        'error': 'store_unavailable',
                        'message': 'the question store cannot be reached; try again later',
                    },
                )
            ),
            id='lost-database',
        ),
    ],
)
async def test_each_api_refusal_is_a_json_error_with_its_code(
    web: WebAnswerer, kind: str, headers: dict[str, str], expected: tuple[int, dict[str, str]]
) -> None:
    app = _app_for(kind, web)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://testserver') as client:
        response = await client.get('/api/requests', headers=headers)
    assert (response.status_code, response.json()) == expected
