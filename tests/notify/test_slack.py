"""`SlackChannel` with the real slack_sdk: messages checked against its Block Kit models, posted to a local server
that records the Web API calls, and Slack's interaction payloads signed as Slack signs them.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import anyio
import pytest
from ask_user_support import ask_one, multi, single, wait_until
from slack_support import (
    SECRET,
    TOKEN,
    SlackAPI,
    action_of,
    button_click,
    checked_blocks,
    checked_view,
    form_body,
    post,
    served,
    signed_headers,
    slack_api,
    texts,
    view_submission,
)

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.notify import (
    DeliveryRefused,
    InboxLinks,
    Notifier,
    ReceivingChannel,
    Recipient,
    StaticDirectory,
    UpdatingChannel,
    WaitingItem,
)
from pydantic_ai_ask_user.notify.slack import SlackChannel
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval

pytestmark = pytest.mark.anyio

ALICE = Recipient('alice', slack_user='U0ALICE', groups={'team:db'})
BOB = Recipient('bob', slack_user='U0BOB')
DIRECTORY = StaticDirectory([ALICE, BOB])
LINKS = InboxLinks('https://inbox.example/', key=b'k' * 32)


def _channel(api: SlackAPI, **options: Any) -> SlackChannel:
    return SlackChannel(
        token=TOKEN,
        signing_secret=SECRET,
        person_for=SlackChannel.people(DIRECTORY.people),
        base_url=api.url,
        **options,
    )


def _notifier(hub: QuestionHub, channel: SlackChannel) -> Notifier:
    return Notifier(hub, channels=[channel], directory=DIRECTORY, links=LINKS, gather_seconds=0, digest_seconds=0)


def _request(
    name: str, *questions: Any, audience: tuple[str, ...] | None = ('alice',), **fields: Any
) -> AskUserRequest:
    return replace(ask_one(*questions), id=name, audience=audience, **fields)


async def _signed_post(app: Any, payload: dict[str, Any]) -> Any:
    body = form_body(payload)
    return await post(app, body, signed_headers(body))


async def test_a_button_in_the_dm_answers_the_question_and_the_message_says_who() -> None:
    hub = QuestionHub()
    request = _request('buttons', single())
    answers: list[AskUserResponse] = []
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(_notifier(hub, channel).run)

            async def ask() -> None:
                answers.append(await hub.ask(request))

            group.start_soon(ask)
            await wait_until(lambda: api.called('chat.postMessage'), 'the DM to be posted')
            posted = api.called('chat.postMessage')[0]
            assert posted['channel'] == 'U0ALICE'
            assert api.tokens == {f'Bearer {TOKEN}'}
            blocks = posted['blocks']
            checked_blocks(blocks)
            shown = texts(blocks)
            assert 'Which database should the migration target?' in shown
            assert {'PostgreSQL', 'SQLite', 'MySQL', 'Other…', 'Open in the inbox'} <= set(shown)
            _, link = action_of(blocks, 'ask_user:link')
            assert link['url'].startswith('https://inbox.example/login?code=')
            block_id, button = action_of(blocks, 'ask_user:answer:1')
            assert button['text']['text'] == 'SQLite'
            message = api.posted[0]
            response = await _signed_post(app, button_click(message, 'U0ALICE', block_id, button))
            assert response.status_code == 200
            await wait_until(lambda: answers, 'the run to get its answer')
            assert answers[0].answers[0].selected == ('SQLite',)
            assert answers[0].answered_by == 'alice'
            await wait_until(lambda: api.called('chat.update'), 'the message to be updated')
            update = api.called('chat.update')[0]
            assert (update['channel'], update['ts']) == (message['channel'], message['ts'])
            checked_blocks(update['blocks'])
            assert 'Answered by alice' in texts(update['blocks'])
            assert not [b for b in update['blocks'] if b['type'] == 'actions']
            group.cancel_scope.cancel()


async def _posted(api: SlackAPI, channel: SlackChannel, recipient: Recipient, *items: WaitingItem) -> dict[str, Any]:
    refs = await channel.send(recipient, items, LINKS)
    message = api.posted[-1]
    assert set(refs.values()) <= {
        f'{message["channel"]}:{message["ts"]}',
        *(f'{message["channel"]}:{message["ts"]}#{n}' for n in range(len(items))),
    }
    checked_blocks(message['blocks'])
    return message


async def _asking(hub: QuestionHub, request: AskUserRequest, into: list[AskUserResponse]) -> None:
    into.append(await hub.ask(request))


async def test_a_modal_answers_several_questions_with_a_custom_answer_and_a_note() -> None:
    hub = QuestionHub()
    request = _request('modal', single(), multi(), notes=True)
    answers: list[AskUserResponse] = []
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(_asking, hub, request, answers)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            assert 'ask_user:answer:0' not in json.dumps(message['blocks'])  # several questions: the modal only
            block_id, button = action_of(message['blocks'], 'ask_user:open')
            assert button['text']['text'] == 'Answer…'
            assert (await _signed_post(app, button_click(message, 'U0ALICE', block_id, button))).status_code == 200
            await wait_until(lambda: api.called('views.open'), 'the modal to open')
            opened = api.called('views.open')[0]
            assert opened['trigger_id'].startswith('1234567890.')
            view = opened['view']
            checked_view(view)
            inputs = {block['block_id']: block for block in view['blocks']}
            assert inputs['q0']['element']['type'] == 'radio_buttons'
            assert inputs['q1']['element']['type'] == 'checkboxes'
            assert {'q0-other', 'q0-note', 'q1-other', 'q1-note'} <= set(inputs)

            # Nothing picked for the first question: the modal says so, and nothing is recorded.
            empty = view_submission(view, 'U0ALICE', {'q1': {'choice': {'type': 'checkboxes', 'selected_options': []}}})
            refused = await _signed_post(app, empty)
            assert refused.json()['response_action'] == 'errors'
            assert set(refused.json()['errors']) == {'q0', 'q1'}
            assert len(await hub.pending()) == 1

            values = {
                'q0': {'choice': {'type': 'radio_buttons', 'selected_option': None}},
                'q0-other': {'other': {'type': 'plain_text_input', 'value': 'CockroachDB, <!here> *please*'}},
                'q0-note': {'note': {'type': 'plain_text_input', 'value': 'after the backup'}},
                'q1': {
                    'choice': {
                        'type': 'checkboxes',
                        'selected_options': [view['blocks'][3]['element']['options'][i] for i in (0, 2)],
                    }
                },
                'q1-other': {'other': {'type': 'plain_text_input', 'value': None}},
                'q1-note': {'note': {'type': 'plain_text_input', 'value': ''}},
            }
            done = await _signed_post(app, view_submission(view, 'U0ALICE', values))
            assert done.status_code == 200
            assert done.content == b''  # the modal closes
            await wait_until(lambda: answers, 'the run to get its answer')
            first, second = answers[0].answers
            assert (first.custom_answer, first.selected, first.note) == (
                'CockroachDB, <!here> *please*',
                (),
                'after the backup',
            )
            assert (second.selected, second.note) == (('dev', 'production'), None)
            assert answers[0].answered_by == 'alice'
            await wait_until(lambda: api.called('chat.update'), 'the message to be updated')
            assert 'Answered by alice' in texts(api.called('chat.update')[0]['blocks'])
            group.cancel_scope.cancel()


async def test_six_options_are_a_select_menu() -> None:
    from pydantic_ai_ask_user import Question, QuestionOption

    six = Question(
        header='Region', question='Which region?', options=tuple(QuestionOption(label=f'eu-{n}') for n in range(6))
    )
    hub = QuestionHub()
    request = _request('select', six)
    answers: list[AskUserResponse] = []
    with slack_api() as api:
        channel = _channel(api, allow_custom_answers=False)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(_asking, hub, request, answers)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            assert 'Other…' not in texts(message['blocks'])
            block_id, select = action_of(message['blocks'], 'ask_user:select')
            assert select['type'] == 'static_select'
            assert len(select['options']) == 6
            chosen = select | {'selected_option': select['options'][4]}
            assert (await _signed_post(app, button_click(message, 'U0ALICE', block_id, chosen))).status_code == 200
            await wait_until(lambda: answers, 'the run to get its answer')
            assert answers[0].answers[0].selected == ('eu-4',)
            group.cancel_scope.cancel()


async def test_an_approval_is_approved_and_another_denied_with_a_reason() -> None:
    hub = QuestionHub()
    approvals = [
        PendingApproval(
            token='t1',
            tool_call_id=f'c{n}',
            tool_name='refund',
            args={'amount': n, 'note': '<!channel> ```'},
            run_id='r1',
            audience=('alice',),
        )
        for n in (1, 2)
    ]
    result: list[Any] = []
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)

        async def wait() -> None:
            result.append(await hub.ask_wait('t1', [], approvals))

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await wait_until(lambda: hub.pending_approvals(), 'the approvals to wait')
            message = await _posted(api, channel, ALICE, *(WaitingItem.of_approval(a) for a in approvals))
            assert message['blocks'][0]['type'] == 'header'
            code = [t for t in texts(message['blocks']) if t.startswith('```')]
            assert len(code) == 2
            assert '<' not in ''.join(code)
            assert '&lt;!channel&gt;' in code[0]
            assert code[0].count('```') == 2  # the arguments' backticks cannot close the code block

            approve_block, approve = action_of(message['blocks'], 'ask_user:approve')
            assert approve_block.endswith(approvals[0].key)
            assert (
                await _signed_post(app, button_click(message, 'U0ALICE', approve_block, approve))
            ).status_code == 200
            await wait_until(lambda: api.called('chat.update'), 'the message to be updated')
            updated = api.called('chat.update')[0]['blocks']
            checked_blocks(updated)
            assert 'Approved by alice' in texts(updated)
            # The other approval's buttons stay.
            deny_block, deny = action_of(updated, 'ask_user:deny')
            assert deny_block.endswith(approvals[1].key)

            message = message | {'blocks': updated}
            assert (await _signed_post(app, button_click(message, 'U0ALICE', deny_block, deny))).status_code == 200
            await wait_until(lambda: api.called('views.open'), 'the reason modal to open')
            view = api.called('views.open')[0]['view']
            checked_view(view)
            reason = {'reason': {'reason': {'type': 'plain_text_input', 'value': 'Too much without a ticket'}}}
            assert (await _signed_post(app, view_submission(view, 'U0ALICE', reason))).status_code == 200
            await wait_until(lambda: result, 'the wait to end')
            decisions = dict((a.key, d) for a, d in result[0][1])
            assert decisions[approvals[0].key] == ApprovalDecision(approved=True)
            assert decisions[approvals[0].key].decided_by == 'alice'
            assert decisions[approvals[1].key].reason == 'Too much without a ticket'
            assert not decisions[approvals[1].key].approved
            await wait_until(lambda: len(api.called('chat.update')) == 2, 'the message to be updated again')
            final = api.called('chat.update')[1]['blocks']
            assert {'Approved by alice', 'Denied by alice'} <= set(texts(final))
            assert not [b for b in final if b['type'] == 'actions']
            group.cancel_scope.cancel()


async def test_requests_not_signed_by_slack_now_are_refused_and_record_nothing() -> None:
    hub = QuestionHub()
    request = _request('forged', single())
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, request)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            block_id, button = action_of(message['blocks'], 'ask_user:answer:0')
            body = form_body(button_click(message, 'U0ALICE', block_id, button))
            now = int(time.time())
            good = signed_headers(body, timestamp=now)
            attempts = {
                'forged': signed_headers(body, secret='not-the-secret', timestamp=now),
                'stale': signed_headers(body, timestamp=now - 6 * 60),
                'replayed under another timestamp': good | {'X-Slack-Request-Timestamp': str(now + 1)},
                'no signature': {k: v for k, v in good.items() if k != 'X-Slack-Signature'},
                'no timestamp': {k: v for k, v in good.items() if k != 'X-Slack-Request-Timestamp'},
                'a timestamp that is no number': good | {'X-Slack-Request-Timestamp': 'soon'},
                'another body': good,
            }
            for what, headers in attempts.items():
                sent = body.replace(b'U0ALICE', b'U0BOB') if what == 'another body' else body
                response = await post(app, sent, headers)
                assert response.status_code == 401, what
            too_big = b'payload=' + b'x' * (channel.max_payload_bytes + 1)
            assert (await post(app, too_big, signed_headers(too_big))).status_code == 413
            assert len(await hub.pending()) == 1
            assert api.called('chat.update') == []
            assert api.called('chat.postEphemeral') == []
            # The one signed now goes through once; the very same request again is refused.
            assert (await post(app, body, good)).status_code == 200
            assert (await post(app, body, good)).status_code == 401
            await wait_until(lambda: _nothing_waits(hub), 'the question to be answered')
            group.cancel_scope.cancel()


async def test_someone_unknown_or_not_addressed_is_told_and_nothing_is_recorded() -> None:
    hub = QuestionHub()
    request = _request('addressed', single(), audience=('alice',))
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, request)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            block_id, button = action_of(message['blocks'], 'ask_user:answer:0')
            for user, told in (
                ('U0MALLORY', 'Your Slack account is not linked to anyone this inbox knows.'),
                ('U0BOB', 'This is not addressed to you.'),
            ):
                assert (await _signed_post(app, button_click(message, user, block_id, button))).status_code == 200
                await wait_until(lambda u=user: any(c['user'] == u for c in api.called('chat.postEphemeral')), 'told')
                said = next(c for c in api.called('chat.postEphemeral') if c['user'] == user)
                assert (said['channel'], said['text']) == (message['channel'], told)
            _, opener = action_of(message['blocks'], 'ask_user:open')
            await _signed_post(app, button_click(message, 'U0BOB', block_id, opener))
            await wait_until(lambda: len(api.called('chat.postEphemeral')) == 3, 'bob told again')
            assert api.called('views.open') == []
            assert len(await hub.pending()) == 1
            assert api.called('chat.update') == []
            group.cancel_scope.cancel()


async def test_a_person_hook_may_be_async_and_a_late_click_is_told_it_was_answered() -> None:
    hub = QuestionHub()
    request = _request('late', single())
    looked_up: list[str] = []

    async def person_for(user_id: str) -> Person | None:
        looked_up.append(user_id)
        return Person('alice') if user_id == 'U0ALICE' else None

    with slack_api() as api:
        channel = SlackChannel(token=TOKEN, signing_secret=SECRET, person_for=person_for, base_url=api.url)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, request)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            block_id, button = action_of(message['blocks'], 'ask_user:answer:0')
            await _signed_post(app, button_click(message, 'U0ALICE', block_id, button))
            await wait_until(lambda: api.called('chat.update'), 'updated')
            await _signed_post(app, button_click(message, 'U0ALICE', block_id, button))
            await wait_until(lambda: api.called('chat.postEphemeral'), 'told')
            assert api.called('chat.postEphemeral')[0]['text'] == 'This has been answered already.'
            assert looked_up == ['U0ALICE', 'U0ALICE']
            group.cancel_scope.cancel()


async def test_a_person_hook_that_raises_refuses_the_click_with_a_message_not_a_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hub = QuestionHub()
    request = _request('directory-down', single())

    def person_for(user_id: str) -> Person | None:
        raise ConnectionError('the user directory is down')

    with slack_api() as api:
        channel = SlackChannel(token=TOKEN, signing_secret=SECRET, person_for=person_for, base_url=api.url)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(hub.ask, request)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            block_id, button = action_of(message['blocks'], 'ask_user:answer:0')
            assert (await _signed_post(app, button_click(message, 'U0ALICE', block_id, button))).status_code == 200
            await wait_until(lambda: api.called('chat.postEphemeral'), 'told')
            assert 'not linked' in api.called('chat.postEphemeral')[0]['text']
            assert len(await hub.pending()) == 1
            assert 'person_for raised' in caplog.text
            group.cancel_scope.cancel()


async def test_answered_in_the_web_inbox_the_slack_message_says_by_whom() -> None:
    hub = QuestionHub()
    request = _request('elsewhere', single())
    with slack_api() as api:
        channel = _channel(api)
        async with anyio.create_task_group() as group:
            group.start_soon(_notifier(hub, channel).run)
            group.start_soon(hub.ask, request)
            await wait_until(lambda: api.called('chat.postMessage'), 'the DM to be posted')
            answer = AskUserResponse(answers=(replace_answer(request, 'MySQL'),), answered_by='alice')
            await hub.respond(request.key, answer)
            await wait_until(lambda: api.called('chat.update'), 'the message to be updated')
            update = api.called('chat.update')[0]
            message = api.posted[0]
            assert (update['channel'], update['ts']) == (message['channel'], message['ts'])
            checked_blocks(update['blocks'])
            assert 'Answered by alice' in texts(update['blocks'])
            assert update['text'] == 'Answered by alice'
            group.cancel_scope.cancel()


async def _nothing_waits(hub: QuestionHub) -> bool:
    return not await hub.pending()


def replace_answer(request: AskUserRequest, label: str) -> Any:
    from pydantic_ai_ask_user import AskUserAnswer

    return AskUserAnswer(header=request.questions[0].header, selected=(label,))


async def test_hostile_text_is_drawn_as_text_and_mentions_nobody() -> None:
    from pydantic_ai_ask_user import Question, QuestionOption

    hostile = Question(
        header='<!channel>',
        question='<!channel> <https://evil.example|click> *bold* & <@U0BOSS>',
        options=(QuestionOption(label='<!here>', description='<https://evil.example|x>'), QuestionOption(label='*no*')),
    )
    request = _request('hostile', hostile, context=QuestionContext(title='<!everyone> *urgent*', summary='<@U0X> hi'))
    with slack_api() as api:
        channel = _channel(api)
        message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))

    def check(value: Any) -> None:
        if isinstance(value, dict):
            if value.get('type') == 'mrkdwn':
                assert '<' not in value['text'], value
                assert '>' not in value['text'], value
            if value.get('type') == 'plain_text':
                assert value.get('emoji') is False
            for item in value.values():
                check(item)
        elif isinstance(value, list):
            for item in value:
                check(item)

    check(message['blocks'])
    shown = texts(message['blocks'])
    assert '<!everyone> *urgent*' in shown  # a plain_text: drawn as it is, never parsed
    # Every text that Slack parses (mrkdwn) is escaped; the others are plain_text, which Slack never parses.
    mrkdwn = [b['text']['text'] for b in message['blocks'] if b.get('text', {}).get('type') == 'mrkdwn']
    assert mrkdwn == []  # a question has no mrkdwn at all
    assert '<!channel> <https://evil.example|click> *bold* & <@U0BOSS>' in '\n'.join(shown)
    # The notification text is mrkdwn: escaped.
    assert message['text'] == 'A question waits for you: &lt;!everyone&gt; *urgent*'


async def test_long_text_is_cut_to_block_kit_limits_and_a_big_digest_links_to_the_inbox() -> None:
    hub_items = [
        WaitingItem.of_approval(
            PendingApproval(
                token='t', tool_call_id=f'c{n}', tool_name='write_file', args={'text': 'x' * 5000}, run_id='r'
            )
        )
        for n in range(30)
    ]
    with slack_api() as api:
        channel = _channel(api)
        message = await _posted(api, channel, ALICE, *hub_items)
    blocks = message['blocks']
    assert len(blocks) <= 50
    assert blocks[-1]['block_id'] == 'ask_user:more'
    assert blocks[-1]['accessory']['url'].startswith('https://inbox.example/login?code=')
    assert 'The arguments are shortened here; the inbox shows them all.' in texts(blocks)
    assert all(len(t) <= 3000 for t in texts(blocks))


async def test_slack_refusals_are_given_up_and_other_failures_retried() -> None:
    from slack_sdk.errors import SlackApiError

    request = _request('refused', single())
    with slack_api() as api:
        channel = _channel(api)
        api.errors['chat.postMessage'] = ['channel_not_found', 'invalid_auth', 'ratelimited', 'internal_error']
        for _ in range(2):
            with pytest.raises(DeliveryRefused):
                await channel.send(ALICE, [WaitingItem.of_question(request)], LINKS)
        for _ in range(2):
            with pytest.raises(SlackApiError):
                await channel.send(ALICE, [WaitingItem.of_question(request)], LINKS)
        refs = await channel.send(ALICE, [WaitingItem.of_question(request)], LINKS)
        assert refs == {request.key: f'{api.posted[0]["channel"]}:{api.posted[0]["ts"]}'}


def test_slack_channel_needs_its_secrets_and_reaches_slack_users() -> None:
    with pytest.raises(ValueError, match='signing secret'):
        SlackChannel(token='xoxb-1', signing_secret=' ', person_for={})
    channel = SlackChannel(token='xoxb-1', signing_secret='s', person_for={})
    assert channel.name == 'slack'
    assert isinstance(channel, ReceivingChannel)
    assert isinstance(channel, UpdatingChannel)
    with pytest.raises(ValueError, match='max_payload_bytes'):
        SlackChannel(token='xoxb-1', signing_secret='s', person_for={}, max_payload_bytes=10)
    assert channel.reaches(ALICE)
    assert not channel.reaches(Recipient('carol', email='c@example.com'))


async def test_over_real_http_under_a_starlette_route_the_inbox_path_takes_slack_s_post() -> None:
    import httpx
    from starlette.applications import Starlette
    from starlette.routing import Route

    hub = QuestionHub()
    approval = PendingApproval(token='t9', tool_call_id='c9', tool_name='deploy', args={'to': 'prod'}, run_id='r9')
    result: list[Any] = []
    with slack_api() as api:
        channel = _channel(api)
        inbox = Starlette(routes=[Route('/notify/slack', channel.endpoint(hub), methods=['POST'])])

        async def wait() -> None:
            result.append(await hub.ask_wait('t9', [], [approval]))

        async with anyio.create_task_group() as group, served(inbox) as base:
            group.start_soon(_notifier(hub, channel).run)
            group.start_soon(wait)
            await wait_until(lambda: api.posted, 'the DM to be posted')
            message = api.posted[0]
            block_id, approve = action_of(message['blocks'], 'ask_user:approve')
            body = form_body(button_click(message, 'U0BOB', block_id, approve))
            async with httpx.AsyncClient() as client:
                forged = await client.post(
                    f'{base}/notify/slack', content=body, headers=signed_headers(body, secret='x')
                )
                assert forged.status_code == 401
                response = await client.post(f'{base}/notify/slack', content=body, headers=signed_headers(body))
                assert response.status_code == 200
            await wait_until(lambda: result, 'the wait to end')
            decision = result[0][1][0][1]
            assert decision.approved
            assert decision.decided_by == 'bob'
            await wait_until(lambda: api.called('chat.update'), 'the message to be updated')
            assert 'Approved by bob' in texts(api.called('chat.update')[0]['blocks'])
            group.cancel_scope.cancel()


async def test_a_recipient_s_language_draws_the_message() -> None:
    request = _request('korean', single())
    with slack_api() as api:
        channel = _channel(api)
        message = await _posted(api, channel, replace(ALICE, language='ko'), WaitingItem.of_question(request))
    shown = texts(message['blocks'])
    assert '받은편지함에서 열기' in shown
    assert '기타…' in shown


def test_the_notifier_imports_without_slack_and_only_notify_slack_brings_it() -> None:
    import subprocess
    import sys

    def loaded(module: str) -> list[str]:
        code = (
            f'import json, sys, {module}; '
            'print(json.dumps(sorted({k.split(".")[0] for k in sys.modules} & {"slack_sdk", "starlette", "uvicorn"})))'
        )
        done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120, check=True)
        return json.loads(done.stdout)

    assert loaded('pydantic_ai_ask_user.notify') == []
    assert loaded('pydantic_ai_ask_user.notify.slack') == ['slack_sdk', 'starlette']


async def test_a_digest_s_item_is_updated_alone_and_a_digest_this_process_never_saw_gets_a_reply() -> None:
    from pydantic_ai_ask_user.notify import Finished, LedgerEntry

    hub = QuestionHub()
    first, second = _request('first', single()), _request('second', single('Other'))
    with slack_api() as api:
        channel = _channel(api)
        notifier = Notifier(
            hub, channels=[channel], directory=DIRECTORY, links=LINKS, gather_seconds=2.0, digest_seconds=0
        )
        async with anyio.create_task_group() as group:
            group.start_soon(notifier.run)
            await notifier.wait_synced()
            group.start_soon(hub.ask, first)
            group.start_soon(hub.ask, second)
            await wait_until(lambda: api.posted, 'the digest to be posted')
            await notifier.drain()
            assert len(api.posted) == 1  # both in one message
            digest = api.posted[0]
            assert digest['blocks'][0]['type'] == 'header'
            await hub.respond(first.key, AskUserResponse(answers=(replace_answer(first, 'MySQL'),), answered_by='bob'))
            await wait_until(lambda: api.called('chat.update'), 'the digest to be updated')
            blocks = api.called('chat.update')[0]['blocks']
            checked_blocks(blocks)
            assert 'Answered by bob' in texts(blocks)
            block_id, _ = action_of(blocks, 'ask_user:answer:0')  # the second item's buttons stay
            assert block_id.endswith(second.key)
            group.cancel_scope.cancel()

        # Another process (the ledger survived, this channel's memory did not): a reply under the digest.
        fresh = _channel(api)
        entry = LedgerEntry(
            key=second.key, kind='question', recipient='alice', channel='slack', state='sent', ref='D0X:1.2#1'
        )
        await fresh.finished(entry, Finished('question', second.key, 'withdrawn', headline='Pick one'))
        reply = api.called('chat.postMessage')[-1]
        assert (reply['channel'], reply['thread_ts'], reply['text']) == ('D0X', '1.2', 'Pick one: No longer waiting')


async def test_the_endpoint_s_edges_refuse_politely_and_record_nothing_wrong() -> None:
    hub = QuestionHub()
    request = _request('edges', single(), multi(), audience=('alice',))
    approval = PendingApproval(
        token='te', tool_call_id='ce', tool_name='drop', args={}, run_id='re', audience=('alice',)
    )
    answers: list[AskUserResponse] = []
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(_asking, hub, request, answers)
            group.start_soon(hub.ask_wait, 'te', [], [approval])
            await wait_until(lambda: hub.pending_approvals(), 'the approval to wait')
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(
                api, channel, ALICE, WaitingItem.of_question(request), WaitingItem.of_approval(approval)
            )
            async with __import__('httpx').AsyncClient(
                transport=__import__('httpx').ASGITransport(app=app), base_url='http://inbox.test'
            ) as client:
                assert (await client.get('/notify/slack')).status_code == 405
            for body in (b'nothing=here', form_body({'type': 'block_actions'}).replace(b'%7B', b'%5B', 1)):
                assert (await post(app, body, signed_headers(body))).status_code == 400
            assert (await _signed_post(app, {'type': 'shortcut', 'user': {'id': 'U0ALICE'}})).status_code == 200
            block_id, link = action_of(message['blocks'], 'ask_user:link')
            assert (await _signed_post(app, button_click(message, 'U0ALICE', block_id, link))).status_code == 200
            # Bob may not approve what is addressed to alice.
            approve_block, approve = action_of(message['blocks'], 'ask_user:approve')
            await _signed_post(app, button_click(message, 'U0BOB', approve_block, approve))
            await wait_until(lambda: api.called('chat.postEphemeral'), 'bob to be told')
            assert api.called('chat.postEphemeral')[0]['text'] == 'This is not addressed to you.'

            # A button the message never had, with an option the question does not have.
            question_block, _ = action_of(message['blocks'], 'ask_user:open')
            crafted = {'action_id': 'ask_user:answer:0', 'type': 'button', 'text': {'type': 'plain_text', 'text': 'x'}}
            await _signed_post(app, button_click(message, 'U0ALICE', question_block, crafted | {'value': '0:9'}))
            await wait_until(lambda: len(api.called('chat.postEphemeral')) == 2, 'alice to be told')
            assert api.called('chat.postEphemeral')[1]['text'] == 'That is not one of the options.'
            assert len(await hub.pending()) == 1

            # The modal: unknown people, people not addressed, answers that do not fit.
            opener_block, opener = action_of(message['blocks'], 'ask_user:open')
            await _signed_post(app, button_click(message, 'U0ALICE', opener_block, opener))
            await wait_until(lambda: api.called('views.open'), 'the modal to open')
            view = api.called('views.open')[0]['view']
            for user, said in (
                ('U0MALLORY', 'Your Slack account is not linked to anyone this inbox knows.'),
                ('U0BOB', 'This is not addressed to you.'),
            ):
                refused = (await _signed_post(app, view_submission(view, user, {}))).json()
                assert refused['response_action'] == 'update'
                assert texts(refused['view']['blocks']) == [said]
                checked_view(refused['view'])
            radio = {
                'type': 'radio_buttons',
                'selected_option': {'value': '9', 'text': {'type': 'plain_text', 'text': 'x'}},
            }
            values: dict[str, dict[str, Any]] = {
                'q0': {'choice': radio},
                'q1': {
                    'choice': {'type': 'checkboxes', 'selected_options': [view['blocks'][2]['element']['options'][0]]}
                },
                'q1-other': {'other': {'type': 'plain_text_input', 'value': 'both'}},
            }
            errors = (await _signed_post(app, view_submission(view, 'U0ALICE', values))).json()['errors']
            assert errors == {
                'q0': 'That is not one of the options.',
                'q1-other': 'Pick an option or write your own answer, not both.',
            }
            assert len(await hub.pending()) == 1
            values = {
                'q0-other': {'other': {'type': 'plain_text_input', 'value': 'x\u0007'}},
                'q1-other': {'other': {'type': 'plain_text_input', 'value': 'fine'}},
            }
            refused = (await _signed_post(app, view_submission(view, 'U0ALICE', values))).json()
            assert refused['response_action'] == 'errors'
            assert 'control' in refused['errors']['q0'] or 'U+0007' in refused['errors']['q0']
            assert len(await hub.pending()) == 1
            values['q0-other'] = {'other': {'type': 'plain_text_input', 'value': 'my own'}}
            body, sent_at = form_body(view_submission(view, 'U0ALICE', values)), int(time.time())
            assert (await post(app, body, signed_headers(body, timestamp=sent_at))).status_code == 200
            await wait_until(lambda: answers, 'the answer')
            # Too late: the modal again says so, and so does a click. The same, signed a second before the first (a
            # stamp of its own: under load `now - 1` could be the first's, and the very request again is refused).
            late = (await post(app, body, signed_headers(body, timestamp=sent_at - 1))).json()
            assert texts(late['view']['blocks']) == ['This has been answered already.']
            group.cancel_scope.cancel()
    assert answers[0].answers[0].custom_answer == 'my own'


async def test_a_click_on_a_withdrawn_question_says_it_no_longer_waits() -> None:
    hub = QuestionHub()
    request = _request('withdrawn', single())
    with slack_api() as api:
        channel = _channel(api)
        app = channel.endpoint(hub)
        async with anyio.create_task_group() as group:
            group.start_soon(_withdrawn, hub, request)
            await wait_until(lambda: hub.pending(), 'the question to wait')
            message = await _posted(api, channel, ALICE, WaitingItem.of_question(request))
            hub.withdraw_all('the server is shutting down')
            block_id, button = action_of(message['blocks'], 'ask_user:answer:0')
            await _signed_post(app, button_click(message, 'U0ALICE', block_id, button))
            await wait_until(lambda: api.called('chat.update'), 'the message to be updated')
            assert api.called('chat.postEphemeral')[0]['text'] == 'This is no longer waiting.'
            assert 'No longer waiting' in texts(api.called('chat.update')[0]['blocks'])
            group.cancel_scope.cancel()


async def _withdrawn(hub: QuestionHub, request: AskUserRequest) -> None:
    from pydantic_ai_ask_user import QuestionWithdrawn

    with pytest.raises(QuestionWithdrawn):
        await hub.ask(request)
