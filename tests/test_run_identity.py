"""A question belongs to its run: `run_id`, `key`, deferred calls across runs, withdrawn waits, remembered answers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import anyio
import pytest
import waits
from ask_user_support import Watch, ask_call, make_request, question, script
from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.exceptions import ToolFailed, UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import (
    DECLINED,
    TIMED_OUT,
    WITHDRAWN,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    DifferentQuestionsError,
    QuestionWithdrawn,
)
from pydantic_ai_ask_user._answers import check_tool_result, request_key
from pydantic_ai_ask_user.checks import check_same_questions
from pydantic_ai_ask_user.deferred import (
    ADDRESSING_METADATA_KEY,
    RUN_ID_METADATA_KEY,
    RUN_STEP_METADATA_KEY,
    deferred_answer,
)

pytestmark = pytest.mark.anyio

_REQUESTS = TypeAdapter(DeferredToolRequests)
"""How a host stores `DeferredToolRequests` between processes: as JSON."""


def _pick(request: AskUserRequest, label: str) -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header=request.questions[0].header, selected=(label,)),))


def _fixed_id_model(header: str, *, call_id: str | None = 'call_0') -> FunctionModel:
    """A model that, like some providers, gives its one tool call the same id in every run, or none at all.

    With `call_id=None` the call has no id of its own and Pydantic AI makes one up, anew for every response.
    """

    def turn(messages: list[ModelMessage]) -> list[ToolCallPart]:
        args = {'questions': [question(header, 'Yes', 'No')]}
        if call_id is None:
            return [ToolCallPart('ask_user_question', args)]
        return [ToolCallPart('ask_user_question', args, tool_call_id=call_id)]

    return script(turn).model


# --- The key: a run and a tool call ---


def test_a_request_without_a_run_is_keyed_by_its_id() -> None:
    request = make_request('Database', id='call_0')
    assert request.run_id is None
    assert request.key == 'call_0'


def test_the_same_call_id_in_two_runs_gives_two_keys() -> None:
    first = AskUserRequest(make_request('Database').questions, id='call_0', run_id='run-1')
    second = AskUserRequest(first.questions, id='call_0', run_id='run-2')
    assert first.key != second.key
    assert first.key == AskUserRequest(first.questions, id='call_0', run_id='run-1').key
    assert len(first.key) == 32
    assert set(first.key) <= set('0123456789abcdef')


def test_the_key_keeps_the_run_and_the_call_apart_whatever_they_hold() -> None:
    # Joining 'a:b' + 'c' and 'a' + 'b:c' with a separator would give one key for two questions.
    assert request_key('a:b', 'c') != request_key('a', 'b:c')
    assert request_key('a"', 'b') != request_key('a', '"b')
    # A hostile tool call id (a lone surrogate, escapes) still gives a plain hex key.
    assert set(request_key('run', '\ud800\x1b[2J')) <= set('0123456789abcdef')


def test_the_run_is_not_part_of_what_is_asked() -> None:
    request = make_request('Database', id='call_0')
    assert AskUserRequest(request.questions, id='call_0', run_id='run-1') == request


def test_an_empty_run_id_is_refused() -> None:
    with pytest.raises(ValueError, match='run_id must be a non-empty string or None'):
        AskUserRequest(make_request('Database').questions, run_id='')


async def test_each_run_asks_under_its_own_run_id_though_the_model_repeats_call_0() -> None:
    asked: list[AskUserRequest] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        asked.append(request)
        return _pick(request, 'Yes')

    agent = Agent(_fixed_id_model('Deploy'), capabilities=[AskUser(answerer=answerer)])
    first = await agent.run('deploy to staging')
    second = await agent.run('deploy to staging')
    assert [request.id for request in asked] == ['call_0', 'call_0']
    assert [request.run_id for request in asked] == [first.run_id, second.run_id]
    assert asked[0].key != asked[1].key


async def test_a_model_that_sends_no_call_id_still_asks_one_identified_question_per_run() -> None:
    asked: list[AskUserRequest] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        asked.append(request)
        return _pick(request, 'No')

    agent = Agent(_fixed_id_model('Deploy', call_id=None), capabilities=[AskUser(answerer=answerer)])
    await agent.run('one')
    await agent.run('two')
    assert all(request.id and request.run_id for request in asked)
    assert asked[0].key != asked[1].key


async def test_the_answered_event_names_the_run_of_its_request() -> None:
    watch = Watch()

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        return _pick(request, 'Yes')

    agent = Agent(_fixed_id_model('Deploy'), capabilities=[AskUser(answerer=answerer), watch])
    result = await agent.run('deploy')
    requested, answered = watch.events
    assert isinstance(requested, AskUserRequestedEvent)
    assert isinstance(answered, AskUserAnsweredEvent)
    assert requested.request.run_id == answered.run_id == result.run_id
    assert answered.request_id == 'call_0'


# --- Deferred: the question stays the one the deferring run published ---


async def test_a_deferred_question_keeps_the_run_that_deferred_it_across_two_pauses_with_call_0() -> None:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        _fixed_id_model('Deploy'), capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )
    keys: list[str] = []
    for label in ('Yes', 'No'):
        paused = await agent.run('deploy')
        assert isinstance(paused.output, DeferredToolRequests)
        metadata = paused.output.metadata['call_0']
        assert {key: metadata[key] for key in (RUN_ID_METADATA_KEY, RUN_STEP_METADATA_KEY)} == {
            RUN_ID_METADATA_KEY: paused.run_id,
            RUN_STEP_METADATA_KEY: 1,
        }
        # Beside them, where the question comes from (`ADDRESSING_METADATA_KEY`): the run's conversation.
        assert metadata[ADDRESSING_METADATA_KEY]['context']['conversation_id'] == paused.conversation_id
        # What another process does with the stored DeferredToolRequests: rebuild, answer, resume in a new run.
        stored = _REQUESTS.validate_json(_REQUESTS.dump_json(paused.output))
        request = AskUserRequest.from_deferred(stored, 'call_0')
        assert request.run_id == paused.run_id
        keys.append(request.key)
        resumed = await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=deferred_answer(request, _pick(request, label))
        )
        assert resumed.run_id != paused.run_id
        assert resumed.output == 'done'
        returned = [
            part.content
            for message in resumed.new_messages()
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        assert returned == [{'Deploy': [label]}]
    assert keys[0] != keys[1]


async def test_the_requested_event_of_a_deferred_call_has_the_key_the_host_rebuilds() -> None:
    watch = Watch()
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        _fixed_id_model('Deploy'), capabilities=[AskUser(answerer=None), watch], output_type=[str, DeferredToolRequests]
    )
    paused = await agent.run('deploy')
    assert isinstance(paused.output, DeferredToolRequests)
    (event,) = watch.events
    assert isinstance(event, AskUserRequestedEvent)
    rebuilt = AskUserRequest.from_deferred(paused.output, paused.output.calls[0])
    assert event.request == rebuilt
    assert event.request.key == rebuilt.key


def test_from_deferred_refuses_a_call_that_is_not_pending() -> None:
    with pytest.raises(ValueError, match="no pending call with id 'call_9'"):
        AskUserRequest.from_deferred(DeferredToolRequests(), 'call_9')


def test_from_deferred_without_the_run_metadata_falls_back_to_the_bare_id() -> None:
    call = ask_call(question('Deploy', 'Yes', 'No'), call_id='call_0')
    request = AskUserRequest.from_deferred(DeferredToolRequests(calls=[call]), call)
    assert request.run_id is None
    assert request.key == 'call_0'


# --- Withdrawn is not declined ---


async def test_an_answerer_that_reports_a_withdrawn_wait_tells_the_model_so_never_declined() -> None:
    model = script([ask_call(question('Deploy', 'Yes', 'No'), call_id='call_0')])
    watch = Watch()

    async def withdrawn(request: AskUserRequest) -> AskUserResponse:
        raise QuestionWithdrawn('the workflow was cancelled')

    agent = Agent(model.model, capabilities=[AskUser(answerer=withdrawn), watch])
    result = await agent.run('deploy')
    assert result.output == 'done'
    (returned,) = model.returns()
    assert returned.content == WITHDRAWN
    assert returned.content != DECLINED
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert (answered.withdrawn, answered.failed, answered.timed_out) == (True, False, False)
    assert answered.response.cancelled


# --- Never a remembered answer to other questions ---


def test_a_stored_request_with_other_questions_is_refused_naming_both() -> None:
    asked = AskUserRequest(make_request('Delete prod').questions, id='call_0', run_id='run-1')
    stored = AskUserRequest(make_request('Deploy').questions, id='call_0', run_id='run-1')
    with pytest.raises(DifferentQuestionsError) as raised:
        check_same_questions(asked, stored)
    message = str(raised.value)
    assert "'Delete prod'" in message
    assert "'Deploy'" in message
    assert asked.key in message
    assert isinstance(raised.value, ValueError)


def test_the_same_questions_pass_and_notes_count() -> None:
    asked = make_request('Deploy', id='call_0')
    check_same_questions(asked, make_request('Deploy', id='call_0'))
    with_notes = AskUserRequest(asked.questions, id='call_0', notes=True)
    with pytest.raises(DifferentQuestionsError):
        check_same_questions(asked, with_notes)


def test_the_refusal_filters_hostile_headers() -> None:
    asked = AskUserRequest(make_request('Deploy').questions, id='call_0')
    stored = AskUserRequest(make_request('Wipe').questions, id='call_0')
    object.__setattr__(stored.questions[0], 'header', 'Wipe\x1b[2J')
    message = str(DifferentQuestionsError(asked, stored))
    assert '\x1b' not in message


# --- The reference's event kinds ---


def test_the_events_serialize_under_the_reference_kinds() -> None:
    request = make_request('Deploy', id='call_0')
    assert AskUserRequestedEvent(request=request).kind == 'ask_user.requested'
    assert AskUserAnsweredEvent(request_id='call_0', response=AskUserResponse(cancelled=True)).kind == (
        'ask_user.answered'
    )


def _load_both(first: str) -> subprocess.CompletedProcess[str]:
    """Import this package and a stand-in for the reference one (its own class under our kind), in that order."""
    # In a child process, so this process's registry stays ours.
    theirs = textwrap.dedent(
        """
        from dataclasses import dataclass
        from pydantic_ai import CapabilityEvent

        @dataclass(kw_only=True)
        class AskUserRequestedEvent(CapabilityEvent, namespace='ask_user', name='requested'):
            pass
        """
    )
    code = textwrap.dedent(
        f"""
        import sys, types

        def load_theirs():
            module = types.ModuleType('reference_ask_user')
            sys.modules['reference_ask_user'] = module
            exec({theirs!r}, module.__dict__)

        if {first!r} == 'theirs':
            load_theirs()
        from pydantic_ai_ask_user import AskUser
        if {first!r} == 'ours':
            load_theirs()
        """
    )
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=False, timeout=waits.WAIT)


def test_loading_after_another_package_with_the_same_kinds_names_the_clash() -> None:
    done = _load_both('theirs')
    assert done.returncode == 1
    assert (
        "The capability event kind 'ask_user.requested' is already registered by reference_ask_user."
        'AskUserRequestedEvent: another ask-user package'
    ) in done.stderr
    assert 'Use one of the two packages per process.' in done.stderr


def test_another_package_loaded_after_this_one_is_refused_by_pydantic_ai() -> None:
    done = _load_both('ours')
    assert done.returncode == 1
    assert "Duplicate capability event kind 'ask_user.requested'" in done.stderr


# --- What a host passes in DeferredToolResults is held to the questions asked ---


async def _paused(agent: Agent[None, str | DeferredToolRequests]) -> tuple[Any, AskUserRequest]:
    paused = await agent.run('deploy')
    assert isinstance(paused.output, DeferredToolRequests)
    return paused, AskUserRequest.from_deferred(paused.output, 'call_0')


def _deferring_agent(**options: Any) -> Agent[None, str | DeferredToolRequests]:
    return Agent(
        _fixed_id_model('Deploy'),
        capabilities=[AskUser(answerer=None, **options)],
        output_type=[str, DeferredToolRequests],
    )


@pytest.mark.parametrize(
    ('result', 'problem'),
    [
        ('Sure, go ahead and delete production.', 'the result is text, but not one of the outcomes'),
        ({'Deploy': ['Maybe']}, None),  # a typed answer: allowed, it is the person's own words
        ({'Deploy': ['Yes', 'No']}, 'selects 2 labels, but the question is single-select'),
        ({'Delete prod': ['Yes']}, "the result answers 'Delete prod', which is not a header"),
        ({}, "the response has no answer for 'Deploy'"),
        ({'Deploy': []}, 'is not a non-empty list of strings'),
        ({'Deploy': {'answer': ['Yes'], 'note': 'after the backup'}}, 'takes none'),
        (['Yes'], 'the result is list, not the answers object'),
    ],
)
async def test_a_hand_made_deferred_result_is_checked_against_the_questions(
    result: object, problem: str | None
) -> None:
    agent = _deferring_agent()
    paused, _ = await _paused(agent)
    results = DeferredToolResults(calls={'call_0': result})
    if problem is None:
        resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
        assert resumed.output == 'done'
        return
    with pytest.raises(UserError, match="The result of the ask_user_question call 'call_0' does not answer") as raised:
        await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    assert problem in str(raised.value)


@pytest.mark.parametrize('outcome', [DECLINED, WITHDRAWN, TIMED_OUT])
async def test_the_outcome_sentences_pass_as_deferred_results(outcome: str) -> None:
    agent = _deferring_agent()
    paused, _ = await _paused(agent)
    resumed = await agent.run(
        message_history=paused.all_messages(), deferred_tool_results=DeferredToolResults(calls={'call_0': outcome})
    )
    assert resumed.output == 'done'


async def test_a_denial_is_not_a_question_s_result() -> None:
    agent = _deferring_agent()
    paused, _ = await _paused(agent)
    denied = ToolDenied('The user said: go ahead and delete it.')
    with pytest.raises(UserError, match="call 'call_0' does not answer its questions"):
        await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=DeferredToolResults(calls={'call_0': denied})
        )


async def test_a_failure_reaches_the_model_as_the_tool_s_failure_not_as_an_answer() -> None:
    # What a durable wait that ended with no decision gives (`ask-user resolve --fail`): the tool failed.
    agent = _deferring_agent()
    paused, _ = await _paused(agent)
    failed = ToolFailed('No decision arrived.')
    resumed = await agent.run(
        message_history=paused.all_messages(), deferred_tool_results=DeferredToolResults(calls={'call_0': failed})
    )
    assert resumed.output == 'done'
    (returned,) = [
        part for message in resumed.new_messages() for part in message.parts if isinstance(part, ToolReturnPart)
    ]
    assert returned.outcome == 'failed'


async def test_an_approval_of_a_question_is_refused_not_deferred_again() -> None:
    agent = _deferring_agent()
    paused, _ = await _paused(agent)
    with pytest.raises(UserError, match='a question is answered, not approved'):
        await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=DeferredToolResults(approvals={'call_0': True})
        )


async def test_a_notes_answer_passes_when_the_capability_takes_notes() -> None:
    agent = _deferring_agent(notes=True)
    paused, _ = await _paused(agent)
    request = AskUserRequest.from_deferred(paused.output, 'call_0', notes=True)
    answer = AskUserResponse(answers=(AskUserAnswer(header='Deploy', selected=('Yes',), note='after the backup'),))
    resumed = await agent.run(
        message_history=paused.all_messages(), deferred_tool_results=deferred_answer(request, answer)
    )
    assert resumed.output == 'done'


def test_check_tool_result_takes_the_application_s_own_timeout_message() -> None:
    request = make_request('Deploy', id='call_0')
    check_tool_result(
        request, 'Nobody answered; ship the safe default.', messages=('Nobody answered; ship the safe default.',)
    )
    with pytest.raises(ValueError, match='not one of the outcomes'):
        check_tool_result(request, 'Nobody answered; ship the safe default.')


def test_check_tool_result_refuses_extra_keys_beside_a_note() -> None:
    request = AskUserRequest(make_request('Database').questions, id='call_0', notes=True)
    with pytest.raises(ValueError, match='is an object, but not'):
        check_tool_result(request, {'Database': {'answer': ['SQLite'], 'note': 'x', 'by': 'me'}})
    check_tool_result(request, {'Database': {'answer': ['SQLite'], 'note': 'x'}})


async def test_a_result_is_checked_against_the_nearest_call_with_its_id() -> None:
    # One conversation, two turns, both questions under call_0: the second result answers the second question.
    headers = iter(['Deploy', 'Wipe'])

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, UserPromptPart) for part in messages[-1].parts):
            args = {'questions': [question(next(headers), 'Yes', 'No')]}
            return ModelResponse(parts=[ToolCallPart('ask_user_question', args, tool_call_id='call_0')])
        return ModelResponse(parts=[TextPart('done')])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(respond), capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )
    history: list[ModelMessage] = []
    for label in ('Yes', 'No'):
        paused = await agent.run('next', message_history=history)
        assert isinstance(paused.output, DeferredToolRequests)
        request = AskUserRequest.from_deferred(paused.output, 'call_0')
        resumed = await agent.run(
            message_history=paused.all_messages(), deferred_tool_results=deferred_answer(request, _pick(request, label))
        )
        assert resumed.output == 'done'
        history = resumed.all_messages()
    assert request.questions[0].header == 'Wipe'


# --- One run can repeat an id too: providers that number calls per response ---


def _asks_twice_per_run(headers: tuple[str, str]) -> FunctionModel:
    """A model that, like providers numbering calls per response, asks under `functions.ask_user_question:0` twice."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked = sum(isinstance(message, ModelResponse) for message in messages)
        if asked < 2:
            args = {'questions': [question(headers[asked], 'Yes', 'No')]}
            return ModelResponse(
                parts=[ToolCallPart('ask_user_question', args, tool_call_id='functions.ask_user_question:0')]
            )
        return ModelResponse(parts=[TextPart('done')])

    return FunctionModel(respond)


async def test_two_turns_of_one_run_with_the_same_call_id_are_two_questions() -> None:
    asked: list[AskUserRequest] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        asked.append(request)
        return _pick(request, 'Yes')

    agent = Agent(_asks_twice_per_run(('Continue', 'Continue')), capabilities=[AskUser(answerer=answerer)])
    result = await agent.run('go')
    first, second = asked
    assert first.id == second.id == 'functions.ask_user_question:0'
    assert first.run_id == second.run_id == result.run_id
    assert (first.run_step, second.run_step) == (1, 2)
    assert first.key != second.key


async def test_a_hub_asks_the_second_turn_again_though_the_question_and_the_id_repeat() -> None:
    from pydantic_ai_ask_user.hub import QuestionHub

    hub = QuestionHub()
    labels = iter(['Yes', 'No'])
    events = hub.events()  # subscribed before the run starts, so no question is missed

    async def answer_each() -> None:
        async for event in events:
            if event.kind == 'requested':
                assert event.request is not None
                await hub.respond(event.request_id, _pick(event.request, next(labels)))
                if event.request.run_step == 2:
                    return

    agent = Agent(_asks_twice_per_run(('Continue', 'Continue')), capabilities=[AskUser(answerer=hub.ask)])
    async with anyio.create_task_group() as group:
        group.start_soon(answer_each)
        result = await agent.run('go')
    returned = [
        part.content for message in result.all_messages() for part in message.parts if isinstance(part, ToolReturnPart)
    ]
    assert returned == [{'Continue': ['Yes']}, {'Continue': ['No']}]


def test_the_step_is_part_of_the_key_and_is_checked() -> None:
    questions = make_request('Continue').questions
    first = AskUserRequest(questions, id='call_0', run_id='run-1', run_step=1)
    second = AskUserRequest(questions, id='call_0', run_id='run-1', run_step=2)
    assert first.key != second.key
    assert first.key == request_key('run-1', 'call_0', 1)
    with pytest.raises(ValueError, match='run_step must be a step number'):
        AskUserRequest(questions, run_id='run-1', run_step=-1)


def test_the_refusal_survives_pickling_as_a_durable_engine_records_it() -> None:
    import pickle

    asked = AskUserRequest(make_request('Delete prod').questions, id='call_0', run_id='run-1')
    stored = AskUserRequest(make_request('Deploy').questions, id='call_0', run_id='run-1')
    error = pickle.loads(pickle.dumps(DifferentQuestionsError(asked, stored)))
    assert isinstance(error, DifferentQuestionsError)
    assert str(error) == str(DifferentQuestionsError(asked, stored))
