"""The real pages in a real Chromium: answering, live updates, withdrawn questions, hostile text, the keyboard."""

from __future__ import annotations

import anyio
import pytest
from playwright.async_api import Page, expect
from web_support import ARTIFACTS, WAIT, Tab, ask_one, asking, multi, single

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


async def open_form(page: Page, web: WebAnswerer, live: str, request: AskUserRequest) -> None:
    await page.goto(web.login_url(live, request.id))
    await expect(page.locator('#answer-form')).to_be_visible()


async def test_a_single_select_question_is_answered_by_clicking(tab: Tab, web: WebAnswerer, live: str) -> None:
    async with asking(web) as job:
        await open_form(tab.page, web, live, job.request)
        await tab.page.get_by_label('SQLite', exact=True).check()
        ARTIFACTS.mkdir(exist_ok=True)
        await tab.page.screenshot(path=str(ARTIFACTS / 'web-form.png'), full_page=True)
        await tab.page.get_by_role('button', name='Submit').click()
        await expect(tab.page.locator('#confirmation')).to_contain_text('your answer was sent')
        assert (await job.response()).answers == (AskUserAnswer('Database', ('SQLite',)),)
    assert tab.errors == []


async def test_a_multi_select_question_is_answered_with_several_boxes(tab: Tab, web: WebAnswerer, live: str) -> None:
    async with asking(web, ask_one(multi())) as job:
        await open_form(tab.page, web, live, job.request)
        await tab.page.get_by_label('dev', exact=True).check()
        await tab.page.get_by_label('production', exact=True).check()
        await tab.page.get_by_role('button', name='Submit').click()
        await expect(tab.page.locator('#confirmation')).to_be_visible()
        assert (await job.response()).answers == (AskUserAnswer('Environments', ('dev', 'production')),)


async def test_typing_in_the_other_box_sends_a_custom_answer(tab: Tab, web: WebAnswerer, live: str) -> None:
    async with asking(web) as job:
        await open_form(tab.page, web, live, job.request)
        await tab.page.locator('#q0-custom').fill('CockroachDB, 3 regions')
        await expect(tab.page.locator('#q0-other')).to_be_checked()
        await tab.page.get_by_role('button', name='Submit').click()
        await expect(tab.page.locator('#confirmation')).to_be_visible()
        assert (await job.response()).answers == (AskUserAnswer('Database', custom_answer='CockroachDB, 3 regions'),)


async def test_the_decline_button_declines_from_the_page(tab: Tab, web: WebAnswerer, live: str) -> None:
    async with asking(web) as job:
        await open_form(tab.page, web, live, job.request)
        await tab.page.get_by_role('button', name='Decline to answer').click()
        await expect(tab.page.locator('#confirmation')).to_contain_text('You declined')
        assert await job.response() == AskUserResponse(cancelled=True)


async def test_a_missing_answer_is_shown_inline_and_takes_the_focus(tab: Tab, web: WebAnswerer, live: str) -> None:
    async with asking(web) as job:
        await open_form(tab.page, web, live, job.request)
        await tab.page.get_by_role('button', name='Submit').click()
        await expect(tab.page.locator('#error-summary')).to_be_focused()
        await expect(tab.page.locator('#q0-error')).to_have_text('Pick one of the options.')


async def test_a_new_question_appears_live_in_the_inbox_and_leaves_when_answered(
    tab: Tab, web: WebAnswerer, live: str
) -> None:
    await tab.page.goto(web.login_url(live))
    await expect(tab.page.locator('#empty')).to_be_visible()
    await expect(tab.page.locator('#live-status')).to_contain_text('appear here')
    async with asking(web, ask_one(single('Live one'))) as job:
        link = tab.page.get_by_role('link', name='Live one')
        await expect(link).to_be_visible()
        await expect(tab.page.locator('#empty')).to_be_hidden()
        await web.hub.respond(job.request.id, AskUserResponse(cancelled=True))
        await expect(link).to_have_count(0)
        await expect(tab.page.locator('#empty')).to_be_visible()


async def test_a_withdrawn_question_is_shown_as_no_longer_waiting(tab: Tab, web: WebAnswerer, live: str) -> None:
    async with asking(web) as job:
        await open_form(tab.page, web, live, job.request)
        await anyio.sleep(0)  # the form's event stream connects while the question is still pending
        await expect(tab.page.locator('#withdrawn')).to_be_hidden()
    # Leaving the block cancelled the ask: the run stopped waiting.
    await expect(tab.page.locator('#withdrawn')).to_be_visible(timeout=WAIT * 1000)
    await expect(tab.page.get_by_role('button', name='Submit')).to_be_disabled()


XSS = (
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(2)>',
    '<svg onload=alert(3)>',
    '"><b onmouseover=alert(4)>',
    'javascript:alert(5)',
    "'><iframe src=javascript:alert(6)>",
    '<a href="javascript:alert(7)">x</a>',
    '<svg><script>alert(8)</script>',
)


def hostile_request() -> AskUserRequest:
    questions = tuple(
        Question(
            header=payload[:25],
            question=f'{payload}\n{XSS[(index + 1) % len(XSS)]}',
            options=(
                QuestionOption(label=payload[:50], description=XSS[(index + 2) % len(XSS)]),
                QuestionOption(label=f'{index}{XSS[(index + 3) % len(XSS)]}'[:50], description=payload),
            ),
        )
        for index, payload in enumerate(XSS)
    )
    return AskUserRequest(questions=questions)


async def test_hostile_text_in_every_field_renders_as_visible_inert_text(tab: Tab, web: WebAnswerer, live: str) -> None:
    request = hostile_request()
    await tab.page.goto(web.login_url(live))
    async with asking(web, request):
        # The inbox draws it live from the event stream, the form from the server's template.
        link = tab.page.locator('#pending a')
        # The row's link says what is asked: the headers, then the first question.
        await expect(link.locator('.headers')).to_have_text(', '.join(q.header for q in request.questions))
        await expect(link.locator('.question')).to_have_text(request.questions[0].question)
        await link.click()
        await expect(tab.page.locator('#answer-form')).to_be_visible()
        page = tab.page
        assert await page.locator('legend').all_text_contents() == [q.header for q in request.questions]
        texts = await page.locator('.question-text').all_text_contents()
        assert texts == [q.question for q in request.questions]
        labels = await page.locator('.option:not(.other) > label').all_text_contents()
        assert labels == [o.label for q in request.questions for o in q.options]
        descriptions = await page.locator('.description').all_text_contents()
        assert descriptions == [o.description for q in request.questions for o in q.options]
        for tag in ('img', 'svg', 'iframe', 'b', 'main script', 'a[href^="javascript"]'):
            assert await page.locator(tag).count() == 0, tag
        await page.locator('label').first.hover()
        await page.wait_for_timeout(200)
    assert tab.dialogs == []
    assert tab.errors == []


async def test_the_form_is_answered_with_the_keyboard_alone(tab: Tab, web: WebAnswerer, live: str) -> None:
    page = tab.page

    async def focused() -> str:
        return await page.evaluate('document.activeElement.id || document.activeElement.textContent')

    async with asking(web, ask_one(single(), multi())) as job:
        await open_form(page, web, live, job.request)
        assert await focused() == 'q0-o0'
        await page.keyboard.press('ArrowDown')
        assert await focused() == 'q0-o1'
        await page.keyboard.press('Tab')
        assert await focused() == 'q0-custom'
        await page.keyboard.press('Tab')
        assert await focused() == 'q1-o0'
        await page.keyboard.press('Space')
        for expected in ('q1-o1', 'q1-o2'):
            await page.keyboard.press('Tab')
            assert await focused() == expected
        await page.keyboard.press('Space')
        for expected in ('q1-other', 'q1-custom', 'Submit'):
            await page.keyboard.press('Tab')
            assert await focused() == expected
        await page.keyboard.press('Enter')
        await expect(page.locator('#confirmation')).to_be_visible()
        assert await job.response() == AskUserResponse(
            answers=(AskUserAnswer('Database', ('SQLite',)), AskUserAnswer('Environments', ('dev', 'production')))
        )


@pytest.mark.parametrize('width', [390, 1280])
async def test_choosing_other_in_a_multi_select_question_unticks_the_options_as_the_terminal_does(
    tab: Tab, web: WebAnswerer, live: str, width: int
) -> None:
    await tab.page.set_viewport_size({'width': width, 'height': 900})
    async with asking(web, ask_one(multi())) as job:
        await open_form(tab.page, web, live, job.request)
        page = tab.page
        dev, production, other = page.locator('#q0-o0'), page.locator('#q0-o2'), page.locator('#q0-other')
        await dev.check()
        await production.check()
        await other.check()  # "Other" replaces the options: the ticks go, as in the terminal
        await expect(dev).not_to_be_checked()
        await expect(production).not_to_be_checked()
        await dev.check()  # and an option ticked again takes the place of "Other", as a radio button would
        await expect(other).not_to_be_checked()
        await page.locator('#q0-custom').fill('only the preview environment')  # typing chooses "Other" again
        await expect(other).to_be_checked()
        await expect(dev).not_to_be_checked()
        await page.get_by_role('button', name='Submit').click()
        await expect(page.locator('#confirmation')).to_be_visible()
        assert (await job.response()).answers == (
            AskUserAnswer('Environments', custom_answer='only the preview environment'),
        )
    assert tab.errors == []
