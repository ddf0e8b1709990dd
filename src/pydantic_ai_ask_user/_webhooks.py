"""Webhook notifications: a small signed JSON POSTed when a question starts waiting, so a person can be reached.

Standard library only (`urllib.request` in a worker thread): the core takes no HTTP client dependency.
The payload names the question (its key, how many questions, their headers) and the inbox link, never
an answer and never an option's description. Delivery never blocks and never fails the ask: it runs
beside the wait, and a failure is logged and handed to an optional callback.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ._answers import Answerer, AskUserRequest, AskUserResponse, DurableAnswerer
from ._audience import context_to_json
from ._signing import SignatureError, check_key, hmac_hex, same
from ._text import check_one_line, find_forbidden_character, printable, utc_iso

__all__ = (
    'WEBHOOK_SIGNATURE_HEADER',
    'WEBHOOK_EVENT_HEADER',
    'WEBHOOK_TOLERANCE',
    'WebhookFailure',
    'WebhookNotifier',
    'NotifyingAnswerer',
    'notify_then',
    'question_waiting_payload',
    'sign_webhook',
    'verify_webhook',
)

logger = logging.getLogger('pydantic_ai_ask_user.notify')
"""Where failed deliveries are logged (at WARNING), never with the key."""

WEBHOOK_SIGNATURE_HEADER = 'X-Ask-User-Signature'
"""The request header that carries `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body>`."""

WEBHOOK_EVENT_HEADER = 'X-Ask-User-Event'
"""The request header naming the event, the payload's `event` too: `question_waiting`."""

WEBHOOK_TOLERANCE = 300.0
"""How old (or how far ahead of the receiver's clock), in seconds, `verify_webhook` accepts a signature by default."""

_LOCAL_HOSTS = frozenset({'localhost', '127.0.0.1', '::1'})
"""Hosts plain `http://` may reach without `allow_http=True`: the traffic never leaves the machine."""

_MAX_SIGNATURE_HEADER = 1024
"""The longest signature header `verify_webhook` reads: a few `v1=` entries of 64 hex digits fit easily."""

_MAX_TIMESTAMP_DIGITS = 12
"""The most digits a signature's `t=` may have: seconds until the year 33658, and no float overflow."""

_MAX_LINK_LENGTH = 2048
"""The longest inbox link a payload carries."""


@dataclass(frozen=True, kw_only=True)
class WebhookFailure:
    """A notification that was not delivered, as handed to `on_error` (and logged)."""

    url: str
    """Where it was sent: scheme, host and port only (a webhook URL often carries its secret in the path)."""

    request_id: str
    """The request it was about: its `AskUserRequest.key` (its run and its tool call), filtered with `printable`."""

    attempts: int
    """How many POSTs were made (0 when the payload could not be built)."""

    reason: str
    """What went wrong last, filtered with `printable`: an HTTP status, a connection error, a timeout."""

    status: int | None = None
    """The last HTTP status the receiver answered with, or `None` when none answered."""


def _shown_url(url: str) -> str:
    """`url` as it may be logged and shown: scheme, host and port, never the path, query or credentials.

    Chat apps' webhook URLs carry their secret in the path (`/services/T0/B0/SECRET`), some in `user:pass@`.
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or '?'
    if ':' in host:
        host = f'[{host}]'
    try:
        port = f':{parts.port}' if parts.port is not None else ''
    except ValueError:
        port = ''
    return printable(f'{parts.scheme}://{host}{port}', allow_newline=False)


def _check_url(url: str, *, allow_http: bool) -> str:
    if not isinstance(url, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f'the webhook url is a str, not {type(url).__name__}')
    if find_forbidden_character(url, allow_newline=False) is not None or ' ' in url:
        raise ValueError(f'the webhook url to {_shown_url(url)} holds a space or a control character')
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ('https', 'http') or not parts.hostname:
        raise ValueError(f'the webhook url must be an absolute https:// URL, not one to {_shown_url(url)}')
    if parts.scheme == 'http' and parts.hostname not in _LOCAL_HOSTS and not allow_http:
        raise ValueError(
            f'the webhook url to {_shown_url(url)} is plain http to another machine: use https, '
            'or pass allow_http=True if the network between is yours'
        )
    return url


def _check_link(link: str) -> str:
    return check_one_line(link, name='the inbox link', max_length=_MAX_LINK_LENGTH, must_be='a non-empty string')


def question_waiting_payload(
    request: AskUserRequest, *, link: str, deadline: float | None = None, sent_at: float | None = None
) -> bytes:
    """The body of a `question_waiting` notification, as the exact bytes that are signed and sent.

    ASCII JSON: `{"event": "question_waiting", "request_id", "tool_call_id", "run_id", "count", "headers", "link",
    "deadline", "sent_at", "audience", "context"}`: `audience` the names the question is addressed to (null:
    anyone), `context` where it comes from (`title`, `summary`, `link`, `agent_name`, `conversation_id`, each
    when set; null without any). `request_id` is the question's `AskUserRequest.key`, what the link and the web
    API address it by (tool call ids repeat across runs, so they cannot); `tool_call_id` is the id the model
    gave the call and `run_id` the run that asked (null for a request of no run; `request_id` is then the
    tool call id). `deadline` and `sent_at` are UTC ISO-8601 (`deadline` null when the wait has no limit),
    the ids and headers filtered with `printable`. `deadline` and `sent_at` are `time.time()` timestamps.
    Raises `ValueError` for a link that is empty, over 2,048 characters or holds a control character.
    """
    payload: dict[str, Any] = {
        'event': 'question_waiting',
        'request_id': printable(request.key, allow_newline=False),
        'tool_call_id': printable(request.id, allow_newline=False),
        'run_id': None if request.run_id is None else printable(request.run_id, allow_newline=False),
        'count': len(request.questions),
        'headers': [printable(question.header, allow_newline=False) for question in request.questions],
        'link': _check_link(link),
        'deadline': None if deadline is None else utc_iso(deadline),
        'sent_at': utc_iso(time.time() if sent_at is None else sent_at),
        # Who may answer (null: anyone), so the receiver reaches the right person, and where the question
        # comes from; every string filtered with `printable`, as the headers are.
        'audience': None if request.audience is None else [printable(name) for name in request.audience],
        'context': None
        if request.context is None
        else {name: printable(value) for name, value in context_to_json(request.context).items()},
    }
    return json.dumps(payload, ensure_ascii=True, separators=(',', ':')).encode('ascii')


def sign_webhook(body: bytes, key: bytes | str, *, timestamp: int | None = None) -> str:
    """The `X-Ask-User-Signature` value for `body`: `t=<unix seconds>,v1=<HMAC-SHA256 of "<t>." + body, hex>`.

    The timestamp is inside what is signed, so a receiver that checks its age refuses a replayed request.
    """
    t = int(time.time()) if timestamp is None else timestamp
    return f't={t},v1={hmac_hex(check_key(key), f"{t}.".encode() + body)}'


def verify_webhook(
    body: bytes, header: str | None, key: bytes | str, *, tolerance: float = WEBHOOK_TOLERANCE, now: float | None = None
) -> dict[str, Any]:
    """Check a received notification and return its payload; raise `SignatureError` saying what is wrong.

    `body` is the raw request body, exactly as received (parse it only after this); `header` the
    `X-Ask-User-Signature` value. It is refused when the header is missing or malformed, when no `v1`
    signature matches (compared in constant time; several `v1=` entries are allowed, for key rotation),
    or when its timestamp is more than `tolerance` seconds away from `now` (default: this machine's clock).
    """
    raw_key = check_key(key)
    if not header:
        raise SignatureError(f'the {WEBHOOK_SIGNATURE_HEADER} header is missing')
    if len(header) > _MAX_SIGNATURE_HEADER:
        raise SignatureError(f'the {WEBHOOK_SIGNATURE_HEADER} header is longer than {_MAX_SIGNATURE_HEADER} characters')
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header.split(','):
        name, _, value = item.strip().partition('=')
        if name == 't' and value.isascii() and value.isdigit() and len(value) <= _MAX_TIMESTAMP_DIGITS:
            timestamp = int(value)
        elif name == 'v1':
            signatures.append(value)
    if timestamp is None or not signatures:
        raise SignatureError(f'the {WEBHOOK_SIGNATURE_HEADER} header is not of the form t=<seconds>,v1=<hex>')
    age = (time.time() if now is None else now) - timestamp
    if abs(age) > tolerance:
        when = 'old' if age > 0 else 'ahead of this clock'
        raise SignatureError(f'the signature is {abs(age):.0f} s {when}, outside the tolerance of {tolerance:g} s')
    expected = hmac_hex(raw_key, f'{timestamp}.'.encode() + body)
    if not any(same(expected, signature) for signature in signatures):
        raise SignatureError('the signature does not match the body: wrong key, or the body was changed')
    try:
        payload = json.loads(body)
    except ValueError as error:
        raise SignatureError(f'the signed body is not JSON: {error}') from None
    if not isinstance(payload, dict):
        raise SignatureError('the signed body is not a JSON object')
    return payload  # pyright: ignore[reportUnknownVariableType]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: a 3xx is a failed delivery, so a signed body never goes somewhere it was not sent."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@functools.cache
def _opener(url: str) -> urllib.request.OpenerDirector:
    """The opener a delivery uses: urllib's defaults but no redirects, and no proxy for this machine's receiver.

    A proxy from the environment (`HTTPS_PROXY`) carries deliveries to other machines; one to localhost
    never leaves the machine, whatever `NO_PROXY` says.
    """
    if urllib.parse.urlsplit(url).hostname in _LOCAL_HOSTS:
        return urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(_NoRedirect)


class _Refused(Exception):
    """The receiver answered, with a status that retrying will not change."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Retryable(_Refused):
    """The receiver answered 5xx or 429: it may take the next attempt."""


class WebhookNotifier:
    """POSTs signed `question_waiting` notifications to one URL; `notify` never raises and never blocks the loop.

    Each attempt has `timeout` seconds per socket operation and runs in a worker thread. A connection
    error, a timeout, a 5xx or a 429 is retried up to `retries` more times, `backoff` seconds before the
    first retry and twice as long before each next one; any other status outside 2xx (a 3xx included: no
    redirect is followed) ends it. A delivery that fails is logged at WARNING on `pydantic_ai_ask_user.notify`
    and handed to `on_error` (sync or async; what it raises is logged and dropped).

    `url` must be `https://`, or `http://` to `localhost`, `127.0.0.1` or `::1`; plain http to another host
    needs `allow_http=True`. `key` signs every body (see `sign_webhook`); at least 16 bytes.
    """

    def __init__(
        self,
        url: str,
        *,
        key: bytes | str,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        allow_http: bool = False,
        on_error: Callable[[WebhookFailure], Awaitable[None] | None] | None = None,
    ) -> None:
        self.url = _check_url(url, allow_http=allow_http)
        self._key = check_key(key)
        if not timeout > 0:
            raise ValueError(f'timeout must be positive, got {timeout!r}')
        if retries < 0 or backoff < 0:
            raise ValueError('retries and backoff must not be negative')
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.on_error = on_error

    def __repr__(self) -> str:
        return f'WebhookNotifier({_shown_url(self.url)!r})'

    def _post(self, body: bytes) -> int:
        headers = {
            'Content-Type': 'application/json',
            'User-Agent': 'pydantic-ai-ask-user',
            WEBHOOK_EVENT_HEADER: 'question_waiting',
            WEBHOOK_SIGNATURE_HEADER: sign_webhook(body, self._key),
        }
        post = urllib.request.Request(self.url, data=body, headers=headers, method='POST')
        try:
            with _opener(self.url).open(post, timeout=self.timeout) as reply:
                status: int = reply.status
        except urllib.error.HTTPError as error:
            status = error.code
            error.close()
        if 200 <= status < 300:
            return status
        if status >= 500 or status == 429:
            raise _Retryable(status)
        raise _Refused(status)

    async def notify(
        self,
        request: AskUserRequest,
        *,
        link: str,
        deadline: float | None = None,
        still_waiting: Callable[[], bool] | None = None,
    ) -> bool:
        """Send one `question_waiting` for `request`; `True` once a receiver answered 2xx, `False` otherwise.

        `deadline` is a `time.time()` timestamp or `None`. `still_waiting`, when given, is asked before each
        retry: once it says `False` (the question was answered) no more attempts are made.
        """
        attempts = 0
        status: int | None = None
        reason = ''
        try:
            body = question_waiting_payload(request, link=link, deadline=deadline)
            delay = self.backoff
            while True:
                attempts += 1
                try:
                    await asyncio.to_thread(self._post, body)
                    return True
                except _Refused as refused:
                    status, reason = refused.status, f'the receiver answered HTTP {refused.status}'
                    if not isinstance(refused, _Retryable):
                        break
                except (OSError, ValueError) as error:
                    reason = f'{type(error).__name__}: {error}'
                if attempts > self.retries or (still_waiting is not None and not still_waiting()):
                    break
                await asyncio.sleep(delay)
                delay *= 2
                if still_waiting is not None and not still_waiting():
                    break
        except Exception as error:  # a link that cannot be sent, or a bug: never the ask's failure
            reason = f'{type(error).__name__}: {error}'
        await self._failed(
            WebhookFailure(
                url=_shown_url(self.url),
                request_id=printable(request.key, allow_newline=False),
                attempts=attempts,
                reason=printable(reason),
                status=status,
            )
        )
        return False

    async def _failed(self, failure: WebhookFailure) -> None:
        logger.warning(
            'webhook for request %s to %s not delivered after %d attempt(s): %s',
            failure.request_id,
            failure.url,
            failure.attempts,
            failure.reason,
        )
        if self.on_error is None:
            return
        try:
            result = self.on_error(failure)
            if isinstance(result, Awaitable):
                await result
        except Exception:
            logger.exception('the webhook on_error callback raised')


class NotifyingAnswerer:
    """An answerer that sends a `question_waiting` notification, then asks the answerer it wraps: see `notify_then`."""

    def __init__(
        self,
        answerer: Answerer,
        notifier: WebhookNotifier,
        link: str | Callable[[AskUserRequest], str],
        timeout: float | None,
    ) -> None:
        self.answerer = answerer
        self.notifier = notifier
        self._link = link
        self._timeout = timeout
        self._sending: set[asyncio.Task[bool]] = set()

    def __repr__(self) -> str:
        return f'notify_then({self.answerer!r}, {self.notifier!r})'

    def _start(self, request: AskUserRequest, timeout: float | None, waiting: list[bool]) -> None:
        # The request's own deadline (set by `AskUser(timeout=...)`) when it has one: the one the front ends show.
        deadline = (
            request.deadline if request.deadline is not None else None if timeout is None else time.time() + timeout
        )
        link = self._link

        async def send() -> bool:
            resolved = link(request) if callable(link) else link
            return await self.notifier.notify(
                request, link=resolved, deadline=deadline, still_waiting=lambda: waiting[0]
            )

        task = asyncio.create_task(send())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        waiting = [True]
        self._start(request, self._timeout, waiting)
        try:
            return await self.answerer(request)
        finally:
            waiting[0] = False

    async def wait_sent(self) -> None:
        """Wait until every notification started so far is delivered or given up (for tests and shutdown)."""
        while self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)


class _DurableNotifyThen(NotifyingAnswerer):
    """`NotifyingAnswerer` around a `DurableAnswerer`: stays durable; `AskUser` gives it the deadline."""

    answerer: DurableAnswerer

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        waiting = [True]
        self._start(request, timeout, waiting)
        try:
            return await self.answerer.ask_durably(request, timeout=timeout)
        finally:
            waiting[0] = False


def notify_then(
    answerer: Answerer,
    *,
    url: str,
    key: bytes | str,
    link: str | Callable[[AskUserRequest], str],
    timeout: float | None = None,
    allow_http: bool = False,
    on_error: Callable[[WebhookFailure], Awaitable[None] | None] | None = None,
    request_timeout: float = 10.0,
    retries: int = 3,
    backoff: float = 0.5,
) -> NotifyingAnswerer:
    """Wrap `answerer` so each request first sends a signed `question_waiting` webhook to `url`, then is asked.

    The notification is sent beside the wait, never before it: the wrapped answerer is asked at once, a slow
    or dead receiver delays nothing, and a failed delivery is logged and given to `on_error`, never raised.
    Retries stop once the question is answered. `link` is the inbox link, or a function of the request that
    makes it. `timeout` is the `AskUser(timeout=...)` you use, to put the deadline in the payload (a
    `DurableAnswerer` stays one, and is given its deadline by `AskUser` itself). `request_timeout`,
    `retries`, `backoff` and `allow_http` are `WebhookNotifier`'s. Invalid settings raise `ValueError` here.
    """
    if isinstance(link, str):
        _check_link(link)
    notifier = WebhookNotifier(
        url,
        key=key,
        timeout=request_timeout,
        retries=retries,
        backoff=backoff,
        allow_http=allow_http,
        on_error=on_error,
    )
    if isinstance(answerer, DurableAnswerer):
        return _DurableNotifyThen(answerer, notifier, link, timeout)
    return NotifyingAnswerer(answerer, notifier, link, timeout)
