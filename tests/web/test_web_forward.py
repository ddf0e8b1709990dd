"""Forwarding through the JSON API: a real agent run's question, handed from alice to bob, answered by bob; the run
gets one answer. Someone it is not addressed to cannot forward it (404, as a missing one); bad names are 422; a
forward after the answer is 409.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from ask_user_support import ask_call, question, script
from pydantic_ai import Agent
from pydantic_ai.messages import ToolReturnPart
from test_web_audience import MISSING, as_user, who
from web_support import WAIT

from pydantic_ai_ask_user import AskUser
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio


async def test_forward_hands_a_question_on_and_the_run_gets_one_answer_from_the_new_addressee() -> None:
    web = WebAnswerer(authorize=who)
    model = script([ask_call(question('Refund', 'Yes', 'No'))]).model
    agent = Agent(model, capabilities=[AskUser(web, audience='alice')])
    results: list[Any] = []

    async def run() -> None:
        results.append(await agent.run('refund?'))

    async with (
        anyio.create_task_group() as group,
        as_user(web, 'alice') as alice,
        as_user(web, 'bob') as bob,
        as_user(web, 'carol') as carol,
    ):
        group.start_soon(run)
        with anyio.fail_after(WAIT):
            while not await web.hub.pending():
                await anyio.sleep(0.01)
        (asked,) = await web.hub.pending()
        key = asked.key
        body = {'to': ['bob'], 'note': 'Bob <script>x</script> handles refunds'}
        # Bob may not see it yet: to him it is unknown, like a missing one.
        refused = await bob.post(f'/api/requests/{key}/forward', json=body)
        missing = await bob.post(f'/api/requests/{MISSING}/forward', json=body)
        assert (refused.status_code, refused.json()['error']) == (404, 'not_found')
        assert missing.status_code == 404
        bad = await alice.post(f'/api/requests/{key}/forward', json={'to': ['a\x1bb']})
        assert (bad.status_code, bad.json()['error']) == (422, 'invalid_forward')
        empty = await alice.post(f'/api/requests/{key}/forward', json={'to': []})
        assert empty.status_code == 422
        plain = await alice.post(f'/api/requests/{key}/forward', content=b'{}')
        assert plain.status_code == 415
        done = await alice.post(f'/api/requests/{key}/forward', json=body)
        assert done.status_code == 200, done.text
        assert done.json()['handoff']['to'] == ['bob']
        assert done.json()['handoff']['by'] == 'alice'
        assert (await alice.get(f'/api/requests/{key}')).status_code == 404
        shown = (await bob.get(f'/api/requests/{key}')).json()
        assert shown['audience'] == ['bob']
        assert [each['note'] for each in shown['handoffs']] == ['Bob <script>x</script> handles refunds']
        page = await bob.get(f'/requests/{key}')
        assert 'Bob &lt;script&gt;x&lt;/script&gt; handles refunds' in page.text
        # Added, not replaced: carol sees it too, bob still does.
        added = await bob.post(f'/api/requests/{key}/forward', json={'to': 'carol', 'add': True})
        assert added.json()['handoff']['to'] == ['bob', 'carol']
        assert (await carol.get(f'/api/requests/{key}')).status_code == 200
        answer = {'answers': [{'header': 'Refund', 'selected': ['Yes']}]}
        assert (await bob.post(f'/api/requests/{key}/answer', json=answer)).status_code == 200
        late = await bob.post(f'/api/requests/{key}/forward', json=body)
        assert (late.status_code, late.json()['error']) == (409, 'already_answered')
    (result,) = results
    returns = [
        part
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == 'ask_user_question'
    ]
    assert len(returns) == 1
    (record,) = (await web.hub.history_page()).records
    assert record.by == 'bob'
    assert [each.to_audience for each in record.handoffs] == [('bob',), ('bob', 'carol')]
