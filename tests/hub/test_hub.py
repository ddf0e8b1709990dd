"""The in-process hub: what waits, what leaves, what it remembers, and the events it sends."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

import anyio
import pytest
from ask_user_support import ask_one, multi, single, wait_pending
from waits import WAIT

from pydantic_ai_ask_user import (
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    DifferentQuestionsError,
    QuestionWithdrawn,
)
from pydantic_ai_ask_user.hub import DEFAULT_REMEMBER_FINISHED, QuestionHub
from pydantic_ai_ask_user.store import AlreadyAnsweredError, StoreEvent, UnknownRequestError, WithdrawnError

pytestmark = pytest.mark.anyio


async def test_an_answer_is_what_the_waiting_ask_returns() -> None:
    hub = QuestionHub()
    request = ask_one()
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    got: list[AskUserResponse] = []
    async with anyio.create_task_group() as group:

        async def ask() -> None:
            got.append(await hub.ask(request))

        group.start_soon(ask)
        await wait_pending(hub, request.id)
        assert await hub.get(request.id) is request
        await hub.respond(request.id, response)
    assert got == [response]
    assert len(hub) == 0


async def test_pending_lists_requests_oldest_first() -> None:
    hub = QuestionHub()
    first, second = ask_one(single('First')), ask_one(multi('Second'))
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, first)
        await wait_pending(hub, first.id)
        group.start_soon(hub.ask, second)
        await wait_pending(hub, second.id)
        assert [item.id for item in await hub.pending()] == [first.id, second.id]
        group.cancel_scope.cancel()


async def test_a_second_answer_is_refused_as_already_answered() -> None:
    hub = QuestionHub()
    request = ask_one()
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        await hub.respond(request.id, AskUserResponse(cancelled=True))
    with pytest.raises(AlreadyAnsweredError):
        await hub.respond(request.id, AskUserResponse(cancelled=True))
    with pytest.raises(AlreadyAnsweredError):
        await hub.get(request.id)


async def test_cancelling_the_ask_withdraws_the_request() -> None:
    hub = QuestionHub()
    request = ask_one()
    with anyio.move_on_after(0.05):
        await hub.ask(request)
    assert len(hub) == 0
    with pytest.raises(WithdrawnError):
        await hub.respond(request.id, AskUserResponse(cancelled=True))


async def test_an_unknown_id_is_unknown() -> None:
    with pytest.raises(UnknownRequestError):
        await QuestionHub().get('nope')


async def test_a_response_that_does_not_fit_is_refused_and_the_request_keeps_waiting() -> None:
    hub = QuestionHub()
    request = ask_one()
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        with pytest.raises(ValueError, match='not one of its options'):
            await hub.respond(request.id, AskUserResponse(answers=(AskUserAnswer('Database', ('Oracle',)),)))
        assert await hub.get(request.id) is request
        group.cancel_scope.cancel()


async def test_the_same_id_asked_twice_is_one_question_and_one_answer() -> None:
    hub = QuestionHub()
    request = ask_one()
    events = hub.events()
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    got: list[AskUserResponse] = []

    async def ask() -> None:
        got.append(await hub.ask(request))

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await wait_pending(hub, request.id)
        group.start_soon(ask)  # a replay of the same tool call joins the wait
        await anyio.wait_all_tasks_blocked()
        assert await hub.pending() == (request,)
        await hub.respond(request.id, response)
    assert got == [response, response]
    # Asked again once answered, it is answered: the person is not asked a second time.
    assert await hub.ask(request) == response
    kinds = [(await events.__anext__()).kind for _ in range(2)]
    assert kinds == ['requested', 'answered']
    with anyio.move_on_after(0.05):
        extra = await events.__anext__()
        raise AssertionError(f'one question was published twice: {extra}')


async def test_another_question_under_a_waiting_id_is_refused() -> None:
    hub = QuestionHub()
    request = ask_one()
    other = AskUserRequest(questions=(multi(),), id=request.id)
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        with pytest.raises(DifferentQuestionsError, match='an answer is used only for the exact questions it answers'):
            await hub.ask(other)
        group.cancel_scope.cancel()


async def test_one_asker_cancelled_leaves_the_question_to_the_other() -> None:
    hub = QuestionHub()
    request = ask_one()
    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as first:
            group.start_soon(hub.ask, request)
            await wait_pending(hub, request.id)

        async def cancelled_asker() -> None:
            with first:
                await hub.ask(request)

        group.start_soon(cancelled_asker)
        await anyio.wait_all_tasks_blocked()
        first.cancel()
        await anyio.wait_all_tasks_blocked()
        assert await hub.get(request.id) == request
        group.cancel_scope.cancel()
    with pytest.raises(WithdrawnError):
        await hub.get(request.id)


async def test_an_answer_accepted_as_the_wait_is_cancelled_is_returned_not_dropped() -> None:
    """The answer and the deadline land in one loop iteration: the accepted answer wins."""
    hub = QuestionHub()
    request = ask_one()
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    got: list[AskUserResponse] = []
    async with anyio.create_task_group() as group:
        scope = anyio.CancelScope()

        async def ask() -> None:
            with scope:
                got.append(await hub.ask(request))

        group.start_soon(ask)
        await wait_pending(hub, request.id)
        scope.cancel()  # the deadline fires...
        await hub.respond(request.id, response)  # ...and in the same iteration the person is told it was taken
    assert got == [response]
    with pytest.raises(AlreadyAnsweredError):
        await hub.get(request.id)


async def test_a_task_cancel_after_the_answer_landed_is_not_swallowed() -> None:
    """Issue 19, 8b: a bare `task.cancel()` is delivered once; returning the answer instead would lose it.

    The answer lands, then the asker's task is cancelled before it resumes: the task ends cancelled, and the
    question stays answered in the hub (the person was told it was taken).
    """
    hub = QuestionHub()
    request = ask_one()
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    asker = asyncio.ensure_future(hub.ask(request))
    await wait_pending(hub, request.id)
    await hub.respond(request.id, response)  # wakes the asker, which has not run yet...
    asker.cancel()  # ...and is cancelled before it does
    with pytest.raises(asyncio.CancelledError):
        await asker
    assert asker.cancelled()
    with pytest.raises(AlreadyAnsweredError):
        await hub.get(request.id)
    assert await hub.ask(request) == response  # a replay of the call still gets the answer


async def test_an_outer_scope_cancelled_after_the_answer_landed_still_cancels_the_caller() -> None:
    """The answer is returned to the scope's cancellation, which anyio delivers again at the caller's next await."""
    hub = QuestionHub()
    request = ask_one()
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    got: list[AskUserResponse] = []
    after: list[str] = []
    outer = anyio.CancelScope()
    async with anyio.create_task_group() as group:

        async def ask() -> None:
            with outer:
                got.append(await hub.ask(request))
                await anyio.sleep(0)  # the caller's next checkpoint: the outer cancellation lands here
                after.append('ran on')

        group.start_soon(ask)
        await wait_pending(hub, request.id)
        await hub.respond(request.id, response)
        outer.cancel()
    assert got == [response]
    assert after == []
    assert outer.cancelled_caught


async def test_events_report_requested_answered_and_withdrawn_in_order() -> None:
    hub = QuestionHub()
    events = hub.events()
    answered, withdrawn = ask_one(), ask_one()
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, answered)
        await wait_pending(hub, answered.id)
        await hub.respond(answered.id, AskUserResponse(cancelled=True))
    with anyio.move_on_after(0.02):
        await hub.ask(withdrawn)
    seen: list[StoreEvent] = []
    with anyio.fail_after(5):
        async for event in events:
            seen.append(event)
            if len(seen) == 4:
                break
    assert [(e.kind, e.request_id) for e in seen] == [
        ('requested', answered.id),
        ('answered', answered.id),
        ('requested', withdrawn.id),
        ('withdrawn', withdrawn.id),
    ]
    assert seen[0].request is answered


async def test_closing_the_hub_ends_every_event_stream() -> None:
    hub = QuestionHub()
    events = hub.events()
    hub.close()
    with anyio.fail_after(5):
        assert [event async for event in events] == []


async def test_a_subscriber_that_falls_behind_is_dropped_instead_of_blocking_the_hub() -> None:
    hub = QuestionHub(subscriber_buffer=2)
    events = hub.events()
    for _ in range(5):
        with anyio.move_on_after(0):
            await hub.ask(ask_one())
    with anyio.fail_after(5):
        kept = [event async for event in events]
    assert len(kept) == 2


async def test_the_hub_remembers_only_a_bounded_number_of_finished_ids() -> None:
    hub = QuestionHub(remember_finished=3)
    requests = [ask_one() for _ in range(5)]
    for request in requests:
        with anyio.move_on_after(0):
            await hub.ask(request)
    with pytest.raises(UnknownRequestError):
        await hub.get(requests[0].id)
    with pytest.raises(WithdrawnError):
        await hub.get(requests[-1].id)


@pytest.mark.no_cover  # ten thousand times the same lines, all reached by the other tests (see test_web_cancellations.py)
async def test_ten_thousand_withdrawn_requests_leave_the_hub_empty_and_memory_near_where_it_started() -> None:
    hub = QuestionHub()
    count = 10_000
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(hub.ask, ask_one())
            with anyio.fail_after(60):
                while len(hub) < count:
                    await anyio.sleep(0.01)
            loaded, _ = tracemalloc.get_traced_memory()
            group.cancel_scope.cancel()
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(hub) == 0
    assert await hub.pending() == ()
    grown_while_pending = loaded - start
    left_behind = end - start
    # Only the bounded list of finished items may stay: the history of the last `remember_finished` (their requests
    # included, 1,000 of the 10,000), a small fraction of what 10,000 pending requests took.
    kept = DEFAULT_REMEMBER_FINISHED / count
    assert left_behind < (kept + 0.03) * grown_while_pending, (left_behind, grown_while_pending)


async def test_pending_records_say_when_each_request_was_asked() -> None:
    import time

    hub = QuestionHub()
    request = ask_one()
    before = time.time()
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        (record,) = await hub.pending_records()
        assert record.request == request
        assert before <= record.created_at <= time.time()
        assert record.workflow_id is None
        group.cancel_scope.cancel()
    assert await hub.pending_records() == ()


async def test_withdraw_all_ends_every_wait_with_question_withdrawn_and_a_late_answer_is_refused() -> None:
    hub = QuestionHub()
    first, second = ask_one(single('First')), ask_one(multi('Second'))
    raised: list[str] = []
    events = hub.events()

    async def ask(request: AskUserRequest) -> None:
        try:
            await hub.ask(request)
        except QuestionWithdrawn as error:
            raised.append(error.reason)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(ask, first)
            group.start_soon(ask, first)  # a replay joins the same wait, and is withdrawn too
            group.start_soon(ask, second)
            await wait_pending(hub, first.id)
            await wait_pending(hub, second.id)
            assert hub.withdraw_all('shutting down') == 2
    assert raised == ['shutting down'] * 3
    assert len(hub) == 0
    with pytest.raises(WithdrawnError):
        await hub.respond(first.key, AskUserResponse(cancelled=True))
    kinds = [(await anext(events)).kind for _ in range(4)]
    assert kinds == ['requested', 'requested', 'withdrawn', 'withdrawn']
    assert hub.withdraw_all() == 0
