"""`EmailChannel` against a real SMTP server (aiosmtpd), and the inbox's one-click links (`/act`) over ASGI.

Each test starts the server, a `Notifier` with the channel over the in-process hub, and reads the delivered message
back: its text and HTML parts, in the recipient's language, everything the model wrote escaped. The option link
lands on a confirmation page that records nothing; its form records the answer as the recipient. Links for
someone the item is not addressed to, expired, changed, or for an app without the key, are refused. The real
browser follows a link in `tests/web/test_web_email_browser.py`.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import httpx
import pytest
from ask_user_support import ask_one, wait_until
from smtp_support import SMTPInbox, parts, smtp_server
from waits import WAIT

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user._action_codes import sign_action_code
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.notify import (
    DeliveryRefused,
    EmailChannel,
    InboxLinks,
    NotificationFailure,
    Notifier,
    Recipient,
    StaticDirectory,
    WaitingItem,
)
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval
from pydantic_ai_ask_user.web import SignedLoginLinks, create_app

pytestmark = pytest.mark.anyio

KEY = b'e' * 32
BASE = 'http://testserver/'
ALICE = Recipient('alice', email='alice@example.com')
BOB = Recipient('bob', email='bob@example.com')
MINJI = Recipient('minji', email='minji@example.com', language='ko')
HOSTILE = '<script>alert(1)</script> & "quotes"'
ACT = re.compile(r'http://testserver/act\?code=[^\s"<>]+')


def _request(name: str, audience: tuple[str, ...] | None = ('alice',), **context: Any) -> AskUserRequest:
    shown = QuestionContext(**context) if context else None
    return replace(ask_one(), id=name, run_id=None, audience=audience, context=shown)


@contextlib.asynccontextmanager
async def notifying(
    hub: QuestionHub, port: int, people: list[Recipient], **options: Any
) -> AsyncIterator[tuple[Notifier, list[NotificationFailure]]]:
    failures: list[NotificationFailure] = []
    settings: dict[str, Any] = {'gather_seconds': 0.05, 'digest_seconds': 0.5, 'backoff': 0.01} | options
    notifier = Notifier(
        hub,
        channels=[EmailChannel('127.0.0.1', port, sender='ask-user@example.com', timeout=10)],
        directory=StaticDirectory(people),
        links=InboxLinks(BASE, key=KEY),
        on_error=failures.append,
        **settings,
    )
    async with anyio.create_task_group() as group:
        group.start_soon(notifier.run)
        await notifier.wait_synced()
        yield notifier, failures
        group.cancel_scope.cancel()


def _client(hub: QuestionHub, *, key: bytes | None = KEY) -> httpx.AsyncClient:
    options: dict[str, Any] = {} if key is None else {'login_links': SignedLoginLinks(key)}
    app = create_app(hub, **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)


async def _mail(inbox: SMTPInbox, address: str, count: int = 1) -> Any:
    await wait_until(lambda: len(inbox.to(address)) >= count, f'{count} message(s) to {address}')
    return inbox.to(address)[count - 1]


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, html
    return found.group(1)


def _waiting(hub: QuestionHub, count: int) -> Any:
    async def waiting() -> bool:
        return await hub.count_pending() == count

    return waiting


def _code(url: str) -> str:
    return httpx.URL(url).params['code']


async def test_a_question_is_mailed_and_its_option_link_answers_only_once_confirmed() -> None:
    hub = QuestionHub()
    request = _request('q1', title=HOSTILE, agent_name='release-bot', summary='Ship **now**?\n<b>bold</b>')
    question = request.questions[0]
    with smtp_server() as (inbox, port):
        async with notifying(hub, port, [ALICE, BOB]), anyio.create_task_group() as group:
            answers: list[AskUserResponse] = []

            async def ask() -> None:
                answers.append(await hub.ask(request))

            group.start_soon(ask)
            message = await _mail(inbox, 'alice@example.com')
            assert inbox.to('bob@example.com') == []  # addressed to alice only
            text, body = parts(message)
            assert message['Subject'] == HOSTILE
            assert message['Auto-Submitted'] == 'auto-generated'
            assert message['Message-ID']
            assert message['Reply-To'] is None
            assert 'Replies to this message are not read.' in text
            assert str(message['To']) == 'alice <alice@example.com>'
            # The text says it as it was written; the HTML escapes every byte the application or model wrote.
            assert HOSTILE in text
            assert 'From release-bot' in text
            assert '<script>' not in body
            assert '<b>bold</b>' not in body
            assert '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;' in body
            assert '&lt;b&gt;bold&lt;/b&gt;' in body
            links = ACT.findall(text)
            assert len(links) == len(question.options)
            assert all(link.replace('&', '&amp;') in body for link in links)
            assert f'{question.options[1].label}' in text
            assert 'http://testserver/login?' in text  # the page and the inbox, signed in

            async with _client(hub) as browser:
                confirm = await browser.get(links[1])
                assert confirm.status_code == 200, confirm.text
                assert 'Send this answer?' in confirm.text
                assert question.options[1].label in confirm.text
                assert 'It is recorded as given by alice.' in confirm.text
                assert '<script>alert' not in confirm.text
                await hub.get(request.key)  # looking at it recorded nothing: the question still waits
                assert answers == []
                done = await browser.post('/act', data={'code': _code(links[1]), 'csrf': _csrf(confirm.text)})
                assert done.status_code == 200, done.text
                assert 'Thank you, your answer was sent' in done.text
                await wait_until(lambda: len(answers) == 1, 'the run to get the answer')
                again = await browser.get(links[0])
                assert again.status_code == 409, again.text
                assert 'Already answered' in again.text
    assert answers[0].answered_by == 'alice'
    assert answers[0].answers[0].selected == (question.options[1].label,)


async def test_the_form_needs_its_token_and_a_get_never_records() -> None:
    hub = QuestionHub()
    request = _request('q2')
    links = InboxLinks(BASE, key=KEY)
    url = links.action(ALICE, WaitingItem.of_question(request), 'answer', question=0, option=0)
    assert url is not None
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_until(_waiting(hub, 1), 'the question to wait')
        async with _client(hub) as browser:
            for _ in range(3):  # a scanner that fetches it again and again
                assert (await browser.get(url)).status_code == 200
            refused = await browser.post('/act', data={'code': _code(url), 'csrf': 'forged'})
            assert refused.status_code == 403
            assert 'This form has expired' in refused.text
        await hub.get(request.key)
        group.cancel_scope.cancel()


async def test_links_of_someone_else_expired_changed_or_without_the_key_are_refused() -> None:
    hub = QuestionHub()
    request = _request('q3')  # addressed to alice
    item = WaitingItem.of_question(request)
    links = InboxLinks(BASE, key=KEY)
    bobs = links.action(BOB, item, 'answer', question=0, option=0)
    alices = links.action(ALICE, item, 'answer', question=0, option=0)
    assert bobs is not None
    assert alices is not None
    expired = sign_action_code(
        KEY, Person('alice'), kind='question', item_key=request.key, act='answer', expires_at=time.time() - 1,
        question=0, option=0,
    )  # fmt: skip
    other_key = sign_action_code(
        b'x' * 32, Person('alice'), kind='question', item_key=request.key, act='answer', expires_at=time.time() + 60,
        question=0, option=0,
    )  # fmt: skip
    no_such_option = sign_action_code(
        KEY, Person('alice'), kind='question', item_key=request.key, act='answer', expires_at=time.time() + 60,
        question=0, option=99,
    )  # fmt: skip
    code = _code(alices)
    changed = code[:-3] + ('AAA' if not code.endswith('AAA') else 'BBB')
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_until(_waiting(hub, 1), 'the question to wait')
        async with _client(hub) as browser:
            not_theirs = await browser.get(bobs)
            assert not_theirs.status_code == 404
            assert 'No such question' in not_theirs.text
            for bad in (expired, other_key, changed, no_such_option, '', 'x' * 5000, '<script>'):
                page = await browser.get('/act', params={'code': bad})
                assert page.status_code == 403, bad
                assert 'This link does not work' in page.text
                assert '<script>' not in page.text.split('<body>')[1]
            token = _csrf((await browser.get(alices)).text)  # a real form's token, with bob's code in it
            posted = await browser.post('/act', data={'code': _code(bobs), 'csrf': token})
            assert posted.status_code == 404
        async with _client(hub, key=None) as keyless:
            assert (await keyless.get(alices)).status_code == 403
        await hub.get(request.key)  # nothing was recorded
        group.cancel_scope.cancel()
    async with _client(hub) as browser:  # the run stopped waiting: its question was withdrawn
        withdrawn = await browser.get(alices)
    assert withdrawn.status_code == 410, withdrawn.text
    assert 'This question is no longer waiting' in withdrawn.text


async def test_an_approval_is_mailed_and_approved_by_its_link() -> None:
    hub = QuestionHub()
    approval = PendingApproval(
        'w1', 'call_0', 'deploy_to', {'env': 'production', 'note': '<img src=x onerror=alert(1)>'}, audience=('alice',)
    )
    results: list[Any] = []
    with smtp_server() as (inbox, port):
        async with notifying(hub, port, [ALICE, BOB]), anyio.create_task_group() as group:

            async def wait() -> None:
                results.append(await hub.ask_wait('w1', [], [approval]))

            group.start_soon(wait)
            message = await _mail(inbox, 'alice@example.com')
            text, body = parts(message)
            assert message['Subject'] == 'deploy_to'
            assert 'The agent wants to run deploy_to.' in text
            assert '"env": "production"' in text
            assert '<img' not in body
            assert '&lt;img src=x onerror=alert(1)&gt;' in body
            approve, deny = ACT.findall(text)
            assert 'http://testserver/login?' in text
            assert 'next=approvals%2F' in text
            async with _client(hub) as browser:
                denied_page = await browser.get(deny)
                assert 'Deny deploy_to?' in denied_page.text
                confirm = await browser.get(approve)
                assert confirm.status_code == 200, confirm.text
                assert 'Approve deploy_to?' in confirm.text
                assert '&lt;img src=x onerror=alert(1)&gt;' in confirm.text
                await hub.get_approval(approval.key)  # still waiting
                done = await browser.post('/act', data={'code': _code(approve), 'csrf': _csrf(confirm.text)})
                assert done.status_code == 200, done.text
                assert 'Approved: deploy_to runs' in done.text
            await wait_until(lambda: len(results) == 1, 'the wait to end')
    decision = results[0][1][0][1]
    assert isinstance(decision, ApprovalDecision)
    assert decision.approved
    assert decision.decided_by == 'alice'


async def test_several_items_are_one_digest_mail() -> None:
    hub = QuestionHub()
    requests = [_request(f'd{n}', title=f'Item {n}') for n in range(3)]
    with smtp_server() as (inbox, port):
        async with anyio.create_task_group() as group:
            for request in requests:
                group.start_soon(hub.ask, request)
            await wait_until(_waiting(hub, 3), 'three questions to wait')
            async with notifying(hub, port, [ALICE]) as (notifier, _):
                message = await _mail(inbox, 'alice@example.com')
                await notifier.drain()
                assert len(inbox.to('alice@example.com')) == 1
            group.cancel_scope.cancel()
    text, _ = parts(message)
    assert message['Subject'] == '3 questions wait for you'
    assert '3 items wait for you.' in text
    for n in range(3):
        assert f'Item {n}' in text
    assert len(ACT.findall(text)) == 3 * len(requests[0].questions[0].options)


async def test_a_refused_address_is_a_failed_entry_without_retries() -> None:
    hub = QuestionHub()
    nobody = Recipient('nobody', email='nobody@example.com')
    eve = Recipient('eve', email='eve@example.com, all@example.com')  # not one address: nothing is sent
    with smtp_server() as (inbox, port):
        inbox.refuse.add('nobody@example.com')
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, _request('r1', audience=('nobody', 'eve')))
            async with notifying(hub, port, [nobody, eve], retries=5) as (notifier, failures):
                await wait_until(lambda: len(failures) == 2, 'both failures to be reported')
                await notifier.drain()
                entries = [await notifier.ledger.get('r1', name, 'email') for name in ('nobody', 'eve')]
            group.cancel_scope.cancel()
    assert [entry.state if entry else None for entry in entries] == ['failed', 'failed']
    reasons = {failure.recipient: failure for failure in failures}
    assert (reasons['nobody'].attempts, reasons['eve'].attempts) == (1, 1)  # given up at once: no retry storm
    assert '550' in reasons['nobody'].reason
    assert 'cannot write the message to eve' in reasons['eve'].reason
    assert inbox.attempts == 1  # one RCPT TO, refused; nothing at all for eve
    assert inbox.messages == []


async def test_a_passing_refusal_is_retried_until_it_goes_through() -> None:
    hub = QuestionHub()
    with smtp_server() as (inbox, port):
        inbox.busy['alice@example.com'] = 2
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, _request('t1'))
            async with notifying(hub, port, [ALICE], retries=3) as (notifier, failures):
                await _mail(inbox, 'alice@example.com')
                await notifier.drain()
                entry = await notifier.ledger.get('t1', 'alice', 'email')
            group.cancel_scope.cancel()
    assert failures == []
    assert entry is not None
    assert (entry.state, entry.attempts) == ('sent', 3)
    assert len(inbox.to('alice@example.com')) == 1


async def test_a_korean_recipient_reads_korean() -> None:
    hub = QuestionHub()
    korean = {'accept-language': 'ko-KR,ko;q=0.9'}
    with smtp_server() as (inbox, port):
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, _request('k1', audience=('minji',), title='배포 확인'))
            async with notifying(hub, port, [MINJI]):
                message = await _mail(inbox, 'minji@example.com')
            text, body = parts(message)
            [link, *_] = ACT.findall(text)
            async with _client(hub) as browser:
                page = await browser.get(link, headers=korean)
                done = await browser.post('/act', data={'code': _code(link), 'csrf': _csrf(page.text)}, headers=korean)
            group.cancel_scope.cancel()
    assert message['Content-Language'] == 'ko'
    assert message['Subject'] == '배포 확인'
    assert '질문 하나가 답을 기다리고 있습니다.' in text
    assert '이 메일에 회신해도 읽지 않습니다.' in text
    assert 'lang="ko"' in body
    assert 'Replies to this message' not in text
    assert '이 답을 보낼까요?' in page.text
    assert 'minji의 응답으로 기록됩니다.' in page.text
    assert done.status_code == 200, done.text
    assert 'lang="ko"' in done.text


def test_an_address_that_is_none_is_refused_clearly() -> None:
    channel = EmailChannel('127.0.0.1', 2525, sender='ask-user@example.com')
    item = WaitingItem.of_question(_request('h1'))
    with pytest.raises(DeliveryRefused, match='cannot write the message'):
        channel.message(Recipient('eve', email='not an address'), [item], InboxLinks(BASE))
    with pytest.raises(ValueError, match='plain text'):
        EmailChannel('smtp.example.com', sender='a@example.com', username='u', password='p')
    EmailChannel('localhost', sender='a@example.com', username='u', password='p')  # never leaves this machine
    with pytest.raises(ValueError, match='not both'):
        EmailChannel('smtp.example.com', sender='a@example.com', starttls=True, ssl=True)
    assert channel.reaches(ALICE)
    assert not channel.reaches(Recipient('slacker', slack_user='U1'))


def test_without_a_key_a_mail_links_to_the_page_and_has_no_one_click_links() -> None:
    channel = EmailChannel('127.0.0.1', 2525, sender='ask-user@example.com')
    item = WaitingItem.of_question(_request('n1'))
    text, body = parts(channel.message(ALICE, [item], InboxLinks(BASE)))
    assert ACT.findall(text) == []
    assert 'http://testserver/requests/' in text
    assert 'Each link asks you to confirm' not in text
    assert '<a href="http://testserver/requests/' in body


async def test_the_inbox_serves_a_receiving_channel_at_notify_its_name() -> None:
    from pydantic_ai_ask_user._cli.inbox_web import WithChannels

    seen: list[tuple[str, str]] = []

    class Answering(EmailChannel):
        def endpoint(self, store: Any) -> Any:
            async def app(scope: Any, receive: Any, send: Any) -> None:
                seen.append((scope['root_path'], scope['path']))
                await send({'type': 'http.response.start', 'status': 204, 'headers': []})
                await send({'type': 'http.response.body', 'body': b''})

            return app

    hub = QuestionHub()
    channel = Answering('127.0.0.1', 2525, sender='a@example.com', name='chat')
    notifier = Notifier(hub, channels=[channel], directory=StaticDirectory([ALICE]), links=InboxLinks(BASE))
    served = WithChannels(create_app(hub))
    assert served.mount(notifier, hub) == ['notify/chat']
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=served), base_url=BASE) as client:
        assert (await client.post('/notify/chat/events')).status_code == 204
        assert (await client.post('/notify/chatter')).status_code != 204  # the inbox's, not the channel's
        assert (await client.get('/favicon.ico')).status_code == 200
    assert seen == [('/notify/chat', '/events')]


async def test_a_server_that_cannot_do_what_the_channel_needs_is_a_refusal() -> None:
    item = WaitingItem.of_question(_request('s1'))
    links = InboxLinks(BASE, key=KEY)
    with smtp_server() as (inbox, port):
        tls = EmailChannel('127.0.0.1', port, sender='a@example.com', starttls=True, timeout=10)
        with pytest.raises(DeliveryRefused, match='cannot do what the channel is set up for'):
            await tls.send(ALICE, [item], links)
        login = EmailChannel('127.0.0.1', port, sender='a@example.com', username='u', password='p', timeout=10)
        with pytest.raises(DeliveryRefused, match='cannot do what the channel is set up for'):
            await login.send(ALICE, [item], links)
        plain = EmailChannel('127.0.0.1', port, sender='a@example.com', timeout=10)
        refs = await plain.send(ALICE, [item], links)
        assert refs == {item.key: str(inbox.to('alice@example.com')[0]['Message-ID'])}
    closed = EmailChannel('127.0.0.1', port, sender='a@example.com', timeout=10)
    with pytest.raises(ConnectionRefusedError):  # nobody listens any more: worth retrying, not a refusal
        await closed.send(ALICE, [item], links)


async def test_the_inbox_starts_a_failed_notifier_again(capsys: pytest.CaptureFixture[str]) -> None:
    from pydantic_ai_ask_user._cli.inbox_web import _keep_notifying  # pyright: ignore[reportPrivateUsage]

    class Flaky(QuestionHub):
        failures = 1

        def events(self) -> Any:  # the notifier's own retries do not cover a store that fails this early
            if self.failures:
                self.failures -= 1
                raise ConnectionError('the database went away')
            return super().events()

    hub = Flaky()
    notifier = Notifier(
        hub,
        channels=[EmailChannel('127.0.0.1', 2525, sender='a@example.com')],
        directory=StaticDirectory([ALICE]),
        links=InboxLinks(BASE),
        resync_seconds=0.05,
    )
    async with anyio.create_task_group() as group:
        group.start_soon(_keep_notifying, notifier)
        with anyio.fail_after(WAIT):
            await notifier.wait_synced()
        group.cancel_scope.cancel()
    said = capsys.readouterr().err
    assert 'ask-user: the notifier failed, starting it again in 0 s: ConnectionError: the database went away' in said
