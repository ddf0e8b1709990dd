"""`ask_user_server` over streamable HTTP, safe by default: a bearer token, Host and Origin checks, bounded sessions.

What a local MCP server must check (MCP 2025-11-25, "Security Best Practices" and the streamable HTTP
transport): the `Origin` of every request (403 when present and not allowed), against DNS rebinding; a
bind to localhost by default; authentication of every request, never of the session alone (a session id
is not a credential); session ids that cannot be guessed (the SDK's `uuid4`). The token here is a static
bearer token, not OAuth: the spec's authorization flow is for servers that sit behind an authorization
server, and a person running `ask-user mcp --http` on their own machine has none. It is compared in
constant time, on every request, and refused with 401 and `WWW-Authenticate: Bearer`.

The SDK's own Host/Origin check is switched off here (`enable_dns_rebinding_protection=False`): it
applies only when bound to a loopback address, it would refuse the hosts this allow-list adds, and it
logs the refused header raw. The gate below checks the same on any bind address, and logs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from .._asgi import ASGIApp, Message, Receive, Scope, Send
from .._signing import same
from ._token import check_token

__all__ = (
    'ask_user_http_app',
    'LOOPBACK_HOSTS',
    'DEFAULT_MAX_SESSIONS',
    'DEFAULT_SESSION_IDLE_SECONDS',
    'DEFAULT_MAX_BODY_BYTES',
)

LOOPBACK_HOSTS: Final = ('127.0.0.1', 'localhost', '[::1]')
"""The host names always allowed in `Host`, on any port, and in `Origin` (`http://` or `https://`)."""

DEFAULT_MAX_SESSIONS: Final = 32
"""How many MCP sessions may be open at once; a new one first closes the one idle longest, else gets 503."""

DEFAULT_SESSION_IDLE_SECONDS: Final = 30 * 60.0
"""How long a session with no request open (no call waiting, no event stream) lives before it is closed."""

DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
"""The largest request body; bigger gets 413 (a call with ten long questions is far smaller)."""


def ask_user_http_app(
    server: Server[Any],
    *,
    token: str,
    path: str = '/mcp',
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> ASGIApp:
    """`server` (from `ask_user_server`) as a streamable HTTP ASGI app at `path` that only `token` may use.

    Every request must send `Authorization: Bearer <token>` (401 otherwise), name a `Host` that is a
    loopback name (`LOOPBACK_HOSTS`, any port) or one of `allowed_hosts` (421 otherwise), and, when it
    has an `Origin`, a loopback origin or one of `allowed_origins` (403 otherwise). An allowed host
    without a port (`mcp.example.com`) allows it on any port; `host:port` allows that port only. An
    origin is `scheme://host[:port]`, exactly as a browser sends it. Sessions are bounded:
    `max_sessions` at once, the idle longest closed first to make room for a new one, each closed after
    `session_idle_seconds` without a request open. Run it under the ASGI server of your choice with
    lifespan on (it starts the SDK's session manager). `ValueError` for a token `check_token` refuses.
    """
    if (problem := check_token(token)) is not None:
        raise ValueError(problem)
    app = server.streamable_http_app(
        streamable_http_path=path,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_seconds,
        max_request_body_size=max_body_bytes,
    )
    hosts = [*(f'{host}:*' for host in LOOPBACK_HOSTS), *LOOPBACK_HOSTS]
    for host in allowed_hosts:
        hosts.append(host)
        if not _has_port(host):
            hosts.append(f'{host}:*')
    origins = [
        f'{scheme}://{host}{port}' for scheme in ('http', 'https') for host in LOOPBACK_HOSTS for port in ('', ':*')
    ]
    origins += allowed_origins
    return _Gate(app, server, token=token, hosts=hosts, origins=origins, max_sessions=max_sessions)


def _has_port(host: str) -> bool:
    head, colon, port = host.rpartition(':')
    return bool(colon) and port.isdigit() and (not head.startswith('[') or head.endswith(']'))


def _allowed(value: str, patterns: Sequence[str]) -> bool:
    """Whether `value` is one of `patterns`, where `x:*` stands for `x:` and any port number."""
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(':*'):
            base, _, port = value.rpartition(':')
            if base == pattern[:-2] and port.isascii() and port.isdigit() and len(port) <= 5:
                return True
    return False


@dataclass
class _Activity:
    """What the gate saw of one session: its requests open now, and when the last one ended."""

    open: int = 0
    last: float = 0.0


class _Gate:
    """ASGI middleware: the Host, Origin and token checks, and room made for a new session at the cap."""

    def __init__(
        self,
        app: ASGIApp,
        server: Server[Any],
        *,
        token: str,
        hosts: Sequence[str],
        origins: Sequence[str],
        max_sessions: int,
    ) -> None:
        self.app = app
        self.server = server
        self.token = token
        self.hosts = tuple(host.lower() for host in hosts)  # host names and origins are case-insensitive
        self.origins = tuple(origin.lower() for origin in origins)
        self.max_sessions = max_sessions
        self.sessions: dict[str, _Activity] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)  # the lifespan, which starts the session manager
            return
        headers = _headers(scope)
        if not _allowed(headers.get(b'host', '').lower(), self.hosts):
            await _refuse(send, 421, 'misdirected_request', 'this server does not answer for that Host')
            return
        origin = headers.get(b'origin')
        if origin is not None and not _allowed(origin.lower(), self.origins):
            await _refuse(send, 403, 'forbidden', 'requests from that Origin are not allowed')
            return
        credentials = _bearer_credentials(headers)
        if credentials is None:
            await _refuse(send, 401, 'invalid_request', 'send the token: Authorization: Bearer <token>', '')
            return
        if not same(self.token, credentials):
            await _refuse(send, 401, 'invalid_token', "the token is not this server's", ', error="invalid_token"')
            return
        session = headers.get(b'mcp-session-id')
        if session is None:
            # Only a 2025-era POST opens a session; a 2026-07-28 request (its version in a header) has none.
            if scope.get('method') == 'POST' and headers.get(b'mcp-protocol-version', '') in (
                '',
                *HANDSHAKE_PROTOCOL_VERSIONS,
            ):
                await self._make_room()
            await self.app(scope, receive, self._watch_new_session(send))
            return
        activity = self.sessions.setdefault(session, _Activity())
        activity.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            activity.open -= 1
            activity.last = anyio.current_time()
            if not activity.open and session not in self._open_sessions():
                self.sessions.pop(session, None)  # ended, or never was: an id the SDK answered 404

    def _watch_new_session(self, send: Send) -> Send:
        """`send`, noting the session a response opens (its `mcp-session-id`), as active now."""

        async def watched(message: Message) -> None:
            if message['type'] == 'http.response.start':
                for key, value in message.get('headers', ()):
                    if bytes(key).lower() == b'mcp-session-id':
                        self.sessions[bytes(value).decode('latin-1')] = _Activity(last=anyio.current_time())
            await send(message)

        return watched

    async def _make_room(self) -> None:
        """At the session cap, close the session idle longest (no request open), so a new one can open.

        The SDK refuses a new session at its cap with 503, and reaps one only after its idle timeout; a
        host that opens sessions and drops them (a crash, a restart) would lock the person out until then.
        A session with a request open (a question waiting, an event stream) is never closed for room.
        """
        manager = self.server.session_manager
        open_sessions = self._open_sessions()
        for gone in set(self.sessions) - set(open_sessions):
            del self.sessions[gone]
        if len(open_sessions) < self.max_sessions:
            return
        idle = [(self.sessions.get(sid, _Activity()).last, sid) for sid in open_sessions if not self._busy(sid)]
        if idle:
            _, oldest = min(idle)
            await manager._discard_session(oldest, open_sessions[oldest])  # pyright: ignore[reportPrivateUsage]
            self.sessions.pop(oldest, None)

    def _open_sessions(self) -> dict[str, Any]:
        """The SDK's open sessions by id (its `_server_instances`; the pinned SDK has no public view of them)."""
        return getattr(self.server.session_manager, '_server_instances', {})

    def _busy(self, session: str) -> bool:
        activity = self.sessions.get(session)
        return activity is not None and activity.open > 0


def carries_token(token: str) -> Callable[[Scope], bool]:
    """Whether a request (its ASGI scope) sends `Authorization: Bearer <token>`, checked as the gate checks it.

    For `GuardedServer(trusted=...)`: over a connection limit, the person's own MCP host still gets through.
    """

    def carries(scope: Scope) -> bool:
        credentials = _bearer_credentials(_headers(scope))
        return credentials is not None and same(token, credentials)

    return carries


def _headers(scope: Scope) -> dict[bytes, str]:
    return {bytes(key).lower(): bytes(value).decode('latin-1') for key, value in scope.get('headers', ())}


def _bearer_credentials(headers: dict[bytes, str]) -> str | None:
    """The credentials of a `Bearer` `Authorization` header (any case), or `None` when it sends none."""
    scheme, _, credentials = headers.get(b'authorization', '').partition(' ')
    if scheme.lower() != 'bearer' or not credentials.strip():
        return None
    return credentials.strip()


async def _refuse(send: Send, status: int, code: str, message: str, challenge: str | None = None) -> None:
    """A JSON error (`{"error", "error_description"}`, as OAuth's); `challenge` set makes a 401's `WWW-Authenticate`."""
    body = json.dumps({'error': code, 'error_description': message}).encode()
    headers = [(b'content-type', b'application/json'), (b'content-length', str(len(body)).encode())]
    if challenge is not None:
        headers.append((b'www-authenticate', f'Bearer realm="ask-user"{challenge}'.encode()))
    await send({'type': 'http.response.start', 'status': status, 'headers': headers})
    await send({'type': 'http.response.body', 'body': body})
