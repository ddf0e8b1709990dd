"""The ASGI app: the pages (`_pages`) and the JSON API (`_api`) behind one gate, over any `QuestionStore`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from pydantic_ai_ask_user.store import QuestionStore

from . import _api
from ._act import Actions
from ._api import Api
from ._approvals import Approvals
from ._context import DEFAULT_LOGIN_HELP, AppContext, is_api, log_unreachable, unreachable
from ._forward import Forwarding
from ._history import History
from ._options import DEFAULT_TITLE, WebOptions, deprecated_name, web_options
from ._pages import FAVICON, FINISHED, Pages, favicon
from ._security import BodyGuard, CatchAll, SecurityHeaders, internal_error
from ._templates import STATIC_DIR

__all__ = ('AskUserApp', 'create_app', 'DEFAULT_TITLE', 'DEFAULT_LOGIN_HELP', 'FAVICON', 'FINISHED')

Endpoint = Callable[[Request], Awaitable[Response]]
"""A Starlette endpoint: a request in, a response out."""


class AskUserApp:
    """The pages and JSON API over a `QuestionStore`; an ASGI app that mounts under any prefix.

    Build it with `create_app(store)`, or use `WebAnswerer(...).app`, which serves the answerer's own hub.
    `options` (a `WebOptions`) says how it behaves; its fields may also be given as keyword arguments.
    """

    def __init__(self, store: QuestionStore, options: WebOptions | None = None, **fields: Any) -> None:
        self.options = web_options(options, fields, owner=type(self).__name__)
        """How the pages and the API behave."""
        self._context = AppContext(store, self.options)
        pages = Pages(self._context)
        api = Api(self._context)
        approvals = Approvals(self._context, pages)
        history = History(self._context, pages)
        forwarding = Forwarding(self._context, pages)
        actions = Actions(self._context, pages, approvals)
        guarded = self._guarded
        routes = [
            Route('/', guarded(pages.inbox), methods=['GET'], name='inbox'),
            Route('/login', pages.login, methods=['GET'], name='login'),
            Route('/login', pages.confirm_login, methods=['POST']),
            Route('/favicon.ico', favicon, methods=['GET']),
            # One-click links from a message: the code is the credential, for one action (no session needed).
            Route('/act', self._reaching(actions.confirm), methods=['GET'], name='act'),
            Route('/act', self._reaching(actions.record), methods=['POST']),
            Route('/requests/{id}', guarded(pages.form), methods=['GET'], name='form'),
            Route('/requests/{id}', guarded(pages.submit), methods=['POST'], name='submit'),
            Route('/approvals/{id}', guarded(approvals.page), methods=['GET'], name='approval'),
            Route('/approvals/{id}', guarded(approvals.submit), methods=['POST']),
            Route('/api/approvals', guarded(approvals.list_json), methods=['GET']),
            Route('/api/approvals/{id}', guarded(approvals.get_json), methods=['GET']),
            Route('/api/approvals/{id}/decide', guarded(approvals.decide_json), methods=['POST']),
            Route('/api/requests', guarded(api.list), methods=['GET']),
            Route('/api/requests/{id}', guarded(api.get), methods=['GET']),
            Route('/api/requests/{id}/answer', guarded(api.answer), methods=['POST']),
            Route('/api/requests/{id}/decline', guarded(api.decline), methods=['POST']),
            Route('/api/events', guarded(api.events), methods=['GET']),
            Route('/requests/{id}/forward', guarded(forwarding.question_form), methods=['POST']),
            Route('/approvals/{id}/forward', guarded(forwarding.approval_form), methods=['POST']),
            Route('/api/requests/{id}/forward', guarded(forwarding.question_json), methods=['POST']),
            Route('/api/approvals/{id}/forward', guarded(forwarding.approval_json), methods=['POST']),
            Route('/history', guarded(history.page), methods=['GET'], name='history'),
            Route('/api/history', guarded(history.json), methods=['GET']),
            Mount('/static', StaticFiles(directory=STATIC_DIR), name='static'),
        ]
        self._pages = pages
        self._routes = tuple(routes)
        starlette = Starlette(
            routes=routes,
            middleware=[
                Middleware(BodyGuard, max_bytes=self.options.max_body_bytes, seconds=self.options.body_seconds)
            ],
            exception_handlers={Exception: _internal_error},
        )
        # Outside Starlette's own error handling, so that its 500 carries the security headers too.
        self._app = SecurityHeaders(CatchAll(starlette))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection."""
        await self._app(scope, receive, send)

    def recognizes(self, scope: Scope) -> bool:
        """Whether a request (its ASGI scope) carries the access token or a live session cookie of this app."""
        return self._context.gate.recognizes(scope)

    @property
    def routes(self) -> Sequence[BaseRoute]:
        """Every route the app serves, as Starlette has them (the fuzz tests walk them all)."""
        return self._routes

    @property
    def store(self) -> QuestionStore:
        """Where the questions wait."""
        return self._context.store

    @property
    def access_token(self) -> str | None:
        """The secret a JSON API client sends as `Authorization: Bearer ...`; `None` when `authorize` decides."""
        return self._context.gate.access_token

    @property
    def title(self) -> str:
        """The name shown in every page's title and header bar."""
        return self.options.title

    @property
    def allow_custom_answers(self) -> bool:
        """Whether each question has an "Other" box for the person's own words."""
        return self.options.allow_custom_answers

    @property
    def max_custom_answer_length(self) -> int:
        """The longest custom answer accepted, in characters."""
        return self.options.max_custom_answer_length

    @property
    def max_custom_answer(self) -> int:
        """Deprecated: `max_custom_answer_length`."""
        deprecated_name('AskUserApp.max_custom_answer', 'AskUserApp.max_custom_answer_length')
        return self.options.max_custom_answer_length

    @property
    def login_help(self) -> str:
        """What the sign-in pages tell a person whose link did not work, or who has none: how to get one."""
        return self._context.login_help

    @login_help.setter
    def login_help(self, value: str) -> None:
        self._context.login_help = value

    @property
    def finished(self) -> bool:
        """Whether `finish` was called: the server is about to stop, and every page says so."""
        return self._context.finished

    def login_path(
        self, request_id: str | None = None, *, name: str | None = None, groups: Collection[str] = ()
    ) -> str:
        """A one-time login link, relative to where the app is mounted: `login?code=...`.

        The browser that opens it gets a session cookie and lands on the inbox, or on the form of
        `request_id` (a request's `key`, as in every URL of the app). `name` is who the link is for: the
        answers sent from that session are recorded as answered by `name` (`ValueError` if it is not one
        printable line of at most 200 characters). The session sees the questions addressed to `name` or one of
        `groups` (`AskUser(audience=...)`) and the unaddressed ones; a link without a name sees only those.
        With an `authorize` hook there is nothing to log in to: the inbox or form path.
        """
        gate = self._context.gate
        target = f'requests/{request_id}' if request_id is not None else ''
        if gate.authorize is not None:
            return target
        query = {'code': gate.new_login_code(name, groups=groups)}
        if target:
            query['next'] = target
        return f'login?{urlencode(query)}'

    def finish(self) -> None:
        """Tell every open page that this server has finished, before it stops.

        Each event stream sends a last `finished` event and ends (the pages then stop reconnecting),
        a stream opened later gets it at once, and the inbox says the tab can be closed.
        """
        self._context.finished = True
        for end in tuple(self._context.finish_waiters):
            end()

    def _reaching(self, endpoint: Endpoint) -> Endpoint:
        """`endpoint` as is, but with a 503 page when the store cannot be reached (what `_guarded` adds besides)."""

        async def reaching(request: Request) -> Response:
            try:
                return await endpoint(request)
            except Exception as error:
                if not unreachable(error):
                    raise
                log_unreachable(request, error)
                return self._pages.unreachable(request)

        return reaching

    def _guarded(self, endpoint: Endpoint) -> Endpoint:
        """`endpoint` behind the gate, with a 503 (page or JSON) when the store cannot be reached."""

        async def guarded(request: Request) -> Response:
            verdict = await self._context.gate.check(request)
            if verdict != 'allowed':
                return _api.refused(verdict) if is_api(request) else self._pages.refused(request, verdict)
            try:
                return await endpoint(request)
            except Exception as error:
                if not unreachable(error):
                    raise
                log_unreachable(request, error)
                return _api.store_unreachable() if is_api(request) else self._pages.unreachable(request)

        return guarded


def create_app(store: QuestionStore, options: WebOptions | None = None, **fields: Any) -> AskUserApp:
    """The inbox, forms and JSON API over any `QuestionStore`: the in-process hub, or a durable store.

    `options` (a `WebOptions`; its fields may also be given as keyword arguments) say how it behaves.
    By default a random access token guards it (see `AskUserApp.login_path` and `access_token`); pass
    `authorize(request) -> bool` (sync or async) to decide access yourself instead. A request body
    bigger than `max_body_bytes` gets 413; one that takes longer than `body_seconds` to arrive, 408.
    """
    return AskUserApp(store, web_options(options, fields, owner='create_app'))


async def _internal_error(request: Request, error: Exception) -> Response:
    return internal_error(request.scope)
