"""The hub's events resume from a position (issue 33, item 3), as the web API's `Last-Event-ID` resumes a page.

Each event has a position of this hub's; a stream resumed from one gets the events after it that the hub still
keeps, once, then the live ones; a position of another hub (a restarted server) or an unknown one starts from now.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from ask_user_support import ask_one, wait_pending
from waits import WAIT

from pydantic_ai_ask_user import AskUserResponse
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import StoreEvent

pytestmark = pytest.mark.anyio


async def _take(events: AsyncIterator[StoreEvent], count: int) -> list[StoreEvent]:
    taken: list[StoreEvent] = []
    with anyio.fail_after(WAIT):
        async for event in events:
            taken.append(event)
            if len(taken) == count:
                break
    return taken


async def test_a_resumed_hub_stream_gets_what_it_missed_once() -> None:
    hub = QuestionHub()
    first, second, third = ask_one(), ask_one(), ask_one()
    async with anyio.create_task_group() as group:
        events = hub.events()
        group.start_soon(hub.ask, first)
        await wait_pending(hub, first.id)
        (seen,) = await _take(events, 1)
        await events.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        assert seen.position is not None
        # Away: a second question, and the first answered.
        group.start_soon(hub.ask, second)
        await wait_pending(hub, second.id)
        await hub.respond(first.key, AskUserResponse(cancelled=True))
        resumed = hub.events_after(seen.position)
        missed = await _take(resumed, 2)
        assert [(event.kind, event.request_id) for event in missed] == [
            ('requested', second.key),
            ('answered', first.key),
        ]
        group.start_soon(hub.ask, third)
        (live,) = await _take(resumed, 1)
        assert (live.kind, live.request_id) == ('requested', third.key)
        await resumed.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        # Another hub's position (a restarted server's), or none at all, starts from now.
        other = QuestionHub()
        for position in [f'{other._epoch}-1', 'nonsense', '']:  # pyright: ignore[reportPrivateUsage]
            fresh = hub.events_after(position)
            later = ask_one()
            group.start_soon(hub.ask, later)
            (now,) = await _take(fresh, 1)
            assert (now.kind, now.request_id) == ('requested', later.key)
            await fresh.aclose()  # pyright: ignore[reportAttributeAccessIssue]
        group.cancel_scope.cancel()
