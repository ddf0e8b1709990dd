"""A local stand-in for Slack's Web API that records each call, and interaction payloads signed as Slack signs them.

No test reaches Slack: `SlackChannel(base_url=api.url)` posts to `SlackAPI`, a real HTTP server on 127.0.0.1 that
answers as Slack does (`{"ok": true, "channel": ..., "ts": ...}`) and records each method with its parameters. The
payloads are shaped as Slack sends them, form-encoded as `payload=<JSON>`, and signed with slack_sdk's own
`SignatureVerifier.generate_signature` under the `X-Slack-Request-Timestamp` and `X-Slack-Signature` headers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import uvicorn
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View
from slack_sdk.signature import SignatureVerifier
from waits import WAIT

SECRET = 'e3b0c44298fc1c149afbf4c8996fb924'
"""The signing secret of the test app."""

TOKEN = 'xoxb-test-token'
"""The bot token of the test app."""


class SlackAPI:
    """Records every Web API call (method, parameters, the token it came with); answers as Slack does."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.errors: dict[str, list[str]] = {}
        """Per method, the `error` codes the next calls get (`{"ok": false, "error": ...}`), one per call."""
        self.tokens: set[str] = set()
        self.posted: list[dict[str, Any]] = []
        """Each message posted, as an interaction payload carries it: its channel, ts, text and blocks."""
        self._ts = 1700000000
        self._lock = threading.Lock()
        self.url = ''

    def called(self, method: str) -> list[dict[str, Any]]:
        """The parameters of each call of `method`, in order."""
        with self._lock:
            return [params for name, params in self.calls if name == method]

    def answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.calls.append((method, params))
            failures = self.errors.get(method)
            if failures:
                error = failures.pop(0)
                return (429 if error == 'ratelimited' else 200), {'ok': False, 'error': error}
            self._ts += 1
            ts = f'{self._ts}.000100'
        if method == 'chat.postMessage':
            channel = str(params.get('channel', ''))
            dm = 'D' + channel[1:] if channel.startswith('U') else channel
            with self._lock:
                self.posted.append(
                    {'channel': dm, 'ts': ts, 'text': params.get('text'), 'blocks': params.get('blocks')}
                )
            return 200, {'ok': True, 'channel': dm, 'ts': ts, 'message': {'ts': ts, 'blocks': params.get('blocks')}}
        if method == 'chat.update':
            return 200, {'ok': True, 'channel': params.get('channel'), 'ts': params.get('ts')}
        if method == 'chat.postEphemeral':
            return 200, {'ok': True, 'message_ts': ts}
        if method == 'views.open':
            return 200, {'ok': True, 'view': {'id': 'V0TEST', **params.get('view', {})}}
        return 200, {'ok': True}


@contextmanager
def slack_api() -> Iterator[SlackAPI]:
    """A `SlackAPI` served on 127.0.0.1 until the block ends; its `url` is the `base_url` to give `SlackChannel`."""
    api = SlackAPI()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get('Content-Length') or 0)
            body = self.rfile.read(length).decode('utf-8')
            kind = self.headers.get('Content-Type', '')
            if kind.startswith('application/json'):
                params: dict[str, Any] = json.loads(body or '{}')
            else:
                params = {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}
            api.tokens.add(self.headers.get('Authorization', ''))
            status, answer = api.answer(self.path.rsplit('/', 1)[-1], params)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header('Content-Type', 'application/json; charset=utf-8')
            self.send_header('Content-Length', str(len(data)))
            if status == 429:
                self.send_header('Retry-After', '1')
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    api.url = f'http://127.0.0.1:{server.server_address[1]}/api/'
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def signed_headers(body: bytes, *, secret: str = SECRET, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends with `body`: its timestamp, and its signature made by slack_sdk itself."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    assert signature is not None
    return {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Slack-Request-Timestamp': stamp,
        'X-Slack-Signature': signature,
    }


def form_body(payload: dict[str, Any]) -> bytes:
    """A payload as Slack POSTs it: `payload=<JSON>`, form-encoded."""
    return urllib.parse.urlencode({'payload': json.dumps(payload)}).encode()


def _user(user_id: str) -> dict[str, str]:
    return {'id': user_id, 'username': user_id.lower(), 'name': user_id.lower(), 'team_id': 'T0TEAM'}


def button_click(message: dict[str, Any], user_id: str, block_id: str, action: dict[str, Any]) -> dict[str, Any]:
    """A `block_actions` payload for a click on `action` (a button or a select as drawn) of a posted `message`
    (`{"channel", "ts", "blocks"}`), by `user_id`.
    """
    clicked: dict[str, Any] = {
        'action_id': action['action_id'],
        'block_id': block_id,
        'type': action['type'],
        'action_ts': f'{time.time():.6f}',
    }
    if action['type'] == 'button':
        clicked |= {'text': action['text'], 'value': action.get('value', '')}
    else:
        clicked |= {'selected_option': action['selected_option'], 'placeholder': action.get('placeholder')}
    return {
        'type': 'block_actions',
        'user': _user(user_id),
        'api_app_id': 'A0APP',
        'token': 'deprecated-verification-token',
        'container': {
            'type': 'message',
            'message_ts': message['ts'],
            'channel_id': message['channel'],
            'is_ephemeral': False,
        },
        'trigger_id': '1234567890.1234567890.abcdef0123456789abcdef0123456789',
        'team': {'id': 'T0TEAM', 'domain': 'example'},
        'enterprise': None,
        'is_enterprise_install': False,
        'channel': {'id': message['channel'], 'name': 'directmessage'},
        'message': {
            'type': 'message',
            'user': 'U0BOT',
            'ts': message['ts'],
            'bot_id': 'B0BOT',
            'app_id': 'A0APP',
            'text': message.get('text', ''),
            'team': 'T0TEAM',
            'blocks': message['blocks'],
        },
        'state': {'values': {}},
        'response_url': 'https://hooks.slack.com/actions/T0TEAM/1/abc',
        'actions': [clicked],
    }


def view_submission(view: dict[str, Any], user_id: str, values: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A `view_submission` payload of the modal `view` (as `views.open` was given it), with `values` as its state."""
    return {
        'type': 'view_submission',
        'team': {'id': 'T0TEAM', 'domain': 'example'},
        'user': _user(user_id),
        'api_app_id': 'A0APP',
        'token': 'deprecated-verification-token',
        'trigger_id': '1234567890.1234567890.fedcba9876543210fedcba9876543210',
        'view': {
            'id': 'V0TEST',
            'team_id': 'T0TEAM',
            'state': {'values': values},
            'hash': '1700000000.abcdef',
            'root_view_id': 'V0TEST',
            'app_id': 'A0APP',
            'bot_id': 'B0BOT',
            **view,
        },
        'response_urls': [],
        'is_enterprise_install': False,
        'enterprise': None,
    }


def checked_blocks(blocks: list[dict[str, Any]]) -> list[Block]:
    """`blocks` read by slack_sdk's Block Kit models, each valid (`validate_json`) and read back as it was written."""
    parsed = Block.parse_all(blocks)
    assert len(parsed) == len(blocks)
    for block, raw in zip(parsed, blocks, strict=True):
        block.validate_json()
        assert type(block) is not Block, f'slack_sdk does not know the block {raw}'
        assert _same(block.to_dict(), raw), (block.to_dict(), raw)
    return parsed


def checked_view(view: dict[str, Any]) -> View:
    """`view` read by slack_sdk's `View` model, valid and read back as it was written."""
    model = View(**view)
    model.validate_json()
    assert _same(model.to_dict(), view), (model.to_dict(), view)
    return model


def _same(written: Any, raw: Any) -> bool:
    """Whether the model's `to_dict` says what `raw` says (it drops only what is empty or a default)."""
    if isinstance(raw, dict):
        return isinstance(written, dict) and all(
            _same(written.get(k), v) for k, v in raw.items() if v not in (None, [], {}, False) or k in written
        )
    if isinstance(raw, list):
        return isinstance(written, list) and len(written) == len(raw) and all(map(_same, written, raw))
    return bool(written == raw)


async def post(app: Any, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """POST `body` with `headers` to the ASGI `app` over httpx."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://inbox.test') as client:
        return await client.post('/notify/slack', content=body, headers=headers)


def action_of(blocks: list[dict[str, Any]], action_id: str) -> tuple[str, dict[str, Any]]:
    """The block id and the element of the first element whose `action_id` is (or starts with) `action_id`."""
    for block in blocks:
        for element in block.get('elements', ()) if block['type'] == 'actions' else ():
            if element.get('action_id') == action_id or element.get('action_id', '').startswith(action_id + ':'):
                return block['block_id'], element
    raise AssertionError(f'no {action_id} in {blocks}')


def texts(blocks: list[dict[str, Any]]) -> list[str]:
    """Every text of `blocks`, as written (plain_text and mrkdwn alike), in order."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get('type') in ('plain_text', 'mrkdwn') and isinstance(value.get('text'), str):
                found.append(value['text'])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(blocks)
    return found


class _Quiet(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """`app` served by uvicorn on 127.0.0.1 until the block ends; its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    server = _Quiet(uvicorn.Config(app, log_level='warning', lifespan='off'))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(WAIT):
                while not server.started:
                    await anyio.sleep(0.01)
            yield f'http://127.0.0.1:{sock.getsockname()[1]}'
            server.should_exit = True
    finally:
        sock.close()
