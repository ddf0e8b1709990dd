"""Never a 500 for input: whatever a client puts in a query, a form, a path or a body, the inbox answers 4xx.

The two found by hand first (a `limit` whose leading zeros hid its size, a cursor holding an integer too large for
a float), then a property test that walks every route of the app (`AskUserApp.routes`) signed in as a person,
with a valid CSRF token, a waiting question and a waiting approval, and sends arbitrary strings as every query
parameter, form field, path parameter and JSON body it reads. Each request is sent straight to the app over
ASGI, and only its status is read: an event stream's answer starts at once and never ends.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Mount, Route
from web_support import WAIT, asgi_client, asking, csrf_of

from pydantic_ai_ask_user.store import PendingApproval
from pydantic_ai_ask_user.web import WebAnswerer
from pydantic_ai_ask_user.web._forms import FIELDS

pytestmark = pytest.mark.no_cover

QUERY = ('limit', 'cursor', 'older_than', 'newer_than', 'approval_cursor', 'code', 'next')
"""Every query parameter a route of the app reads."""

FORM = (
    FIELDS.action,
    'args',
    'reason',
    'code',
    'next',
    'q0',
    'q1',
    'other',
    FIELDS.other_text(0),
    FIELDS.note(0),
    'to',
    'note',
    'add',
)
"""Every form field a route of the app reads, but the CSRF token (sent valid, or arbitrary)."""

EXAMPLES = max(20, settings.default.max_examples // 5)
"""60 in `make test`: enough to find a crash by a character class, few enough to run in seconds."""


def large_integer_cursor() -> str:
    data = json.dumps([1, int('9' * 400), 0, 'k'])
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip('=')


class Inbox:
    """The app, signed in as alice: her cookies, a valid CSRF token, and the ids of what waits for her."""

    def __init__(self, web: WebAnswerer, cookies: str, csrf: str, ids: list[str]) -> None:
        self.web, self.cookies, self.csrf, self.ids = web, cookies, csrf, ids

    async def status(
        self, method: str, path: str, query: dict[str, str], body: bytes = b'', content_type: str = ''
    ) -> int:
        """The status the app starts its answer with; an answer still streaming is then cut off."""
        headers = [(b'host', b'testserver'), (b'cookie', self.cookies.encode()), (b'origin', b'http://testserver')]
        if content_type:
            headers.append((b'content-type', content_type.encode()))
        headers.append((b'content-length', str(len(body)).encode()))
        scope: dict[str, Any] = {
            'type': 'http',
            'asgi': {'version': '3.0'},
            'http_version': '1.1',
            'method': method,
            'scheme': 'http',
            'path': path,
            'raw_path': quote(path).encode(),
            'root_path': '',
            'query_string': urlencode(query).encode(),
            'headers': headers,
            'client': ('127.0.0.1', 5000),
            'server': ('testserver', 80),
        }
        statuses: list[int] = []
        started = anyio.Event()
        body_sent = False

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {'type': 'http.request', 'body': body, 'more_body': False}
            await started.wait()
            return {'type': 'http.disconnect'}

        async def send(message: dict[str, Any]) -> None:
            if message['type'] == 'http.response.start':
                statuses.append(message['status'])
                started.set()

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(self.web.app, scope, receive, send)
                await started.wait()
                group.cancel_scope.cancel()
        return statuses[0]


@asynccontextmanager
async def signed_in() -> AsyncGenerator[Inbox]:
    web = WebAnswerer()
    approval = PendingApproval(
        'w1', 'call_0', 'deploy_to', {'env': 'staging'}, parameters={'type': 'object'}, audience=('alice',)
    )
    async with asking(web) as question, anyio.create_task_group() as group:
        group.start_soon(web.hub.ask_wait, 'w1', [], [approval])
        async with asgi_client(web) as client:
            assert (await client.get('/' + web.app.login_path(name='alice'))).status_code == 303
            csrf = csrf_of((await client.get(f'/requests/{question.request.key}')).text)
            cookies = '; '.join(f'{name}={value}' for name, value in client.cookies.items())
        yield Inbox(web, cookies, csrf, [question.request.key, approval.key])
        group.cancel_scope.cancel()


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, BlockingPortal]]:
    """Alice's inbox, its hub's waits running in an event loop of their own that each example calls into."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(signed_in()) as signed:
        yield signed, portal


def test_a_limit_is_read_whole_and_a_cursor_s_numbers_must_fit_a_float(inbox: tuple[Inbox, BlockingPortal]) -> None:
    signed, portal = inbox

    def status(path: str, query: dict[str, str]) -> int:
        return portal.call(signed.status, 'GET', path, query)

    for path in ('/', '/api/requests', '/api/approvals'):
        assert status(path, {'limit': '000001000'}) == 400, path
        assert status(path, {'limit': '0' * 5000 + '5'}) == 200, path
        assert status(path, {'cursor': large_integer_cursor()}) == 400, path
    assert status('/', {'approval_cursor': large_integer_cursor()}) == 400


def routes(web: WebAnswerer) -> list[tuple[str, str]]:
    """Every method and path template the app serves (`/requests/{id}`), a mount as `/static/{path}`."""
    found: list[tuple[str, str]] = []
    for route in web.app.routes:
        if isinstance(route, Route):
            found += [(method, route.path) for method in sorted(route.methods or ()) if method != 'HEAD']
        elif isinstance(route, Mount):
            found.append(('GET', route.path + '/{path}'))
    return found


ROUTES = routes(WebAnswerer())

text = st.text(max_size=60) | st.sampled_from(
    ['0', '1', '500', '501', '000001000', '-1', '1e999', 'nan', large_integer_cursor()]
)


@pytest.mark.parametrize(('method', 'template'), ROUTES, ids=[f'{m} {p}' for m, p in ROUTES])
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_strings_in_every_parameter_of_every_route_are_never_a_500(
    inbox: tuple[Inbox, BlockingPortal], method: str, template: str, data: st.DataObject
) -> None:
    signed, portal = inbox
    path = template
    for name in ('{id}', '{path}'):
        if name in path:
            value = data.draw(text | st.sampled_from(signed.ids), label=name)
            path = path.replace(name, value)
    query = data.draw(st.fixed_dictionaries({}, optional={name: text for name in QUERY}), label='query')
    body, content_type = b'', ''
    if method == 'POST' and template.startswith('/api/'):
        body = data.draw(text, label='body').encode()
        content_type = 'application/json'
    elif method == 'POST':
        form = data.draw(st.fixed_dictionaries({}, optional={name: text for name in FORM}), label='form')
        form['csrf'] = data.draw(st.just(signed.csrf) | text, label='csrf')
        body, content_type = urlencode(form).encode(), 'application/x-www-form-urlencoded'
    status = portal.call(signed.status, method, path, query, body, content_type)
    assert status < 500, (method, path, query, body)


def test_the_fuzzed_routes_are_every_route_of_the_app() -> None:
    assert len(ROUTES) == 25
    assert ('GET', '/act') in ROUTES
    assert ('POST', '/act') in ROUTES
    assert ('POST', '/api/requests/{id}/forward') in ROUTES
    assert ('POST', '/approvals/{id}/forward') in ROUTES
    assert ('GET', '/api/events') in ROUTES
    assert ('GET', '/api/history') in ROUTES
    assert ('POST', '/approvals/{id}') in ROUTES
