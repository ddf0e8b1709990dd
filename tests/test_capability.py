"""`AskUser` through real `Agent` runs with a `FunctionModel`: results, retries, concurrency, timeout, failures."""

from __future__ import annotations

import json
import math
from typing import Any

import anyio
import pytest
from ask_user_support import ModelScript, ask_call, question, script
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
from pydantic_ai.exceptions import UnexpectedModelBehavior, UserError
from pydantic_ai.messages import FunctionToolResultEvent, TextPart, ToolCallPart

from pydantic_ai_ask_user import (
    DECLINED,
    TIMED_OUT,
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    Question,
)
from pydantic_ai_ask_user._capability import INSTRUCTIONS
from pydantic_ai_ask_user.testing import DECLINE, Custom, ScriptedAnswerer

pytestmark = pytest.mark.anyio


def _agent(model: ModelScript, answerer: Any, **settings: Any) -> Agent[None, str]:
    return Agent(model.model, capabilities=[AskUser(answerer=answerer, **settings)])


def _only_result(model: ModelScript) -> Any:
    (part,) = model.returns()
    assert part.tool_name == TOOL_NAME
    return part.content


# --- What the model gets back ---


async def test_an_answered_call_gives_the_model_the_picked_labels_keyed_by_header() -> None:
    model = script([ask_call(question('Database'), question('Envs', 'dev', 'staging', 'prod', multi_select=True))])
    answerer = ScriptedAnswerer({'Database': 'SQLite', 'Envs': ['dev', 'prod']})
    result = await _agent(model, answerer).run('migrate')
    assert result.output == 'done'
    assert _only_result(model) == {'Database': ['SQLite'], 'Envs': ['dev', 'prod']}


async def test_a_streamed_run_gives_the_model_the_same_result_as_a_plain_run() -> None:
    model = script([ask_call(question('Database'))])
    agent = _agent(model, ScriptedAnswerer({'Database': 'PostgreSQL'}))
    results: list[Any] = []
    async with agent.run_stream_events('migrate') as events:
        async for event in events:
            if isinstance(event, FunctionToolResultEvent):
                results.append(event.part.content)
    assert results == [{'Database': ['PostgreSQL']}]
    assert _only_result(model) == {'Database': ['PostgreSQL']}


async def test_an_iterated_run_asks_and_finishes() -> None:
    model = script([ask_call(question('Database'))])
    answerer = ScriptedAnswerer({'Database': 'PostgreSQL'})
    agent = _agent(model, answerer)
    async with agent.iter('migrate') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    async for _ in stream:
                        pass
    assert run.result is not None
    assert run.result.output == 'done'
    assert len(answerer.requests) == 1
    assert _only_result(model) == {'Database': ['PostgreSQL']}


async def test_a_custom_answer_reaches_the_model_as_a_one_item_list() -> None:
    model = script([ask_call(question('Database'), question('Name', 'orders', 'sales'))])
    answerer = ScriptedAnswerer({'Database': 'SQLite', 'Name': Custom('orders_v2,\nplease')})
    await _agent(model, answerer).run('migrate')
    assert _only_result(model) == {'Database': ['SQLite'], 'Name': ['orders_v2,\nplease']}


async def test_the_result_is_json_the_model_can_read() -> None:
    model = script([ask_call(question('Database'))])
    await _agent(model, ScriptedAnswerer({'Database': 'SQLite'})).run('migrate')
    (part,) = model.returns()
    assert json.loads(part.model_response_str()) == {'Database': ['SQLite']}


async def test_declining_tells_the_model_without_failing_the_run() -> None:
    model = script([ask_call(question('Database'))])
    result = await _agent(model, ScriptedAnswerer(DECLINE)).run('migrate')
    assert result.output == 'done'
    assert _only_result(model) == DECLINED
    assert (
        DECLINED == 'The user declined to answer. Continue without the answer, or ask differently if it is essential.'
    )


async def test_the_answerer_may_be_an_object_with_an_async_call_method() -> None:
    class PickLast:
        async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
            return AskUserResponse(
                answers=tuple(
                    AskUserAnswer(header=q.header, selected=(q.options[-1].label,)) for q in request.questions
                )
            )

    model = script([ask_call(question('Database', 'a', 'b', 'c'))])
    await _agent(model, PickLast()).run('migrate')
    assert _only_result(model) == {'Database': ['c']}


# --- What the answerer sees ---


async def test_the_answerer_sees_exactly_what_the_model_asked_with_whitespace_stripped() -> None:
    asked = {
        'header': '  Database ',
        'question': 'Which one?\nThink about it.',
        'options': [{'label': ' PostgreSQL', 'description': 'The big one.\nReally.'}, {'label': 'SQLite'}],
        'multi_select': False,
    }
    answerer = ScriptedAnswerer(default=0)
    await _agent(script([ask_call(asked)]), answerer).run('migrate')
    (request,) = answerer.requests
    (seen,) = request.questions
    assert seen.header == 'Database'
    assert seen.question == 'Which one?\nThink about it.'
    assert [(o.label, o.description) for o in seen.options] == [
        ('PostgreSQL', 'The big one.\nReally.'),
        ('SQLite', None),
    ]
    assert seen.multi_select is False


async def test_each_request_id_is_its_tool_call_id() -> None:
    answerer = ScriptedAnswerer(default=0)
    model = script([ask_call(question('A'))], [ask_call(question('B'))])
    requested: list[str] = []

    class Watch(AbstractCapability[Any]):
        @on_event(AskUserRequestedEvent)
        async def seen(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
            requested.append(event.request.id)

    agent = Agent(model.model, capabilities=[AskUser(answerer=answerer), Watch()])
    await agent.run('migrate')
    calls = [
        part.tool_call_id
        for message in model.seen[-1]
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.tool_name == TOOL_NAME
    ]
    first, second = (request.id for request in answerer.requests)
    assert first != second
    assert [first, second] == calls == requested


def test_a_request_built_directly_gets_a_fresh_hex_id() -> None:
    first, second = (AskUserRequest(questions=(Question.model_validate(question('A')),)) for _ in range(2))
    assert first.id != second.id
    assert all(int(request.id, 16) >= 0 and len(request.id) == 32 for request in (first, second))


async def test_validated_questions_are_frozen() -> None:
    answerer = ScriptedAnswerer(default=0)
    await _agent(script([ask_call(question('A'))]), answerer).run('migrate')
    (request,) = answerer.requests
    seen = request.questions[0]
    assert isinstance(request.questions, tuple)
    assert isinstance(seen.options, tuple)
    with pytest.raises(ValueError, match='frozen'):
        seen.header = 'Other'  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(ValueError, match='frozen'):
        seen.options[0].label = 'Other'  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(AttributeError):
        request.id = 'other'  # pyright: ignore[reportAttributeAccessIssue]


# --- Invalid calls ---


async def test_an_invalid_call_never_reaches_the_answerer_and_the_retry_says_what_was_wrong() -> None:
    bad = question('Database', 'Yes', 'ｙｅｓ')
    model = script([ask_call(bad)], [ask_call(question('Database'))])
    answerer = ScriptedAnswerer(default=0)
    result = await _agent(model, answerer).run('migrate')
    assert result.output == 'done'
    (retry,) = model.returns(1)
    assert retry.outcome == 'retried'
    text = retry.model_response_str()
    assert "option label 'ｙｅｓ' is the same as 'Yes' (ignoring case and width)" in text
    assert 'questions' in text
    assert [r.questions[0].options[0].label for r in answerer.requests] == ['PostgreSQL']


async def test_a_field_the_schema_does_not_have_is_a_validation_retry() -> None:
    model = script([ask_call(question('Database', priority='high'))], [ask_call(question('Database'))])
    answerer = ScriptedAnswerer(default=0)
    await _agent(model, answerer).run('migrate')
    (retry,) = model.returns(1)
    assert retry.outcome == 'retried'
    assert 'priority' in retry.model_response_str()
    assert 'Extra inputs are not permitted' in retry.model_response_str()
    assert len(answerer.requests) == 1


async def test_a_misspelled_field_gets_a_retry_that_says_which_field_was_meant() -> None:
    misspelled = {**question('Database'), 'multiselect': True}
    misspelled['options'] = [{'label': 'PostgreSQL'}, {'lable': 'SQLite', 'Description': 'A file.'}]
    model = script([ask_call(misspelled)], [ask_call(question('Database'))])
    answerer = ScriptedAnswerer(default=0)
    await _agent(model, answerer).run('migrate')
    (retry,) = model.returns(1)
    assert retry.outcome == 'retried'
    text = retry.model_response_str()
    assert "Extra inputs are not permitted; did you mean 'multi_select'?" in text
    assert "Extra inputs are not permitted; did you mean 'label'?" in text
    assert "Extra inputs are not permitted; did you mean 'description'?" in text
    assert 'Field required' in text  # the other problems of the call are still all reported
    assert len(answerer.requests) == 1


async def test_a_field_like_none_of_the_schema_gets_no_guess() -> None:
    model = script([ask_call(question('Database', priority='high'))], [ask_call(question('Database'))])
    await _agent(model, ScriptedAnswerer(default=0)).run('migrate')
    (retry,) = model.returns(1)
    assert 'did you mean' not in retry.model_response_str()


async def test_a_recommendation_the_default_tool_does_not_offer_is_no_misspelling() -> None:
    # With recommended_options off, `recommended` is refused as any unknown field, and not "corrected" to another.
    model = script([ask_call(question('Database', recommended='PostgreSQL'))], [ask_call(question('Database'))])
    await _agent(model, ScriptedAnswerer(default=0)).run('migrate')
    (retry,) = model.returns(1)
    assert 'Extra inputs are not permitted' in retry.model_response_str()
    assert 'did you mean' not in retry.model_response_str()


async def test_a_control_character_in_a_call_is_a_retry_that_names_it_without_reaching_the_answerer() -> None:
    model = script([ask_call(question('Data\x1b[31mbase'))], [ask_call(question('Database'))])
    answerer = ScriptedAnswerer(default=0)
    await _agent(model, answerer).run('migrate')
    (retry,) = model.returns(1)
    assert 'U+001B' in retry.model_response_str()
    assert 'control character' in retry.model_response_str()
    assert [r.questions[0].header for r in answerer.requests] == ['Database']


async def test_a_model_that_keeps_sending_invalid_calls_fails_the_run_after_max_retries() -> None:
    bad = ask_call(question('Database', 'only one'))
    model = script([bad], [bad], [bad], [bad])
    answerer = ScriptedAnswerer(default=0)
    with pytest.raises(UnexpectedModelBehavior, match='exceeded max retries'):
        await _agent(model, answerer, max_retries=2).run('migrate')
    assert answerer.requests == []
    assert len(model.seen) == 3


async def test_max_retries_zero_fails_the_run_on_the_first_invalid_call() -> None:
    model = script([ask_call(question('Database', 'only one'))])
    with pytest.raises(UnexpectedModelBehavior):
        await _agent(model, ScriptedAnswerer(default=0), max_retries=0).run('migrate')
    assert len(model.seen) == 1


# --- Concurrency ---


async def test_two_calls_in_one_model_response_reach_the_answerer_concurrently() -> None:
    both_waiting = anyio.Event()
    waiting: list[str] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        waiting.append(request.questions[0].header)
        if len(waiting) == 2:
            both_waiting.set()
        with anyio.fail_after(10):  # if the calls ran one after the other, the first would wait here for ever
            await both_waiting.wait()
        return AskUserResponse(answers=(AskUserAnswer(header=request.questions[0].header, selected=('SQLite',)),))

    model = script([ask_call(question('First')), ask_call(question('Second'))])
    await _agent(model, answerer).run('migrate')
    assert sorted(waiting) == ['First', 'Second']
    assert sorted(json.dumps(part.content) for part in model.returns()) == [
        '{"First": ["SQLite"]}',
        '{"Second": ["SQLite"]}',
    ]


# --- Timeout ---


async def test_a_timeout_cancels_the_answerer_and_tells_the_model_it_timed_out() -> None:
    cancelled: list[bool] = []
    answered: list[AskUserAnsweredEvent] = []

    async def slow(request: AskUserRequest) -> AskUserResponse:
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise
        raise AssertionError('not reached')  # pragma: no cover

    class Listener(AbstractCapability[Any]):
        @on_event(AskUserAnsweredEvent)
        async def done(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
            answered.append(event)

    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=slow, timeout=0.05), Listener()])
    with anyio.fail_after(30):
        result = await agent.run('migrate')
    assert result.output == 'done'
    assert cancelled == [True]
    assert _only_result(model) == TIMED_OUT
    (event,) = answered
    assert event.timed_out is True
    assert event.failed is False
    assert event.response == AskUserResponse(cancelled=True)


async def test_an_answer_within_the_timeout_is_returned_as_usual() -> None:
    model = script([ask_call(question('Database'))])
    await _agent(model, ScriptedAnswerer({'Database': 'SQLite'}, delay=0.01), timeout=30).run('migrate')
    assert _only_result(model) == {'Database': ['SQLite']}


def test_the_timed_out_sentence_tells_the_model_to_make_and_state_a_choice() -> None:
    assert 'did not answer in time' in TIMED_OUT
    assert 'choice' in TIMED_OUT
    assert TIMED_OUT != DECLINED


@pytest.mark.parametrize('timeout', [0, -1, -0.5, math.nan, math.inf])
def test_a_timeout_that_is_not_a_positive_number_of_seconds_is_a_clear_error(timeout: float) -> None:
    with pytest.raises(UserError, match=r'AskUser\(timeout=...\) must be a positive number of seconds'):
        AskUser(answerer=ScriptedAnswerer(), timeout=timeout)


@pytest.mark.parametrize('timeout', [True, '5'])
def test_a_timeout_that_is_not_a_number_is_a_clear_error(timeout: Any) -> None:
    with pytest.raises(UserError, match=r'must be a number of seconds'):
        AskUser(answerer=ScriptedAnswerer(), timeout=timeout)


def test_a_timeout_without_an_answerer_is_a_clear_error() -> None:
    with pytest.raises(UserError, match='needs an answerer'):
        AskUser(answerer=None, timeout=5)


def test_an_answerer_that_is_not_callable_is_a_clear_error() -> None:
    with pytest.raises(UserError, match='must be an async callable'):
        AskUser(answerer='stdin')  # pyright: ignore[reportArgumentType]


def test_negative_max_retries_is_a_clear_error() -> None:
    with pytest.raises(UserError, match=r'max_retries=...\) must be 0 or more'):
        AskUser(answerer=None, max_retries=-1)


# --- Answerers that fail ---


class _Recorder(AbstractCapability[Any]):
    """Records both events, in order, as `('requested', id)` / `('answered', event)`."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, Any]] = []

    @on_event(AskUserRequestedEvent)
    async def requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        self.log.append(('requested', event.request.id))

    @on_event(AskUserAnsweredEvent)
    async def answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        self.log.append(('answered', event))


async def test_an_answerer_that_raises_emits_a_failed_answered_event_and_then_fails_the_run() -> None:
    class Broken(Exception):
        pass

    async def broken(request: AskUserRequest) -> AskUserResponse:
        raise Broken('the UI crashed')

    recorder = _Recorder()
    agent = Agent(script([ask_call(question('Database'))]).model, capabilities=[AskUser(answerer=broken), recorder])
    with pytest.raises(Broken, match='the UI crashed'):
        await agent.run('migrate')
    (kind, request_id), (answered_kind, event) = recorder.log
    assert (kind, answered_kind) == ('requested', 'answered')
    assert event.request_id == request_id
    assert event.failed is True
    assert event.timed_out is False
    assert event.response.cancelled is True


async def test_an_answerer_that_returns_something_else_fails_the_run_after_releasing_the_listener() -> None:
    async def sloppy(request: AskUserRequest) -> Any:
        return {'Database': ['SQLite']}

    recorder = _Recorder()
    agent = Agent(script([ask_call(question('Database'))]).model, capabilities=[AskUser(answerer=sloppy), recorder])
    with pytest.raises(ValueError, match='the answerer returned dict, not an AskUserResponse'):
        await agent.run('migrate')
    assert [kind for kind, _ in recorder.log] == ['requested', 'answered']
    assert recorder.log[1][1].failed is True


async def test_a_misbehaving_answerer_releases_the_listener_and_then_the_run_fails_naming_the_problem() -> None:
    async def wrong_label(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('Oracle',)),))

    recorder = _Recorder()
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=wrong_label), recorder])
    with pytest.raises(ValueError, match="the answer to 'Database' selects 'Oracle', which is not one of its options"):
        await agent.run('migrate')
    assert [kind for kind, _ in recorder.log] == ['requested', 'answered']
    event = recorder.log[1][1]
    assert event.failed is False
    assert event.response.answers[0].selected == ('Oracle',)
    assert len(model.seen) == 1  # the model never saw the bad response


# --- Deferred mode ---


async def test_deferred_mode_ends_the_run_with_the_call_and_resumes_with_the_answer() -> None:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults

    model = script([ask_call(question('Region', 'EU', 'US'), call_id='call-7')])
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model.model, capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )
    paused = await agent.run('deploy')
    assert isinstance(paused.output, DeferredToolRequests)
    (call,) = paused.output.calls
    request = AskUserRequest.from_tool_call(call)
    assert request.id == 'call-7'
    assert [q.header for q in request.questions] == ['Region']
    response = AskUserResponse(answers=(AskUserAnswer(header='Region', selected=('US',)),))
    results = DeferredToolResults(calls={request.id: _result_of(request, response)})
    resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    assert resumed.output == 'done'
    assert _only_result(model) == {'Region': ['US']}


async def test_deferred_mode_still_sends_invalid_calls_back_to_the_model() -> None:
    from pydantic_ai import DeferredToolRequests

    model = script([ask_call(question('Region', 'EU'))], [ask_call(question('Region', 'EU', 'US'))])
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model.model, capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )
    paused = await agent.run('deploy')
    assert isinstance(paused.output, DeferredToolRequests)
    (retry,) = model.returns(1)
    assert 'a question offers 2 to 6 options, not 1' in retry.model_response_str()


async def test_a_declined_deferred_call_gives_the_model_the_declined_sentence() -> None:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults

    model = script([ask_call(question('Region', 'EU', 'US'))])
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model.model, capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )
    paused = await agent.run('deploy')
    assert isinstance(paused.output, DeferredToolRequests)
    request = AskUserRequest.from_tool_call(paused.output.calls[0])
    results = DeferredToolResults(calls={request.id: _result_of(request, AskUserResponse(cancelled=True))})
    await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    assert _only_result(model) == DECLINED


def _result_of(request: AskUserRequest, response: AskUserResponse) -> Any:
    from pydantic_ai_ask_user.deferred import ask_user_result

    return ask_user_result(request, response)


# --- One AskUser per agent, and specs ---


def test_two_ask_user_on_one_agent_are_a_plain_words_error_at_construction() -> None:
    with pytest.raises(UserError, match='This agent has 2 AskUser capabilities, and an agent can have only one'):
        Agent('test', capabilities=[AskUser(answerer=None), AskUser(answerer=ScriptedAnswerer())])


def test_the_conflict_error_says_it_is_a_conflict_not_a_repeated_setting() -> None:
    with pytest.raises(UserError, match='two are a conflict, not the same setting given twice'):
        Agent('test', capabilities=[AskUser(answerer=None), AskUser(answerer=None)])


async def _refused_at_run_start(agent: Agent[None, str], model: ModelScript, *run: AbstractCapability[None]) -> None:
    """`agent.run(capabilities=run)` fails with the conflict before the model or any answerer is called."""
    with pytest.raises(UserError, match='This agent has 2 AskUser capabilities'):
        await agent.run('migrate', capabilities=list(run))
    assert model.seen == []


async def test_a_second_ask_user_given_to_one_run_is_refused_when_the_run_starts() -> None:
    answerer = ScriptedAnswerer(default=0)
    model = script([ask_call(question('Database'))])
    await _refused_at_run_start(_agent(model, answerer), model, AskUser(answerer=ScriptedAnswerer(default=1)))
    assert answerer.requests == []


async def test_an_ask_user_for_one_run_with_the_id_of_the_agents_is_refused_too_not_a_replacement() -> None:
    # Pydantic AI lets a run's capability replace the agent's under one id; two answerers are a conflict instead.
    agents, runs = ScriptedAnswerer(default=0), ScriptedAnswerer(default=1)
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=agents, id='questions')])
    await _refused_at_run_start(agent, model, AskUser(answerer=runs, id='questions'))
    assert agents.requests == runs.requests == []


async def test_an_ask_user_for_one_run_with_another_id_than_the_agents_is_refused() -> None:
    model = script([ask_call(question('Database'))])
    await _refused_at_run_start(_agent(model, None), model, AskUser(answerer=None, id='other'))


async def test_the_agents_own_ask_user_passed_again_for_one_run_is_refused() -> None:
    model = script([ask_call(question('Database'))])
    ask_user = AskUser[None](answerer=None)
    await _refused_at_run_start(Agent(model.model, capabilities=[ask_user]), model, ask_user)


async def test_two_ask_user_given_to_one_run_are_refused_when_the_run_starts() -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model)
    await _refused_at_run_start(agent, model, AskUser(answerer=None), AskUser(answerer=ScriptedAnswerer()))


async def test_two_ask_user_in_a_combined_capability_for_one_run_are_refused() -> None:
    from pydantic_ai.capabilities import CombinedCapability

    model = script([ask_call(question('Database'))])
    both = CombinedCapability[None]([AskUser(answerer=None), AskUser(answerer=None)])
    await _refused_at_run_start(Agent(model.model), model, both)


async def test_an_ask_user_behind_a_wrapper_for_one_run_is_a_second_one() -> None:
    # `prefix_tools()` renames the tool, so no tool names collide, but there are still two answerers.
    model = script([ask_call(question('Database'))])
    await _refused_at_run_start(_agent(model, None), model, AskUser[None](answerer=None).prefix_tools('other'))


def test_two_ask_user_in_a_combined_capability_on_the_agent_are_refused_at_construction() -> None:
    from pydantic_ai.capabilities import CombinedCapability

    with pytest.raises(UserError, match='This agent has 2 AskUser capabilities'):
        Agent('test', capabilities=[CombinedCapability([AskUser(answerer=None), AskUser(answerer=None)])])


def test_an_ask_user_behind_a_wrapper_beside_another_is_refused_at_construction() -> None:
    with pytest.raises(UserError, match='This agent has 2 AskUser capabilities'):
        Agent('test', capabilities=[AskUser(answerer=None).prefix_tools('other'), AskUser(answerer=None)])


def test_two_ask_user_on_one_agent_with_one_id_are_refused_at_construction() -> None:
    # Pydantic AI refuses a shared id before the capabilities are bound: its own words, but refused all the same.
    with pytest.raises(UserError, match="Capability id 'questions' is used by multiple capabilities"):
        Agent('test', capabilities=[AskUser(answerer=None, id='questions'), AskUser(answerer=None, id='questions')])


async def test_two_ask_user_for_one_run_with_one_id_are_refused_when_the_run_starts() -> None:
    model = script([ask_call(question('Database'))])
    with pytest.raises(UserError, match="Capability id 'questions' is used by multiple capabilities"):
        await Agent(model.model).run(
            'migrate', capabilities=[AskUser(answerer=None, id='questions'), AskUser(answerer=None, id='questions')]
        )
    assert model.seen == []


async def test_one_ask_user_for_a_run_of_an_agent_without_one_asks() -> None:
    model = script([ask_call(question('Database'))])
    await Agent(model.model).run('migrate', capabilities=[AskUser(answerer=ScriptedAnswerer(default=1))])
    assert _only_result(model) == {'Database': ['SQLite']}


def test_combining_two_ask_user_is_refused() -> None:
    with pytest.raises(UserError, match='This agent has 3 AskUser capabilities'):
        AskUser.combine([AskUser(answerer=None), AskUser(answerer=None), AskUser(answerer=None)])


def test_an_agent_spec_naming_ask_user_gets_a_clear_error() -> None:
    with pytest.raises(ValueError, match='AskUser cannot be built from an agent spec: its answerer is a live object'):
        Agent.from_spec({'model': 'test', 'capabilities': ['AskUser']}, custom_capability_types=[AskUser])


def test_an_agent_spec_with_arguments_for_ask_user_gets_the_same_error() -> None:
    with pytest.raises(ValueError, match=r'capabilities=\[AskUser\(answerer=...\)\]'):
        Agent.from_spec(
            {'model': 'test', 'capabilities': [{'AskUser': {'answerer': 'terminal'}}]},
            custom_capability_types=[AskUser],
        )


def test_an_agent_spec_naming_ask_user_without_registering_it_is_refused_by_pydantic_ai() -> None:
    with pytest.raises(ValueError, match="Capability 'AskUser' is not in the provided `custom_capability_types`"):
        Agent.from_spec({'model': 'test', 'capabilities': ['AskUser']})


async def test_ask_user_passed_in_code_next_to_a_spec_works() -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent.from_spec({'model': 'test'}, capabilities=[AskUser(answerer=ScriptedAnswerer(default=1))])
    await agent.run('migrate', model=model.model)
    assert _only_result(model) == {'Database': ['SQLite']}


# --- The tool and the instruction ---


async def test_the_capability_exposes_exactly_one_tool_named_ask_user_question() -> None:
    model = script([TextPart('no question needed')])
    seen_tools: list[list[str]] = []

    def record(messages: Any, info: Any) -> Any:
        seen_tools.append([tool.name for tool in info.function_tools])
        return model._respond(messages, info)  # pyright: ignore[reportPrivateUsage]

    from pydantic_ai.models.function import FunctionModel

    agent = Agent(FunctionModel(record), capabilities=[AskUser(answerer=None)])
    await agent.run('hello')
    assert seen_tools == [[TOOL_NAME]]
    assert TOOL_NAME == 'ask_user_question'


async def test_the_tool_schema_forbids_extra_fields_and_states_the_limits() -> None:
    schemas: list[dict[str, Any]] = []

    def record(messages: Any, info: Any) -> Any:
        schemas.extend(tool.parameters_json_schema for tool in info.function_tools)
        return script([TextPart('ok')])._respond(messages, info)  # pyright: ignore[reportPrivateUsage]

    from pydantic_ai.models.function import FunctionModel

    await Agent(FunctionModel(record), capabilities=[AskUser(answerer=None)]).run('hello')
    (schema,) = schemas
    assert schema['additionalProperties'] is False
    assert schema['required'] == ['questions']
    questions = schema['properties']['questions']
    assert (questions['minItems'], questions['maxItems']) == (1, 10)
    text = json.dumps(schema)
    for limit in ('"maxLength": 25', '"maxLength": 500', '"maxLength": 50', '"maxLength": 200', '"maxItems": 6'):
        assert limit in text


async def test_the_instruction_is_static_and_tells_the_model_when_and_how_to_ask() -> None:
    instructions: list[str | None] = []

    def record(messages: Any, info: Any) -> Any:
        instructions.append(info.instructions)
        return inner._respond(messages, info)  # pyright: ignore[reportPrivateUsage]

    from pydantic_ai.models.function import FunctionModel

    inner = script([ask_call(question('A'))], [ask_call(question('B'))])
    await Agent(FunctionModel(record), capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))]).run('x')
    assert len(instructions) == 3
    assert instructions[0] == instructions[1] == instructions[2]
    assert instructions[0] is not None
    assert INSTRUCTIONS in instructions[0]
    for idea in ('ambiguous', 'workspace', 'concrete options', 'one call', 'declines', 'say which'):
        assert idea in INSTRUCTIONS


def test_questions_the_model_asked_are_question_models() -> None:
    request = AskUserRequest.from_tool_args({'questions': [question('A')]})
    assert isinstance(request.questions[0], Question)
