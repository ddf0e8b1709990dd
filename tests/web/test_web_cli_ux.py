"""`ask-user ask --web` around its answer: it keeps serving a moment, tells open pages it has finished,
prints a new one-time link on Enter, and prints a reachable link on a wildcard host."""

from __future__ import annotations

import io
import json
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio
import httpx
import pytest
from playwright.async_api import BrowserContext, expect
from web_support import WAIT, ask_one, bearer, csrf_of, single

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse
from pydantic_ai_ask_user._cli.web_answerer import open_web_answerer
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite', 'description': 'A local file.'}],
        }
    ]
}


# -- ask-user ask --web, as a process ----------------------------------------------------------


class Lines:
    """A stream of a process read in a thread, so a test waits for a line with a deadline instead of forever."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self._lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            for line in iter(stream.readline, ''):
                self._lines.put(line)
            self._lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        self.seen: list[str] = []

    def wait_for(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + WAIT
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if found := re.search(pattern, line):
                return found
        raise AssertionError(f'no line matching {pattern!r}; seen: {self.seen!r}')


@dataclass
class Cli:
    process: subprocess.Popen[str]
    out: Lines
    err: Lines

    def link(self) -> str:
        return self.err.wait_for(r'(http://\S+)').group(1)


@pytest.fixture
def question_file(tmp_path: Path) -> Path:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    return path


@pytest.fixture
def cli() -> Iterator[list[Cli]]:
    started: list[Cli] = []
    yield started
    for one in started:
        if one.process.poll() is None:
            one.process.kill()
        one.process.wait()


def start(started: list[Cli], *args: str) -> Cli:
    process = subprocess.Popen(
        [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'ask', '--web', *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    one = Cli(process, Lines(process.stdout), Lines(process.stderr))
    started.append(one)
    return one


def sse_events(client: httpx.Client, url: str) -> list[str]:
    """The event names of a stream, until the server ends it."""
    names: list[str] = []
    with client.stream('GET', url, headers={'accept': 'text/event-stream'}) as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith('event:'):
                names.append(line.split(':', 1)[1].strip())
    return names


def test_ask_web_prints_the_answer_at_once_then_keeps_serving_and_ends_the_inbox_stream_with_finished(
    question_file: Path, cli: list[Cli]
) -> None:
    run = start(cli, str(question_file))
    with httpx.Client(follow_redirects=True, timeout=WAIT) as browser:
        page = browser.get(run.link())
        reply = browser.post(str(page.url), data={'csrf': csrf_of(page.text), 'action': 'answer', 'q0': '1'})
        assert reply.status_code == 200
        # The answer is on stdout while the server still serves "Back to the waiting questions".
        assert json.loads(run.out.wait_for(r'^\{.*\}$').group(0)) == {'Database': ['SQLite']}
        assert run.process.poll() is None
        inbox = browser.get(str(page.url.join('/')))
        assert inbox.status_code == 200
        assert 'This server has finished; you can close this tab.' in inbox.text
        # An open inbox's stream ends with `finished` (the page then stops reconnecting).
        assert sse_events(browser, str(page.url.join('/api/events'))) == ['finished']
    assert run.process.wait(timeout=WAIT) == 0


def test_enter_on_stdin_prints_a_new_one_time_link_for_a_person_whose_link_was_used(
    question_file: Path, cli: list[Cli]
) -> None:
    run = start(cli, str(question_file))
    link = run.link()
    run.err.wait_for('press Enter')
    with httpx.Client(timeout=WAIT) as first:
        assert first.get(link).status_code == 303
    with httpx.Client(timeout=WAIT) as second:
        refused = second.get(link)
        assert refused.status_code == 403
        assert 'press Enter in the terminal' in refused.text
        assert run.process.stdin is not None
        run.process.stdin.write('\n')
        run.process.stdin.flush()
        new = run.link()
        assert new != link
        assert second.get(new).status_code == 303


def test_a_wildcard_host_prints_a_reachable_link_and_says_it_listens_on_all_interfaces(
    question_file: Path, cli: list[Cli]
) -> None:
    run = start(cli, '--host', '0.0.0.0', str(question_file))
    link = run.link()
    assert link.startswith('http://127.0.0.1:'), link
    assert any('all interfaces' in line for line in run.err.seen), run.err.seen
    with httpx.Client(timeout=WAIT) as client:
        assert client.get(link).status_code == 303


async def test_serve_on_a_wildcard_host_yields_a_loopback_url() -> None:
    web = WebAnswerer()
    async with serve(web.app, host='0.0.0.0') as base:
        assert base.startswith('http://127.0.0.1:')
        async with httpx.AsyncClient(timeout=WAIT) as client:
            assert (await client.get(base + 'api/requests', headers=bearer(web))).status_code == 200


# -- the same in a real Chromium ----------------------------------------------------------------


@pytest.mark.browser
async def test_after_the_answer_ask_web_tells_open_pages_it_has_finished_and_they_stop_reconnecting(
    context: BrowserContext,
) -> None:
    out = io.StringIO()
    request = ask_one(single())
    answered: list[AskUserResponse] = []

    async def ask_web() -> None:
        # A linger far longer than the test: the test ends it (as the linger's end would) once the pages have
        # been checked while it lingers, so the test does not sleep through it on a loaded machine.
        async with open_web_answerer(out=out, linger_seconds=WAIT * 10) as answerer:
            answered.append(await answerer(request))

    async with anyio.create_task_group() as group:
        group.start_soon(ask_web)
        with anyio.fail_after(WAIT):
            while not (found := re.search(r'(http://\S+)', out.getvalue())):
                await anyio.sleep(0.01)
        link = found.group(1)
        form, inbox = await context.new_page(), await context.new_page()
        await form.goto(link)
        await inbox.goto(re.sub(r'/login\?.*', '/', link))
        status = inbox.locator('#live-status')
        await expect(status).to_contain_text('appear here')
        await form.get_by_label('SQLite', exact=True).check()
        await form.get_by_role('button', name='Submit').click()
        await expect(form.locator('#confirmation')).to_be_visible()
        await expect(status).to_have_text('This server has finished; you can close this tab.')
        # While it lingers, "Back to the waiting questions" still works and says the same.
        await form.get_by_role('link', name='Back to the waiting questions').click()
        await expect(form.locator('#live-status')).to_have_text('This server has finished; you can close this tab.')
        group.cancel_scope.cancel()  # the linger ends: the server closes
    assert answered[0].answers == (AskUserAnswer('Database', ('SQLite',)),)
    # The server is gone; a page still reconnecting would say so within its retry interval.
    await inbox.wait_for_timeout(4000)  # a negative check: a page that reconnects would say so by then
    await expect(status).to_have_text('This server has finished; you can close this tab.')
    await expect(form.locator('#live-status')).to_have_text('This server has finished; you can close this tab.')
