"""Fixtures for the web answerer's tests: an answerer, a client over ASGI, a live server, a real Chromium."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Dialog, async_playwright
from web_support import WAIT, Tab, asgi_client, log_in

from pydantic_ai_ask_user.web import WebAnswerer, serve

CHROMIUM = shutil.which('chromium') or '/usr/bin/chromium'
"""Debian's Chromium, installed by `scripts/bootstrap.sh test`; Playwright's own download cannot work offline."""

CHROMIUM_ARGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
]
"""The closed network refuses Chromium's background connections; these keep it from trying."""


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    # Module scope, so that one Chromium serves every browser test of a module.
    return 'asyncio'


@pytest.fixture
def web() -> WebAnswerer:
    return WebAnswerer()


@pytest.fixture
async def client(web: WebAnswerer) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(web) as client:
        await log_in(client, web)
        yield client


@pytest.fixture
async def live(web: WebAnswerer) -> AsyncIterator[str]:
    """The answerer's app served by uvicorn on 127.0.0.1 and a free port; yields the base URL."""
    async with serve(web.app) as base:
        yield base


@pytest.fixture(scope='module')
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    """A fresh browser context (its own cookies), for tests that open several tabs."""
    context = await browser.new_context(viewport={'width': 900, 'height': 900})
    context.set_default_timeout(WAIT * 1000)
    yield context
    await context.close()


@pytest.fixture
async def tab(browser: Browser) -> AsyncIterator[Tab]:
    context = await browser.new_context(viewport={'width': 900, 'height': 900})
    context.set_default_timeout(20_000)
    page = await context.new_page()
    seen = Tab(page)

    async def dismiss(dialog: Dialog) -> None:
        seen.dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on('dialog', dismiss)
    page.on('pageerror', lambda error: seen.errors.append(str(error)))
    yield seen
    await context.close()


@pytest.fixture
async def two_people(browser: Browser) -> AsyncIterator[tuple[BrowserContext, BrowserContext]]:
    """Two browser contexts, each with its own cookies: two people (alice's first) at one inbox."""
    alice = await browser.new_context(viewport={'width': 900, 'height': 900})
    bob = await browser.new_context(viewport={'width': 900, 'height': 900})
    for context in (alice, bob):
        context.set_default_timeout(WAIT * 1000)
    yield alice, bob
    await alice.close()
    await bob.close()
