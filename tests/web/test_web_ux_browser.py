"""In a real Chromium: a tab told that its question was answered elsewhere, and no missing icon."""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext, expect
from web_support import WAIT, asking

from pydantic_ai_ask_user import AskUserAnswer
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take


async def test_a_second_tab_is_told_when_the_question_is_answered_in_the_first(
    context: BrowserContext, web: WebAnswerer, live: str
) -> None:
    first, second = await context.new_page(), await context.new_page()
    errors: list[str] = []
    second.on('pageerror', lambda error: errors.append(str(error)))
    async with asking(web) as job:
        await first.goto(web.login_url(live, job.request.id))
        await second.goto(f'{live}requests/{job.request.id}')
        await second.locator('#q0-custom').fill('my own words')
        await first.get_by_label('SQLite', exact=True).check()
        await first.get_by_role('button', name='Submit').click()
        await expect(first.locator('#confirmation')).to_be_visible()
        assert (await job.response()).answers == (AskUserAnswer('Database', ('SQLite',)),)
    notice = second.locator('#answered')
    await expect(notice).to_be_visible()
    await expect(notice).to_contain_text('answered in another tab or by someone else')
    await expect(second.get_by_role('button', name='Submit')).to_be_disabled()
    # What the person typed stays on the page; nothing is sent and nothing is lost.
    await expect(second.locator('#q0-custom')).to_have_value('my own words')
    await expect(first.locator('#answered')).to_have_count(0)
    assert errors == []


async def test_the_tab_that_answers_is_not_told_it_was_answered_elsewhere(
    context: BrowserContext, web: WebAnswerer, live: str
) -> None:
    page = await context.new_page()
    async with asking(web) as job:
        await page.goto(web.login_url(live, job.request.id))
        await expect(page.locator('#answer-form')).to_be_visible()
        await page.get_by_label('SQLite', exact=True).check()
        await page.get_by_role('button', name='Submit').click()
        await expect(page.locator('#confirmation')).to_be_visible()
        await job.response()
    assert await page.locator('#answered').count() == 0


async def test_the_pages_ask_for_no_missing_icon(context: BrowserContext, web: WebAnswerer, live: str) -> None:
    page = await context.new_page()
    missing: list[str] = []
    page.on('response', lambda response: missing.append(response.url) if response.status == 404 else None)
    await page.goto(web.login_url(live))
    await expect(page.locator('#live-status')).to_contain_text('appear here')
    icon = await page.evaluate("fetch('/favicon.ico').then((r) => r.status)")
    assert icon == 200
    assert missing == []
