"""In a real Chromium: the tab title counts waiting questions (and tool calls waiting for approval), a browser notification, the time left, notes,
the recommended option, and the pages in Korean."""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect
from web_support import ARTIFACTS, WAIT, ask_one, asking, single

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

RECORD_NOTIFICATIONS = """
(() => {
  window.__notifications = [];
  window.__permissionAsked = 0;
  const Real = window.Notification;
  let permission = Real ? Real.permission : 'default';
  function Recording(title, options) {
    window.__notifications.push({ title: title, body: options && options.body });
    try { return new Real(title, options); } catch (e) { return { close() {} }; }
  }
  Object.defineProperty(Recording, 'permission', { get: () => permission });
  Recording.requestPermission = function () {
    window.__permissionAsked += 1;
    permission = window.__grantOnAsk ? 'granted' : Real.permission;
    return Promise.resolve(permission);
  };
  window.Notification = Recording;
  // As if the person were in another window: notifications are for a tab they are not looking at.
  document.hasFocus = () => false;
})();
"""
"""Wraps `window.Notification` so the test sees each one made, and the permission request."""


@pytest.fixture
async def watched(browser: Browser, live: str) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(viewport={'width': 900, 'height': 900})
    context.set_default_timeout(WAIT * 1000)
    await context.grant_permissions(['notifications'], origin=live.rstrip('/'))
    await context.add_init_script(RECORD_NOTIFICATIONS)
    yield context
    await context.close()


async def notifications(page: Page) -> list[dict[str, Any]]:
    return await page.evaluate('window.__notifications')


async def test_the_inbox_title_counts_waiting_questions_and_a_new_one_is_notified(
    watched: BrowserContext, web: WebAnswerer, live: str
) -> None:
    page = await watched.new_page()
    errors: list[str] = []
    page.on('pageerror', lambda error: errors.append(str(error)))
    await page.goto(web.login_url(live))
    await expect(page).to_have_title('Waiting questions – Questions from your agent')
    await expect(page.locator('#live-status')).to_have_text('New questions appear here as they are asked.')
    await expect(page.locator('#notify-me')).to_be_hidden()
    await expect(page.locator('#notify-state')).to_have_text('Notifications are on')
    async with asking(web, ask_one(single('Database'))) as first:
        await expect(page).to_have_title('(1) Waiting questions – Questions from your agent')
        async with asking(web, ask_one(single('Cache'))):
            await expect(page).to_have_title('(2) Waiting questions – Questions from your agent')
            await page.wait_for_function('window.__notifications.length === 2')
            assert await notifications(page) == [
                {'title': 'A question is waiting for you', 'body': 'Database'},
                {'title': 'A question is waiting for you', 'body': 'Cache'},
            ]
            await web.hub.respond(first.request.id, AskUserResponse(cancelled=True))
            await expect(page).to_have_title('(1) Waiting questions – Questions from your agent')
        await expect(page).to_have_title('Waiting questions – Questions from your agent')
    assert errors == []


async def test_the_form_page_title_counts_every_waiting_question_too(
    watched: BrowserContext, web: WebAnswerer, live: str
) -> None:
    page = await watched.new_page()
    async with asking(web) as job:
        await page.goto(web.login_url(live, job.request.id))
        await expect(page).to_have_title('(1) Database – Questions from your agent')
        async with asking(web, ask_one(single('Cache'))):
            await expect(page).to_have_title('(2) Database – Questions from your agent')
            await page.wait_for_function('window.__notifications.length === 1')
            assert (await notifications(page))[0]['body'] == 'Cache'
        await expect(page).to_have_title('(1) Database – Questions from your agent')


async def test_notify_me_asks_for_permission_on_click(browser: Browser, web: WebAnswerer, live: str) -> None:
    context = await browser.new_context()
    context.set_default_timeout(WAIT * 1000)
    await context.add_init_script(RECORD_NOTIFICATIONS + 'window.__grantOnAsk = true;')
    try:
        page = await context.new_page()
        await page.goto(web.login_url(live))
        button = page.get_by_role('button', name='Notify me')
        await expect(button).to_be_visible()
        assert await page.evaluate('window.__permissionAsked') == 0  # never without the person's click
        await button.click()
        await expect(page.locator('#notify-state')).to_have_text('Notifications are on')
        await expect(button).to_be_hidden()
        assert await page.evaluate('window.__permissionAsked') == 1
    finally:
        await context.close()


async def test_the_time_left_counts_down_to_time_is_up(watched: BrowserContext, web: WebAnswerer, live: str) -> None:
    page = await watched.new_page()
    request = AskUserRequest(questions=(single(),), deadline=time.time() + 4)
    async with asking(web, request) as job:
        await page.goto(web.login_url(live, job.request.id))
        left = page.locator('#deadline time')
        await expect(left).to_have_text('Time is up')
        await page.goto(f'{live}')
        await expect(page.locator('#pending .time-left')).to_have_text('Time is up')


async def test_in_korean_the_recommended_option_has_the_focus_and_a_note_is_counted_and_sent(
    browser: Browser, web: WebAnswerer, live: str
) -> None:
    context = await browser.new_context(locale='ko-KR')
    context.set_default_timeout(WAIT * 1000)
    question = single()
    request = AskUserRequest(
        questions=(
            Question(
                header=question.header, question=question.question, options=question.options, recommended='SQLite'
            ),
        ),
        notes=True,
        deadline=time.time() + 600,
    )
    try:
        page = await context.new_page()
        errors: list[str] = []
        page.on('pageerror', lambda error: errors.append(str(error)))
        async with asking(web, request) as job:
            await page.goto(web.login_url(live, job.request.id))
            assert await page.get_attribute('html', 'lang') == 'ko'
            await expect(page.locator('h1')).to_have_text('에이전트가 질문 1개를 보냈습니다')
            await expect(page.locator('#deadline')).to_contain_text('남은 시간:')
            await expect(page.locator('#q0-o1')).to_be_focused()
            await expect(page.locator('#q0-o1')).not_to_be_checked()
            await expect(page.locator('#q0-o1-r')).to_have_text('추천')
            await page.get_by_role('button', name='보내기').click()
            await expect(page.locator('#error-summary')).to_contain_text('선택지 중 하나를 고르세요.')
            await page.get_by_label('SQLite', exact=True).check()
            await page.get_by_label('메모 (선택)').fill('백업 후에')
            await expect(page.locator('#q0-note-count')).to_have_text('5 / 2000')
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / 'web-form-ko.png'), full_page=True)
            await page.get_by_role('button', name='보내기').click()
            await expect(page.locator('#confirmation')).to_contain_text('메모: 백업 후에')
            assert (await job.response()).answers == (AskUserAnswer('Database', ('SQLite',), note='백업 후에'),)
        assert errors == []
    finally:
        await context.close()


async def test_the_title_counts_tool_calls_waiting_for_approval_beside_the_questions(
    watched: BrowserContext, web: WebAnswerer, live: str
) -> None:
    deploy = PendingApproval('wait-1', 'call_0', 'deploy_to', {'env': 'production'})
    title = 'Waiting questions – Questions from your agent'
    page = await watched.new_page()
    async with anyio.create_task_group() as waits:
        waits.start_soon(functools.partial(web.hub.ask_wait, 'wait-1', [], [deploy], timeout=None))
        await page.goto(web.login_url(live))
        await expect(page).to_have_title(f'(1) {title}')  # drawn by the server: one approval, no question
        await expect(page.locator('#total')).to_be_hidden()  # the line under the list counts questions only
        async with asking(web, ask_one(single('Cache'))) as job:
            await expect(page).to_have_title(f'(2) {title}')
            await expect(page.locator('#total')).to_have_text('1 question waiting')
            form = await watched.new_page()
            await form.goto(f'{live}requests/{job.request.key}')
            await expect(form).to_have_title('(2) Cache – Questions from your agent')
            await web.hub.decide(deploy.key, ApprovalDecision(approved=True))
            await expect(page).to_have_title(f'(1) {title}')  # the event took one approval off
            await expect(form).to_have_title('(1) Cache – Questions from your agent')
            await form.close()
        await expect(page).to_have_title(title)
