"""`TemporalAnswerer` on a real Temporal dev server: a question waits in the workflow and an Update answers it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporal_support import (
    ANSWER_PREFIX,
    CALL_ID,
    EVENTS,
    HOLD_FILE_VARIABLE,
    QUESTIONS,
    WAIT_TIMEOUT,
    AnsweredAskWorkflow,
    TimedAskWorkflow,
    UnpreparedAskWorkflow,
    WrappedAnsweredAskWorkflow,
)
from temporal_testing import (
    ANSWER,
    ask_user_cli,
    asked,
    events_delivered,
    finished_once,
    start_run,
    told,
    user_error_of,
    wait_for_file,
    waiting_question,
)
from temporalio.client import Client, WorkflowUpdateFailedError

from pydantic_ai_ask_user import TIMED_OUT, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.json import response_to_json
from pydantic_ai_ask_user.temporal import (
    SIGNAL_NAME,
    UPDATE_NAME,
    QuestionAnswer,
    answer_question,
    pending_questions,
)

pytestmark = pytest.mark.anyio

NOT_OFFERED = AskUserResponse(
    answers=(AskUserAnswer(header='Database', selected=('Oracle',)), AskUserAnswer(header='Region', selected=('EU',)))
)


@pytest.mark.parametrize(
    'workflow', [AnsweredAskWorkflow, WrappedAnsweredAskWorkflow], ids=['TemporalDurability', 'TemporalAgent']
)
async def test_a_question_waits_in_the_workflow_and_an_update_answers_it(
    client: Client, worker: str, workflow: Any
) -> None:
    EVENTS.clear()
    handle = await start_run(client, worker, workflow)
    request = await waiting_question(handle)
    assert request.id == CALL_ID

    await answer_question(handle, request, ANSWER)
    assert (await handle.result()).output == told(request, ANSWER)
    # Pydantic AI hands the handler the events a tool emitted at their place in the run's stream, after the call.
    assert [event.request for event in EVENTS] == [request]
    assert EVENTS[0].request.key == request.key


async def test_an_answer_that_does_not_fit_the_question_is_refused_to_its_sender_and_not_recorded(
    client: Client, worker: str
) -> None:
    handle = await start_run(client, worker, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    with pytest.raises(ValueError, match='Oracle'):
        await answer_question(handle, request, NOT_OFFERED)  # checked before it is sent
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(UPDATE_NAME, QuestionAnswer(key=request.key, response=NOT_OFFERED))
    assert 'Oracle' in str(refused.value.cause)
    assert await pending_questions(handle) == [request]  # still waiting: nothing was recorded

    await answer_question(handle, request, ANSWER)
    assert (await handle.result()).output == told(request, ANSWER)


async def test_an_answer_to_a_question_of_another_run_is_refused(client: Client, worker: str) -> None:
    first = await start_run(client, worker, AnsweredAskWorkflow)
    second = await start_run(client, worker, AnsweredAskWorkflow)
    asked_first, asked_second = await waiting_question(first), await waiting_question(second)
    # The model says `call_0` in both runs: the same tool call id, two questions.
    assert asked_first.id == asked_second.id == CALL_ID
    assert asked_first.key != asked_second.key
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await answer_question(second, asked_first, ANSWER)
    assert 'no question with key' in str(refused.value.cause)

    await answer_question(second, asked_second, ANSWER)
    await answer_question(first, asked_first, ANSWER)
    assert (await first.result()).output == (await second.result()).output == told(asked_first, ANSWER)


async def test_of_two_answers_sent_at_once_one_is_recorded_and_the_other_refused(client: Client, worker: str) -> None:
    handle = await start_run(client, worker, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    declined = AskUserResponse(cancelled=True)
    sent = await asyncio.gather(
        answer_question(handle, request, ANSWER), answer_question(handle, request, declined), return_exceptions=True
    )
    refused = [outcome for outcome in sent if isinstance(outcome, WorkflowUpdateFailedError)]
    assert len(refused) == 1, sent
    [used] = [response for response, outcome in zip((ANSWER, declined), sent, strict=True) if outcome is None]
    assert (await handle.result()).output == ANSWER_PREFIX + json.dumps(ask_user_result(request, used), sort_keys=True)
    await finished_once(client, handle)


async def test_a_signal_answers_too_and_a_signalled_answer_that_does_not_fit_is_dropped(
    client: Client, worker: str
) -> None:
    handle = await start_run(client, worker, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    await handle.signal(SIGNAL_NAME, QuestionAnswer(key=request.key, response=NOT_OFFERED))
    declined = AskUserResponse(cancelled=True)
    await handle.signal(SIGNAL_NAME, QuestionAnswer(key=request.key, response=declined))
    assert (await handle.result()).output == ANSWER_PREFIX + json.dumps(ask_user_result(request, declined))


async def test_the_deadline_is_a_durable_timer_and_the_model_is_told_nobody_answered(
    client: Client, worker: str
) -> None:
    handle = await start_run(client, worker, TimedAskWorkflow)
    assert (await handle.result()).output == ANSWER_PREFIX + json.dumps(TIMED_OUT)
    history = await handle.fetch_history()
    timers = [
        event.timer_started_event_attributes
        for event in history.events
        if event.HasField('timer_started_event_attributes')
    ]
    assert [timer.start_to_fire_timeout.ToTimedelta() for timer in timers] == [timedelta(seconds=WAIT_TIMEOUT)]
    assert any(event.HasField('timer_fired_event_attributes') for event in history.events)


async def test_temporal_answerer_in_a_workflow_without_ask_user_workflow_fails_the_run_saying_what_to_inherit(
    client: Client, worker: str
) -> None:
    handle = await start_run(client, worker, UnpreparedAskWorkflow)
    assert 'inherit AskUserWorkflow' in await user_error_of(handle.result())


async def test_a_worker_killed_while_the_question_waits_leaves_it_waiting_for_the_next_worker(
    client: Client, start_worker: Any, tmp_path: Path
) -> None:
    first = start_worker()
    handle = await start_run(client, start_worker.queue, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    # Killed once the question was handed to the event stream handler, whose activity Temporal runs at least once:
    # killed before that was recorded, the next worker runs it again, and the question is (rightly) asked twice.
    await events_delivered(handle, tmp_path, request.key)
    first.kill()

    start_worker()
    assert await waiting_question(handle) == request
    await answer_question(handle, request, ANSWER)
    assert (await handle.result()).output == told(request, ANSWER)
    assert asked(tmp_path) == [request.key]  # asked once
    await finished_once(client, handle)


async def test_a_worker_killed_after_the_answer_was_accepted_finishes_the_run_with_that_answer(
    client: Client, start_worker: Any, tmp_path: Path
) -> None:
    hold = tmp_path / 'model-has-the-answer'
    first = start_worker(**{HOLD_FILE_VARIABLE: str(hold)})
    handle = await start_run(client, start_worker.queue, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    await answer_question(handle, request, ANSWER)  # accepted: recorded in the workflow's history
    await wait_for_file(hold)  # the run went on with it, to the model call the first worker never finishes
    first.kill()

    start_worker()
    assert (await handle.result()).output == told(request, ANSWER)
    assert asked(tmp_path) == [request.key]
    await finished_once(client, handle)


async def test_temporal_answerer_outside_a_workflow_says_it_waits_only_inside_one() -> None:
    from pydantic_ai.exceptions import UserError

    from pydantic_ai_ask_user.temporal import TemporalAnswerer

    request = AskUserRequest.from_tool_args(QUESTIONS)
    with pytest.raises(UserError, match='TemporalAnswerer waits inside a Temporal workflow'):
        await TemporalAnswerer()(request)


async def test_an_answer_with_no_worker_up_says_it_waits_for_one_and_gives_up_at_its_timeout(
    client: Client, start_worker: Any, temporal_address: str
) -> None:
    first = start_worker()
    handle = await start_run(client, start_worker.queue, AnsweredAskWorkflow)
    request = await waiting_question(handle)
    first.kill()  # the question waits on; nothing can take an answer to it now

    sent = json.dumps(response_to_json(ANSWER))
    code, _, err = await ask_user_cli(
        'answer', request.key, '--temporal', temporal_address, '--json', '-', '--timeout', '8', stdin=sent
    )
    assert code == 8, err
    said = ' '.join(err.split())
    assert (
        'waiting for a worker of the workflow to accept it: Temporal takes an answer only through a running worker'
        in said
    )
    assert 'no worker accepted it within 8 s, so this command recorded nothing' in said

    start_worker()
    # Refused when the server handed the first answer (the same) to the worker that came back.
    with contextlib.suppress(WorkflowUpdateFailedError):
        await answer_question(handle, request, ANSWER)
    assert (await handle.result()).output == told(request, ANSWER)
