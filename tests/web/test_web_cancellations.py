"""Runs cancelled at random moments while their question waits in a `QuestionHub`: nobody is left waiting."""

from __future__ import annotations

import contextlib
import random

import anyio
from ask_user_support import Watch, ask_call, question, script
from pydantic_ai import Agent

from pydantic_ai_ask_user import (
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    StoreError,
)
from pydantic_ai_ask_user.web import QuestionHub


async def test_a_thousand_random_cancellations_leave_no_listener_waiting_and_nothing_pending() -> None:
    hub = QuestionHub()
    watch = Watch()
    rng = random.Random(8)

    async def answer_some(request: AskUserRequest) -> None:
        # Someone answers some questions, at a random moment.
        await anyio.sleep(rng.random() * 0.002)
        answer = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
        with contextlib.suppress(StoreError):  # withdrawn (cancelled) first: refused, which is the point
            await hub.respond(request.id, answer)

    for index in range(1000):
        call = ask_call(question('Database'), call_id=f'call-{index}')
        model = script([call])
        agent = Agent(model.model, capabilities=[AskUser(answerer=hub.ask), watch])
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, 'migrate')
            if rng.random() < 0.5:
                group.start_soon(answer_some, AskUserRequest.from_tool_call(call))
            await anyio.sleep(rng.random() * 0.003)
            group.cancel_scope.cancel()
    requested = [event.request.id for event in watch.events if isinstance(event, AskUserRequestedEvent)]
    answered = [event.request_id for event in watch.events if isinstance(event, AskUserAnsweredEvent)]
    assert sorted(requested) == sorted(answered)
    assert len(set(answered)) == len(answered)
    assert len(hub) == 0
    assert await hub.pending() == ()
