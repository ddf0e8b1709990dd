"""The notifier: what its channels cost to import, and how many messages a second it sends.

Import cost: a fresh interpreter importing `pydantic_ai_ask_user.notify` (the notifier, e-mail and Apprise's channel
class, with neither library), `pydantic_ai_ask_user.notify.slack` (slack_sdk and Starlette), and Apprise (`import
apprise`, then an `AppriseChannel` and its first URL, which loads Apprise's plugins), each beside `python -c "import
pydantic"` in the same round; the figure is the median of the per-round ratios.

Messages a second: `Notifier` over the in-process hub with as many waiting questions as people (one each, so no
digest joins them), through a channel that only counts (the notifier's own cost, with the in-memory ledger and the
SQLite one), through `EmailChannel` to a local aiosmtpd server, and through `SlackChannel` to a local server that
answers Slack's Web API. There is no floor to these: they are printed as they are.
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.quick import sized

ROUNDS = sized(7, 1)
"""How many rounds of fresh interpreters the import figures take the median of."""

PEOPLE = sized(2000, 10)
"""How many questions (and people, one each) the counting channel is given."""

DELIVERED = sized(200, 5)
"""How many messages go to the SMTP server and to the Slack server."""

GOAL_NOTIFY_OVER_PACKAGE = 1.25
"""Goal: `import pydantic_ai_ask_user.notify` costs at most this many times `import pydantic_ai_ask_user` (the
package's own models, which every front end loads): the notifier and its stdlib channels add little."""

GOAL_NOTIFIER_RATE = 1000.0
"""Goal: the notifier alone (a channel that only counts, the in-memory ledger) tells at least this many people a
second: it is never what holds a message back."""

IMPORTS = {
    'pydantic_ai_ask_user.notify': 'import pydantic_ai_ask_user.notify',
    'pydantic_ai_ask_user.notify.slack (slack_sdk, Starlette)': 'import pydantic_ai_ask_user.notify.slack',
    'apprise, an AppriseChannel and its first URL': (
        'import apprise; from pydantic_ai_ask_user.notify import AppriseChannel; AppriseChannel(); '
        "apprise.Apprise().add('json://127.0.0.1:9/x')"
    ),
}
"""What each import figure runs in a fresh interpreter."""


def _seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, '-W', 'ignore', '-c', code], check=True, capture_output=True, timeout=300)
    return time.perf_counter() - started


def _imports() -> None:
    ratios: dict[str, list[float]] = {name: [] for name in IMPORTS}
    floors: list[float] = []
    over_package: list[float] = []
    for _ in range(ROUNDS):
        floor = _seconds('import pydantic')
        floors.append(floor)
        package = _seconds('import pydantic_ai_ask_user, pydantic_ai_ask_user.store')
        for name, code in IMPORTS.items():
            ratios[name].append(_seconds(code) / floor)
        over_package.append(_seconds(IMPORTS['pydantic_ai_ask_user.notify']) / package)
    print(f'import cost, beside python -c "import pydantic" (median {statistics.median(floors) * 1000:.0f} ms):')
    for name, figures in ratios.items():
        print(f'  {name}: {statistics.median(figures):.2f}x (per-round {min(figures):.2f}x-{max(figures):.2f}x)')
    median = statistics.median(over_package)
    verdict = 'meets' if median <= GOAL_NOTIFY_OVER_PACKAGE else 'misses'
    print(
        f'  notify beside import pydantic_ai_ask_user and its store contract: {median:.2f}x '
        f'({verdict} the <= {GOAL_NOTIFY_OVER_PACKAGE}x goal)'
    )


class _Counting:
    """A channel that only counts what it is given: the notifier's own cost."""

    name = 'count'

    def __init__(self) -> None:
        self.sent = 0

    def reaches(self, recipient: Any) -> bool:
        return True

    async def send(self, recipient: Any, items: Sequence[Any], links: Any) -> Mapping[str, str]:
        self.sent += 1
        return {}


async def _rate(channel: Any, people: int, ledger: Any = None, *, wanted: int | None = None) -> float:
    """Messages a second through `channel`, for `people` questions to as many people."""
    from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
    from pydantic_ai_ask_user.hub import QuestionHub
    from pydantic_ai_ask_user.notify import InboxLinks, Notifier, Recipient, StaticDirectory

    hub = QuestionHub()
    question = Question(
        header='Refund',
        question='Refund order 1042?',
        options=(QuestionOption(label='Yes'), QuestionOption(label='No')),
    )
    names = [f'person-{n}' for n in range(people)]
    recipients = [Recipient(name, email=f'{name}@example.com', slack_user=f'U{n:08d}') for n, name in enumerate(names)]
    kept: dict[str, Any] = {} if ledger is None else {'ledger': ledger}
    notifier = Notifier(
        hub,
        channels=[channel],
        directory=StaticDirectory(recipients),
        links=InboxLinks('https://inbox.example/', key=b'k' * 32),
        gather_seconds=0,
        digest_seconds=0,
        concurrency=8,
        **kept,
    )
    asks = [
        asyncio.ensure_future(hub.ask(replace(AskUserRequest(questions=(question,)), audience=(name,))))
        for name in names
    ]
    while len(hub) < people:
        await asyncio.sleep(0.01)
    started = time.perf_counter()
    await notifier.sync()
    await notifier.drain()
    elapsed = time.perf_counter() - started
    for ask in asks:
        ask.cancel()
    await asyncio.gather(*asks, return_exceptions=True)
    return (wanted or people) / elapsed


def _smtp() -> tuple[Any, int, list[int]]:
    from aiosmtpd.controller import Controller

    received = [0]

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            received[0] += 1
            return '250 OK'

    with socket.socket() as probe:  # a free port: aiosmtpd's controller cannot be given port 0
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    controller = Controller(Handler(), hostname='127.0.0.1', port=port)
    controller.start()
    return controller, port, received


def _slack() -> tuple[ThreadingHTTPServer, str]:
    counter = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get('Content-Length') or 0))
            counter[0] += 1
            body = json.dumps({'ok': True, 'channel': 'D0', 'ts': f'{counter[0]}.0001'}).encode()
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f'http://127.0.0.1:{server.server_address[1]}/api/'


async def _rates() -> None:
    from pydantic_ai_ask_user import Person
    from pydantic_ai_ask_user.notify import EmailChannel, SQLiteLedger
    from pydantic_ai_ask_user.notify.slack import SlackChannel

    print(f'messages a second, {PEOPLE:,} questions to as many people (no digest joins them):')
    alone = await _rate(_Counting(), PEOPLE)
    verdict = 'meets' if alone >= GOAL_NOTIFIER_RATE else 'misses'
    print(
        f'  the notifier alone (a channel that counts), in-memory ledger: {alone:,.0f}/s '
        f'({verdict} the >= {GOAL_NOTIFIER_RATE:,.0f}/s goal)'
    )
    with tempfile.TemporaryDirectory() as directory:
        ledger = SQLiteLedger(Path(directory) / 'ledger.sqlite')
        rate = await _rate(_Counting(), PEOPLE, ledger)
        ledger.close()
    print(f'  the notifier alone, SQLite ledger (each entry committed): {rate:,.0f}/s')
    controller, port, received = _smtp()
    try:
        rate = await _rate(EmailChannel('127.0.0.1', port, sender='inbox@example.com'), DELIVERED)
    finally:
        controller.stop()
    print(f'  EmailChannel to a local aiosmtpd server, {received[0]:,} delivered: {rate:,.0f}/s')
    server, url = _slack()
    try:
        slack = SlackChannel(
            token='xoxb-bench', signing_secret='s' * 32, base_url=url, person_for={'U0': Person('person-0')}
        )
        rate = await _rate(slack, DELIVERED)
    finally:
        server.shutdown()
        server.server_close()
    print(f'  SlackChannel to a local Web API server: {rate:,.0f}/s')


def main() -> None:
    _imports()
    asyncio.run(_rates())


if __name__ == '__main__':
    main()
