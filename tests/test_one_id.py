"""One question, one id, one answer: identity, the deferred dialect, late answers, cancellation, durable engines."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from ask_user_support import Watch, ask_call, question, script
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import (
    TIMED_OUT,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    DurableAnswerer,
)
from pydantic_ai_ask_user._capability import TOOLSET_ID
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.testing import ScriptedAnswerer

pytestmark = pytest.mark.anyio


def _answer(request: AskUserRequest, label: str = 'SQLite') -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header=request.questions[0].header, selected=(label,)),))


# --- Deferred mode speaks Pydantic AI 2.68's dialect ---


async def test_a_deferred_call_is_a_question_with_its_event_and_one_id() -> None:
    model = script([ask_call(question('Database'), call_id='call-7')])
    watch = Watch()
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model.model, capabilities=[AskUser(answerer=None), watch], output_type=[str, DeferredToolRequests]
    )
    paused = await agent.run('migrate')
    assert isinstance(paused.output, DeferredToolRequests)
    (call,) = paused.output.calls
    assert paused.output.kind(call.tool_call_id) == 'question'
    # The requested event came before the deferral; no answered event until the host answers.
    (event,) = watch.events
    assert isinstance(event, AskUserRequestedEvent)
    request = AskUserRequest.from_tool_call(call)
    assert event.request == request
    assert request.id == call.tool_call_id == 'call-7'

    results = DeferredToolResults(calls={request.id: ask_user_result(request, _answer(request))})
    resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    assert resumed.output == 'done'
    assert model.returns()[0].content == {'Database': ['SQLite']}


async def test_a_validation_retry_keeps_the_id_of_the_call_that_is_finally_asked() -> None:
    bad = ask_call(question('Database', 'Yes', 'yes'), call_id='call-1')
    good = ask_call(question('Database'), call_id='call-2')
    model = script([bad], [good])
    answerer = ScriptedAnswerer(default=0)
    await Agent(model.model, capabilities=[AskUser(answerer=answerer)]).run('migrate')
    assert [request.id for request in answerer.requests] == ['call-2']


def test_the_toolset_has_a_stable_id_though_the_capability_declares_none() -> None:
    # The seed: AskUser declares no default id (Pydantic AI would merge two under one). Engines name their steps and
    # activities after the toolset's id, which is stable.
    assert AskUser(answerer=None).id is None
    assert AskUser(answerer=None).get_toolset().id == TOOLSET_ID == 'ask_user'
    assert AskUser(answerer=None, id='questions').get_toolset().id == 'questions'


async def test_the_tool_the_model_is_sent_carries_no_name_made_up_for_one_run() -> None:
    # Durable engines hash the tool definitions into the key that replays a model request (Prefect's task cache
    # key). Pydantic AI names a capability without an id anew in every run ('<ask_user:5f3a2c>'), so with that
    # name a resumed Prefect flow run would miss the recorded response and call the model again.
    seen: list[tuple[str | None, str | None]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend((tool.capability_id, tool.toolset_id) for tool in info.function_tools)
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(model), capabilities=[AskUser(answerer=None)])
    await agent.run('one')
    await agent.run('two')
    assert seen == [(None, TOOLSET_ID), (None, TOOLSET_ID)]


async def test_a_capability_id_you_give_is_what_the_tool_names() -> None:
    seen: list[tuple[str | None, str | None]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend((tool.capability_id, tool.toolset_id) for tool in info.function_tools)
        return ModelResponse(parts=[TextPart('done')])

    await Agent(FunctionModel(model), capabilities=[AskUser(answerer=None, id='questions')]).run('one')
    assert seen == [('questions', 'questions')]


async def test_the_events_still_belong_to_the_capability_without_an_id() -> None:
    # Pydantic AI accepts a capability event from a tool only when the tool names a capability of the run: the
    # tool keeps its owner for the run; only what the model is sent loses it.
    model = script([ask_call(question('Database'))])
    watch = Watch()
    await Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0)), watch]).run('migrate')
    assert [type(event) for event in watch.events] == [AskUserRequestedEvent, AskUserAnsweredEvent]
    assert all(
        event.capability_id is not None and event.capability_id.startswith('<ask_user:') for event in watch.events
    )


# --- An answer the person was told was taken is never dropped ---


async def test_an_answer_returned_as_the_timeout_cancels_the_answerer_is_used() -> None:
    async def answers_when_cancelled(request: AskUserRequest) -> AskUserResponse:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            # e.g. the answer landed in the same loop iteration as the deadline: return it.
            return _answer(request, 'PostgreSQL')
        raise AssertionError('unreachable')  # pragma: no cover

    model = script([ask_call(question('Database'))])
    watch = Watch()
    agent = Agent(model.model, capabilities=[AskUser(answerer=answers_when_cancelled, timeout=0.01), watch])
    await agent.run('migrate')
    assert model.returns()[0].content == {'Database': ['PostgreSQL']}
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert not answered.timed_out


async def test_a_durable_answerer_is_given_the_timeout_and_never_cancelled() -> None:
    calls: list[float | None] = []

    class Recording:
        async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
            raise AssertionError('AskUser must call ask_durably')  # pragma: no cover

        async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
            calls.append(timeout)
            await anyio.sleep(0.05)  # longer than the timeout: it owns the deadline, so it is not cut short
            return None if len(calls) == 1 else _answer(request)

    answerer = Recording()
    assert isinstance(answerer, DurableAnswerer)
    model = script([ask_call(question('Database'))], [ask_call(question('Database'))])
    watch = Watch()
    await Agent(model.model, capabilities=[AskUser(answerer=answerer, timeout=0.01), watch]).run('migrate')
    assert calls == [0.01, 0.01]
    assert model.returns(1)[0].content == TIMED_OUT
    assert model.returns(2)[0].content == {'Database': ['SQLite']}
    timed_out = [event for event in watch.events if isinstance(event, AskUserAnsweredEvent) and event.timed_out]
    assert len(timed_out) == 1


async def test_an_answerer_that_returns_none_without_a_timeout_fails_the_run() -> None:
    async def returns_none(request: AskUserRequest) -> Any:
        return None

    model = script([ask_call(question('Database'))])
    with pytest.raises(ValueError, match='returned NoneType, not an AskUserResponse'):
        await Agent(model.model, capabilities=[AskUser(answerer=returns_none)]).run('migrate')


# --- Cancelled runs release their listeners ---


async def test_cancelling_the_run_while_a_question_is_open_emits_the_answered_event() -> None:
    started = anyio.Event()

    async def waits(request: AskUserRequest) -> AskUserResponse:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError('unreachable')  # pragma: no cover

    model = script([ask_call(question('Database'), call_id='call-1')])
    watch = Watch()
    agent = Agent(model.model, capabilities=[AskUser(answerer=waits), watch])
    async with anyio.create_task_group() as group:
        group.start_soon(agent.run, 'migrate')
        await started.wait()
        group.cancel_scope.cancel()
    requested, answered = watch.events
    assert isinstance(requested, AskUserRequestedEvent)
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.request_id == requested.request.id == 'call-1'
    assert answered.withdrawn
    assert answered.response.cancelled
    assert not answered.timed_out
    assert not answered.failed


def _call(index: int) -> ToolCallPart:
    return ask_call(question('Database'), call_id=f'call-{index}')
