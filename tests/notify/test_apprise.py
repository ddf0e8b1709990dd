"""`AppriseChannel` through the real Apprise, to a local HTTP receiver (Apprise's `json://` service)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest
from ask_user_support import ask_one, wait_until

from pydantic_ai_ask_user import QuestionContext
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.notify import (
    AppriseChannel,
    DeliveryRefused,
    InboxLinks,
    NotificationFailure,
    Notifier,
    Recipient,
    StaticDirectory,
    WaitingItem,
)

pytestmark = pytest.mark.anyio

KEY = b'k' * 32


class Receiver:
    """An HTTP server that records each JSON body POSTed to it, and answers `status`."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status = 200
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get('content-length', '0'))
                received.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(received.status)
                self.send_header('content-length', '0')
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'json://127.0.0.1:{self.server.server_address[1]}/hook'
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    try:
        yield made
    finally:
        made.close()


def _notifier(hub: QuestionHub, people: list[Recipient], **options: Any) -> Notifier:
    settings: dict[str, Any] = {'gather_seconds': 0.05, 'digest_seconds': 0, 'backoff': 0.01} | options
    return Notifier(
        hub,
        channels=[AppriseChannel()],
        directory=StaticDirectory(people),
        links=InboxLinks('https://inbox.example/', key=KEY),
        **settings,
    )


async def test_a_waiting_question_reaches_the_receiver_with_its_links_and_no_mass_mention(receiver: Receiver) -> None:
    hub = QuestionHub()
    alice = Recipient('alice', addresses={'apprise': receiver.url})
    request = replace(
        ask_one(),
        run_id=None,
        audience=('alice',),
        context=QuestionContext(title='Refund @everyone <!channel>', agent_name='support-bot'),
    )
    notifier = _notifier(hub, [alice, Recipient('bob')])
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, request)
        await wait_until(lambda: receiver.bodies, 'the message to arrive')
        await notifier.drain()
        group.cancel_scope.cancel()
    (body,) = receiver.bodies
    assert '@everyone' not in body['title']
    assert '<!channel>' not in body['title']
    assert 'Refund' in body['title']
    message: str = body['message']
    assert 'Asked by support-bot' in message
    for option in request.questions[0].options:
        assert f'  - {option.label}: https://inbox.example/act?code=' in message
    assert 'https://inbox.example/login?code=' in message


async def test_a_failing_receiver_is_retried_then_reported_and_a_bad_url_is_refused(receiver: Receiver) -> None:
    hub = QuestionHub()
    receiver.status = 500
    failures: list[NotificationFailure] = []
    people = [
        Recipient('alice', addresses={'apprise': receiver.url}),
        Recipient('bob', addresses={'apprise': 'nosuchservice://secret-token@x'}),
    ]
    notifier = _notifier(hub, people, retries=2, on_error=failures.append)
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        group.start_soon(hub.ask, replace(ask_one(), run_id=None))
        await wait_until(lambda: len(failures) == 2, 'both deliveries to be given up')
        group.cancel_scope.cancel()
    by_name = {failure.recipient: failure for failure in failures}
    assert by_name['alice'].attempts == 3
    assert len(receiver.bodies) == 3
    assert by_name['bob'].attempts == 1
    assert 'secret-token' not in by_name['bob'].reason


async def test_a_digest_is_one_message_and_an_approval_has_its_links() -> None:
    from pydantic_ai_ask_user.notify import plain_message
    from pydantic_ai_ask_user.store import PendingApproval

    alice = Recipient('alice', language='ko')
    approval = PendingApproval(token='t', tool_call_id='c', tool_name='refund', args={'amount': 5})
    items = [WaitingItem.of_question(replace(ask_one(), run_id=None)), WaitingItem.of_approval(approval)]
    title, body = plain_message(alice, items, InboxLinks('https://inbox.example/', key=KEY))
    assert '2' in title
    assert body.count('https://inbox.example/act?code=') == 3 + 2  # three options, approve and deny
    with pytest.raises(DeliveryRefused):
        await AppriseChannel().send(Recipient('x', addresses={'apprise': 'bogus'}), items, InboxLinks('https://a.b/'))
