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
    signed_headers,
    slack_api,
    texts,
    view_submission,
)

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.notify import DeliveryRefused, InboxLinks, Notifier, Recipient, StaticDirectory, WaitingItem
from pydantic_ai_ask_user.notify.slack import SlackChannel
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval

pytestmark = pytest.mark.anyio

ALICE = Recipient('alice', slack_user='U0ALICE', groups={'team:db'})
BOB = Recipient('bob', slack_user='U0BOB')
DIRECTORY = StaticDirectory([ALICE, BOB])
LINKS = InboxLinks('https://inbox.example/', key=b'k' * 32)


def _channel(api: SlackAPI, **options: Any) -> SlackChannel:
    return SlackChannel(
        token=TOKEN, signing_secret=SECRET, person_for=SlackChannel.people(DIRECTORY.people), base_url=api.url, **options
    )


def _notifier(hub: QuestionHub, channel: SlackChannel) -> Notifier:
    return Notifier(hub, channels=[channel], directory=DIRECTORY, links=LINKS, gather_seconds=0, digest_seconds=0)


def _request(name: str, *questions: Any, audience: tuple[str, ...] | None = ('alice',), **fields: Any) -> AskUserRequest:
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
