"""The four actions on an approval (accept, edit, respond, ignore; deny stays) in the web inbox, end to end: a real
agent run whose tool needs approval, decided through the JSON API and in Chromium, and what the model is told for
each. And the approval page's guidance: the primary action stands out, the destructive one looks destructive, the
arguments are a table with the JSON on demand, the run id is shortened with the whole on demand, and the page fits
at 1280 and at 390 px (screenshots of both are written to test-artifacts/screenshots/, where docs/images/ took
theirs from).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from waits import WAIT, wait_until
from web_support import open_inbox_as

from pydantic_ai_ask_user import QuestionContext
from pydantic_ai_ask_user._approvals import IGNORED_DENIAL, RESPONDED_DENIAL
from pydantic_ai_ask_user.deferred import waiting_handler
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)

SCREENSHOTS = Path(__file__).resolve().parents[2] / 'test-artifacts' / 'screenshots'
"""Where the page's screenshots go (the docs' images are copies of them)."""


def refund_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls `refund` once (it needs approval), then reports what came back."""
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if not returns:
        args = {'order': 1042, 'amount': 49.9, 'note': 'Customer says the parcel arrived <b>opened</b>'}
        return ModelResponse(parts=[ToolCallPart('refund', args, 'call_0')])
    return ModelResponse(parts=[TextPart(json.dumps([str(part.content) for part in returns]))])


def refund_agent(web: WebAnswerer) -> Agent[None, str]:
    agent = Agent(
        FunctionModel(refund_model),
        name='support-bot',
        capabilities=[
            waiting_handler(web.request_input(audience='alice', context=QuestionContext(title='Order 1042')))
        ],
    )

    @agent.tool_plain(requires_approval=True)
    def refund(order: int, amount: float, note: str = '') -> str:
        """Refund an order."""
        return f'Refunded {amount:.2f} for order {order}.'

    return agent


@dataclass
class Waiting:
    """A served `WebAnswerer` whose agent run waits for the refund's approval."""

    web: WebAnswerer
    base: str
    outputs: list[str]

    async def output(self) -> list[str]:
        """What the run's model ended with: what each tool call gave it."""
        with anyio.fail_after(WAIT):
            while not self.outputs:
                await anyio.sleep(0.05)
        return json.loads(self.outputs[0])

    def api(self) -> httpx.AsyncClient:
        """A client of the JSON API, signed in by the answerer's token."""
        return httpx.AsyncClient(base_url=self.base, headers={'authorization': f'Bearer {self.web.access_token}'})


@asynccontextmanager
async def refund_waiting() -> AsyncGenerator[Waiting]:
    """Serve a `WebAnswerer`, start the refund agent's run, and yield once its approval waits."""
    web = WebAnswerer()
    agent = refund_agent(web)
    async with serve(web.app) as base, anyio.create_task_group() as runs:
        waiting = Waiting(web, base, [])

        async def run() -> None:
            waiting.outputs.append((await agent.run('refund it')).output)

        runs.start_soon(run)

        async def asked() -> bool:
            return len(await web.hub.pending_approvals()) == 1

        await wait_until(asked, 'the refund to wait for approval')
        yield waiting


@pytest.mark.parametrize(
    ('decision', 'status', 'told'),
    [
        ('approve', 'approved', 'Refunded 49.90 for order 1042.'),
        ({'args': {'order': 1042, 'amount': 20}}, 'edited', 'Refunded 20.00 for order 1042.'),
        (
            {'respond': 'Offer store credit instead.'},
            'responded',
            RESPONDED_DENIAL.format(response='Offer store credit instead.'),
        ),
        ('ignore', 'ignored', IGNORED_DENIAL),
        ({'deny': 'Not without a photo.'}, 'denied', 'Not without a photo.'),
    ],
)
async def test_each_action_through_the_api_reaches_the_model_as_documented(
    decision: Any, status: str, told: str
) -> None:
    async with refund_waiting() as waiting, waiting.api() as client:
        [pending] = (await client.get('api/approvals')).json()['approvals']
        decided = await client.post(f'api/approvals/{pending["id"]}/decide', json=decision)
        assert decided.json() == {'id': pending['id'], 'status': status}
        assert await waiting.output() == [told]


async def test_a_reply_and_a_dismissal_are_checked_like_a_reason() -> None:
    async with refund_waiting() as waiting, waiting.api() as client:
        [pending] = (await client.get('api/approvals')).json()['approvals']
        url = f'api/approvals/{pending["id"]}/decide'
        for body, problem in [
            ({'respond': 'ok\x1b[2J'}, 'which cannot be shown'),
            ({'respond': '   '}, 'a reply must be text'),
            ({'respond': 'x' * 2001}, 'at most 2000 characters'),
            ({'respond': 3}, '"respond" must be the text'),
            ({'approved': True, 'ignored': True}, 'a reply or a dismissal runs nothing'),
            ({'approved': False, 'ignored': True, 'reason': 'no'}, 'a dismissal gives the model no words'),
        ]:
            refused = await client.post(url, json=body)
            assert refused.status_code == 422, body
            assert refused.json()['error'] == 'invalid_decision'
            assert problem in refused.json()['message'], (body, refused.json())
        assert len(await waiting.web.hub.pending_approvals()) == 1  # nothing was recorded
        await client.post(url, json='ignore')
        assert await waiting.output() == [IGNORED_DENIAL]


async def _open_the_approval(context: BrowserContext, waiting: Waiting) -> Page:
    page = await open_inbox_as(context, waiting.web, waiting.base, 'alice')
    await page.locator('#approvals li a').click()
    await expect(page.locator('#tool')).to_have_text('refund')
    return page


@pytest.mark.browser
async def test_the_page_guides_and_a_reply_reaches_the_model(context: BrowserContext) -> None:
    async with refund_waiting() as waiting:
        page = await _open_the_approval(context, waiting)
        # The arguments as a table, the model's markup drawn as text; the JSON on demand.
        rows = page.locator('#args-table tr')
        await expect(rows).to_have_count(3)
        await expect(rows.nth(0)).to_have_text('order1042')
        await expect(rows.nth(2).locator('td')).to_have_text('Customer says the parcel arrived <b>opened</b>')
        assert not await page.locator('#args').is_visible()
        await page.click('.as-json summary')
        await expect(page.locator('#args')).to_be_visible()
        assert json.loads(await page.text_content('#args') or '')['amount'] == 49.9
        # Approve is the one primary action; Deny is drawn in the error colour; the other choices are closed.
        approve_colour = await page.locator('#approve').evaluate('b => getComputedStyle(b).backgroundColor')
        assert await page.locator('#approve').is_visible()
        for hidden in ('#deny', '#ignore', '#respond', '#edit'):
            assert not await page.locator(hidden).is_visible(), hidden
        await page.click('#deny-choice summary')
        deny_colour = await page.locator('#deny').evaluate('b => getComputedStyle(b).backgroundColor')
        assert approve_colour == 'rgb(35, 88, 196)'  # --accent
        assert deny_colour == 'rgb(179, 38, 30)'  # --error
        # The run id, shortened, whole on demand.
        [pending] = await waiting.web.hub.pending_approvals()
        assert pending.run_id is not None
        assert len(pending.run_id) > 8  # a Pydantic AI run id: a UUID
        await expect(page.locator('#run summary')).to_contain_text('…' + pending.run_id[-8:])  # as the rows
        await page.click('#run summary')
        await expect(page.locator('#run code')).to_have_text(pending.run_id)
        # An empty reply is refused with a message, nothing recorded; then the reply is sent.
        await page.click('#respond-choice summary')
        await page.click('#respond')
        await expect(page.locator('#error-summary')).to_contain_text('write the reply')
        assert len(await waiting.web.hub.pending_approvals()) == 1
        await page.fill('#response', 'Offer store credit instead.')
        await page.click('#respond')
        await expect(page.locator('h1')).to_have_text('Replied: refund does not run')
        await expect(page.locator('#told')).to_have_text(
            RESPONDED_DENIAL.format(response='Offer store credit instead.')
        )
        assert await waiting.output() == [RESPONDED_DENIAL.format(response='Offer store credit instead.')]


@pytest.mark.browser
async def test_ignore_in_the_page_dismisses_the_call(context: BrowserContext) -> None:
    async with refund_waiting() as waiting:
        page = await _open_the_approval(context, waiting)
        await page.click('#deny-choice summary')
        await page.click('#ignore')
        await expect(page.locator('h1')).to_have_text('Ignored: refund does not run')
        await expect(page.locator('#status')).to_have_attribute('data-decision', 'ignored')
        assert await waiting.output() == [IGNORED_DENIAL]


@pytest.mark.browser
@pytest.mark.parametrize('width', [1280, 390])
async def test_the_approval_page_fits_the_screen_at_1280_and_390_px(context: BrowserContext, width: int) -> None:
    async with refund_waiting() as waiting:
        page = await _open_the_approval(context, waiting)
        await page.set_viewport_size({'width': width, 'height': 900})
        await page.click('#deny-choice summary')
        for part in ('#approve', '#deny', '#ignore', '#args-table', 'h1'):
            box = await page.locator(part).bounding_box()
            assert box is not None, part
            assert box['x'] >= 0, (part, box)
            assert box['x'] + box['width'] <= width, (part, box)
        wide = await page.evaluate('document.documentElement.scrollWidth')
        assert wide <= width, f'the page scrolls sideways at {width} px: {wide} px wide'
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOTS / f'approval-{width}.png'), full_page=True)
        await page.click('#approve')
        await expect(page.locator('h1')).to_have_text('Approved: refund runs')
        await page.screenshot(path=str(SCREENSHOTS / f'approved-{width}.png'), full_page=True)
        assert await waiting.output() == ['Refunded 49.90 for order 1042.']
