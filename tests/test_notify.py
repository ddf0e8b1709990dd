"""Webhook notifications, delivered to a real HTTP receiver on this machine (`http.server` in a thread)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from ask_user_support import free_port
from pydantic_ai import Agent
from waits import WAIT

from pydantic_ai_ask_user import (
    AskUser,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    DurableAnswerer,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user.testing import ScriptedAnswerer, asking_model
from pydantic_ai_ask_user.webhooks import (
    WEBHOOK_EVENT_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    NotifyingAnswerer,
    SignatureError,
    WebhookFailure,
    WebhookNotifier,
    notify_then,
    question_waiting_payload,
    sign_webhook,
    verify_webhook,
)

pytestmark = pytest.mark.anyio

KEY = b'k' * 32
"""The signing key the app and the receiver share in these tests."""


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """A real HTTP server in a thread that records each POST and answers with the statuses it is given."""

    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list[Received])
    statuses: list[int] = field(default_factory=list[int])
    """The statuses to answer with, in order; 204 once they run out."""
    location: str = ''
    hold: threading.Event | None = None
    """When set, each request waits for this event before answering (a slow receiver)."""
    arrived: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f'http://127.0.0.1:{self.server.server_address[1]}/hook'

    def wait_for(self, count: int) -> list[Received]:
        deadline = time.monotonic() + WAIT
        while len(self.received) < count:
            assert time.monotonic() < deadline, f'the receiver got {len(self.received)} of {count} requests'
            self.arrived.wait(0.05)
            self.arrived.clear()
        return self.received


def _start_receiver() -> Receiver:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
            receiver.received.append(Received(dict(self.headers.items()), body, time.time()))
            receiver.arrived.set()
            if receiver.hold is not None:
                receiver.hold.wait(WAIT)
            status = receiver.statuses.pop(0) if receiver.statuses else 204
            self.send_response(status)
            if receiver.location:
                self.send_header('Location', receiver.location)
            self.send_header('Content-Length', '0')
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    server.daemon_threads = True
    receiver = Receiver(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = _start_receiver()
    yield receiver
    if receiver.hold is not None:
        receiver.hold.set()
    receiver.server.shutdown()
    receiver.server.server_close()


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    return f'http://127.0.0.1:{port}/hook'


REQUEST = AskUserRequest(
    id='call_1',
    questions=(
        Question(
            header='Database',
            question='Which database?',
            options=(
                QuestionOption(label='PostgreSQL', description='the secret plan'),
                QuestionOption(label='SQLite'),
            ),
        ),
        Question(header='Region', question='Where?', options=(QuestionOption(label='EU'), QuestionOption(label='US'))),
    ),
)
ANSWER = AskUserResponse(
    answers=(
        AskUserAnswer(header='Database', custom_answer='only after the backup'),
        AskUserAnswer(header='Region', selected=('EU',)),
    )
)


async def _answer(request: AskUserRequest, /) -> AskUserResponse:
    return ANSWER


async def test_a_waiting_question_is_posted_signed_and_the_receiver_verifies_it(receiver: Receiver) -> None:
    answerer = notify_then(_answer, url=receiver.url, key=KEY, link='https://inbox.example/q/call_1', timeout=600)
    started = time.time()
    assert await answerer(REQUEST) == ANSWER
    await answerer.wait_sent()
    [received] = receiver.wait_for(1)
    assert received.headers['Content-Type'] == 'application/json'
    assert received.headers[WEBHOOK_EVENT_HEADER] == 'question_waiting'
    payload = verify_webhook(received.body, received.headers[WEBHOOK_SIGNATURE_HEADER], KEY)
    assert set(payload) == {
        'event',
        'request_id',
        'tool_call_id',
        'run_id',
        'count',
        'headers',
        'link',
        'deadline',
        'sent_at',
        'audience',
        'context',
    }
    assert payload['event'] == 'question_waiting'
    assert payload['request_id'] == 'call_1'  # a request of no run: its key is its tool call id
    assert payload['tool_call_id'] == 'call_1'
    assert payload['run_id'] is None
    assert payload['count'] == 2
    assert payload['headers'] == ['Database', 'Region']
    assert payload['link'] == 'https://inbox.example/q/call_1'
    deadline = time.mktime(time.strptime(payload['deadline'], '%Y-%m-%dT%H:%M:%SZ')) - time.timezone
    assert started + 598 <= deadline <= time.time() + 601
    assert payload['sent_at'].endswith('Z')
    # Never the answer, never an option or its description.
    for secret in (b'backup', b'PostgreSQL', b'secret plan', b'EU', b'Which database'):
        assert secret not in received.body


async def test_a_runs_question_is_named_by_its_key_with_the_tool_call_id_beside_it(receiver: Receiver) -> None:
    """Tool call ids repeat across runs: the payload's `request_id` is the key the link and the web API use."""
    in_run = AskUserRequest(id='call_0', questions=REQUEST.questions, run_id='run-1')
    notifier = WebhookNotifier(receiver.url, key=KEY)
    assert await notifier.notify(in_run, link=f'https://inbox.example/requests/{in_run.key}') is True
    [received] = receiver.wait_for(1)
    payload = verify_webhook(received.body, received.headers[WEBHOOK_SIGNATURE_HEADER], KEY)
    assert payload['request_id'] == in_run.key != 'call_0'
    assert payload['tool_call_id'] == 'call_0'
    assert payload['run_id'] == 'run-1'
    assert payload['link'].endswith(in_run.key)


async def test_the_ask_goes_on_through_a_real_agent_run(receiver: Receiver) -> None:
    scripted = ScriptedAnswerer({'Region': 'EU'})
    answerer = notify_then(scripted, url=receiver.url, key=KEY, link=lambda request: f'https://inbox/{request.id}')
    region = {'header': 'Region', 'question': 'Where?', 'options': [{'label': 'EU'}, {'label': 'US'}]}
    agent = Agent(asking_model(region), capabilities=[AskUser(answerer=answerer)])
    result = await agent.run('Deploy.')
    assert result.output == '{"Region":["EU"]}'
    await answerer.wait_sent()
    [received] = receiver.wait_for(1)
    payload = verify_webhook(received.body, received.headers[WEBHOOK_SIGNATURE_HEADER], KEY)
    assert payload['link'] == f'https://inbox/{scripted.requests[0].id}'
    assert payload['deadline'] is None


def test_a_wrong_key_a_changed_body_or_a_bad_header_is_refused() -> None:
    body = question_waiting_payload(REQUEST, link='https://inbox')
    header = sign_webhook(body, KEY)
    assert verify_webhook(body, header, KEY)['request_id'] == 'call_1'
    with pytest.raises(SignatureError, match='does not match'):
        verify_webhook(body, header, b'x' * 32)
    with pytest.raises(SignatureError, match='does not match'):
        verify_webhook(body.replace(b'call_1', b'call_2'), header, KEY)
    with pytest.raises(SignatureError, match='missing'):
        verify_webhook(body, None, KEY)
    t = header.split(',')[0]
    for bad in ('v1=abc', 't=1', 't=abc,v1=00', 'garbage', 't=' + '9' * 2000, f'{t},v1=\u00e9\u00ff', 't=\u0663,v1=00'):
        with pytest.raises(SignatureError):
            verify_webhook(body, bad, KEY)
    # Key rotation: one of several v1 entries matching is enough.
    assert verify_webhook(body, f'{t},v1={"0" * 64},{header.split(",")[1]}', KEY)
    not_json = b'not json'
    with pytest.raises(SignatureError, match='not JSON'):
        verify_webhook(not_json, sign_webhook(not_json, KEY), KEY)
    with pytest.raises(SignatureError, match='not a JSON object'):
        verify_webhook(b'[1]', sign_webhook(b'[1]', KEY), KEY)


def test_a_replayed_old_signature_and_one_from_the_future_are_refused() -> None:
    body = question_waiting_payload(REQUEST, link='https://inbox')
    old = sign_webhook(body, KEY, timestamp=int(time.time()) - 301)
    with pytest.raises(SignatureError, match='old, outside the tolerance of 300 s'):
        verify_webhook(body, old, KEY)
    assert verify_webhook(body, old, KEY, tolerance=3600)
    future = sign_webhook(body, KEY, timestamp=int(time.time()) + 1000)
    with pytest.raises(SignatureError, match='ahead of this clock'):
        verify_webhook(body, future, KEY)
    # The timestamp is signed: moving it forward to pass the age check breaks the signature.
    fresh_t = f't={int(time.time())},' + old.split(',')[1]
    with pytest.raises(SignatureError, match='does not match'):
        verify_webhook(body, fresh_t, KEY)


async def test_a_receiver_that_is_down_never_fails_the_ask(caplog: pytest.LogCaptureFixture) -> None:
    failures: list[WebhookFailure] = []
    answerer = notify_then(
        _answer,
        url=_closed_port_url(),
        key=KEY,
        link='https://inbox',
        retries=2,
        backoff=0.01,
        on_error=failures.append,
    )
    with caplog.at_level(logging.WARNING, logger='pydantic_ai_ask_user.notify'):
        waiting: asyncio.Event = asyncio.Event()

        async def slow_person(request: AskUserRequest, /) -> AskUserResponse:
            await waiting.wait()
            return ANSWER

        slow = notify_then(
            slow_person,
            url=_closed_port_url(),
            key=KEY,
            link='https://inbox',
            retries=2,
            backoff=0.01,
            on_error=failures.append,
        )
        ask = asyncio.create_task(slow(REQUEST))
        await asyncio.wait_for(slow.wait_sent(), WAIT)
        waiting.set()
        assert await ask == ANSWER
        assert await answerer(REQUEST) == ANSWER
        await answerer.wait_sent()
    [failure, _] = failures
    assert failure.attempts == 3
    assert failure.status is None
    assert failure.request_id == 'call_1'
    assert 'Error' in failure.reason
    assert 'not delivered after 3 attempt(s)' in caplog.text
    assert KEY.decode() not in caplog.text


async def test_a_slow_receiver_never_delays_the_answer(receiver: Receiver) -> None:
    receiver.hold = threading.Event()
    failures: list[WebhookFailure] = []

    async def on_error(failure: WebhookFailure) -> None:
        failures.append(failure)

    answerer = notify_then(
        _answer, url=receiver.url, key=KEY, link='https://inbox', request_timeout=0.5, retries=0, on_error=on_error
    )
    assert await asyncio.wait_for(answerer(REQUEST), WAIT) == ANSWER
    receiver.wait_for(1)
    await answerer.wait_sent()
    [failure] = failures
    assert failure.attempts == 1
    assert 'timed out' in failure.reason
    receiver.hold.set()


async def test_a_5xx_is_retried_until_delivered_and_retries_stop_once_answered(receiver: Receiver) -> None:
    receiver.statuses = [503, 500]
    notifier = WebhookNotifier(receiver.url, key=KEY, retries=3, backoff=0.01)
    assert await notifier.notify(REQUEST, link='https://inbox') is True
    assert len(receiver.received) == 3
    # The bodies differ only in nothing: each attempt signs the same body again, with its own timestamp.
    assert len({r.body for r in receiver.received}) == 1
    receiver.received.clear()
    receiver.statuses = [503, 503, 503]
    assert await notifier.notify(REQUEST, link='https://inbox', still_waiting=lambda: False) is False
    assert len(receiver.received) == 1
    # Answered during the pause before a retry: that retry is not made.
    receiver.received.clear()
    answers = iter([True, False])
    assert await notifier.notify(REQUEST, link='https://inbox', still_waiting=lambda: next(answers)) is False
    assert len(receiver.received) == 1


async def test_a_4xx_is_not_retried_and_a_redirect_is_not_followed(receiver: Receiver) -> None:
    other = _start_receiver()
    try:
        failures: list[WebhookFailure] = []
        notifier = WebhookNotifier(receiver.url, key=KEY, retries=3, backoff=0.01, on_error=failures.append)
        receiver.statuses = [401]
        assert await notifier.notify(REQUEST, link='https://inbox') is False
        receiver.statuses = [307]
        receiver.location = other.url
        assert await notifier.notify(REQUEST, link='https://inbox') is False
        assert [(f.status, f.attempts) for f in failures] == [(401, 1), (307, 1)]
        assert 'HTTP 401' in failures[0].reason
        assert len(receiver.received) == 2
        assert other.received == []
    finally:
        other.server.shutdown()
        other.server.server_close()


async def test_hostile_text_reaches_the_receiver_as_plain_ascii_json(receiver: Receiver) -> None:
    hostile = AskUserRequest(
        id='call\x1b]0;pwned\x07\n\u202e9',
        questions=(
            Question(
                header='<script>"x"\\',
                question='?',
                options=(QuestionOption(label='데이터베이스 🐘'), QuestionOption(label='b')),
            ),
        ),
    )
    notifier = WebhookNotifier(receiver.url, key=KEY)
    assert await notifier.notify(hostile, link='https://inbox/?q="a"&b=<c>') is True
    [received] = receiver.wait_for(1)
    assert received.body.isascii()
    assert all(32 <= byte < 127 for byte in received.body)
    payload = verify_webhook(received.body, received.headers[WEBHOOK_SIGNATURE_HEADER], KEY)
    assert payload['headers'] == ['<script>"x"\\']
    assert payload['request_id'].startswith('call')
    assert not any(ord(char) < 32 or char == '\u202e' for char in payload['request_id'])
    assert payload['link'] == 'https://inbox/?q="a"&b=<c>'


async def test_a_link_with_control_characters_is_refused_and_never_fails_the_ask(receiver: Receiver) -> None:
    with pytest.raises(ValueError, match='control or format character'):
        notify_then(_answer, url=receiver.url, key=KEY, link='https://inbox\x1b[2J')
    failures: list[WebhookFailure] = []
    answerer = notify_then(
        _answer,
        url=receiver.url,
        key=KEY,
        link=lambda request: 'https://inbox/\n' + request.id,
        on_error=failures.append,
    )
    assert await answerer(REQUEST) == ANSWER
    await answerer.wait_sent()
    [failure] = failures
    assert failure.attempts == 0
    assert 'control or format character' in failure.reason
    assert receiver.received == []


def test_settings_are_checked_when_the_notifier_is_made() -> None:
    with pytest.raises(ValueError, match='plain http to another machine'):
        WebhookNotifier('http://hooks.example.com/x', key=KEY)
    assert WebhookNotifier('http://hooks.example.com/x', key=KEY, allow_http=True).url.startswith('http://')
    assert WebhookNotifier('http://localhost:9/x', key=KEY).url == 'http://localhost:9/x'
    assert WebhookNotifier('https://hooks.example.com/x', key=KEY)
    for bad in ('ftp://hooks.example.com/', 'https://', 'hooks.example.com', 'https://a b/', 'https://a/\x1b'):
        with pytest.raises(ValueError, match='webhook url'):
            WebhookNotifier(bad, key=KEY)
    with pytest.raises(TypeError):
        WebhookNotifier(1, key=KEY)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='at least 16 bytes'):
        WebhookNotifier('https://h/x', key='short')
    with pytest.raises(TypeError):
        WebhookNotifier('https://h/x', key=1234567890123456)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='timeout'):
        WebhookNotifier('https://h/x', key=KEY, timeout=0)
    with pytest.raises(ValueError, match='retries'):
        WebhookNotifier('https://h/x', key=KEY, retries=-1)
    with pytest.raises(ValueError, match='non-empty'):
        question_waiting_payload(REQUEST, link='')
    with pytest.raises(ValueError, match='characters long'):
        question_waiting_payload(REQUEST, link='https://x/' + 'a' * 3000)
    assert 'hooks.example.com' in repr(WebhookNotifier('https://hooks.example.com/x', key=KEY))
    assert 'notify_then' in repr(notify_then(_answer, url='https://h/x', key=KEY, link='https://i'))


async def test_an_on_error_callback_that_raises_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    def broken(failure: WebhookFailure) -> None:
        raise RuntimeError('callback bug')

    notifier = WebhookNotifier(_closed_port_url(), key=KEY, retries=0, on_error=broken)
    with caplog.at_level(logging.WARNING, logger='pydantic_ai_ask_user.notify'):
        assert await notifier.notify(REQUEST, link='https://inbox') is False
    assert 'on_error callback raised' in caplog.text


class _DurableAnswerer:
    """A `DurableAnswerer` of its own: it owns its deadline and answers before it."""

    def __init__(self) -> None:
        self.timeouts: list[float | None] = []

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        raise AssertionError('a durable answerer is asked through ask_durably')

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        self.timeouts.append(timeout)
        return ANSWER


async def test_a_durable_answerer_stays_durable_and_the_deadline_comes_from_its_timeout(receiver: Receiver) -> None:
    inner = _DurableAnswerer()
    answerer = notify_then(inner, url=receiver.url, key=KEY, link='https://inbox')
    assert isinstance(answerer, DurableAnswerer)
    assert isinstance(answerer, NotifyingAnswerer)
    started = time.time()
    assert await answerer.ask_durably(REQUEST, timeout=120) == ANSWER  # type: ignore[attr-defined]
    await answerer.wait_sent()
    assert inner.timeouts == [120]
    [received] = receiver.wait_for(1)
    payload = verify_webhook(received.body, received.headers[WEBHOOK_SIGNATURE_HEADER], KEY)
    deadline = time.mktime(time.strptime(payload['deadline'], '%Y-%m-%dT%H:%M:%SZ')) - time.timezone
    assert started + 118 <= deadline <= time.time() + 121
    assert json.loads(received.body)['count'] == 2


# From an attacker's review: a timestamp too long for a float, the URL's secret in logs, and a proxy for localhost.


def test_a_timestamp_with_hundreds_of_digits_is_a_signature_error_not_an_overflow() -> None:
    body = question_waiting_payload(REQUEST, link='https://inbox')
    with pytest.raises(SignatureError, match='not of the form'):
        verify_webhook(body, 't=' + '9' * 400 + ',v1=00', KEY)


async def test_the_urls_path_and_credentials_never_reach_repr_logs_or_on_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()  # nothing listens on it: the delivery fails at once
    url = f'http://user:hunter2@127.0.0.1:{port}/services/T0/B0/SECRETTOKEN?sig=abc'
    failures: list[WebhookFailure] = []
    notifier = WebhookNotifier(url, key=KEY, retries=0, on_error=failures.append)
    with caplog.at_level(logging.WARNING):
        assert await notifier.notify(REQUEST, link='https://inbox') is False
    [failure] = failures
    assert failure.url == f'http://127.0.0.1:{port}'
    for shown in (repr(notifier), caplog.text, failure.url, failure.reason):
        for secret in ('hunter2', 'SECRETTOKEN', 'sig=abc', 'user:'):
            assert secret not in shown
    with pytest.raises(ValueError, match='plain http to another machine') as caught:
        WebhookNotifier('http://user:pw@hooks.example.com/SECRET', key=KEY)
    assert 'SECRET' not in str(caught.value)
    assert 'pw' not in str(caught.value)


async def test_a_delivery_to_this_machine_never_goes_through_a_proxy(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead_proxy = f'http://127.0.0.1:{free_port()}'
    for name in ('HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'):
        monkeypatch.setenv(name, dead_proxy)
    for name in ('NO_PROXY', 'no_proxy'):
        monkeypatch.delenv(name, raising=False)
    notifier = WebhookNotifier(receiver.url, key=KEY, retries=0)
    assert await notifier.notify(REQUEST, link='https://inbox') is True
    assert len(receiver.received) == 1
