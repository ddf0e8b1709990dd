"""The inbox a page at a time in a real Chromium: more rows on scroll, and every change applied as a delta."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from playwright.async_api import Route, expect
from web_support import Tab, ask_one, single, wait_pending

from pydantic_ai_ask_user import AskUserResponse
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


async def test_the_inbox_loads_pages_on_scroll_and_follows_changes_without_listing_again(
    tab: Tab, web: WebAnswerer, live: str
) -> None:
    page = tab.page
    listings: list[str] = []

    def listing(url: str) -> None:
        # The pages of 5 this test reads: the login's landing page (50 a page) may still list as it is left.
        if '/api/requests' in url and parse_qs(urlsplit(url).query).get('limit') == ['5']:
            listings.append(url)

    page.on('request', lambda request: listing(request.url))
    async with anyio.create_task_group() as group:
        requests = [ask_one(single(f'Question {index:02d}')) for index in range(12)]
        for request in requests:
            group.start_soon(web.hub.ask, request)
            await wait_pending(web.hub, request.id)
        await page.goto(web.login_url(live))
        await page.goto(f'{live}?limit=5')
        rows = page.locator('#pending li')
        await expect(page.locator('#live-status')).to_contain_text('appear here')
        await expect(page.locator('#total')).to_have_text('12 questions waiting')
        await expect(page).to_have_title('(12) Waiting questions – Questions from your agent')
        # The pages follow one another while the end of the list is on screen (scrolled to, or in a tall window).
        await page.mouse.wheel(0, 10_000)
        await expect(rows).to_have_count(12)
        await expect(page.locator('#more-wrap')).to_be_hidden()
        assert [await row.locator('a .headers').inner_text() for row in await rows.all()] == [
            f'Question {index:02d}' for index in range(12)
        ]
        listed = len(listings)
        # A new question (no deadline, the newest) goes last; an answered one leaves; the count follows both.
        late = ask_one(single('Late one'))
        group.start_soon(web.hub.ask, late)
        await expect(page.get_by_role('link', name='Late one')).to_be_visible()
        await expect(rows.last).to_contain_text('Late one')
        await expect(page.locator('#total')).to_have_text('13 questions waiting')
        await web.hub.respond(requests[3].id, AskUserResponse(cancelled=True))
        await expect(page.get_by_role('link', name='Question 03')).to_have_count(0)
        await expect(page.locator('#total')).to_have_text('12 questions waiting')
        await expect(page).to_have_title('(12) Waiting questions – Questions from your agent')
        group.cancel_scope.cancel()
    # Every listing the page made was one page of 5 (the first again when the stream connected, then the next ones):
    # none for the new question or the answer, which were applied as they came.
    assert 3 <= listed <= 5, listings
    assert len(listings) == listed, listings


async def test_a_next_page_that_comes_back_after_the_lists_refetch_still_leads_to_the_pages_after_it(
    tab: Tab, web: WebAnswerer, live: str
) -> None:
    """The race CI once lost: the second page is asked for as the page loads, the stream connects and fetches the
    first page again while it is out, and the second page, now stale, comes back last. Its end still on screen in a
    tall window, nothing scrolls or intersects anew, so the page itself must go on to the pages after it."""
    page = tab.page
    refetched = anyio.Event()

    async def hold(route: Route) -> None:
        query = parse_qs(urlsplit(route.request.url).query)
        if query.get('limit') != ['5']:
            await route.continue_()
        elif 'cursor' not in query:
            # The stream's refetch of the first page: the rows drawn so far are marked, to see them replaced.
            await page.evaluate("document.querySelectorAll('#pending li').forEach(li => { li.dataset.old = '1'; })")
            await route.continue_()
            refetched.set()
        else:
            # A next page: held until the refetched first page has been drawn (at once when it already has).
            await refetched.wait()
            # (Locators, not wait_for_function: the page's Content-Security-Policy refuses string evaluation.)
            await expect(page.locator('#pending li[data-old]')).to_have_count(0)
            await expect(page.locator('#pending li')).not_to_have_count(0)
            await route.continue_()

    async with anyio.create_task_group() as group:
        requests = [ask_one(single(f'Question {index:02d}')) for index in range(12)]
        for request in requests:
            group.start_soon(web.hub.ask, request)
            await wait_pending(web.hub, request.id)
        await page.goto(web.login_url(live))
        await page.route('**/api/requests*', hold)
        await page.goto(f'{live}?limit=5')
        rows = page.locator('#pending li')
        await expect(rows).to_have_count(12)
        await expect(page.locator('#more-wrap')).to_be_hidden()
        assert [await row.locator('a .headers').inner_text() for row in await rows.all()] == [
            f'Question {index:02d}' for index in range(12)
        ]
        group.cancel_scope.cancel()
    assert tab.errors == []
