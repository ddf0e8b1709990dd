"""How the pages look in a real Chromium: Korean wraps between words, headers as written, a phone screen."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Page, expect
from web_support import ARTIFACTS, WAIT, Record, RecordingStore, Tab, ask_one, asking, single

from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.web import WebAnswerer, create_app, serve

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take

KOREAN = (
    '데이터베이스 마이그레이션을 어느 환경에서 먼저 실행할까요? 운영 환경은 점검 시간이 필요하고 '
    '스테이징 환경은 언제든지 실행할 수 있으며 개발 환경은 각자의 노트북에서 돌아갑니다.'
)
"""A question that wraps on a phone; Korean breaks lines between words, never inside one."""

LONG_TOKEN = 'https://example.com/' + 'migration-plan-' * 8
"""A token with no space at all, longer than a phone is wide."""


def korean_request() -> AskUserRequest:
    return ask_one(
        Question(
            header='환경 선택',
            question=f'{KOREAN}\n{LONG_TOKEN}',
            options=(
                QuestionOption(label='운영 환경에서 먼저 실행합니다', description=KOREAN),
                QuestionOption(label='스테이징 환경에서 먼저 실행합니다', description=LONG_TOKEN),
            ),
        )
    )


@pytest.fixture
async def phone(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={'width': 390, 'height': 844}, is_mobile=True, has_touch=True)
    context.set_default_timeout(WAIT * 1000)
    yield await context.new_page()
    await context.close()


LINE_STARTS = """(el) => {
  const starts = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let lastTop = null;
  let previous = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (/\\s/.test(ch)) { previous = ch; continue; }
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (rect) {
        if (lastTop !== null && rect.top > lastTop + 2) starts.push(previous + ch);
        lastTop = rect.top;
      }
      previous = ch;
    }
  }
  return starts;
}"""
"""For each line after the first in an element: the character before the line's first one, and that one."""


async def test_korean_text_wraps_between_words_never_inside_one(phone: Page, web: WebAnswerer, live: str) -> None:
    request = korean_request()
    async with asking(web, request):
        await phone.goto(web.login_url(live, request.id))
        for selector in ('#q0-text', '#q0-o0-d', 'label[for="q0-o1"]'):
            element = phone.locator(selector)
            starts: list[str] = await element.evaluate(LINE_STARTS)
            hangul_inside_a_word = [pair for pair in starts if re.fullmatch(r'[가-힣]{2}', pair)]
            assert hangul_inside_a_word == [], (selector, starts)
        # The first option's description wraps at all; the check above is not vacuous.
        assert await phone.locator('#q0-o0-d').evaluate(LINE_STARTS)


async def test_headers_are_shown_as_the_model_wrote_them(tab: Tab, web: WebAnswerer, live: str) -> None:
    request = ask_one(single('DB setup'), single('iOS build'))
    async with asking(web, request):
        await tab.page.goto(web.login_url(live, request.id))
        legends = await tab.page.locator('legend').evaluate_all('(els) => els.map((el) => el.innerText)')
    assert legends == ['DB setup', 'iOS build']


PHONE_SIZES = """() => ({
  form: document.getElementById('answer-form').getBoundingClientRect().width,
  text: document.getElementById('q0-text').getBoundingClientRect().width,
  buttons: [...document.querySelectorAll('.actions button')].map((b) => b.getBoundingClientRect().width),
})"""

NO_OVERFLOW = 'document.scrollingElement.scrollWidth <= window.innerWidth'


async def test_the_inbox_and_a_long_korean_form_fit_a_phone_screen(phone: Page, web: WebAnswerer, live: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    korean = korean_request()
    many = ask_one(*(single(f'질문 {index} {LONG_TOKEN[:8]}') for index in range(4)))
    async with asking(web, korean), asking(web, many):
        await phone.goto(web.login_url(live))
        await expect(phone.locator('#pending li')).to_have_count(2)
        await phone.screenshot(path=str(ARTIFACTS / 'web-phone-inbox.png'), full_page=True)
        assert await phone.evaluate(NO_OVERFLOW), await phone.evaluate('document.scrollingElement.scrollWidth')
        # The search, opened, wraps its fields to the screen's width.
        await phone.locator('#search-box summary').click()
        await expect(phone.locator('#search button[type="submit"]')).to_be_visible()
        await phone.screenshot(path=str(ARTIFACTS / 'web-phone-search.png'), full_page=True)
        assert await phone.evaluate(NO_OVERFLOW), await phone.evaluate('document.scrollingElement.scrollWidth')
        await phone.goto(f'{live}requests/{korean.id}')
        await expect(phone.locator('#answer-form')).to_be_visible()
        await phone.screenshot(path=str(ARTIFACTS / 'web-phone-form.png'), full_page=True)
        assert await phone.evaluate(NO_OVERFLOW), await phone.evaluate('document.scrollingElement.scrollWidth')
        # The phone layout: the questions get the width, the buttons are full-width targets for a thumb.
        sizes = await phone.evaluate(PHONE_SIZES)
        assert sizes['text'] >= 0.85 * 390, sizes
        assert all(width >= sizes['form'] - 1 for width in sizes['buttons']), sizes


async def test_inbox_rows_with_long_run_ids_fit_a_phone_screen(phone: Page) -> None:
    now = time.time()
    records = [
        Record(korean_request(), 'ask-user-' + 'a1b2c3d4' * 6, now - 90),
        Record(ask_one(single(LONG_TOKEN[:25])), 'nightly-migration-' + LONG_TOKEN, now - 2 * 86400),
    ]
    app = create_app(RecordingStore(records))
    async with serve(app) as base:
        await phone.goto(base + app.login_path())
        await expect(phone.locator('#pending li')).to_have_count(2)
        # The inbox's order: neither has a deadline, so the oldest first.
        await expect(phone.locator('#pending time')).to_have_text(['asked 2 days ago', 'asked 2 minutes ago'])
        await phone.screenshot(path=str(ARTIFACTS / 'web-phone-inbox-runs.png'), full_page=True)
        assert await phone.evaluate(NO_OVERFLOW), await phone.evaluate('document.scrollingElement.scrollWidth')


LONG_TITLE = 'Questions from the quarterly migration agent of the payments platform team'
"""A title longer than a phone's header is wide."""

NOTIFY_PERMISSION_DEFAULT = "Object.defineProperty(Notification, 'permission', { get: () => 'default' });"
"""As in a browser that has not been asked yet: the inbox offers "Notify me"."""

HEADER_BOXES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {bar: box(document.querySelector('header.bar')), brand: box(document.querySelector('.brand')),
          button: box(document.getElementById('notify-me')), width: document.documentElement.clientWidth};
}"""


@pytest.mark.parametrize('width', [390, 1280])
async def test_the_notify_button_stays_inside_the_header_beside_a_long_title(browser: Browser, width: int) -> None:
    web = WebAnswerer(title=LONG_TITLE)
    context = await browser.new_context(viewport={'width': width, 'height': 844})
    context.set_default_timeout(WAIT * 1000)
    await context.add_init_script(NOTIFY_PERMISSION_DEFAULT)
    try:
        async with serve(web.app) as live:
            page = await context.new_page()
            await page.goto(web.login_url(live))
            await expect(page.locator('#notify-me')).to_be_visible()
            boxes = await page.evaluate(HEADER_BOXES)
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / f'web-header-{width}.png'))
    finally:
        await context.close()
    bar, brand, button = boxes['bar'], boxes['brand'], boxes['button']
    # Inside the dark bar, within the screen, and never over the title.
    assert bar['top'] <= button['top'], boxes
    assert button['bottom'] <= bar['bottom'], boxes
    assert button['right'] <= boxes['width'], boxes
    assert brand['bottom'] <= bar['bottom'], boxes
    assert brand['right'] <= boxes['width'], boxes
    assert button['left'] >= brand['right'] or button['top'] >= brand['bottom'], boxes
