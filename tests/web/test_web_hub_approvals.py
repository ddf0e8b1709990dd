"""Tool approvals in the in-process hub (`QuestionHub` as an `ApprovalStore`) and `WebAnswerer.request_input`.

The store's side: published by `ask_wait`, paged (keyset, addressed), decided once (approve, deny with a reason,
edit checked against the tool's schema), withdrawn at the wait's timeout, with an event for each. End to end: a real
agent run (`FunctionModel`) whose tool needs approval, `waiting_handler(web.request_input(...))`, decided in
Chromium by the person it is addressed to; the other person's page, API and event stream never see it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anyio
import httpx
import pytest
from playwright.async_api import BrowserContext, expect
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from waits import WAIT, wait_until
from web_support import open_inbox_as

from pydantic_ai_ask_user import Person, QuestionContext
from pydantic_ai_ask_user._approvals import TIMED_OUT_DENIAL
from pydantic_ai_ask_user._deferred_handlers import HANDLERS_TAKE_TOKENS
from pydantic_ai_ask_user.deferred import waiting_handler
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import (
    AlreadyAnsweredError,
    ApprovalDecision,
    ApprovalStore,
    BadCursorError,
    PendingApproval,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
)
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take

SCHEMA = {
    'type': 'object',
    'properties': {'env': {'enum': ['staging', 'production']}, 'replicas': {'type': 'integer'}},
    'required': ['env', 'replicas'],
    'additionalProperties': False,
}


def approval(token: str, call: str = 'call_0', audience: tuple[str, ...] | None = None) -> PendingApproval:
    return PendingApproval(
        token, call, 'deploy_to', {'env': 'production', 'replicas': 3}, parameters=SCHEMA, audience=audience
    )


async def _wait_for(hub: QuestionHub, count: int) -> None:
    async def waiting() -> bool:
        return len(await hub.pending_approvals()) >= count

    await wait_until(waiting, f'{count} approval(s) to wait')


async def test_the_hub_is_an_approval_store_that_pages_decides_once_and_withdraws() -> None:
    hub = QuestionHub()
    assert isinstance(hub, ApprovalStore)
    events: list[StoreEvent] = []
    subscription = hub.events()

    async def collect() -> None:
        async for event in subscription:
            events.append(event)

    results: dict[str, Any] = {}

    async def wait(token: str, items: list[PendingApproval], timeout: float | None = None) -> None:
        results[token] = await hub.ask_wait(token, [], items, timeout=timeout)

    async with anyio.create_task_group() as group:
        group.start_soon(collect)
        group.start_soon(wait, 'w1', [approval('w1', 'call_0', ('ann',)), approval('w1', 'call_1', ('ann',))])
        group.start_soon(wait, 'w2', [approval('w2', 'call_0', ('bob',))])
        group.start_soon(wait, 'w3', [approval('w3', 'call_0')])
        await _wait_for(hub, 4)
        keys = [a.key for a in await hub.pending_approvals()]
        # Paged, a page of one at a time, every approval once; addressed in the page and its total.
        seen: list[str] = []
        cursor = None
        while True:
            page = await hub.pending_approvals_page(limit=1, cursor=cursor)
            assert page.total == 4
            seen += [a.key for a in page.records]
            if (cursor := page.next_cursor) is None:
                break
        assert seen == keys
        ann = await hub.pending_approvals_page(visible_to=Person('ann'))
        assert (ann.total, {a.token for a in ann.records}) == (3, {'w1', 'w3'})
        bob = await hub.pending_approvals_page(visible_to=Person('bob'))
        assert {a.token for a in bob.records} == {'w2', 'w3'}
        with pytest.raises(BadCursorError):
            await hub.pending_approvals_page(cursor='bogus')
        with pytest.raises(UnknownRequestError):
            await hub.get_approval('0' * 32)

        first, second = approval('w1', 'call_0'), approval('w1', 'call_1')
        assert await hub.wait_items('w1') == (
            [await hub.get_approval(first.key), await hub.get_approval(second.key)],
            [],
        )
        # Edited arguments that do not fit the schema: refused, nothing recorded.
        with pytest.raises(ValueError, match="at env: 'moon' is not one of"):
            await hub.decide(first.key, ApprovalDecision.edit({'env': 'moon', 'replicas': 1}))
        assert 'w1' not in results
        # Items of two waits are never decided together.
        with pytest.raises(ValueError, match='one wait'):
            await hub.decide_wait(
                {first.key: ApprovalDecision.approve(), approval('w2').key: ApprovalDecision.approve()}, {}
            )
        await hub.decide(first.key, ApprovalDecision.edit({'env': 'staging', 'replicas': 1}, decided_by='ann'))
        with pytest.raises(AlreadyAnsweredError):
            await hub.decide(first.key, ApprovalDecision.approve())
        assert 'w1' not in results  # the wait goes on only when every item is decided
        await hub.decide(second.key, ApprovalDecision.deny('not on a Friday'))
        await hub.decide_wait({approval('w3').key: ApprovalDecision.approve()}, {})
        with anyio.fail_after(30):
            while 'w1' not in results or 'w3' not in results:
                await anyio.sleep(0.01)
        group.start_soon(wait, 'w4', [approval('w4')], 0.2)
        with anyio.fail_after(30):
            while 'w4' not in results:
                await anyio.sleep(0.01)
        with pytest.raises(WithdrawnError):
            await hub.decide(approval('w4').key, ApprovalDecision.approve())
        assert hub.withdraw_all() == 1  # w2's approval: its wait goes on, undecided
        with anyio.fail_after(30):
            while 'w2' not in results:
                await anyio.sleep(0.01)
        await subscription.aclose()  # type: ignore[attr-defined]

    _, decided = results['w1']
    assert [(a.tool_call_id, d) for a, d in decided] == [
        ('call_0', ApprovalDecision.edit({'env': 'staging', 'replicas': 1})),
        ('call_1', ApprovalDecision.deny('not on a Friday')),
    ]
    assert decided[0][1].decided_by == 'ann'
    assert [d for _, d in results['w4'][1]] == [None]
    assert [d for _, d in results['w2'][1]] == [None]
    approval_events = [(e.kind, e.request_id) for e in events if e.item == 'approval']
    assert ('requested', first.key) in approval_events
    assert ('answered', first.key) in approval_events
    assert ('withdrawn', approval('w4').key) in approval_events
    assert ('withdrawn', approval('w2').key) in approval_events
    assert all(e.approval is not None for e in events if e.item == 'approval' and e.kind == 'requested')
    assert await hub.pending_approvals() == []


def deploying_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls `deploy_to` once (it needs approval), then reports what the tool returned."""
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if not returns:
        return ModelResponse(parts=[ToolCallPart('deploy_to', {'env': 'production', 'replicas': 3}, 'call_0')])
    return ModelResponse(parts=[TextPart(json.dumps([str(part.content) for part in returns]))])


def deploying_agent(web: WebAnswerer, owner: str, **ask: Any) -> Agent[None, str]:
    agent = Agent(
        FunctionModel(deploying_model),
        name='release-bot',
        capabilities=[
            waiting_handler(
                web.request_input(audience=owner, context=QuestionContext(title=f'Release <b>for</b> {owner}'), **ask)
            )
        ],
    )

    @agent.tool_plain(requires_approval=True)
    def deploy_to(env: Literal['staging', 'production'], replicas: int) -> str:
        """Deploy to an environment."""
        return f'deployed {replicas} to {env}'

    return agent


@pytest.mark.browser
async def test_a_run_s_approval_is_decided_in_chromium_by_its_person_only(
    two_people: tuple[BrowserContext, BrowserContext],
) -> None:
    web = WebAnswerer()
    agent = deploying_agent(web, 'alice')
    alice_browser, bob_browser = two_people
    outputs: list[str] = []
    async with serve(web.app) as base, anyio.create_task_group() as runs:
        alice = await open_inbox_as(alice_browser, web, base, 'alice')
        bob = await open_inbox_as(bob_browser, web, base, 'bob')

        async def run() -> None:
            outputs.append((await agent.run('ship it')).output)

        runs.start_soon(run)
        row = alice.locator('#approvals li')
        await expect(row).to_have_count(1)
        await expect(row.locator('code')).to_have_text('deploy_to')
        await expect(row.locator('.title')).to_have_text('Release <b>for</b> alice')  # drawn as text
        [pending] = await web.hub.pending_approvals()
        assert pending.audience == ('alice',)
        assert await bob.locator('#approvals li').count() == 0
        # Bob, as an attacker: no page, no API entry, no decision.
        looked = await bob.goto(f'{base}approvals/{pending.key}')
        assert looked is not None
        assert looked.status == 404
        bob_api = await bob.context.request.get(f'{base}api/approvals')
        assert await bob_api.json() == {'approvals': [], 'next_cursor': None, 'total': 0}
        refused = await bob.context.request.post(
            f'{base}api/approvals/{pending.key}/decide',
            data=json.dumps('approve'),
            headers={'content-type': 'application/json'},
        )
        assert refused.status == 404
        await bob.goto(base)
        # Alice edits the arguments in a second tab: wrong first (a message, nothing recorded), then right; the
        # first tab, left open on the inbox, drops the row live.
        other_tab = await alice_browser.new_page()
        await other_tab.goto(base)
        await expect(other_tab.locator('#approvals li')).to_have_count(1)
        await expect(other_tab.locator('#live-status')).to_contain_text('appear here')
        alice, inbox_tab = other_tab, alice
        row = alice.locator('#approvals li')
        await row.locator('a').click()
        await alice.click('#edit-choice summary')  # the other choices open on demand
        await alice.fill('#edited', '{"env": "moon", "replicas": 1}')
        await alice.click('#edit')
        await expect(alice.locator('#error-summary')).to_contain_text("'moon' is not one of")
        assert await web.hub.get_approval(pending.key) == pending
        await alice.fill('#edited', '{"env": "staging", "replicas": 2}')
        await alice.click('#edit')
        await expect(alice.locator('h1')).to_have_text('Approved with your arguments: deploy_to runs')
        # What runs is echoed, as a table: the edited arguments, said to be edited.
        await expect(alice.locator('#status')).to_contain_text('not the ones the agent asked for')
        await expect(alice.locator('#ran-with tr')).to_have_count(2)
        await expect(alice.locator('#ran-with')).to_contain_text('staging')
        await expect(inbox_tab.locator('#approvals li')).to_have_count(0)
        await expect(inbox_tab.locator('#approvals-wrap')).to_be_hidden()
        with anyio.fail_after(60):
            while not outputs:
                await anyio.sleep(0.05)
        await alice.goto(base)
        await expect(alice.locator('#approvals-wrap')).to_be_hidden()
        web.close()  # the open pages' event streams end
    assert json.loads(outputs[0]) == ['deployed 2 to staging']


async def test_request_input_denies_with_a_reason_through_the_api_and_at_its_timeout() -> None:
    web = WebAnswerer(answered_by='ops-bot')
    outputs: list[str] = []
    agent = deploying_agent(web, 'carol')
    late = deploying_agent(web, 'carol', timeout=0.3)
    async with (
        serve(web.app) as base,
        httpx.AsyncClient(base_url=base, headers={'authorization': f'Bearer {web.access_token}'}) as client,
        anyio.create_task_group() as runs,
    ):

        async def run(which: Agent[None, str]) -> None:
            outputs.append((await which.run('ship it')).output)

        runs.start_soon(run, agent)
        await _wait_for(web.hub, 1)
        [pending] = (await client.get('api/approvals')).json()['approvals']
        assert (pending['kind'], pending['audience']) == ('approval', ['carol'])
        decided = await client.post(f'api/approvals/{pending["id"]}/decide', json={'deny': 'not on a Friday'})
        assert decided.json() == {'id': pending['id'], 'status': 'denied'}
        with anyio.fail_after(60):
            while not outputs:
                await anyio.sleep(0.05)
        runs.start_soon(run, late)
        with anyio.fail_after(60):
            while len(outputs) < 2:
                await anyio.sleep(0.05)
    assert json.loads(outputs[0]) == ['not on a Friday']
    assert json.loads(outputs[1]) == [TIMED_OUT_DENIAL]


async def test_model_written_arguments_are_drawn_the_same_live_and_on_a_reload_never_their_hidden_characters(
    context: BrowserContext,
) -> None:
    # A bidirectional override, a zero-width space, a line separator and a C1 control, which JSON leaves raw.
    hidden = '\u202e\u200b\u2028\x85'
    hostile = PendingApproval('w1', 'call_0', 'deploy_to', {'note': f'ship{hidden}it'}, parameters=SCHEMA)
    web = WebAnswerer()
    async with serve(web.app) as base:
        page = await open_inbox_as(context, web, base, 'alice')
        async with anyio.create_task_group() as waits:
            waits.start_soon(web.hub.ask_wait, 'w1', [], [hostile])
            args = page.locator('#approvals li .args')
            await expect(args).to_have_count(1)  # drawn by the page's script, from the event stream
            live = await args.text_content()
            await page.reload()
            await expect(args).to_have_count(1)  # drawn by the server
            reloaded = await args.text_content()
            waits.cancel_scope.cancel()
        web.close()  # the open page's event stream ends
    assert live == reloaded == '{"note":"ship\ufffd\ufffd\ufffd\ufffdit"}'


def coercible_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls `deploy_with_defaults` with a number written as a string, leaving out a parameter that has a default."""
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if not returns:
        args = {'env': 'production', 'replicas': '3'}
        return ModelResponse(parts=[ToolCallPart('deploy_with_defaults', args, 'call_0')])
    return ModelResponse(parts=[TextPart(json.dumps([str(part.content) for part in returns]))])


async def test_an_approver_sees_the_arguments_the_tool_will_run_with_where_pydantic_ai_gives_them() -> None:
    web = WebAnswerer()
    agent = Agent(
        FunctionModel(coercible_model), capabilities=[waiting_handler(web.request_input())], name='release-bot'
    )

    @agent.tool_plain(requires_approval=True)
    def deploy_with_defaults(env: Literal['staging', 'production'], replicas: int, region: str = 'eu-west') -> str:
        """Deploy to an environment."""
        return f'deployed {replicas} to {env} in {region}'

    outputs: list[str] = []
    async with anyio.create_task_group() as runs:

        async def run() -> None:
            outputs.append((await agent.run('ship it')).output)

        runs.start_soon(run)
        await _wait_for(web.hub, 1)
        [pending] = await web.hub.pending_approvals()
        if HANDLERS_TAKE_TOKENS:  # Pydantic AI 2.78 on records `DeferredToolRequests.validated_args`
            assert pending.args == {'env': 'production', 'replicas': 3, 'region': 'eu-west'}
        else:  # before, only what the model wrote exists
            assert pending.args == {'env': 'production', 'replicas': '3'}
        await web.hub.decide(pending.key, ApprovalDecision.approve())
    assert json.loads(outputs[0]) == ['deployed 3 to production in eu-west']
