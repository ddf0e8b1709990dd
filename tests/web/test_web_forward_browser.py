"""The folded Forward form, in Chromium: alice hands a waiting approval on to bob with a note; it leaves her inbox,
bob sees it with the note, approves it, and the real agent run gets one decision, from bob.
"""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext, expect
from test_web_approval_actions import refund_waiting
from web_support import open_inbox_as

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


async def test_forward_an_approval_in_the_browser(context: BrowserContext) -> None:
    async with refund_waiting() as waiting:
        alice = await open_inbox_as(context, waiting.web, waiting.base, 'alice')
        await alice.locator('#approvals li a').click()
        await expect(alice.locator('#tool')).to_have_text('refund')
        assert not await alice.locator('#forward-to').is_visible()  # folded
        await alice.click('#forward-choice summary')
        await alice.fill('#forward-to', 'bob')
        await alice.fill('#forward-note', 'Bob <b>owns</b> refunds')
        await alice.click('#forward')
        await expect(alice.locator('h1')).to_have_text('Forwarded')
        await expect(alice.locator('main')).to_contain_text('It now waits for bob.')
        [pending] = await waiting.web.hub.pending_approvals()
        assert pending.audience == ('bob',)
        again = await open_inbox_as(context, waiting.web, waiting.base, 'alice')
        await expect(again.locator('#approvals li')).to_have_count(0)
        assert context.browser is not None
        other = await context.browser.new_context()  # bob's own browser: the cookies are alice's
        bob = await open_inbox_as(other, waiting.web, waiting.base, 'bob')
        await bob.locator('#approvals li a').click()
        await expect(bob.locator('#handoffs li')).to_have_text('alice to bob: Bob <b>owns</b> refunds')
        await bob.click('#approve')
        await expect(bob.locator('h1')).to_contain_text('Approved')
        assert await waiting.output() == ['Refunded 49.90 for order 1042.']
        await other.close()
        (record,) = (await waiting.web.hub.history_page()).records
        assert record.by == 'bob'
        assert [each.note for each in record.handoffs] == ['Bob <b>owns</b> refunds']
