"""`SignedLoginLinks`: sign-in links made with a key another process shares, accepted by the app besides its own.

Each code signs one browser in as the person it names, once (also after a restart, through `used_file`), until it
expires; a code signed with another key, changed, or cut is refused like any bad link. Through the app over ASGI:
the person's addressed question is theirs, an administrator's link sees everything, and a link another site opens
still asks "Sign in?" first (login CSRF), as the app's own links do.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import httpx
import pytest
from ask_user_support import ask_one
from web_support import asgi_client, asking, csrf_of

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user._login_links import MAX_LOGIN_CODE_LENGTH, read_login_code, sign_login_code
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.web import SignedLoginLinks, WebAnswerer, create_app

pytestmark = pytest.mark.anyio

KEY = 'a-key-of-thirty-two-characters!!'
"""The key both sides hold."""


def test_a_code_signs_in_its_person_once() -> None:
    links = SignedLoginLinks(KEY)
    code = links.code(Person('alice', groups=['team:billing']))
    assert links.peek(code) == Person('alice', groups=['team:billing'])
    assert links.peek(code) is not None  # peeking uses nothing up
    assert links.redeem(code) == Person('alice', groups=['team:billing'])
    assert links.redeem(code) is None
    assert links.peek(code) is None


def test_another_process_with_the_same_key_makes_codes_this_one_takes(tmp_path: Path) -> None:
    # As `ask-user inbox link` does: the core's signing only, no web server, no `SignedLoginLinks`.
    code = sign_login_code(KEY, Person('ops', sees_all=True), expires_at=time.time() + 60)
    assert SignedLoginLinks(KEY).redeem(code) == Person('ops', sees_all=True)


def test_a_used_code_stays_used_after_a_restart_through_the_used_file(tmp_path: Path) -> None:
    used = tmp_path / 'key.json.used'
    first = SignedLoginLinks(KEY, used_file=used)
    code = first.code(Person('alice'))
    other = first.code(Person('bob'))
    assert first.redeem(code) is not None
    assert oct(used.stat().st_mode & 0o777) == '0o600'
    restarted = SignedLoginLinks(KEY, used_file=used)  # a new server process on the same file
    assert restarted.redeem(code) is None
    assert restarted.redeem(other) == Person('bob')  # an unused link still works
    assert first.redeem(other) is None  # and a second server sharing the file sees it used


def test_the_used_file_forgets_links_that_expired_anyway(tmp_path: Path) -> None:
    used = tmp_path / 'used'
    later = int(time.time()) + 3600
    used.write_text(f'old-nonce {int(time.time()) - 10}\nkept-nonce {later}\nnot a line\n')
    SignedLoginLinks(KEY, used_file=used)
    assert used.read_text() == f'kept-nonce {later}\n'


@pytest.mark.parametrize(
    'spoil',
    [
        pytest.param(
            lambda code: sign_login_code('another-key-of-32-characters!!!!', Person('a'), expires_at=9e9),
            id='other-key',
        ),
        pytest.param(lambda code: code[:-2] + ('AA' if not code.endswith('AA') else 'BB'), id='changed-signature'),
        pytest.param(lambda code: 'e' + code[1:] if code[0] != 'e' else 'f' + code[1:], id='changed-body'),
        pytest.param(lambda code: code.split('.')[0], id='no-signature'),
        pytest.param(lambda code: code + '.' + code, id='two-dots'),
        pytest.param(lambda code: 'x' * (MAX_LOGIN_CODE_LENGTH + 1), id='too-long'),
        pytest.param(lambda code: 'ü.ü', id='not-ascii'),
        pytest.param(lambda code: '', id='empty'),
    ],
)
def test_a_spoiled_code_is_refused(spoil: object) -> None:
    links = SignedLoginLinks(KEY)
    code = links.code(Person('alice'))
    assert callable(spoil)
    bad = spoil(code)
    assert links.peek(bad) is None
    assert links.redeem(bad) is None
    assert links.redeem(code) == Person('alice')


def test_an_expired_code_is_refused_and_a_link_needs_a_name_or_sees_all() -> None:
    expired = sign_login_code(KEY, Person('alice'), expires_at=time.time() - 1)
    assert SignedLoginLinks(KEY).redeem(expired) is None
    assert read_login_code(KEY, sign_login_code(KEY, Person('a'), expires_at=100.0), now=99.0) is not None
    assert read_login_code(KEY, sign_login_code(KEY, Person('a'), expires_at=100.0), now=100.0) is None
    with pytest.raises(ValueError, match='named person'):
        sign_login_code(KEY, Person(), expires_at=time.time() + 60)
    with pytest.raises(ValueError, match='at least 16 bytes'):
        SignedLoginLinks('short')
    with pytest.raises(ValueError, match='positive number of seconds'):
        SignedLoginLinks(KEY).code(Person('a'), seconds=0)


def test_login_links_and_an_authorize_hook_do_not_go_together() -> None:
    with pytest.raises(ValueError, match='login_links'):
        create_app(QuestionHub(), authorize=lambda request: True, login_links=SignedLoginLinks(KEY))


async def test_through_the_app_a_person_sees_their_question_and_an_administrator_every_one() -> None:
    links = SignedLoginLinks(KEY)
    web = WebAnswerer(login_links=links)
    theirs = dataclasses.replace(ask_one(), audience=('alice',))
    async with asking(web, theirs) as job:
        async with asgi_client(web) as alice, asgi_client(web) as bob, asgi_client(web) as ops:
            for client, person in ((alice, Person('alice')), (bob, Person('bob')), (ops, Person(sees_all=True))):
                # A browser opening a link from a mail program says `Sec-Fetch-Site: none`: signed in at once.
                opened = {'sec-fetch-site': 'none'}
                signed = await client.get('/login', params={'code': links.code(person)}, headers=opened)
                assert signed.status_code == 303, signed.text
            assert [r['id'] for r in (await alice.get('/api/requests')).json()['requests']] == [job.request.key]
            assert (await bob.get('/api/requests')).json()['requests'] == []
            assert (await bob.get(f'/api/requests/{job.request.key}')).status_code == 404
            assert [r['id'] for r in (await ops.get('/api/requests')).json()['requests']] == [job.request.key]
            question = job.request.questions[0]
            answer = {'answers': [{'header': question.header, 'selected': [question.options[0].label]}]}
            posted = await alice.post(f'/api/requests/{job.request.key}/answer', json=answer)
            assert posted.status_code == 200, posted.text
        response = await job.response()
    assert response.answered_by == 'alice'


async def test_a_mail_scanner_that_fetches_a_signed_link_leaves_it_unused() -> None:
    links = SignedLoginLinks(KEY)
    web = WebAnswerer(login_links=links)
    code = links.code(Person('alice'))
    async with asgi_client(web) as scanner:
        for _ in range(2):  # no `Sec-Fetch-Site`, as a scanner (or curl) sends
            fetched = await scanner.get('/login', params={'code': code, 'next': 'approvals/abc'})
            assert fetched.status_code == 200
            assert 'This link signs this browser in as alice.' in fetched.text
            assert 'value="approvals/abc"' in fetched.text
    assert links.peek(code) is not None
    async with asgi_client(web) as browser:
        opened = await browser.get(
            '/login', params={'code': code, 'next': 'approvals/abc'}, headers={'sec-fetch-site': 'none'}
        )
        assert opened.status_code == 303
        assert opened.headers['location'] == '/approvals/abc'
    assert links.peek(code) is None


async def test_a_signed_link_another_site_opens_asks_first_then_signs_in_once() -> None:
    links = SignedLoginLinks(KEY)
    web = WebAnswerer(login_links=links)
    code = links.code(Person('alice'))
    async with asgi_client(web) as browser:
        asked = await browser.get('/login', params={'code': code}, headers={'sec-fetch-site': 'cross-site'})
        assert asked.status_code == 200
        assert 'This link signs this browser in as alice.' in asked.text
        assert links.peek(code) is not None  # not used by being looked at
        confirmed = await browser.post('/login', data={'code': code, 'csrf': csrf_of(asked.text), 'next': ''})
        assert confirmed.status_code == 303
        assert (await browser.get('/api/requests')).status_code == 200
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url='http://testserver') as other:
        assert (await other.get('/login', params={'code': code})).status_code == 403
