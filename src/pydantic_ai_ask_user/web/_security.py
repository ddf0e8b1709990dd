"""Who may see and answer the questions, and the headers and limits every response carries."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import logging
import re
import secrets
import time
import traceback
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pydantic_ai_ask_user._answers import check_answered_by
from pydantic_ai_ask_user._asgi import BodyLimit
from pydantic_ai_ask_user._audience import Person
from pydantic_ai_ask_user._text import printable

from ._links import SignedLoginLinks
from ._stopping import server_stopping

__all__ = (
    'Authorize',
    'Gate',
    'Redeemed',
    'answered_by',
    'person',
    'SecurityHeaders',
    'BodyGuard',
    'CatchAll',
    'internal_error',
    'CONTENT_SECURITY_POLICY',
    'SESSION_COOKIE',
    'CSRF_COOKIE',
    'host_only_cookies',
    'TOKEN_HEADER',
    'LOGIN_CODE_SECONDS',
    'MAX_SESSIONS',
    'DEFAULT_MAX_BODY_BYTES',
    'DEFAULT_BODY_SECONDS',
    'cookie_name',
    'wants_json',
)

Authorize = Callable[[Request], bool | str | Person | Awaitable[bool | str | Person]]
"""A user-supplied access check: given the incoming request, may it see and answer questions, and who is it?

A `Person` lets it in as that person, with their groups: they see and answer the questions addressed to their
name or one of their groups (`AskUser(audience=...)`) and the unaddressed ones (`Person(sees_all=True)`: all).
A `str` is `Person(name)`; `True` lets in someone without a name, who sees only the unaddressed questions.
The name is recorded as `AskUserResponse.answered_by`. Anything else refuses the request.
"""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""No inline script or style, no eval, nothing from elsewhere, never framed."""

SESSION_COOKIE = 'ask-user-session'
"""The start of the HttpOnly session cookie's name; the name ends in the port: `ask-user-session-8000`.

A browser sends a host's cookies to every port of it, so two servers on one host (two `ask-user ask
--web`, say) would overwrite each other's cookie if the name were the same.
"""

CSRF_COOKIE = 'ask-user-csrf'
"""The start of the HttpOnly cookie a form's CSRF token is derived from; the name ends in the port too."""

TOKEN_HEADER = 'x-ask-user-token'
"""The header a JSON API client may send the access token in (or `Authorization: Bearer <token>`)."""

LOGIN_CODE_SECONDS = 24 * 3600.0
"""How long an unused one-time login link stays valid."""

MAX_LOGIN_CODES = 256
"""How many unused login links are kept; the oldest is forgotten first."""

MAX_SESSIONS = 64
"""How many signed-in browsers are remembered; each login makes one, and the oldest is signed out first."""

DEFAULT_MAX_BODY_BYTES = 64 * 1024
"""The largest request body accepted; a bigger one gets 413."""

DEFAULT_BODY_SECONDS = 30.0
"""How long a client may take to send a request body, counted from its headers; a slower one gets 408."""

Verdict = Literal['allowed', 'unauthenticated', 'forbidden']
"""What `Gate.check` decides: go on, 401, or 403."""

_log = logging.getLogger('pydantic_ai_ask_user.web')

_COOKIE_VALUE = re.compile(r'[A-Za-z0-9_-]{32,64}')
"""What a cookie value this app made looks like (`secrets.token_urlsafe`); anything else is not one."""


class Gate:
    """Access control: a random access token with one-time login links, or the user's own `authorize` hook."""

    def __init__(
        self,
        *,
        authorize: Authorize | None = None,
        access_token: str | None = None,
        default_name: str | None = None,
        links: SignedLoginLinks | None = None,
    ) -> None:
        if authorize is not None and access_token is not None:
            raise ValueError('give either authorize= or access_token=, not both')
        if authorize is not None and links is not None:
            raise ValueError('give either authorize= or login_links=, not both: with authorize, nobody logs in here')
        self.links = links
        """Login links signed by another process with a shared key, accepted besides this gate's own."""
        self.authorize = authorize
        """The user's hook; when set, it alone decides, and no token or cookie is used."""
        self.access_token: str | None = None if authorize is not None else (access_token or secrets.token_urlsafe(32))
        """The secret a JSON API client sends; `None` when `authorize` decides."""
        if default_name is not None and (problem := check_answered_by(default_name)) is not None:
            raise ValueError(problem)
        self.default_name = default_name
        """Who an answer is recorded as when the gate knows no name: the access token, a link made without one."""
        # Digests, so a lookup leaks no timing; each maps to the name bound to the login link that made it.
        self._sessions: OrderedDict[bytes, Redeemed] = OrderedDict()
        self._csrf_key = secrets.token_bytes(32)
        self._codes: OrderedDict[str, tuple[float, Redeemed]] = OrderedDict()

    def new_login_code(self, name: str | None = None, *, groups: Collection[str] = ()) -> str:
        """A code for one login link: usable once, within `LOGIN_CODE_SECONDS`.

        `name` is who the link is for: the session it opens records its answers as answered by `name`, and sees
        the questions addressed to `name` or one of `groups` (and the unaddressed ones).
        `ValueError` when `name` is not one printable line of at most 200 characters, or a group is not one line.
        """
        if name is not None and (problem := check_answered_by(name)) is not None:
            raise ValueError(problem)
        who = Person(name, groups=groups)  # checks the groups
        code = secrets.token_urlsafe(24)
        self._codes[code] = (time.monotonic() + LOGIN_CODE_SECONDS, Redeemed(name, frozenset(who.groups)))
        while len(self._codes) > MAX_LOGIN_CODES:
            self._codes.popitem(last=False)
        return code

    def peek(self, code: str) -> Redeemed | None:
        """Who a login code is for (a `Redeemed`), or `None` when it is not valid; the code stays usable."""
        found = self._codes.get(code)
        if found is None and self.links is not None:
            return _redeemed(self.links.peek(code))
        if found is None or time.monotonic() >= found[0]:
            return None
        return found[1]

    def signed(self, code: str) -> bool:
        """Whether `code` is not one of this gate's own codes but one a `SignedLoginLinks` would read (mailed, say)."""
        return code not in self._codes and self.links is not None

    def redeem(self, code: str) -> Redeemed | None:
        """Use up a login code: who it is for (a `Redeemed`), or `None` when it was not valid."""
        if code not in self._codes and self.links is not None:
            return _redeemed(self.links.redeem(code))
        redeemed = self.peek(code)
        self._codes.pop(code, None)
        return redeemed

    def new_session(self, replacing: str | None = None, *, name: str | None = None, who: Redeemed | None = None) -> str:
        """A fresh session cookie for a browser that just logged in as `who` (or `name`); `replacing` stops working."""
        if replacing is not None:
            self._sessions.pop(_digest(replacing), None)
        session = secrets.token_urlsafe(32)
        self._sessions[_digest(session)] = who if who is not None else Redeemed(name)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    async def check(self, request: Request) -> Verdict:
        """Whether `request` may see and answer questions; who it is, when allowed, goes to `answered_by(request)`."""
        if self.authorize is not None:
            verdict = self.authorize(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if isinstance(verdict, str) and verdict:
                if (problem := check_answered_by(verdict)) is not None:
                    _log.error(
                        'the authorize hook returned a name that cannot be recorded (%s); access refused', problem
                    )
                    return 'forbidden'
                verdict = Person(verdict)
            if isinstance(verdict, Person):
                if verdict.name is not None and (problem := check_answered_by(verdict.name)) is not None:
                    _log.error(
                        'the authorize hook returned a name that cannot be recorded (%s); access refused', problem
                    )
                    return 'forbidden'
                _let_in(request, verdict)
                return 'allowed'
            _let_in(request, Person())
            return 'allowed' if verdict is True else 'forbidden'
        verdict, who = self._credentials(request)
        if verdict == 'allowed' and who is not None:
            _let_in(request, who)
        return verdict

    def recognizes(self, scope: Scope) -> bool:
        """Whether a request carries the access token or a live session cookie: the person's own, not a stranger's.

        Used by the server to serve such a request even over a connection limit. With an `authorize`
        hook nothing is recognized here (the hook may be slow, or need the body).
        """
        if self.authorize is not None:
            return False
        if scope.get('path', '').endswith('/login'):
            codes = parse_qs(scope.get('query_string', b'').decode('latin-1')).get('code', [])
            return len(codes) == 1 and self.peek(codes[0]) is not None
        return self._credentials(Request(scope))[0] == 'allowed'

    def _credentials(self, request: Request) -> tuple[Verdict, Person | None]:
        """What the token or the session cookie `request` carries says, and who it lets in.

        The access token is the server's own secret (what the program that started it, or an operator's JSON
        client, holds): it sees every question. A login link lets its browser in as the person it was made for.
        """
        token = _sent_token(request)
        if token is not None:
            if not _same(token, self.access_token or ''):
                return 'forbidden', None
            return 'allowed', Person(self.default_name, sees_all=True)
        if cookie_name(SESSION_COOKIE, request) not in request.cookies:
            return 'unauthenticated', None
        identity = self.identity(request)
        if identity is None:
            return 'forbidden', None
        return 'allowed', Person(identity.name or self.default_name, groups=identity.groups, sees_all=identity.sees_all)

    def identity(self, request: Request) -> Redeemed | None:
        """Who the browser's session cookie signs it in as (a `Redeemed`), or `None` when it has no live session."""
        cookie = request.cookies.get(cookie_name(SESSION_COOKIE, request))
        digest = None if cookie is None else _digest(cookie)
        if digest is None or digest not in self._sessions:
            return None
        return self._sessions[digest]

    def sent_token(self, request: Request) -> bool:
        """Whether `request` carries the access token in a header, which no cross-site page can make it send."""
        return self.authorize is None and _sent_token(request) is not None

    def csrf_token(self, request: Request, cookie: str) -> str:
        """The token a form carries for a browser whose CSRF cookie is `cookie`, signed with who its session is.

        Bound to the session's person (the name and groups of its login link; with an `authorize` hook, the name
        the hook let in): a CSRF cookie and token taken from another person's browser (a sibling subdomain can set
        cookies for this host) are refused in this person's session. A second link for the same person keeps the
        forms already open working.
        """
        identity = self.identity(request)
        if identity is not None:
            who = [identity.name or '', str(identity.sees_all), *sorted(identity.groups)]
        else:
            who = [answered_by(request) or ''] if self.authorize is not None else []
        message = '\0'.join([cookie, str(identity is not None), *who]).encode()
        return hmac.new(self._csrf_key, message, hashlib.sha256).hexdigest()

    def csrf_ok(self, request: Request, sent: str | None) -> bool:
        """Whether the token posted with a form matches the browser's CSRF cookie and its session."""
        cookie = csrf_cookie(request)
        return bool(cookie and sent) and _same(sent or '', self.csrf_token(request, cookie or ''))


@dataclass(frozen=True)
class Redeemed:
    """A login code that was valid, and who its link was for."""

    name: str | None
    """The name bound to the link (`new_login_code(name=...)`), or `None`."""

    groups: frozenset[str] = frozenset()
    """The groups bound to the link (`new_login_code(groups=...)`)."""

    sees_all: bool = False
    """Whether the link signs in someone who sees every item (a signed administrator's link)."""


def _redeemed(person: Person | None) -> Redeemed | None:
    """A signed link's person as the gate keeps who a session is; `None` stays `None`."""
    if person is None:
        return None
    return Redeemed(person.name, frozenset(person.groups), person.sees_all)


def _let_in(request: Request, who: Person) -> None:
    request.state.ask_user_person = who
    request.state.ask_user_name = who.name


def answered_by(request: Request) -> str | None:
    """Who `request` comes from, as the gate let it in: a link's name, the hook's, the default; never the client."""
    name = getattr(request.state, 'ask_user_name', None)
    return name if isinstance(name, str) else None


def person(request: Request) -> Person:
    """Who the gate let `request` in as: what they may see. Someone without a name when the gate said nothing."""
    who = getattr(request.state, 'ask_user_person', None)
    return who if isinstance(who, Person) else Person()


def new_csrf_cookie() -> str:
    """A fresh CSRF cookie value."""
    return secrets.token_urlsafe(24)


def csrf_cookie(request: Request) -> str | None:
    """The browser's CSRF cookie for this server, if it has one this app could have made."""
    cookie = request.cookies.get(cookie_name(CSRF_COOKIE, request))
    return cookie if cookie is not None and _COOKIE_VALUE.fullmatch(cookie) else None


def cookie_name(prefix: str, request: Request) -> str:
    """`prefix` qualified by the port the browser addressed (`ask-user-session-8000`), as Jupyter does.

    Over HTTPS at the root of its host, `__Host-` first (`__Host-ask-user-session-443`): a browser takes such a
    cookie only from this very host, secure, for the path `/`, so a sibling subdomain cannot plant one.
    """
    name = f'{prefix}-{_browser_port(request.scope)}'
    return f'__Host-{name}' if host_only_cookies(request) else name


def host_only_cookies(request: Request) -> bool:
    """Whether the app's cookies can carry the `__Host-` prefix: served over HTTPS, at the root of its host."""
    return request.scope.get('scheme') == 'https' and request.scope.get('root_path', '').rstrip('/') == ''


def _browser_port(scope: Scope) -> int:
    # The Host header is what the browser keys its cookies on; it is parsed by hand, as a malformed one
    # (`[`, `host:port`) makes Starlette's URL parsing raise.
    host = Headers(scope=scope).get('host', '')
    _, colon, port = host.rpartition(':')
    if colon and port.isascii() and port.isdigit() and len(port) <= 5:
        return int(port)
    server = scope.get('server')
    if not host and server is not None and server[1] is not None:
        return int(server[1])
    return 443 if scope.get('scheme') in ('https', 'wss') else 80


def _sent_token(request: Request) -> str | None:
    if (token := request.headers.get(TOKEN_HEADER)) is not None:
        return token
    scheme, _, credentials = request.headers.get('authorization', '').partition(' ')
    if scheme.lower() == 'bearer' and credentials:
        return credentials.strip()
    return None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode('utf-8', 'surrogatepass')).digest()


class SecurityHeaders:
    """ASGI middleware adding the strict CSP, nosniff, no framing, no referrer and no caching to every response, and
    `Connection: close` while the server stops (`server_stopping`).

    It wraps everything else, Starlette's own error responses included. As the response starts it also takes a
    one-time login code out of the request's query (`hide_login_code`): the server's access log (uvicorn's) is
    written at that moment, from this very scope, so it shows `code=REDACTED`, never the code.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message['type'] == 'http.response.start':
                hide_login_code(scope)
                headers: list[tuple[bytes, bytes]] = list(message.get('headers', []))
                present = {name.lower() for name, _ in headers}
                for name, value in _HEADERS:
                    if name not in present:
                        headers.append((name, value))
                if server_stopping() and b'connection' not in present:  # see `_stopping`
                    headers.append((b'connection', b'close'))
                message = {**message, 'headers': headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


REDACTED = 'REDACTED'
"""What a one-time login code reads as in the query a server logs."""


def hide_login_code(scope: Scope) -> None:
    """Replace the value of every `code` parameter of the request's query with `REDACTED`, in place.

    Once the app has read the code (a login redeems it before it answers): a server logs the request's path and
    query from the scope it handed the app, when the response starts, and a code in its log would be a login for
    whoever reads the log while the code is still fresh. The key is compared decoded, as the app reads it (so
    `c%6Fde=` is hidden too); a query with no code is left as it was.
    """
    query: bytes = scope.get('query_string', b'')
    if not query:
        return
    pairs = urllib.parse.parse_qsl(query.decode('latin-1'), keep_blank_values=True)
    if all(name != 'code' for name, _ in pairs):
        return
    hidden = [(name, REDACTED if name == 'code' else value) for name, value in pairs]
    scope['query_string'] = urllib.parse.urlencode(hidden).encode('ascii')


_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b'content-security-policy', CONTENT_SECURITY_POLICY.encode()),
    (b'x-content-type-options', b'nosniff'),
    (b'x-frame-options', b'DENY'),
    (b'referrer-policy', b'no-referrer'),
    (b'cache-control', b'no-store'),
    (b'cross-origin-opener-policy', b'same-origin'),
)
"""The headers `SecurityHeaders` adds unless the response set its own."""


class CatchAll:
    """ASGI middleware that lets no exception out: it is logged, made printable, and the client gets a bare 500.

    An exception that escaped would reach the server's log raw, and an exception's message can quote
    what a client sent; Starlette has already answered 500 by then, through `SecurityHeaders`.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_watched(message: Message) -> None:
            nonlocal started
            started = started or message['type'] == 'http.response.start'
            await send(message)

        try:
            await self.app(scope, receive, send_watched)
        except Exception as error:
            if isinstance(error, ClientDisconnect):
                return  # nobody is left to answer
            where = printable(f'{scope.get("method", "")} {scope.get("path", "")}', allow_newline=False)
            _log.error('the question server failed on %s:\n%s', where, printable(traceback.format_exc()))
            if scope['type'] == 'http' and not started:
                await internal_error(scope)(scope, _no_receive, send)


def internal_error(scope: Scope) -> Response:
    """The 500 for a failure of the app itself: no detail, no traceback."""
    message = 'the question server failed; the error is in its log'
    if wants_json(scope):
        return JSONResponse({'error': 'internal', 'message': message}, status_code=500)
    return PlainTextResponse(message, status_code=500)


class BodyGuard(BodyLimit):
    """`BodyLimit` for the question pages: nothing is read ahead, so the app checks access before any body is read.

    A client that is not signed in is answered at once, however slowly it sends. The refusals are JSON on
    the API (`{"error": "too_large", ...}`) and plain text elsewhere.
    """

    async def refuse(self, scope: Scope, send: Send, status: int, code: str, message: str) -> None:
        """The refusal in the form the route answers errors in."""
        await _refuse(scope, send, status, code, message)


async def _refuse(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    close = {'connection': 'close'}
    response = (
        JSONResponse({'error': code, 'message': message}, status_code=status, headers=close)
        if wants_json(scope)
        else PlainTextResponse(message, status_code=status, headers=close)
    )
    await response(scope, _no_receive, send)


async def _no_receive() -> Message:  # pragma: no cover - a fixed response never reads
    return {'type': 'http.disconnect'}


def wants_json(scope: Scope) -> bool:
    """Whether the request is for the JSON API, which answers errors in JSON rather than as a page."""
    root = scope.get('root_path', '')
    path: str = scope['path']
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.startswith('/api/')
