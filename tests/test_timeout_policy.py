"""`AskUser(timeout=..., on_timeout=...)`: what the model gets, or how the run fails, when nobody answers in time."""

from __future__ import annotations

import pickle
import time
from typing import Any

import anyio
import pytest
from ask_user_support import Watch, ask_call, question, script
from pydantic_ai import Agent
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import (
    DECLINED,
    TIMED_OUT,
    TOOL_NAME,
    AskUser,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    AskUserTimeoutError,
    TimeoutMessage,
)
from pydantic_ai_ask_user._capability import TIMEOUT_DECLINES, TIMEOUT_MESSAGE, TOOL_DESCRIPTION
from pydantic_ai_ask_user.testing import ScriptedAnswerer

pytestmark = pytest.mark.anyio


async def _never(request: AskUserRequest) -> AskUserResponse:
    await anyio.sleep_forever()
    raise AssertionError('not reached')  # pragma: no cover


class NeverInTime:
    """A `DurableAnswerer` whose recorded wait always runs out: `ask_durably` returns None."""

    def __init__(self) -> None:
        self.timeouts: list[float | None] = []

    async def __call__(self, request: AskUserRequest) -> AskUserResponse:
        raise AssertionError('a durable answerer is asked through ask_durably')  # pragma: no cover

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        self.timeouts.append(timeout)
        return None


async def _timed_out_run(answerer: Any, **settings: Any) -> tuple[Any, list[Any], Watch]:
    model = script([ask_call(question('Database'))])
    watch = Watch()
    agent = Agent(model.model, capabilities=[AskUser(answerer=answerer, timeout=0.05, **settings), watch])
    with anyio.fail_after(60):
        result = await agent.run('migrate')
    assert result.output == 'done'
    (part,) = model.returns()
    assert part.tool_name == TOOL_NAME
    return part.content, watch.events, watch


@pytest.mark.parametrize('make_answerer', [lambda: _never, NeverInTime], ids=['live', 'durable'])
@pytest.mark.parametrize(
    ('on_timeout', 'expected'),
    [
        ({}, TIMED_OUT),
        ({'on_timeout': 'tell'}, TIMED_OUT),
        ({'on_timeout': 'decline'}, DECLINED),
        (
            {'on_timeout': TimeoutMessage('Nobody answered: use SQLite and say so.')},
            'Nobody answered: use SQLite and say so.',
        ),
    ],
    ids=['default', 'tell', 'decline', 'message'],
)
async def test_at_the_deadline_the_model_gets_what_on_timeout_says(
    make_answerer: Any, on_timeout: dict[str, Any], expected: str
) -> None:
    answerer = make_answerer()
    result, events, _ = await _timed_out_run(answerer, **on_timeout)
    assert result == expected
    requested, answered = events
    assert isinstance(requested, AskUserRequestedEvent)
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.timed_out is True
    assert answered.response == AskUserResponse(cancelled=True)
    if isinstance(answerer, NeverInTime):
        assert answerer.timeouts == [0.05]  # the durable answerer is handed the timeout, and owns the deadline


@pytest.mark.parametrize('make_answerer', [lambda: _never, NeverInTime], ids=['live', 'durable'])
async def test_on_timeout_fail_ends_the_run_with_a_clear_error_after_releasing_the_listeners(
    make_answerer: Any,
) -> None:
    model = script([ask_call(question('Database'), question('Region', 'EU', 'US'), call_id='call-7')])
    watch = Watch()
    agent = Agent(model.model, capabilities=[AskUser(answerer=make_answerer(), timeout=0.05, on_timeout='fail'), watch])
    with anyio.fail_after(60), pytest.raises(AskUserTimeoutError) as raised:
        await agent.run('migrate')
    error = raised.value
    assert isinstance(error, TimeoutError)
    assert error.request.id == 'call-7'
    assert error.timeout == 0.05
    message = str(error)
    assert "Nobody answered the question(s) 'Database', 'Region' within" in message
    assert "within the 0.05 s of AskUser(timeout=...), and AskUser(on_timeout='fail') ends the run" in message
    (answered,) = [event for event in watch.events if isinstance(event, AskUserAnsweredEvent)]
    assert answered.timed_out is True
    assert len(model.seen) == 1  # the model was not asked again: the run ended at the deadline


def test_the_timeout_error_survives_pickling_as_a_durable_engine_records_it() -> None:
    request = AskUserRequest.from_tool_args({'questions': [question('Database')]}, id='call-1')
    error = pickle.loads(pickle.dumps(AskUserTimeoutError(request, 30)))
    assert isinstance(error, AskUserTimeoutError)
    assert error.request == request
    assert error.timeout == 30
    assert str(error) == str(AskUserTimeoutError(request, 30))


@pytest.mark.parametrize('on_timeout', ['tell', 'decline', 'fail', TimeoutMessage('Go on without it.')])
async def test_an_answer_in_time_is_used_whatever_on_timeout_says(on_timeout: Any) -> None:
    model = script([ask_call(question('Database'))])
    answerer = ScriptedAnswerer({'Database': 'SQLite'})
    await Agent(model.model, capabilities=[AskUser(answerer=answerer, timeout=60, on_timeout=on_timeout)]).run('go')
    (part,) = model.returns()
    assert part.content == {'Database': ['SQLite']}


async def test_the_requested_event_carries_the_deadline_for_front_ends_to_show_the_time_left() -> None:
    watch = Watch()
    model = script([ask_call(question('Database'))])
    before = time.time()
    await Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0), timeout=600), watch]).run('go')
    after = time.time()
    requested = watch.events[0]
    assert isinstance(requested, AskUserRequestedEvent)
    assert requested.deadline is not None
    assert before + 600 <= requested.deadline <= after + 600


async def test_without_a_timeout_the_requested_event_has_no_deadline() -> None:
    watch = Watch()
    model = script([ask_call(question('Database'))])
    await Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0)), watch]).run('go')
    requested = watch.events[0]
    assert isinstance(requested, AskUserRequestedEvent)
    assert requested.deadline is None


# --- The tool the model reads says what a timeout returns, when the policy changes it ---


def _description(capability: AskUser[None]) -> str:
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(t.description or '' for t in info.function_tools if t.name == TOOL_NAME)
        return ModelResponse(parts=[TextPart('done')])

    Agent(FunctionModel(model), capabilities=[capability]).run_sync('go')
    (description,) = seen
    return description


def test_decline_on_timeout_tells_the_model_a_timeout_reads_as_a_decline() -> None:
    description = _description(AskUser(answerer=ScriptedAnswerer(), timeout=5, on_timeout='decline'))
    assert description == TOOL_DESCRIPTION + TIMEOUT_DECLINES
    assert 'does not answer in time' in description
    assert 'same as when they decline' in description


def test_a_timeout_message_tells_the_model_a_timeout_returns_the_applications_message() -> None:
    description = _description(AskUser(answerer=ScriptedAnswerer(), timeout=5, on_timeout=TimeoutMessage('Go on.')))
    assert description == TOOL_DESCRIPTION + TIMEOUT_MESSAGE
    assert 'message from the application' in description


@pytest.mark.parametrize('on_timeout', ['tell', 'fail'])
def test_tell_and_fail_leave_the_description_as_it_is(on_timeout: Any) -> None:
    assert _description(AskUser(answerer=ScriptedAnswerer(), timeout=5, on_timeout=on_timeout)) == TOOL_DESCRIPTION


# --- Bad settings are errors at construction ---


@pytest.mark.parametrize('on_timeout', ['decilne', 'Use SQLite.', None, 3, True])
def test_an_unknown_on_timeout_is_a_user_error_naming_the_choices(on_timeout: Any) -> None:
    with pytest.raises(UserError) as raised:
        AskUser(answerer=ScriptedAnswerer(), timeout=5, on_timeout=on_timeout)
    message = str(raised.value)
    assert message.startswith('AskUser(on_timeout=...) must be ')
    for choice in ("'tell'", "'decline'", "'fail'", "TimeoutMessage('your own text')"):
        assert choice in message
    assert repr(on_timeout) in message


@pytest.mark.parametrize('on_timeout', ['decline', 'fail', TimeoutMessage('Go on.')])
def test_an_on_timeout_without_a_timeout_is_a_user_error(on_timeout: Any) -> None:
    with pytest.raises(UserError, match=r'needs a timeout: without AskUser\(timeout=...\) the wait never runs out'):
        AskUser(answerer=ScriptedAnswerer(), on_timeout=on_timeout)


def test_an_on_timeout_in_deferred_mode_is_a_user_error_saying_nothing_waits() -> None:
    with pytest.raises(UserError, match=r'needs an answerer: with answerer=None the call is deferred'):
        AskUser(answerer=None, on_timeout='fail')


def test_the_default_on_timeout_needs_no_timeout() -> None:
    assert AskUser(answerer=ScriptedAnswerer()).on_timeout == 'tell'


@pytest.mark.parametrize('text', ['', '   ', None, 42])
def test_a_timeout_message_must_be_some_text(text: Any) -> None:
    with pytest.raises(UserError, match=r'TimeoutMessage\(text\) must be a non-empty string'):
        TimeoutMessage(text)
