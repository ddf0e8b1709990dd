"""Escalation in the in-process hub: a question or approval still waiting `after` seconds after it was asked is
forwarded by its policy, once per step, as a hand-off with a note saying so; an item finished first never is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import pytest
from ask_user_support import ask_one, wait_pending, wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Person
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import ApprovalDecision, Escalation, PendingApproval, StoreEvent

pytestmark = pytest.mark.anyio

CAROL = Person('carol', groups=frozenset({'team:oncall'}))
BOSS = Person('boss')


def _answer_for(request: AskUserRequest, by: str) -> AskUserResponse:
    header = request.questions[0].header
    label = request.questions[0].options[0].label
    return AskUserResponse(answers=(AskUserAnswer(header=header, selected=(label,)),), answered_by=by)


async def test_a_waiting_question_escalates_step_by_step_and_the_new_addressee_answers() -> None:
    hub = QuestionHub()
    steps = (
        Escalation(after=0.2, to='team:oncall', note='page them'),
        Escalation(after=0.4, to='boss', replace=True),
    )
    request = replace(ask_one(), id='escalating', run_id=None, audience=('alice',), escalate=steps)
    answers: list[AskUserResponse] = []
    stream = hub.events()

    async def ask() -> None:
        answers.append(await hub.ask(request))

    async def escalated_twice() -> bool:
        return len(await hub.handoffs(request.key)) == 2

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await wait_pending(hub, request.id)
        await wait_until(escalated_twice, 'both steps to escalate the question')
        first, second = await hub.handoffs(request.key)
        assert (first.by, first.from_audience, first.to_audience) == (None, ('alice',), ('alice', 'team:oncall'))
        assert first.note == 'Escalated: unanswered after 0.2 seconds.\npage them'
        assert (second.from_audience, second.to_audience) == (('alice', 'team:oncall'), ('boss',))
        assert await hub.pending(visible_to=CAROL) == ()
        (shown,) = await hub.pending(visible_to=BOSS)
        await hub.respond(request.key, _answer_for(shown, 'boss'))
    assert [each.answered_by for each in answers] == ['boss']
    events: list[StoreEvent] = []
    async for event in stream:
        events.append(event)
        if event.kind == 'answered':
            break
    assert [(event.kind, event.request.audience if event.request else None) for event in events] == [
        ('requested', ('alice',)),
        ('withdrawn', ('alice',)),
        ('requested', ('alice', 'team:oncall')),
        ('withdrawn', ('alice', 'team:oncall')),
        ('requested', ('boss',)),
        ('answered', ('boss',)),
    ]
    (record,) = (await hub.history_page()).records
    assert len(record.handoffs) == 2


async def test_a_question_answered_before_its_escalation_never_escalates() -> None:
    hub = QuestionHub()
    request = replace(ask_one(), id='quick', run_id=None, escalate=(Escalation(after=3600, to='boss'),))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        await hub.respond(request.key, _answer_for(request, 'alice'))
    # The timer was the wait itself: the ask returned, so nothing is left to fire.
    (record,) = (await hub.history_page()).records
    assert record.handoffs == ()
    assert hub._escalated == {}  # pyright: ignore[reportPrivateUsage]


async def test_two_askers_of_one_question_escalate_it_once() -> None:
    hub = QuestionHub()
    request = replace(ask_one(), id='twice', run_id=None, audience=('alice',))
    request = replace(request, escalate=(Escalation(after=0.2, to='team:oncall'),))

    async def escalated() -> bool:
        return bool(await hub.handoffs(request.key))

    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        await wait_until(escalated, 'the question to escalate')
        (shown,) = await hub.pending(visible_to=CAROL)
        await hub.respond(request.key, _answer_for(shown, 'carol'))
    (record,) = (await hub.history_page()).records
    assert len(record.handoffs) == 1


async def test_a_waiting_approval_escalates() -> None:
    hub = QuestionHub()
    approval = PendingApproval(
        'tok', 'deploy-1', 'deploy', {'env': 'prod'}, audience=('alice',), escalate=(Escalation(0.2, 'boss'),)
    )
    results: list[Any] = []

    async def wait() -> None:
        results.append(await hub.ask_wait(approval.token, [], [approval]))

    async def escalated() -> bool:
        return bool(await hub.pending_approvals(visible_to=BOSS))

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await wait_until(escalated, 'the approval to escalate')
        (handoff,) = await hub.handoffs(approval.key)
        assert handoff.to_audience == ('alice', 'boss')
        await hub.decide(approval.key, ApprovalDecision.approve(decided_by='boss'))
    (_, [(_, decision)]) = results[0]
    assert decision is not None
    assert decision.decided_by == 'boss'
    (record,) = (await hub.history_page(visible_to=BOSS)).records
    assert len(record.handoffs) == 1
