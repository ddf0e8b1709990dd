"""Two people signed in to one inbox in Chromium, two customers' agents asking: each sees only their own question.

Real parts: agent runs (a `FunctionModel` that asks) with `AskUser(audience=..., context=...)`, the app served by
uvicorn, one browser context per person (each signed in through a login link made for their name), and the live
inbox script, which adds a question that arrives while the page is open only to the page of the person it is for.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import pytest
from playwright.async_api import BrowserContext, expect
from pydantic_ai import Agent
from web_support import open_inbox_as

from pydantic_ai_ask_user import AskUser, QuestionContext
from pydantic_ai_ask_user.testing import asking_model
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

REFUND = {'header': 'Refund', 'question': 'Refund the second payment?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}


@dataclass
class Customer:
    user: str
    order: int


async def test_each_signed_in_person_sees_only_their_own_customers_question_live(
    two_people: tuple[BrowserContext, BrowserContext],
) -> None:
    web = WebAnswerer()
    agent = Agent(
        asking_model(REFUND),
        name='support-bot',
        deps_type=Customer,
        capabilities=[
            AskUser(
                web,
                audience=lambda ctx: ctx.deps.user,
                context=lambda ctx: QuestionContext(
                    title=f'Refund for order {ctx.deps.order}', summary='Paid **twice**.'
                ),
            )
        ],
    )
    alice_browser, bob_browser = two_people
    async with serve(web.app) as base, anyio.create_task_group() as runs:
        alice = await open_inbox_as(alice_browser, web, base, 'alice')
        bob = await open_inbox_as(bob_browser, web, base, 'bob')
        # Asked while both pages are open: each arrives live, on its own person's page only.
        runs.start_soon(lambda: agent.run('refund?', deps=Customer('alice', 1042)))
        runs.start_soon(lambda: agent.run('refund?', deps=Customer('bob', 1043)))
        await expect(alice.locator('#pending li')).to_have_count(1)
        await expect(bob.locator('#pending li')).to_have_count(1)
        await expect(alice.locator('#pending .title')).to_have_text('Refund for order 1042')
        await expect(bob.locator('#pending .title')).to_have_text('Refund for order 1043')
        await expect(alice.locator('#pending .agent')).to_have_text('support-bot')
        # And after a reload, drawn by the server: the same.
        for page, order, other in ((alice, 1042, 1043), (bob, 1043, 1042)):
            await page.reload()
            await expect(page.locator('#pending li')).to_have_count(1)
            await expect(page.get_by_text(f'Refund for order {order}')).to_be_visible()
            await expect(page.get_by_text(f'Refund for order {other}')).to_have_count(0)
        [alice_key] = [request.key for request in await web.hub.pending() if request.audience == ('alice',)]
        # Alice opens hers, sees its context, and answers; bob's page is untouched.
        await alice.locator('#pending a').click()
        await expect(alice.locator('#context strong')).to_have_text('twice')
        await alice.get_by_label('Yes').check()
        await alice.get_by_role('button', name='Submit').click()
        await expect(alice.get_by_text('Thank you, your answer was sent')).to_be_visible()
        await expect(bob.locator('#pending li')).to_have_count(1)
        # Bob, given the address of alice's question, is told there is no such question, not that it was answered.
        shown = await bob.goto(f'{base.rstrip("/")}/requests/{alice_key}')
        assert shown is not None
        assert shown.status == 404
        await expect(bob.get_by_role('heading', name='No such question')).to_be_visible()
        runs.cancel_scope.cancel()
