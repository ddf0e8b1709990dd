"""The two example pages in a real Chromium, answered through their forms."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Page, expect
from ui_support import Served
from waits import WAIT

from pydantic_ai_ask_user import DECLINED

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context()
    context.set_default_timeout(WAIT * 1000)
    page = await context.new_page()
    errors: list[str] = []
    page.on('pageerror', lambda error: errors.append(str(error)))
    yield page
    await context.close()
    assert errors == []


@pytest.fixture(params=['ag_ui', 'vercel_ai'])
def app(request: pytest.FixtureRequest) -> Served:
    return request.getfixturevalue(f'{request.param}_app')


async def test_the_page_shows_the_question_and_the_answer_picked_reaches_the_agent(page: Page, app: Served) -> None:
    await page.goto(app.base)
    await expect(page.get_by_role('group', name='Region: Where should I deploy the service?')).to_be_visible()
    await page.get_by_label('US').check()
    await page.get_by_role('button', name='Answer').click()
    await expect(page.locator('#reply')).to_have_text('{"Region":["US"]}', timeout=WAIT * 1000)
    await expect(page.locator('#error')).to_have_text('')


async def test_the_persons_own_words_and_a_decline_go_through_the_page(page: Page, app: Served) -> None:
    await page.goto(app.base)
    await page.get_by_label('Other answer to Region').fill('Both, EU first')
    await page.get_by_role('button', name='Answer').click()
    await expect(page.locator('#reply')).to_have_text('{"Region":["Both, EU first"]}', timeout=WAIT * 1000)
    await page.goto(app.base)
    await page.get_by_role('button', name='Decline').click()
    await expect(page.locator('#reply')).to_have_text(DECLINED, timeout=WAIT * 1000)


async def test_a_refused_answer_is_shown_on_the_page_and_nothing_reaches_the_agent(page: Page, app: Served) -> None:
    await page.goto(app.base)
    await page.get_by_role('button', name='Answer').click()  # nothing picked: selects nothing
    await expect(page.locator('#error')).to_contain_text('selects nothing', timeout=WAIT * 1000)
    await expect(page.locator('#reply')).to_have_text('')
