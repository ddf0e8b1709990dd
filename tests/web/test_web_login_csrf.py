"""Login CSRF: a page on another site cannot sign the person's browser in as someone else.

The attacker holds a login link of their own (`mallory`); the person is signed in as `alice`. A login
link opened by another page, or one for a different person than the browser is signed in as, only
shows "Sign in?", whose form posts the code back with a token the other site cannot read.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.async_api import BrowserContext, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route
from web_support import asgi_client, asking, csrf_of

from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

CROSS_SITE = {'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate'}
"""What a browser sends with a navigation another site's page started."""


def _code(path: str) -> str:
    return parse_qs(urlsplit(path).query)['code'][0]


def _session_cookie(client: httpx.AsyncClient) -> str | None:
    return next((value for name, value in client.cookies.items() if name.startswith('ask-user-session')), None)


@pytest.mark.browser
@pytest.mark.parametrize(
    'other_host',
    [pytest.param('localhost', id='another-site'), pytest.param('127.0.0.1', id='another-port-same-site')],
)
async def test_a_login_link_opened_by_another_site_does_not_replace_who_the_browser_is(
    context: BrowserContext, other_host: str
) -> None:
    web = WebAnswerer()
    async with serve(web.app) as base, asking(web) as job:
        mallory = web.login_url(base, name='mallory')

        async def evil(request: Request) -> HTMLResponse:
            link = html.escape(mallory)
            form = (
                f'<form id="post" method="post" action="{html.escape(base)}login">'
                f'<input type="hidden" name="code" value="{html.escape(_code(mallory))}">'
                '<button>Claim</button></form>'
            )
            return HTMLResponse(f'<a id="go" href="{link}">Win a prize</a>{form}')

        # Another site (another host name, `localhost`), or another port of the same host: same-site, so
        # the browser sends it the person's cookies too (README, "One cookie per port").
        async with serve(Starlette(routes=[Route('/', evil)])) as elsewhere:
            evil_url = elsewhere.replace('127.0.0.1', other_host)
            page = await context.new_page()
            await page.goto(web.login_url(base, name='alice'))  # the person's own link: signed in at once
            await expect(page.get_by_role('heading', name='Waiting for you')).to_be_visible()

            await page.goto(evil_url)
            await page.get_by_role('link', name='Win a prize').click()
            await expect(page.get_by_role('heading', name='Sign in?')).to_be_visible()
            await expect(page.locator('#login-as')).to_have_text('This link signs this browser in as mallory.')
            # (The browser withholds its SameSite=Strict session cookie from a navigation another site started,
            # so this page cannot say who the browser is; the person's own click on a link for someone else
            # does say it, below in `test_a_link_for_someone_else_asks_before_replacing_who_the_browser_is`.)

            # A cross-site form posting the code straight to /login has no token from that page.
            await page.goto(evil_url)
            async with page.expect_response(f'{base}login') as posted:
                await page.get_by_role('button', name='Claim').click()
            assert (await posted.value).status == 403

            # Still alice: the answer is recorded as hers.
            await page.goto(f'{base}requests/{job.request.id}')
            await page.get_by_label('SQLite', exact=True).check()
            await page.get_by_role('button', name='Submit').click()
            await expect(page.locator('#confirmation')).to_be_visible()
    assert (await job.response()).answered_by == 'alice'


@pytest.mark.browser
async def test_the_person_can_still_sign_in_from_the_page_another_site_led_to(context: BrowserContext) -> None:
    web = WebAnswerer()
    async with serve(web.app) as base:
        bob = web.login_url(base, name='bob')

        async def elsewhere_page(request: Request) -> HTMLResponse:
            return HTMLResponse(f'<a href="{html.escape(bob)}">My sign-in link</a>')

        async with serve(Starlette(routes=[Route('/', elsewhere_page)])) as elsewhere:
            page = await context.new_page()
            await page.goto(elsewhere.replace('127.0.0.1', 'localhost'))
            await page.get_by_role('link', name='My sign-in link').click()
            await page.get_by_role('button', name='Sign in', exact=True).click()
            await expect(page.get_by_role('heading', name='Waiting for you')).to_be_visible()
            listed = await page.request.get(f'{base}api/requests')
            assert listed.status == 200


async def test_a_cross_site_login_link_shows_a_page_and_keeps_its_code(web: WebAnswerer) -> None:
    path = '/' + web.app.login_path(name='mallory')
    async with asgi_client(web) as browser:
        confirm = await browser.get(path, headers=CROSS_SITE)
        assert confirm.status_code == 200
        assert 'This link signs this browser in as mallory.' in confirm.text
        assert _session_cookie(browser) is None
        assert (await browser.get('/api/requests')).status_code == 401
        # Nothing was used up: the person's own click still signs in.
        assert (await browser.get(path)).status_code == 303


async def test_a_link_for_someone_else_asks_before_replacing_who_the_browser_is(web: WebAnswerer) -> None:
    async with asgi_client(web) as browser:
        assert (await browser.get('/' + web.app.login_path(name='alice'))).status_code == 303
        alice = _session_cookie(browser)
        confirm = await browser.get('/' + web.app.login_path(name='bob'))  # opened by the person: no header
        assert confirm.status_code == 200
        assert 'This browser is signed in as alice now; signing in replaces that.' in confirm.text
        assert _session_cookie(browser) == alice
        # A link for the same person signs in at once, as before.
        assert (await browser.get('/' + web.app.login_path(name='alice'))).status_code == 303


async def test_confirming_posts_the_code_with_the_pages_token(web: WebAnswerer) -> None:
    path = '/' + web.app.login_path(name='bob')
    async with asgi_client(web) as browser:
        confirm = await browser.get(path, headers=CROSS_SITE)
        fields = {'code': _code(path), 'next': '', 'csrf': csrf_of(confirm.text)}
        refused = await browser.post('/login', data={**fields, 'csrf': 'forged'})
        assert refused.status_code == 403
        assert _session_cookie(browser) is None
        signed_in = await browser.post('/login', data=fields)
        assert signed_in.status_code == 303
        assert (await browser.get('/api/requests')).status_code == 200
        # The page's token was made for a browser signed in as nobody; now it is bob's, so it is refused.
        again = await browser.post('/login', data=fields)
        assert again.status_code == 403
        # And the code was used: another browser opening the link is told it does not work.
        async with asgi_client(web) as other:
            assert 'This link does not work' in (await other.get(path, headers=CROSS_SITE)).text
