"""`BodyLimit`: request bodies bounded in size and in time, as plain ASGI (no Starlette needed to use it).

Exported by `pydantic_ai_ask_user.ui` (for the AG-UI and Vercel AI endpoints) and `pydantic_ai_ask_user.web`;
the web app's own guard (`web._security.BodyGuard`) is this class with JSON errors on its API.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import suppress
from typing import Any, Final

import anyio

__all__ = ('BodyLimit', 'DEFAULT_BODY_LIMIT_BYTES', 'DEFAULT_BODY_LIMIT_SECONDS')

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_BODY_LIMIT_BYTES: Final = 1024 * 1024
"""`BodyLimit`'s default largest body, 1 MiB: an AG-UI or Vercel AI request carries the whole conversation."""

DEFAULT_BODY_LIMIT_SECONDS: Final = 30.0
"""`BodyLimit`'s default time for a whole body to arrive, counted from the request's headers."""


class BodyTooLarge(Exception):
    """The request body grew past the limit while the app read it."""


class BodyTooSlow(Exception):
    """The request body did not arrive in time."""


class BodyLimit:
    """ASGI middleware bounding each request body in size and in time, without buffering or reading ahead.

    A body declared (`Content-Length`) over `max_bytes` gets 413 before the app runs. A body sent without
    a length (chunked) is counted as the app reads it: past `max_bytes` the client gets 413, and one not
    all there `seconds` after the request began gets 408; the app's read then raises, so it stops. A
    response sent while the body is still unread closes the connection, so the rest cannot hold it open.
    Put it around any ASGI app, or in Starlette's or FastAPI's middleware list:

        app = Starlette(routes=[...], middleware=[Middleware(BodyLimit, max_bytes=256 * 1024)])
        api.add_middleware(BodyLimit)  # FastAPI
    """

    def __init__(
        self, app: ASGIApp, *, max_bytes: int = DEFAULT_BODY_LIMIT_BYTES, seconds: float = DEFAULT_BODY_LIMIT_SECONDS
    ) -> None:
        if max_bytes < 0 or seconds <= 0:
            raise ValueError(f'BodyLimit needs max_bytes >= 0 and seconds > 0, not {max_bytes!r} and {seconds!r}')
        self.app = app
        self.max_bytes = max_bytes
        """The largest body read."""
        self.seconds = seconds
        """How long the whole body may take to arrive."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b'content-length')
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            declared = str(self.max_bytes + 1)  # not a length: refused as too large, as before it is read
        if declared is not None and int(declared) > self.max_bytes:
            await self.refuse(scope, send, 413, 'too_large', f'the request body is larger than {self.max_bytes} bytes')
            return
        has_body = (declared is not None and int(declared) > 0) or _header(scope, b'transfer-encoding') is not None
        deadline = anyio.current_time() + self.seconds
        size = 0
        finished = not has_body
        started = False
        refused = False

        async def refuse_now(status: int, code: str, message: str) -> None:
            # Answered here, before the app's read raises: an app that lets the exception out (Starlette's
            # error middleware answers 500) would otherwise answer first. What it sends next is dropped.
            nonlocal refused
            if not started and not refused:
                refused = True
                await self.refuse(scope, send, status, code, message)

        async def bounded_receive() -> Message:
            nonlocal size, finished
            if finished:
                return await receive()
            with anyio.move_on_after(deadline - anyio.current_time()):
                message = await receive()
                if message['type'] == 'http.request':
                    size += len(message.get('body', b''))
                    if size > self.max_bytes:
                        await refuse_now(413, 'too_large', f'the request body is larger than {self.max_bytes} bytes')
                        raise BodyTooLarge
                    finished = not message.get('more_body', False)
                else:
                    finished = True
                return message
            await refuse_now(408, 'timeout', f'the request body took longer than {self.seconds:g} s')
            raise BodyTooSlow

        async def send_closing(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the app's own answer, after the refusal went out
            if message['type'] == 'http.response.start':
                started = True
                if not finished:  # the rest of the body would otherwise keep the connection busy
                    message = {**message, 'headers': [*message.get('headers', []), (b'connection', b'close')]}
            await send(message)

        with suppress(BodyTooLarge, BodyTooSlow):  # refused in bounded_receive
            await self.app(scope, bounded_receive, send_closing)

    async def refuse(self, scope: Scope, send: Send, status: int, code: str, message: str) -> None:
        """Send the refusal: `{"error": code, "message": message}` with `status`, closing the connection."""
        body = json.dumps({'error': code, 'message': message}).encode()
        headers = [(b'content-type', b'application/json'), (b'content-length', str(len(body)).encode())]
        await send({'type': 'http.response.start', 'status': status, 'headers': [*headers, (b'connection', b'close')]})
        await send({'type': 'http.response.body', 'body': body})


def _header(scope: Scope, name: bytes) -> str | None:
    """The value of header `name` (lowercase) in `scope`, decoded as Latin-1; `None` when absent."""
    for key, value in scope.get('headers', ()):
        if key.lower() == name:
            return bytes(value).decode('latin-1').strip()
    return None
