"""`WebAnswerer(notify=...)` and `ask-user ask --web --notify-url`: a signed `question_waiting` webhook, to a real receiver."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx
import pytest
from test_web_cli import QUESTIONS, answer_in_form, link_of
from web_support import WAIT, asgi_client, asking, log_in, multi, single

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user._answers import CannotAskError
from pydantic_ai_ask_user._cli.web_answerer import web_notifier
from pydantic_ai_ask_user._webhooks import WebhookNotifier
from pydantic_ai_ask_user.web import WebAnswerer, serve
from pydantic_ai_ask_user.webhooks import verify_webhook

KEY = 'a webhook key of at least sixteen bytes'


@dataclass(frozen=True)
class Received:
    """One POST the receiver got: its raw body and signature header."""

    body: bytes
    signature: str | None
    event: str | None


class Receiver:
    """A real HTTP server on 127.0.0.1 that answers 204 and queues what it was sent."""

    def __init__(self) -> None:
        self.received: queue.Queue[Received] = queue.Queue()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get('content-length', '0')))
                received.put(
                    Received(body, self.headers.get('x-ask-user-signature'), self.headers.get('x-ask-user-event'))
                )
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/hooks/ask-user'
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def next(self) -> Received:
        return self.received.get(timeout=WAIT)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiving = Receiver()
    yield receiving
    receiving.close()


@pytest.mark.anyio
async def test_a_waiting_question_posts_a_signed_webhook_with_its_link_and_never_the_answer(receiver: Receiver) -> None:
    web = WebAnswerer(notify=WebhookNotifier(receiver.url, key=KEY))
    request = AskUserRequest(questions=(single(), multi()), deadline=4102444800.0)
    async with serve(web.app) as base:
        web.base_url = base
        async with asking(web, request) as job:
            got = await anyio.to_thread.run_sync(receiver.next)
            payload = verify_webhook(got.body, got.signature, KEY)
            assert got.event == 'question_waiting'
            assert payload['event'] == 'question_waiting'
            assert payload['request_id'] == job.request.id
            assert payload['headers'] == ['Database', 'Environments']
            assert payload['count'] == 2
            assert payload['link'] == f'{base}requests/{job.request.id}'
            assert payload['deadline'] == '2100-01-01T00:00:00Z'
            # The link is the question's page on the running server: it opens for a signed-in browser.
            async with httpx.AsyncClient(base_url=base, timeout=WAIT) as browser:
                await log_in(browser, web)
                page = await browser.get(payload['link'])
                assert page.status_code == 200
                assert 'Which database should the migration target?' in page.text
                assert (await httpx.AsyncClient(timeout=WAIT).get(payload['link'])).status_code == 401
                sent = await browser.post(
                    f'/api/requests/{job.request.id}/answer',
                    json={
                        'answers': [
                            {'header': 'Database', 'selected': ['SQLite']},
                            {'header': 'Environments', 'selected': ['dev']},
                        ]
                    },
                    headers={'authorization': f'Bearer {web.access_token}'},
                )
                assert sent.status_code == 200
            await job.response()
        await web.wait_sent()
    for secret in (b'SQLite', b'PostgreSQL', b'production', b'local file', b'Which database', b'answer', b'selected'):
        assert secret not in got.body, secret
    assert receiver.received.empty()  # one notification per question, nothing when it is answered


@pytest.mark.anyio
async def test_two_runs_reusing_call_0_get_webhooks_linking_each_to_its_own_question(receiver: Receiver) -> None:
    web = WebAnswerer(notify=WebhookNotifier(receiver.url, key=KEY))
    run_1 = AskUserRequest(questions=(single(),), id='call_0', run_id='run-1')
    run_2 = AskUserRequest(questions=(multi(),), id='call_0', run_id='run-2')
    async with serve(web.app) as base:
        web.base_url = base
        async with asking(web, run_1), asking(web, run_2):
            payloads = [
                verify_webhook(got.body, got.signature, KEY)
                for got in [await anyio.to_thread.run_sync(receiver.next) for _ in range(2)]
            ]
            by_run = {payload['run_id']: payload for payload in payloads}
            assert {payload['tool_call_id'] for payload in payloads} == {'call_0'}
            async with httpx.AsyncClient(base_url=base, timeout=WAIT) as browser:
                await log_in(browser, web)
                for request, shown in ((run_1, 'Which database'), (run_2, 'Which environments')):
                    payload = by_run[request.run_id]
                    assert payload['request_id'] == request.key
                    assert payload['link'] == f'{base}requests/{request.key}'
                    assert shown in (await browser.get(payload['link'])).text
        await web.wait_sent()


@pytest.mark.anyio
async def test_without_a_base_url_no_webhook_is_sent_and_the_ask_still_works(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    web = WebAnswerer(notify=WebhookNotifier(receiver.url, key=KEY))
    async with asgi_client(web) as client, asking(web) as job:
        await client.post(
            f'/api/requests/{job.request.id}/answer',
            json={'answers': [{'header': 'Database', 'selected': ['SQLite']}]},
            headers={'authorization': f'Bearer {web.access_token}'},
        )
        assert (await job.response()).answers[0].selected == ('SQLite',)
    assert 'base_url is not set' in caplog.text
    assert receiver.received.empty()


def test_ask_web_notify_url_signs_with_the_key_from_the_environment(receiver: Receiver, tmp_path: Path) -> None:
    questions = tmp_path / 'questions.json'
    questions.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    process = subprocess.Popen(
        [
            sys.executable,
            '-m',
            'pydantic_ai_ask_user._cli',
            'ask',
            '--web',
            '--notify-url',
            receiver.url,
            str(questions),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, 'ASK_USER_WEBHOOK_KEY': KEY},
    )
    try:
        link = link_of(process)
        payload = verify_webhook(*(lambda got: (got.body, got.signature))(receiver.next()), KEY)
        base = link.split('login?', 1)[0]
        assert payload['link'].startswith(base + 'requests/')
        assert payload['headers'] == ['Database']
        assert answer_in_form(link, {'action': 'answer', 'q0': '1'}).status_code == 200
        out, _ = process.communicate(timeout=WAIT)
        assert json.loads(out) == {'Database': ['SQLite']}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_ask_web_notify_url_without_a_key_says_where_the_key_goes(tmp_path: Path) -> None:
    questions = tmp_path / 'questions.json'
    questions.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    env = {name: value for name, value in os.environ.items() if name != 'ASK_USER_WEBHOOK_KEY'}
    done = subprocess.run(
        [
            sys.executable,
            '-m',
            'pydantic_ai_ask_user._cli',
            'ask',
            '--web',
            '--notify-url',
            'https://hooks.example/x',
            str(questions),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
    )
    assert done.returncode != 0
    assert done.stdout == ''
    assert 'ASK_USER_WEBHOOK_KEY' in done.stderr


def test_the_notifier_of_the_command_line_checks_its_url_and_key() -> None:
    assert web_notifier(None, {}) is None
    with pytest.raises(CannotAskError, match='ASK_USER_WEBHOOK_KEY'):
        web_notifier('https://hooks.example/x', {'ASK_USER_WEBHOOK_KEY': ''})
    with pytest.raises(CannotAskError, match='--notify-url'):
        web_notifier('http://hooks.example/x', {'ASK_USER_WEBHOOK_KEY': KEY})
    assert isinstance(web_notifier('https://hooks.example/x', {'ASK_USER_WEBHOOK_KEY': KEY}), WebhookNotifier)
