"""The docs' FastAPI application, served by the real uvicorn, driven by Chromium at phone and desktop widths.

The example is taken from docs/answerers/web.md as written, saved as `app.py`, and run by `uvicorn.run('app:api')` in
a process of its own, with its signal handlers: the shutdown test sends it a real SIGTERM mid-question.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from playwright.async_api import Browser, Page, expect
from pytest_examples import find_examples
from web_support import WAIT, Served, served

from pydantic_ai_ask_user import TIMED_OUT, WITHDRAWN

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

WEB_PAGE = Path(__file__).resolve().parents[2] / 'docs' / 'answerers' / 'web.md'
"""The web inbox's page of the documentation site, where the example is."""

LAUNCHER = """\
import asyncio
import faulthandler
import logging
import signal
import sys

import uvicorn


def dump_tasks(signum, frame):
    # Where a server that does not stop is stuck: every thread, and every task of the running loop.
    faulthandler.dump_traceback(all_threads=True)
    loop = asyncio._get_running_loop()
    for task in [] if loop is None else asyncio.all_tasks(loop):
        print('task', task, file=sys.stderr)
        task.print_stack(file=sys.stderr)
    print('dumped', file=sys.stderr, flush=True)


signal.signal(signal.SIGUSR1, dump_tasks)
logging.basicConfig(level=logging.INFO, format='%(name)s %(levelname)s %(message)s')
uvicorn.run('app:api', host='127.0.0.1', port=0)
"""
"""How a user starts it (`uvicorn app:api`), with the application's own log lines shown too, and (SIGUSR1) a dump of
where it stands, for a shutdown that does not end."""

WIDTHS = [pytest.param(390, id='phone'), pytest.param(1280, id='desktop')]


def readme_app() -> str:
    (example,) = [example for example in find_examples(str(WEB_PAGE)) if 'FastAPI(lifespan=lifespan)' in example.source]
    return example.source


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Served]:
    (tmp_path / 'app.py').write_text(readme_app(), encoding='utf-8')
    (tmp_path / 'launch.py').write_text(LAUNCHER, encoding='utf-8')
    async with served([sys.executable, 'launch.py'], cwd=tmp_path) as server:
        yield server


async def start_run(page: Page, server: Served) -> dict[str, Any]:
    """`POST /runs` from the page, and follow the run's events; returns what the request returned at once."""
    # A page of the application's origin outside the inbox, whose security policy would refuse the test's scripts.
    await page.goto(server.base + 'openapi.json')
    started: dict[str, Any] = await page.evaluate(
        """async () => {
            const reply = await fetch('/runs?task=' + encodeURIComponent('Migrate the orders database'), {method: 'POST'});
            const run = await reply.json();
            window.seen = [];
            const events = new EventSource(run.events);
            for (const kind of ['question', 'answered', 'withdrawn', 'output', 'failed']) {
                events.addEventListener(kind, (event) => window.seen.push(JSON.parse(event.data)));
            }
            events.addEventListener('output', () => events.close());
            return run;
        }"""
    )
    return started


async def seen(page: Page, kind: str) -> dict[str, str]:
    await page.wait_for_function(f'window.seen.some((event) => event.kind === {kind!r})', timeout=WAIT * 1000)
    events: list[dict[str, str]] = await page.evaluate('window.seen')
    return next(event for event in events if event['kind'] == kind)


@asynccontextmanager
async def asked(
    browser: Browser, server: Served, width: int
) -> AsyncIterator[tuple[Page, Page, dict[str, Any], dict[str, str]]]:
    """A run started over HTTP, its question asked: the page following it, another signed in, the run, the question."""
    context = await browser.new_context(viewport={'width': width, 'height': 844})
    context.set_default_timeout(WAIT * 1000)
    try:
        follower, answerer = await context.new_page(), await context.new_page()
        run = await start_run(follower, server)
        question = await seen(follower, 'question')
        # The one-time link signs this browser in; the question's page comes from the run's own event.
        await answerer.goto(server.base + run['login'].lstrip('/'))
        yield follower, answerer, run, question
    finally:
        await context.close()


@pytest.mark.parametrize('width', WIDTHS)
async def test_a_run_started_over_http_asks_in_the_inbox_and_the_browser_follows_it_to_the_answer(
    browser: Browser, server: Served, width: int
) -> None:
    async with asked(browser, server, width) as (follower, answerer, run, question):
        assert set(run) == {'run_id', 'events', 'login'}
        inbox_link = answerer.get_by_role('link', name='Window')
        await expect(inbox_link).to_be_visible()
        await answerer.goto(server.base + question['page'].lstrip('/'))
        await answerer.get_by_label('Tonight', exact=True).check()
        await answerer.get_by_role('button', name='Submit').click()
        await expect(answerer.locator('#confirmation')).to_be_visible()
        await seen(follower, 'answered')
        assert (await seen(follower, 'output'))['text'] == '{"Window":["Tonight"]}'
        # Each request makes its own link: the one already used signs nobody in.
        assert (await start_run(follower, server))['login'] != run['login']


@pytest.mark.parametrize('width', WIDTHS)
async def test_a_shutdown_mid_question_withdraws_it_and_the_model_is_told_withdrawn_not_timed_out(
    browser: Browser, server: Served, width: int
) -> None:
    async with asked(browser, server, width) as (_, answerer, run, question):
        await answerer.goto(server.base + question['page'].lstrip('/'))
        await expect(answerer.locator('#answer-form')).to_be_visible()
        # The question is open in a browser and followed by another page: the server is told to stop.
        server.process.send_signal(signal.SIGTERM)
        # AskUser's timeout is 600 s: had the shutdown waited for it, this bound would run out first.
        with anyio.move_on_after(min(WAIT, 300)):
            await server.process.wait()
        if server.process.returncode is None:  # say where it is stuck, then fail
            server.process.send_signal(signal.SIGUSR1)
            with anyio.move_on_after(30):
                while 'dumped' not in server.log:
                    await anyio.sleep(0.1)
            pytest.fail(f'the server did not stop within {min(WAIT, 300):.0f} s of SIGTERM:\n{server.log}')
        returncode = server.process.returncode
    # uvicorn ends by re-raising the signal it caught, as a process killed by it would end.
    assert returncode in (0, -signal.SIGTERM), server.log
    log = server.log
    assert f'run {run["run_id"]} finished: {WITHDRAWN}' in log, log
    assert TIMED_OUT not in log


async def test_a_one_time_login_code_never_reaches_the_servers_access_log(browser: Browser, server: Served) -> None:
    context = await browser.new_context(viewport={'width': 1280, 'height': 844})
    context.set_default_timeout(WAIT * 1000)
    try:
        page = await context.new_page()
        run = await start_run(page, server)
        await page.goto(server.base + run['login'].lstrip('/'))
        await expect(page.get_by_role('link', name='Window')).to_be_visible()  # signed in: the code worked
        # A code hidden in another spelling of its name, as the app reads it, is hidden too.
        other = await context.new_page()
        await other.goto(server.base + 'ask/login?c%6Fde=' + 'x' * 20 + 'Secret&next=')
    finally:
        await context.close()
    code = parse_qs(urlsplit(run['login']).query)['code'][0]
    with anyio.fail_after(WAIT):
        while server.log.count('GET /ask/login?') < 2:
            await anyio.sleep(0.05)
    assert 'GET /ask/login?code=REDACTED HTTP/1.1" 303' in server.log
    assert code not in server.log
    assert 'Secret' not in server.log
