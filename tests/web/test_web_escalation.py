"""Escalation of the tool approvals of `WebAnswerer.request_input(escalate=...)`: a real agent run whose tool needs
approval, the approval undecided for the step's time handed on by the hub, and decided by the new addressee.
"""

from __future__ import annotations

import json

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from waits import wait_until

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.deferred import waiting_handler
from pydantic_ai_ask_user.store import ApprovalDecision, Escalation, PendingApproval
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio

BOSS = Person('boss')


def refund_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if not returns:
        return ModelResponse(parts=[ToolCallPart('refund', {'order': 1042}, 'call_0')])
    return ModelResponse(parts=[TextPart(json.dumps([str(part.content) for part in returns]))])


async def test_an_undecided_approval_escalates_and_the_new_addressee_decides() -> None:
    web = WebAnswerer()
    escalate = Escalation(after=0.2, to='boss', replace=True, note='alice is out')
    agent = Agent(
        FunctionModel(refund_model),
        capabilities=[waiting_handler(web.request_input(audience='alice', escalate=escalate))],
    )

    @agent.tool_plain(requires_approval=True)
    def refund(order: int) -> str:
        """Refund an order."""
        return f'Refunded order {order}.'

    outputs: list[str] = []

    async def run() -> None:
        outputs.append((await agent.run('refund it')).output)

    async def escalated() -> PendingApproval | None:
        found = await web.hub.pending_approvals(visible_to=BOSS)
        return found[0] if found else None

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        approval = await wait_until(escalated, 'the approval to escalate to boss')
        assert approval.escalate == (escalate,)
        assert await web.hub.pending_approvals(visible_to=Person('alice')) == []
        (handoff,) = await web.hub.handoffs(approval.key)
        assert (handoff.by, handoff.from_audience, handoff.to_audience) == (None, ('alice',), ('boss',))
        assert handoff.note == 'Escalated: unanswered after 0.2 seconds.\nalice is out'
        await web.hub.decide(approval.key, ApprovalDecision.approve(decided_by='boss'))
    assert json.loads(outputs[0]) == ['Refunded order 1042.']


def test_request_input_checks_its_escalation_when_it_is_made() -> None:
    web = WebAnswerer()
    with pytest.raises(ValueError, match='in order'):
        web.request_input(escalate=[Escalation(after=60, to='b'), Escalation(after=30, to='c')])
    with pytest.raises(ValueError, match='not str'):
        web.request_input(escalate='boss')  # pyright: ignore[reportArgumentType]
