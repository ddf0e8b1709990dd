"""Forwarding a waiting question or approval in the in-process hub: who may answer changes, the asker does not."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import pytest
from ask_user_support import ask_one, wait_pending, wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Person
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import (
    AlreadyAnsweredError,
    ApprovalDecision,
    PendingApproval,
    StoreEvent,
    UnknownRequestError,
    finished_json,
)

pytestmark = pytest.mark.anyio

SCHEMA = {'type': 'object', 'properties': {'env': {'type': 'string'}}, 'required': ['env']}
ALICE = Person('alice')
BOB = Person('bob')
CAROL = Person('carol', groups=frozenset({'team:oncall'}))


def _question(audience: tuple[str, ...] | None) -> AskUserRequest:
    return replace(ask_one(), id='forwarded', run_id=None, audience=audience)


def _answer_for(request: AskUserRequest, by: str) -> AskUserResponse:
    header = request.questions[0].header
    label = request.questions[0].options[0].label
    return AskUserResponse(answers=(AskUserAnswer(header=header, selected=(label,)),), answered_by=by)


async def test_forward_replaces_the_audience_and_the_answer_comes_back_once() -> None:
    hub = QuestionHub()
    request = _question(('alice',))
    answers: list[AskUserResponse] = []
    events: list[StoreEvent] = []
    stream = hub.events()

    async def ask() -> None:
        answers.append(await hub.ask(request))

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await wait_pending(hub, request.id)
        assert [each.key for each in await hub.pending(visible_to=ALICE)] == [request.key]
        handoff = await hub.forward(request.key, ['team:oncall'], note='Carol knows\nthe database', by='alice')
        assert handoff.from_audience == ('alice',)
        assert handoff.to_audience == ('team:oncall',)
        assert handoff.note == 'Carol knows\nthe database'
        assert handoff.by == 'alice'
        assert await hub.pending(visible_to=ALICE) == ()
        (shown,) = await hub.pending(visible_to=CAROL)
        assert shown.audience == ('team:oncall',)
        assert [each.note for each in await hub.handoffs(request.key)] == ['Carol knows\nthe database']
        await hub.respond(request.key, _answer_for(request, 'carol'))
    assert len(answers) == 1
    assert answers[0].answered_by == 'carol'
    async for event in stream:
        events.append(event)
        if event.kind == 'answered':
            break
    kinds = [(event.kind, event.request.audience if event.request else None) for event in events]
    assert kinds == [
        ('requested', ('alice',)),
        ('withdrawn', ('alice',)),
        ('requested', ('team:oncall',)),
        ('answered', ('team:oncall',)),
    ]
    (record,) = (await hub.history_page()).records
    assert record.by == 'carol'
    assert len(record.handoffs) == 1
    data = finished_json(record)
    assert data['handoffs'] == [
        {
            'at': record.handoffs[0].at,
            'by': 'alice',
            'from': ['alice'],
            'to': ['team:oncall'],
            'note': 'Carol knows\nthe database',
        }
    ]
    assert data['audience'] == ['team:oncall']


async def test_forward_adds_and_is_refused_once_answered() -> None:
    hub = QuestionHub()
    request = _question(('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        handoff = await hub.forward(request.key, ['bob'], replace=False)
        assert handoff.to_audience == ('alice', 'bob')
        assert len(await hub.pending(visible_to=ALICE)) == 1
        assert len(await hub.pending(visible_to=BOB)) == 1
        await hub.respond(request.key, _answer_for(request, 'bob'))
    with pytest.raises(AlreadyAnsweredError):
        await hub.forward(request.key, ['carol'])
    with pytest.raises(UnknownRequestError):
        await hub.forward('0' * 32, ['carol'])


@pytest.mark.parametrize(
    ('to', 'note', 'match'),
    [
        ([], '', 'at least one'),
        (['bad\nname'], '', 'control'),
        (['x' * 201], '', '200'),
        (['bob'], 'a\x1b[31mred', 'control'),
        (['bob'], 'x' * 2001, 'at most'),
    ],
)
async def test_bad_names_and_notes_are_refused(to: list[str], note: str, match: str) -> None:
    hub = QuestionHub()
    request = _question(('alice',))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        with pytest.raises(ValueError, match=match):
            await hub.forward(request.key, to, note=note)
        assert (await hub.get(request.key)).audience == ('alice',)
        assert await hub.handoffs(request.key) == ()
        group.cancel_scope.cancel()


async def test_forward_an_approval() -> None:
    hub = QuestionHub()
    approval = PendingApproval('tok', 'deploy-1', 'deploy', {'env': 'prod'}, parameters=SCHEMA, audience=('alice',))
    results: list[Any] = []

    async def wait() -> None:
        results.append(await hub.ask_wait(approval.token, [], [approval]))

    async def waiting() -> bool:
        return bool(await hub.pending_approvals())

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await wait_until(waiting, 'the approval to wait')
        await hub.forward(approval.key, ['bob'], note='yours', by='alice')
        assert await hub.pending_approvals(visible_to=ALICE) == []
        (shown,) = await hub.pending_approvals(visible_to=BOB)
        assert shown.audience == ('bob',)
        await hub.decide(approval.key, ApprovalDecision.approve(decided_by='bob'))
    (_, [(_, decision)]) = results[0]
    assert decision is not None
    assert decision.decided_by == 'bob'
    (record,) = (await hub.history_page(visible_to=BOB)).records
    assert [each.to_audience for each in record.handoffs] == [('bob',)]
    assert (await hub.history_page(visible_to=ALICE)).records == []
