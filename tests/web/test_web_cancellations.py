"""Runs cancelled at random moments while their question waits in a `QuestionHub`: nobody is left waiting."""

from __future__ import annotations

import contextlib
import random

import anyio
import pytest
from ask_user_support import Watch, ask_call, question, script
from pydantic_ai import Agent

from pydantic_ai_ask_user import AskUser, AskUserAnswer, AskUserAnsweredEvent, AskUserRequestedEvent, AskUserResponse
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import StoreError

pytestmark = pytest.mark.anyio


# Not traced by coverage: a thousand runs go through the same lines, which the rest of tests/web reaches too (a
# coverage run of tests/web with and without it differed in no line or branch); the tracer only doubled its CPU.
@pytest.mark.no_cover
async def test_a_thousand_random_cancellations_leave_no_listener_waiting_and_nothing_pending() -> None:
    hub = QuestionHub()
    watch = Watch()
    rng = random.Random(8)
    answer = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))

    async def answer_at_a_random_moment(request_id: str) -> None:
        for _ in range(rng.randrange(3)):
            await anyio.sleep(0)
        with contextlib.suppress(StoreError):  # withdrawn (cancelled) first: refused, which is the point
            await hub.respond(request_id, answer)

    for index in range(1000):
        call = ask_call(question('Database'), call_id=f'call-{index}')
        agent = Agent(script([call]).model, capabilities=[AskUser(answerer=hub.ask), watch])
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, 'migrate')
            if rng.random() < 0.9:
                # Most runs are cancelled while their question is open: wait until it is, then a little more.
                while not (asked := [r for r in await hub.pending() if r.id == call.tool_call_id]):
                    await anyio.sleep(0)
                if rng.random() < 0.5:
                    # The hub answers by the question's key (its run and its call), not by the tool call id.
                    group.start_soon(answer_at_a_random_moment, asked[0].key)
                for _ in range(rng.randrange(4)):
                    await anyio.sleep(0)
            group.cancel_scope.cancel()
    requested = [event.request.id for event in watch.events if isinstance(event, AskUserRequestedEvent)]
    answered = [event for event in watch.events if isinstance(event, AskUserAnsweredEvent)]
    assert len(requested) >= 800  # the cancellations really land while questions are open
    assert sorted(requested) == sorted(event.request_id for event in answered)
    assert len({event.request_id for event in answered}) == len(answered)
    withdrawn = sum(event.withdrawn for event in answered)
    assert withdrawn >= 300
    assert len(answered) - withdrawn >= 1  # and some answers win the race
    assert len(hub) == 0
    assert await hub.pending() == ()
