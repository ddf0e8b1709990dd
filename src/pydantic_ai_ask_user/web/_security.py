"""Who may see and answer the questions, and the headers and limits every response carries."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Literal

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = (
    'Authorize',
    'Gate',
    'SecurityHeaders',
    'BodyLimit',
    'CONTENT_SECURITY_POLICY',
    'SESSION_COOKIE',
    'CSRF_COOKIE',
    'TOKEN_HEADER',
    'LOGIN_CODE_SECONDS',
    'DEFAULT_MAX_BODY_BYTES',
)

Authorize = Callable[[Request], bool | Awaitable[bool]]
"""A user-supplied access check: given the incoming request, may it see and answer questions?"""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""No inline script or style, no eval, nothing from elsewhere, never framed."""

SESSION_COOKIE = 'ask_user_session'
"""The HttpOnly cookie a browser gets for a one-time login link."""

CSRF_COOKIE = 'ask_user_csrf'
"""The HttpOnly cookie a form's CSRF token is derived from."""

TOKEN_HEADER = 'x-ask-user-token'
"""The header a JSON API client may send the access token in (or `Authorization: Bearer <token>`)."""

LOGIN_CODE_SECONDS = 24 * 3600.0
"""How long an unused one-time login link stays valid."""

MAX_LOGIN_CODES = 256
"""How many unused login links are kept; the oldest is forgotten first."""

DEFAULT_MAX_BODY_BYTES = 64 * 1024
"""The largest request body accepted; a bigger one gets 413."""

Verdict = Literal['allowed', 'unauthenticated', 'forbidden']
"""What `Gate.check` decides: go on, 401, or 403."""


class Gate:
    """Access control: a random access token with one-time login links, or the user's own `authorize` hook."""

    def __init__(self, *, authorize: Authorize | None = None, access_token: str | None = None) -> None:
        if authorize is not None and access_token is not None:
            raise ValueError('give either authorize= or access_token=, not both')
        self.authorize = authorize
        """The user's hook; when set, it alone decides, and no token or cookie is used."""
        self.access_token: str | None = None if authorize is not None else (access_token or secrets.token_urlsafe(32))
        """The secret a JSON API client sends; `None` when `authorize` decides."""
        self._session = secrets.token_urlsafe(32)
        self._csrf_key = secrets.token_bytes(32)
        self._codes: OrderedDict[str, float] = OrderedDict()

    def new_login_code(self) -> str:
        """A code for one login link: usable once, within `LOGIN_CODE_SECONDS`."""
        code = secrets.token_urlsafe(24)
        self._codes[code] = time.monotonic() + LOGIN_CODE_SECONDS
        while len(self._codes) > MAX_LOGIN_CODES:
            self._codes.popitem(last=False)
        return code

    def redeem(self, code: str) -> bool:
        """Use up a login code; whether it was valid."""
        deadline = self._codes.pop(code, None)
        return deadline is not None and time.monotonic() < deadline

    @property
    def session(self) -> str:
        """The session cookie value a redeemed login link sets."""
        return self._session

    async def check(self, request: Request) -> Verdict:
        """Whether `request` may see and answer questions."""
        if self.authorize is not None:
            verdict = self.authorize(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            return 'allowed' if verdict is True else 'forbidden'
        token = _sent_token(request)
        if token is not None:
            return 'allowed' if _same(token, self.access_token or '') else 'forbidden'
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie is not None:
            return 'allowed' if _same(cookie, self._session) else 'forbidden'
        return 'unauthenticated'

    def csrf_token(self, cookie: str) -> str:
        """The token a form carries for a browser whose CSRF cookie is `cookie`."""
        return hmac.new(self._csrf_key, cookie.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, request: Request, sent: str | None) -> bool:
        """Whether the token posted with a form matches the browser's CSRF cookie."""
        cookie = request.cookies.get(CSRF_COOKIE)
        return bool(cookie and sent) and _same(sent or '', self.csrf_token(cookie or ''))


def new_csrf_cookie() -> str:
    """A fresh CSRF cookie value."""
    return secrets.token_urlsafe(24)


def _sent_token(request: Request) -> str | None:
    if (token := request.headers.get(TOKEN_HEADER)) is not None:
        return token
    scheme, _, credentials = request.headers.get('authorization', '').partition(' ')
    if scheme.lower() == 'bearer' and credentials:
        return credentials.strip()
    return None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


class SecurityHeaders:
    """ASGI middleware adding the strict CSP, nosniff, no framing, no referrer and no caching to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message['type'] == 'http.response.start':
                headers: list[tuple[bytes, bytes]] = list(message.get('headers', []))
                present = {name.lower() for name, _ in headers}
                for name, value in _HEADERS:
                    if name not in present:
                        headers.append((name, value))
                message = {**message, 'headers': headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b'content-security-policy', CONTENT_SECURITY_POLICY.encode()),
    (b'x-content-type-options', b'nosniff'),
    (b'x-frame-options', b'DENY'),
    (b'referrer-policy', b'no-referrer'),
    (b'cache-control', b'no-store'),
    (b'cross-origin-opener-policy', b'same-origin'),
)
"""The headers `SecurityHeaders` adds unless the response set its own."""


class BodyLimit:
    """ASGI middleware answering 413 to a request body over `max_bytes`, before the app reads any of it."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http' or scope['method'] in ('GET', 'HEAD', 'OPTIONS'):
            await self.app(scope, receive, send)
            return
        declared = dict(scope['headers']).get(b'content-length')
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await _too_large(scope, send, self.max_bytes)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message['type'] != 'http.request':
                return  # the client went away
            chunk: bytes = message.get('body', b'')
            size += len(chunk)
            if size > self.max_bytes:
                await _too_large(scope, send, self.max_bytes)
                return
            chunks.append(chunk)
            if not message.get('more_body', False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {'type': 'http.request', 'body': b''.join(chunks), 'more_body': False}
            return await receive()

        await self.app(scope, replay, send)


async def _too_large(scope: Scope, send: Send, max_bytes: int) -> None:
    from starlette.responses import JSONResponse, PlainTextResponse

    message = f'the request body is larger than {max_bytes} bytes'
    response = (
        JSONResponse({'error': 'too_large', 'message': message}, status_code=413)
        if _wants_json(scope)
        else PlainTextResponse(message, status_code=413)
    )
    await response(scope, _no_receive, send)


async def _no_receive() -> Message:  # pragma: no cover - a fixed response never reads
    return {'type': 'http.disconnect'}


def _wants_json(scope: Scope) -> bool:
    root = scope.get('root_path', '')
    path: str = scope['path']
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.startswith('/api/')
