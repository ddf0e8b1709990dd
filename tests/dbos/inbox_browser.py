"""Chromium on a durable store's inbox, signed in by header, for the approval tests of this directory.

`tests/web`'s browser fixtures belong to that directory's conftest; these tests open a browser of their own for
each test (their workers and store come first), launched as the web tests launch it.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from playwright.async_api import Browser, Page, async_playwright
from starlette.requests import Request
from waits import WAIT

from pydantic_ai_ask_user import Person

CHROMIUM = shutil.which('chromium') or '/usr/bin/chromium'
"""Debian's Chromium, as the web tests launch it (tests/web/conftest.py)."""


def authorize(request: Request) -> Person | bool:
    """`x-user: NAME` signs in as NAME; `admin` sees every item."""
    name = request.headers.get('x-user')
    if not name:
        return False
    return Person(name, sees_all=name == 'admin')


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """A headless Chromium for one test, closed after it."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=['--no-sandbox'])
        try:
            yield browser
        finally:
            await browser.close()


async def page_of(browser: Browser, who: str, **options: Any) -> Page:
    """A new page in a context of its own, signed in as `who`, whose waits are bounded by `WAIT`."""
    context = await browser.new_context(extra_http_headers={'x-user': who}, **options)
    context.set_default_timeout(WAIT * 1000)
    return await context.new_page()
