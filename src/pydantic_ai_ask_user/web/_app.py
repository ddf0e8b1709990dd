"""The ASGI app: the inbox, one form per request, and the JSON API, written against `QuestionStore` only."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from pydantic_ai_ask_user import (
    AlreadyAnsweredError,
    AskUserRequest,
    AskUserResponse,
    QuestionStore,
    StoreError,
    StoreEvent,
    UnknownRequestError,
)
from pydantic_ai_ask_user._text import printable

from ._forms import Entered, read_form
from ._rows import InboxRow, inbox_rows
from ._security import (
    CSRF_COOKIE,
    DEFAULT_BODY_SECONDS,
    DEFAULT_MAX_BODY_BYTES,
    SESSION_COOKIE,
    Authorize,
    BodyGuard,
    CatchAll,
    Gate,
    SecurityHeaders,
    cookie_name,
    csrf_cookie,
    internal_error,
    new_csrf_cookie,
    wants_json,
)
from ._templates import STATIC_DIR, render
from ._wire import DEFAULT_MAX_CUSTOM_ANSWER, BadBody, event_json, parse_json_body, parse_response, request_json

__all__ = ('AskUserApp', 'create_app', 'DEFAULT_TITLE', 'DEFAULT_LOGIN_HELP', 'FAVICON')

DEFAULT_TITLE = 'Questions from your agent'
"""The name the pages show in their title and header bar."""

DEFAULT_LOGIN_HELP = 'Ask whoever gave you the link for a new one, or use the browser you signed in with.'
"""What the sign-in pages tell a person whose link did not work; `ask-user ask --web` says how to get a new one."""

FINISHED = 'This server has finished; you can close this tab.'
"""What the pages say once `AskUserApp.finish` was called (the `finished` event of the stream)."""

FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    b'<rect width="32" height="32" rx="7" fill="#2358c4"/>'
    b'<path d="M11.5 12a4.5 4.5 0 1 1 6.6 4c-1.3.7-2.1 1.5-2.1 2.8v.7" fill="none" stroke="#fff" '
    b'stroke-width="3" stroke-linecap="round"/>'
    b'<circle cx="16" cy="24.5" r="2" fill="#fff"/></svg>'
)
"""The tab icon, a question mark, served at `/favicon.ico` so that no browser gets a 404 for it."""

_UNREACHABLE_ERRORS = frozenset({'OperationalError', 'InterfaceError', 'DisconnectionError'})
"""DB-API (PEP 249) and SQLAlchemy errors for a database that cannot be reached: connection lost, not found."""

_TEXT_FIELD = re.compile(r'q[0-9]{1,2}-text')
"""A form field holding what the person wrote in an "Other" box."""

_MAX_WRITTEN = 20
"""How many written answers a page that refused them gives back, at most."""

_log = logging.getLogger('pydantic_ai_ask_user.web')

_ID = re.compile(r'[A-Za-z0-9_.:-]{1,200}')
"""What a request id in a path may look like; anything else is unknown without asking the store."""

Endpoint = Callable[[Request], Awaitable[Response]]


class AskUserApp:
    """The pages and JSON API over a `QuestionStore`; an ASGI app that mounts under any prefix.

    Build it with `create_app(store)`, or use `WebAnswerer(...).app`, which serves the answerer's own hub.
    """

    def __init__(
        self,
        store: QuestionStore,
        *,
        authorize: Authorize | None = None,
        access_token: str | None = None,
        title: str = DEFAULT_TITLE,
        allow_custom_answers: bool = True,
        max_custom_answer: int = DEFAULT_MAX_CUSTOM_ANSWER,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        body_seconds: float = DEFAULT_BODY_SECONDS,
    ) -> None:
        if max_custom_answer < 1:
            raise ValueError(f'max_custom_answer must be 1 or more, not {max_custom_answer!r}')
        if max_body_bytes < 1024:
            raise ValueError(f'max_body_bytes must be at least 1024, not {max_body_bytes!r}')
        if not body_seconds > 0:
            raise ValueError(f'body_seconds must be more than 0, not {body_seconds!r}')
        self.store = store
        """Where the questions wait."""
        self.gate = Gate(authorize=authorize, access_token=access_token)
        """Who may see and answer them."""
        self.title = title
        """The name shown in every page's title and header bar."""
        self.allow_custom_answers = allow_custom_answers
        """Whether each question has an "Other" box for the person's own words."""
        self.max_custom_answer = max_custom_answer
        """The longest custom answer accepted, in characters."""
        self.login_help = DEFAULT_LOGIN_HELP
        """What the sign-in pages tell a person whose link did not work, or who has none: how to get one."""
        self.finished = False
        """Whether `finish` was called: the server is about to stop, and every page says so."""
        self._finish_waiters: set[anyio.Event] = set()
        guarded = self._guarded
        routes = [
            Route('/', guarded(self._inbox), methods=['GET'], name='inbox'),
            Route('/login', self._login, methods=['GET'], name='login'),
            Route('/favicon.ico', _favicon, methods=['GET']),
            Route('/requests/{id}', guarded(self._form), methods=['GET'], name='form'),
            Route('/requests/{id}', guarded(self._submit), methods=['POST'], name='submit'),
            Route('/api/requests', guarded(self._api_list), methods=['GET']),
            Route('/api/requests/{id}', guarded(self._api_get), methods=['GET']),
            Route('/api/requests/{id}/answer', guarded(self._api_answer), methods=['POST']),
            Route('/api/requests/{id}/decline', guarded(self._api_decline), methods=['POST']),
            Route('/api/events', guarded(self._api_events), methods=['GET']),
            Mount('/static', StaticFiles(directory=STATIC_DIR), name='static'),
        ]
        starlette = Starlette(
            routes=routes,
            middleware=[Middleware(BodyGuard, max_bytes=max_body_bytes, seconds=body_seconds)],
            exception_handlers={Exception: _internal_error},
        )
        # Outside Starlette's own error handling, so that its 500 carries the security headers too.
        self._app = SecurityHeaders(CatchAll(starlette))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection."""
        await self._app(scope, receive, send)

    @property
    def access_token(self) -> str | None:
        """The secret a JSON API client sends as `Authorization: Bearer ...`; `None` when `authorize` decides."""
        return self.gate.access_token

    def login_path(self, request_id: str | None = None) -> str:
        """A one-time login link, relative to where the app is mounted: `login?code=...`.

        The browser that opens it gets a session cookie and lands on the inbox, or on the form of
        `request_id`. With an `authorize` hook there is nothing to log in to: the inbox or form path.
        """
        target = f'requests/{request_id}' if request_id is not None else ''
        if self.gate.authorize is not None:
            return target
        query = {'code': self.gate.new_login_code()}
        if target:
            query['next'] = target
        return f'login?{urlencode(query)}'

    def finish(self) -> None:
        """Tell every open page that this server has finished, before it stops.

        Each event stream sends a last `finished` event and ends (the pages then stop reconnecting),
        a stream opened later gets it at once, and the inbox says the tab can be closed.
        """
        self.finished = True
        for waiter in tuple(self._finish_waiters):
            waiter.set()

    # -- access -------------------------------------------------------------------------------

    def _guarded(self, endpoint: Endpoint) -> Endpoint:
        async def guarded(request: Request) -> Response:
            verdict = await self.gate.check(request)
            if verdict == 'allowed':
                try:
                    return await endpoint(request)
                except Exception as error:
                    if not _unreachable(error):
                        raise
                    _log_unreachable(request, error)
                    return self._unreachable_page(request)
            status = 401 if verdict == 'unauthenticated' else 403
            if _is_api(request):
                message = (
                    'send the access token as "Authorization: Bearer <token>"'
                    if verdict == 'unauthenticated'
                    else 'these credentials do not give access to the questions'
                )
                error = 'unauthorized' if status == 401 else 'forbidden'
                return JSONResponse({'error': error, 'message': message}, status_code=status)
            return self._page(
                request,
                'status.html',
                status,
                heading='Not signed in' if status == 401 else 'No access',
                message=(
                    'Open the link that was printed when the question server started; it signs this browser in. '
                    + self.login_help
                    if self.gate.authorize is None
                    else 'You are not allowed to see these questions.'
                ),
                show_inbox=False,
            )

        return guarded

    async def _login(self, request: Request) -> Response:
        code = request.query_params.get('code', '')
        if self.gate.authorize is not None or not self.gate.redeem(code):
            return self._page(
                request,
                'status.html',
                403,
                heading='This link does not work',
                message='Each sign-in link works once. ' + self.login_help,
                show_inbox=False,
            )
        target = request.query_params.get('next', '')
        if not (target == '' or (target.startswith('requests/') and _ID.fullmatch(target[len('requests/') :]))):
            target = ''
        response = RedirectResponse(_base(request) + target, status_code=303)
        session_name = cookie_name(SESSION_COOKIE, request)
        session = self.gate.new_session(replacing=request.cookies.get(session_name))
        response.set_cookie(session_name, session, **_cookie_options(request))
        if csrf_cookie(request) is None:
            # Kept when the browser has one: a form already open in another tab carries a token made from it.
            response.set_cookie(cookie_name(CSRF_COOKIE, request), new_csrf_cookie(), **_cookie_options(request))
        return response

    # -- pages ---------------------------------------------------------------------------------

    async def _inbox(self, request: Request) -> Response:
        rows = await inbox_rows(self.store)
        return self._page(request, 'inbox.html', 200, rows=rows, finished=FINISHED if self.finished else None)

    async def _form(self, request: Request) -> Response:
        request_id = request.path_params['id']
        try:
            asked = await self._get(request_id)
        except StoreError as error:
            return self._gone_page(request, error)
        entered = [Entered() for _ in asked.questions]
        return self._form_page(request, asked, entered, 200)

    async def _submit(self, request: Request) -> Response:
        request_id = request.path_params['id']
        form = await request.form()
        if not self.gate.csrf_ok(request, _str(form.get('csrf'))):
            return self._page(
                request,
                'status.html',
                403,
                heading='This form has expired',
                message='The page was not sent by this server, or it is too old. Reload the question and answer again.',
                show_inbox=True,
            )
        fields = {key: [value for value in form.getlist(key) if isinstance(value, str)] for key in form}
        try:
            asked = await self._get(request_id)
            if _str(form.get('action')) == 'decline':
                await self.store.respond(request_id, AskUserResponse(cancelled=True))
                return self._page(request, 'answered.html', 200, declined=True, summary=[])
            result = read_form(
                asked, fields, allow_custom_answers=self.allow_custom_answers, max_custom_answer=self.max_custom_answer
            )
            if result.response is None:
                return self._form_page(request, asked, result.entered, 422)
            try:
                await self.store.respond(request_id, result.response)
            except ValueError as error:
                return self._form_page(
                    request, asked, result.entered, 422, form_error=f'The answer was refused: {error}'
                )
        except AlreadyAnsweredError:
            # Another tab (or person) won the race: say so, and give back what this one wrote.
            written = [
                values[0][: self.max_custom_answer]
                for key, values in fields.items()
                if _TEXT_FIELD.fullmatch(key) and values and values[0].strip()
            ]
            return self._page(
                request,
                'status.html',
                409,
                heading='Already answered',
                message='This question was answered in another tab or by someone else, so your answer was not sent.',
                written=written[:_MAX_WRITTEN],
                show_inbox=True,
            )
        except StoreError as error:
            return self._gone_page(request, error)
        return self._page(request, 'answered.html', 200, declined=False, summary=_summary(asked, result.response))

    def _form_page(
        self,
        request: Request,
        asked: AskUserRequest,
        entered: list[Entered],
        status: int,
        *,
        form_error: str | None = None,
    ) -> Response:
        cookie = csrf_cookie(request) or new_csrf_cookie()
        response = self._page(
            request,
            'form.html',
            status,
            request=asked,
            entered=entered,
            has_errors=form_error is not None or any(entry.error for entry in entered),
            form_error=form_error,
            csrf=self.gate.csrf_token(cookie),
            finished_text=FINISHED,
            allow_custom=self.allow_custom_answers,
            max_custom=self.max_custom_answer,
        )
        if csrf_cookie(request) != cookie:
            response.set_cookie(cookie_name(CSRF_COOKIE, request), cookie, **_cookie_options(request))
        return response

    def _gone_page(self, request: Request, error: StoreError) -> Response:
        return self._page(
            request,
            'status.html',
            error.http_status,
            heading=error.heading,
            message=error.page_text,
            show_inbox=True,
        )

    def _unreachable_page(self, request: Request) -> Response:
        if _is_api(request):
            message = 'the question store cannot be reached; try again later'
            return JSONResponse({'error': 'store_unavailable', 'message': message}, status_code=503)
        return self._page(
            request,
            'status.html',
            503,
            heading='The question store cannot be reached',
            message=(
                'This server cannot reach the database the questions are kept in, so it can neither show them '
                'nor take answers right now. Reload the page in a moment.'
            ),
            show_inbox=False,
        )

    def _page(self, incoming: Request, template: str, status: int, /, **context: Any) -> Response:
        context.setdefault('written', [])
        html = render(template, base=_base(incoming), title=self.title, status=status, **context)
        return HTMLResponse(html, status_code=status)

    # -- JSON API ------------------------------------------------------------------------------

    async def _api_list(self, request: Request) -> Response:
        rows = await inbox_rows(self.store)
        return JSONResponse({'requests': [_row_json(row) for row in rows]})

    async def _api_get(self, request: Request) -> Response:
        try:
            return JSONResponse(request_json(await self._get(request.path_params['id'])))
        except StoreError as error:
            return _store_error(error)

    async def _api_answer(self, request: Request) -> Response:
        try:
            _require_json(request)
            response = parse_response(parse_json_body(await request.body()), max_custom_answer=self.max_custom_answer)
        except BadBody as error:
            return _bad_body(error)
        return await self._api_respond(request.path_params['id'], response)

    async def _api_decline(self, request: Request) -> Response:
        try:
            # A browser's cookie comes with a plain cross-site form too; only the token in a header cannot.
            if not self.gate.sent_token(request):
                _require_json(request)
            body = await request.body()
            if body.strip():
                _require_json(request)
                value = parse_json_body(body)
                if value not in ({}, None):
                    raise BadBody(422, 'a decline takes no fields; send {} or nothing')
        except BadBody as error:
            return _bad_body(error)
        return await self._api_respond(request.path_params['id'], AskUserResponse(cancelled=True))

    async def _api_respond(self, request_id: str, response: AskUserResponse) -> Response:
        try:
            await self._get(request_id)
            await self.store.respond(request_id, response)
        except StoreError as error:
            return _store_error(error)
        except ValueError as error:
            return JSONResponse({'error': 'invalid_answer', 'message': str(error)}, status_code=422)
        return JSONResponse({'id': request_id, 'status': 'declined' if response.cancelled else 'answered'})

    async def _api_events(self, request: Request) -> Response:
        finished = ServerSentEvent(data='{}', event='finished')
        if self.finished:
            return EventSourceResponse(_once(finished), headers={'cache-control': 'no-store'})
        events = self.store.events()
        waiter = anyio.Event()
        self._finish_waiters.add(waiter)

        async def stream() -> AsyncIterator[ServerSentEvent]:
            try:
                while (event := await _next_event(events, waiter)) is not None:
                    yield ServerSentEvent(data=json.dumps(event_json(event)), event=event.kind)
                if self.finished:
                    yield finished
            except Exception as error:
                if not _unreachable(error):
                    raise
                _log_unreachable(request, error)  # the stream ends; the page reconnects and tries again
            finally:
                self._finish_waiters.discard(waiter)
                close = getattr(events, 'aclose', None)
                if close is not None:
                    await close()

        return EventSourceResponse(stream(), ping=15, headers={'cache-control': 'no-store'})

    async def _get(self, request_id: str) -> AskUserRequest:
        if not _ID.fullmatch(request_id):
            raise UnknownRequestError(request_id[:200])
        return await self.store.get(request_id)


def create_app(
    store: QuestionStore,
    *,
    authorize: Authorize | None = None,
    access_token: str | None = None,
    title: str = DEFAULT_TITLE,
    allow_custom_answers: bool = True,
    max_custom_answer: int = DEFAULT_MAX_CUSTOM_ANSWER,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_seconds: float = DEFAULT_BODY_SECONDS,
) -> AskUserApp:
    """The inbox, forms and JSON API over any `QuestionStore`: the in-process hub, or a durable store.

    By default a random access token guards it (see `AskUserApp.login_path` and `access_token`); pass
    `authorize(request) -> bool` (sync or async) to decide access yourself instead. A request body
    bigger than `max_body_bytes` gets 413; one that takes longer than `body_seconds` to arrive, 408.
    """
    return AskUserApp(
        store,
        authorize=authorize,
        access_token=access_token,
        title=title,
        allow_custom_answers=allow_custom_answers,
        max_custom_answer=max_custom_answer,
        max_body_bytes=max_body_bytes,
        body_seconds=body_seconds,
    )


async def _favicon(request: Request) -> Response:
    return Response(FAVICON, media_type='image/svg+xml')


async def _once(event: ServerSentEvent) -> AsyncIterator[ServerSentEvent]:
    yield event


async def _next_event(events: AsyncIterator[StoreEvent], finished: anyio.Event) -> StoreEvent | None:
    """The store's next event, or `None` when its iteration ends or `finished` is set first."""
    if finished.is_set():
        return None
    got: list[StoreEvent] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def take() -> None:
            try:
                got.append(await anext(events))
            except StopAsyncIteration:
                pass
            except Exception as error:  # raised below, rather than wrapped in the task group's ExceptionGroup
                failed.append(error)
            group.cancel_scope.cancel()

        async def watch() -> None:
            await finished.wait()
            group.cancel_scope.cancel()

        group.start_soon(take)
        group.start_soon(watch)
    if failed:
        raise failed[0]
    return got[0] if got else None


def _unreachable(error: BaseException) -> bool:
    """Whether `error` (or what it was raised from) says the store's database or service cannot be reached.

    A network error (`OSError`) or a DB-API `OperationalError` / `InterfaceError` (PEP 249: a lost
    connection, a database that cannot be opened). Anything else is a failure of the app: a 500.
    """
    current: BaseException | None = error
    for _ in range(10):
        if current is None:
            break
        if isinstance(current, OSError) or any(cls.__name__ in _UNREACHABLE_ERRORS for cls in type(current).__mro__):
            return True
        current = current.__cause__
    return False


def _log_unreachable(request: Request, error: Exception) -> None:
    where = printable(f'{request.method} {request.url.path}', allow_newline=False)
    reason = printable(f'{type(error).__name__}: {error}', allow_newline=False)[:500]
    _log.warning('the question store cannot be reached (%s): %s', where, reason)


def _row_json(row: InboxRow) -> dict[str, Any]:
    return {**request_json(row.request), 'asked_at': row.asked_at, 'run': row.workflow_id}


def _base(request: Request) -> str:
    """The path the app is mounted at, ending in `/`: links stay inside the mount."""
    root = request.scope.get('root_path', '')
    return root.rstrip('/') + '/'


def _is_api(request: Request) -> bool:
    return wants_json(request.scope)


def _cookie_options(request: Request) -> dict[str, Any]:
    return {
        'httponly': True,
        'samesite': 'strict',
        'secure': request.scope.get('scheme') == 'https',
        'path': _base(request),
    }


async def _internal_error(request: Request, error: Exception) -> Response:
    return internal_error(request.scope)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _require_json(request: Request) -> None:
    # A JSON content type cannot be sent cross-site without a CORS preflight, which this app never grants.
    kind = request.headers.get('content-type', '').split(';')[0].strip().lower()
    if kind != 'application/json':
        raise BadBody(415, 'send the body as JSON, with "Content-Type: application/json"')


def _bad_body(error: BadBody) -> Response:
    code = {400: 'malformed_json', 415: 'unsupported_media_type'}.get(error.status, 'invalid_answer')
    return JSONResponse({'error': code, 'message': str(error)}, status_code=error.status)


def _store_error(error: StoreError) -> Response:
    return JSONResponse({'error': error.code, 'message': str(error)}, status_code=error.http_status)


def _summary(asked: AskUserRequest, response: AskUserResponse) -> list[tuple[str, list[str]]]:
    by_header = {answer.header: answer for answer in response.answers}
    summary: list[tuple[str, list[str]]] = []
    for question in asked.questions:
        answer = by_header[question.header]
        summary.append(
            (question.header, [answer.custom_answer] if answer.custom_answer is not None else list(answer.selected))
        )
    return summary
