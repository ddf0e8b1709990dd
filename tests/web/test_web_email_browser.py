"""E-mail that answers, end to end: a real SMTP server (aiosmtpd), the inbox served by uvicorn, and Chromium.

A run asks alice a question; the `Notifier` mails her through `EmailChannel`; the test reads the message back from
the server, opens an option's link in Chromium: the confirmation page records nothing (the question still waits),
its button records the answer, and the run gets it as alice's. An approval is approved by its link the same way,
and the mail's link to the question's page signs her in and lands on its form.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
from ask_user_support import wait_until
from playwright.async_api import BrowserContext, expect
from smtp_support import SMTPInbox, parts, smtp_server
from web_support import WAIT, ask_one, asking

from pydantic_ai_ask_user import QuestionContext
from pydantic_ai_ask_user.notify import EmailChannel, InboxLinks, Notifier, Recipient, StaticDirectory
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval
from pydantic_ai_ask_user.web import SignedLoginLinks, WebAnswerer, serve

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

expect.set_options(timeout=WAIT * 1000)

KEY = b'm' * 32
ALICE = Recipient('alice', email='alice@example.com')


@pytest.fixture
def web() -> WebAnswerer:
    return WebAnswerer(login_links=SignedLoginLinks(KEY))


@contextlib.asynccontextmanager
async def mailing(web: WebAnswerer) -> AsyncIterator[tuple[SMTPInbox, str]]:
    """The inbox served, an SMTP server, and a notifier that mails alice: the SMTP inbox and the inbox's URL."""
    with smtp_server() as (inbox, port):
        async with serve(web.app) as base:
            notifier = Notifier(
                web.hub,
                channels=[EmailChannel('127.0.0.1', port, sender='ask-user@example.com', timeout=10)],
                directory=StaticDirectory([ALICE]),
                links=InboxLinks(base, key=KEY),
                gather_seconds=0.05,
            )
            async with anyio.create_task_group() as group:
                group.start_soon(notifier.run)
                await notifier.wait_synced()
                yield inbox, base
                group.cancel_scope.cancel()


async def _text(inbox: SMTPInbox) -> str:
    await wait_until(lambda: len(inbox.to('alice@example.com')) >= 1, 'the message to alice')
    text, _ = parts(inbox.to('alice@example.com')[0])
    return text


def _links(text: str, base: str, path: str) -> list[str]:
    return re.findall(re.escape(base + path) + r'[^\s"<>]*', text)


async def test_an_option_link_in_the_mail_answers_the_run_once_confirmed_in_chromium(
    web: WebAnswerer, context: BrowserContext
) -> None:
    request = replace(
        ask_one(), audience=('alice',), context=QuestionContext(title='<script>alert(1)</script>', agent_name='ops')
    )
    question = request.questions[0]
    async with mailing(web) as (inbox, base), asking(web, request) as job:
        text = await _text(inbox)
        options = _links(text, base, 'act?code=')
        assert len(options) == len(question.options)
        page = await context.new_page()
        await page.goto(options[1])
        await expect(page.locator('h1')).to_have_text('Send this answer?')
        await expect(page.locator('#act-picked')).to_contain_text(question.options[1].label)
        await expect(page.locator('#context .title')).to_have_text('<script>alert(1)</script>')
        await web.hub.get(request.key)  # the page recorded nothing: the question still waits
        assert not job.done.is_set()
        await page.locator('#act-confirm').click()
        await expect(page.locator('h1')).to_have_text('Thank you, your answer was sent')
        response = await job.response()
    assert response.answered_by == 'alice'
    assert response.answers[0].selected == (question.options[1].label,)


async def test_the_mail_links_to_the_question_page_signed_in(web: WebAnswerer, context: BrowserContext) -> None:
    request = replace(ask_one(), audience=('alice',))
    async with mailing(web) as (inbox, base), asking(web, request):
        text = await _text(inbox)
        [page_link] = [link for link in _links(text, base, 'login?') if 'next=requests' in link]
        page = await context.new_page()
        await page.goto(page_link)
        await expect(page).to_have_url(re.compile(re.escape(base + 'requests/')))
        await expect(page.locator('form').first).to_be_visible()


async def test_an_approval_is_approved_by_its_link_in_chromium(web: WebAnswerer, context: BrowserContext) -> None:
    approval = PendingApproval('w1', 'call_0', 'deploy_to', {'env': 'production'}, audience=('alice',))
    results: list[Any] = []

    async def wait() -> None:
        results.append(await web.hub.ask_wait('w1', [], [approval]))

    async with mailing(web) as (inbox, base), anyio.create_task_group() as group:
        group.start_soon(wait)
        text = await _text(inbox)
        approve, _deny = _links(text, base, 'act?code=')
        page = await context.new_page()
        await page.goto(approve)
        await expect(page.locator('h1')).to_have_text('Approve deploy_to?')
        await web.hub.get_approval(approval.key)  # still waiting
        await page.locator('#act-confirm').click()
        await expect(page.locator('h1')).to_have_text('Approved: deploy_to runs')
        await wait_until(lambda: len(results) == 1, 'the wait to end')
    decision = results[0][1][0][1]
    assert isinstance(decision, ApprovalDecision)
    assert decision.approved
    assert decision.decided_by == 'alice'
