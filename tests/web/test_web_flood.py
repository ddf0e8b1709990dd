"""Connection floods against the real servers: the person is still answered, and no traceback reaches the terminal.

Each server runs in a subprocess with its file limit lowered (`RLIMIT_NOFILE`), so that a few hundred
connections are a flood. The attackers are real sockets on 127.0.0.1 that connect, send half a request
and never finish it, some held, some reconnecting all the time. Before the server's own accept loop,
`ask-user ask --web` printed one asyncio traceback per failed accept (a quarter of a million of them,
93 MB, in 25 s) and the person's page took 20 s or more, or failed with a 500.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest
from waits import WAIT, launched, read_line
from web_support import answer_body, csrf_of

from pydantic_ai_ask_user._serving import ServerLimits
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio

FILE_LIMIT = 128
"""The file limit the attacked server runs with: 32 connections at most (`FILE_RESERVE` and room kept)."""

HELD = 300
"""How many half-open connections the attacker holds: more than the server could have files for."""

TESTS = Path(__file__).resolve().parents[1]

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
        }
    ]
}


class Attack:
    """Attackers on `port`: `HELD` connections that never finish their headers, and one thread reconnecting nonstop."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.stop = threading.Event()
        self.held: list[socket.socket] = []
        self.made = 0
        self.thread = threading.Thread(target=self._churn, daemon=True)

    def _half_open(self) -> socket.socket | None:
        sock = socket.socket()
        sock.settimeout(WAIT)
        try:
            sock.connect(('127.0.0.1', self.port))
            sock.sendall(b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never: ends')
        except OSError:
            sock.close()
            return None
        self.made += 1
        return sock

    def _churn(self) -> None:
        mine: list[socket.socket] = []
        while not self.stop.is_set():
            if (sock := self._half_open()) is not None:
                mine.append(sock)
            if len(mine) > 100:
                mine.pop(0).close()
        for sock in mine:
            sock.close()

    def __enter__(self) -> Attack:
        for _ in range(HELD):
            if (sock := self._half_open()) is not None:
                self.held.append(sock)
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.thread.join(WAIT)
        for sock in self.held:
            sock.close()


@pytest.fixture
def processes() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(*command: str, stderr: IO[str]) -> subprocess.Popen[str]:
        environment = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(TESTS / 'web'), str(TESTS)])}
        process = subprocess.Popen(
            launched(*command, file_limit=FILE_LIMIT),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=environment,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait_for(pattern: str, stderr: IO[str], process: subprocess.Popen[str]) -> re.Match[str]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        stderr.seek(0)
        if found := re.search(pattern, stderr.read()):
            return found
        if process.poll() is not None:
            break
        time.sleep(0.05)
    stderr.seek(0)
    raise AssertionError(f'no {pattern!r} on stderr (exit {process.poll()}): {stderr.read()[:2000]}')


def _assert_quiet(stderr: IO[str]) -> None:
    """What the flood left on the terminal: no traceback, and a few rate-limited lines at most."""
    stderr.seek(0)
    text = stderr.read()
    assert 'Traceback' not in text, text[:3000]
    assert len(text.splitlines()) <= 12, text[:3000]


def test_ask_web_answers_the_person_through_a_flood_without_a_traceback(
    tmp_path: Path, processes: Callable[..., subprocess.Popen[str]]
) -> None:
    questions = tmp_path / 'questions.json'
    questions.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    with (tmp_path / 'stderr').open('w+') as stderr:
        process = processes(
            sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'ask', '--web', str(questions), stderr=stderr
        )
        link = _wait_for(r'(http://\S+/login\S+)', stderr, process).group(1)
        with Attack(httpx.URL(link).port or 80) as attack, httpx.Client(follow_redirects=True, timeout=WAIT) as person:
            page = person.get(link)
            assert page.status_code == 200
            sent = person.post(str(page.url), data={'csrf': csrf_of(page.text), 'action': 'answer', 'q0': '1'})
            assert sent.status_code == 200
            out, _ = process.communicate(timeout=WAIT)
        assert attack.made > HELD  # the attack went on while the person answered
        assert process.returncode == 0
        assert json.loads(out) == {'Database': ['SQLite']}
        _assert_quiet(stderr)


def test_the_web_answerer_answers_the_person_through_a_flood_without_a_traceback(
    tmp_path: Path, processes: Callable[..., subprocess.Popen[str]]
) -> None:
    with (tmp_path / 'stderr').open('w+') as stderr:
        process = processes(sys.executable, str(TESTS / 'web' / 'flood_server.py'), stderr=stderr)
        assert process.stdout is not None
        started: dict[str, Any] = json.loads(read_line(process.stdout, 'the line saying the server serves'))
        token = {'authorization': f'Bearer {started["token"]}'}
        with (
            Attack(httpx.URL(started['base']).port or 80),
            httpx.Client(base_url=started['base'], timeout=WAIT) as person,
        ):
            listed = person.get('/api/requests', headers=token)
            assert [item['id'] for item in listed.json()['requests']] == [started['id']]
            sent = person.post(f'/api/requests/{started["id"]}/answer', headers=token, json=answer_body())
            assert sent.status_code == 200
            answered = json.loads(read_line(process.stdout, 'the line with the answer'))
        assert answered == {'Database': ['SQLite']}
        assert process.wait(WAIT) == 0
        _assert_quiet(stderr)


def test_ask_user_mcp_over_http_still_answers_through_a_flood_without_a_traceback(
    tmp_path: Path, processes: Callable[..., subprocess.Popen[str]]
) -> None:
    command = [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'mcp', '--http', '--port', '0', '--web']
    with (tmp_path / 'stderr').open('w+') as stderr:
        process = processes(*command, stderr=stderr)
        endpoint = _wait_for(r'MCP endpoint \(streamable HTTP\): (http://\S+)', stderr, process).group(1)
        initialize = {
            'jsonrpc': '2.0',
            'id': 1,
            'method': 'initialize',
            'params': {
                'protocolVersion': '2025-06-18',
                'capabilities': {},
                'clientInfo': {'name': 't', 'version': '1'},
            },
        }
        with Attack(httpx.URL(endpoint).port or 80), httpx.Client(timeout=WAIT) as client:
            reply = client.post(endpoint, json=initialize, headers={'accept': 'application/json, text/event-stream'})
        # An HTTP answer from the MCP app itself (whatever it decides about this client), not a reset or a 503.
        assert reply.status_code < 500
        assert process.poll() is None
        process.terminate()
        process.wait(WAIT)
        _assert_quiet(stderr)


# -- the limits, one by one, in this process ------------------------------------------------


def _port(base: str) -> int:
    return httpx.URL(base).port or 80


def _half_open(port: int, source: str = '127.0.0.1') -> socket.socket:
    sock = socket.create_connection(('127.0.0.1', port), timeout=WAIT, source_address=(source, 0))
    sock.sendall(b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed `sock`, as far as can be seen now (a short look, not a wait)."""
    sock.settimeout(0.05)
    try:
        return sock.recv(1) == b''
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


async def _eventually_closed(sock: socket.socket) -> None:
    with anyio.fail_after(WAIT):
        while not _closed_by_server(sock):
            await anyio.sleep(0.05)


async def test_past_the_limit_the_connection_waiting_longest_is_closed_first() -> None:
    app = create_app(QuestionHub(), access_token='secret')
    async with serve(app, limits=ServerLimits(max_connections=3)) as base:
        oldest, second, third = (_half_open(_port(base)) for _ in range(3))
        await anyio.sleep(0.2)  # in this order
        newest = _half_open(_port(base))
        await _eventually_closed(oldest)
        assert not any(_closed_by_server(sock) for sock in (second, third, newest))
        async with httpx.AsyncClient(base_url=base, headers={'authorization': 'Bearer secret'}) as person:
            assert (await person.get('/api/requests')).status_code == 200
        for sock in (second, third, newest):
            sock.close()


async def test_one_address_past_its_limit_loses_its_own_connections_not_anothers() -> None:
    app = create_app(QuestionHub(), access_token='secret')
    async with serve(app, limits=ServerLimits(max_connections_per_ip=2)) as base:
        other = [_half_open(_port(base), '127.0.0.2') for _ in range(2)]
        first, *rest = [_half_open(_port(base)) for _ in range(3)]
        await _eventually_closed(first)
        assert not any(_closed_by_server(sock) for sock in [*other, *rest])
        for sock in [*other, *rest]:
            sock.close()


async def test_over_the_limit_with_every_connection_busy_only_the_persons_request_is_served() -> None:
    app = create_app(QuestionHub(), access_token='secret', body_seconds=60.0)
    async with serve(app, limits=ServerLimits(max_connections=2)) as base:
        port = _port(base)
        # Two connections busy with a request whose body never comes (signed in: the app waits for it).
        head = (
            f'POST /api/requests/x/answer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer secret\r\n'
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{'
        )
        busy = [socket.create_connection(('127.0.0.1', port), timeout=WAIT) for _ in range(2)]
        for sock in busy:
            sock.sendall(head.encode())
        await anyio.sleep(0.5)
        async with httpx.AsyncClient(base_url=base) as stranger:
            refused = await stranger.get('/api/requests')
        async with httpx.AsyncClient(base_url=base, headers={'authorization': 'Bearer secret'}) as person:
            served = await person.get('/api/requests')
        for sock in busy:
            sock.close()
    assert refused.status_code == 503
    assert refused.headers['connection'] == 'close'
    assert served.status_code == 200
