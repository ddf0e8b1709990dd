"""The two events, through `@on_event` and the run's event stream, and the absence of spans of our own."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from ask_user_support import ask_call, question, script
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, Tracer, TracerProvider
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability, Instrumentation, on_event
from pydantic_ai.messages import FunctionToolCallEvent, FunctionToolResultEvent
from pydantic_ai.models.instrumented import InstrumentationSettings

from pydantic_ai_ask_user import (
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
)
from pydantic_ai_ask_user.testing import DECLINE, ScriptedAnswerer

pytestmark = pytest.mark.anyio

_WATCHED = (FunctionToolCallEvent, FunctionToolResultEvent, AskUserRequestedEvent, AskUserAnsweredEvent)


class _Log(AbstractCapability[Any]):
    """Writes both events into a shared log, so their order against the answerer can be checked."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log
        self.events: list[AskUserRequestedEvent | AskUserAnsweredEvent] = []

    @on_event(AskUserRequestedEvent)
    async def requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        self.log.append(f'requested {event.request.questions[0].header}')
        self.events.append(event)

    @on_event(AskUserAnsweredEvent)
    async def answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        self.log.append('answered declined' if event.response.cancelled else 'answered')
        self.events.append(event)


def _logging_answerer(log: list[str], reply: Any) -> ScriptedAnswerer:
    def respond(request: AskUserRequest) -> AskUserResponse:
        log.append('answerer')
        return ScriptedAnswerer(reply)._respond(request, reply)  # pyright: ignore[reportPrivateUsage]

    return ScriptedAnswerer(respond)


async def test_the_requested_event_reaches_on_event_listeners_before_the_answerer_is_called() -> None:
    log: list[str] = []
    listener = _Log(log)
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=_logging_answerer(log, {'Database': 0})), listener])
    await agent.run('migrate')
    assert log == ['requested Database', 'answerer', 'answered']


async def test_the_events_carry_the_request_and_the_response_under_one_id() -> None:
    listener = _Log([])
    answerer = ScriptedAnswerer({'Database': 'SQLite'})
    model = script([ask_call(question('Database'))])
    await Agent(model.model, capabilities=[AskUser(answerer=answerer), listener]).run('migrate')
    requested, answered = listener.events
    assert isinstance(requested, AskUserRequestedEvent)
    assert isinstance(answered, AskUserAnsweredEvent)
    assert requested.request is answerer.requests[0]
    assert answered.request_id == requested.request.id
    assert answered.response == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    assert (answered.timed_out, answered.failed) == (False, False)


async def test_a_declined_request_is_reported_by_the_answered_event() -> None:
    listener = _Log([])
    model = script([ask_call(question('Database'))])
    await Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(DECLINE)), listener]).run('migrate')
    assert listener.log == ['requested Database', 'answered declined']


async def test_the_events_dispatch_immediately_so_a_listener_runs_before_the_emitter_goes_on() -> None:
    assert AskUserRequestedEvent.event_dispatch == 'immediate'
    assert AskUserAnsweredEvent.event_dispatch == 'immediate'
    log: list[str] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        # The listener has already run: the "waiting" indicator is up while the person thinks.
        log.append(f'answerer sees log {list(log)}')
        return AskUserResponse(cancelled=True)

    model = script([ask_call(question('Database'))])
    await Agent(model.model, capabilities=[AskUser(answerer=answerer), _Log(log)]).run('migrate')
    assert log == ['requested Database', "answerer sees log ['requested Database']", 'answered declined']


async def test_both_events_appear_in_the_run_event_stream_between_the_tool_call_and_its_result() -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer({'Database': 'SQLite'}))])
    kinds: list[str] = []
    async with agent.run_stream_events('migrate') as events:
        async for event in events:
            if isinstance(event, _WATCHED):
                kinds.append(type(event).__name__)
    assert kinds == [
        'FunctionToolCallEvent',
        'AskUserRequestedEvent',
        'AskUserAnsweredEvent',
        'FunctionToolResultEvent',
    ]


async def test_the_events_in_the_stream_name_their_tool_call_and_capability() -> None:
    model = script([ask_call(question('Database'), call_id='call-1')])
    agent = Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))])
    seen: list[AskUserRequestedEvent | AskUserAnsweredEvent] = []
    async with agent.run_stream_events('migrate') as events:
        async for event in events:
            if isinstance(event, AskUserRequestedEvent | AskUserAnsweredEvent):
                seen.append(event)
    assert [event.kind for event in seen] == ['ask_user.requested', 'ask_user.answered']
    assert {event.tool_call_id for event in seen} == {'call-1'}
    assert {event.tool_name for event in seen} == {TOOL_NAME}


async def test_the_events_reach_an_event_stream_handler_of_agent_run() -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))])
    seen: list[str] = []

    async def handler(ctx: RunContext[Any], events: Any) -> None:
        async for event in events:
            if isinstance(event, AskUserRequestedEvent | AskUserAnsweredEvent):
                seen.append(type(event).__name__)

    await agent.run('migrate', event_stream_handler=handler)
    assert seen == ['AskUserRequestedEvent', 'AskUserAnsweredEvent']


async def test_the_events_reach_the_stream_of_an_iterated_run() -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))])
    seen: list[str] = []
    async with agent.iter('migrate') as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    async for event in stream:
                        if isinstance(event, AskUserRequestedEvent | AskUserAnsweredEvent):
                            seen.append(type(event).__name__)
    assert seen == ['AskUserRequestedEvent', 'AskUserAnsweredEvent']


# --- No spans of its own, checked with a real tracer provider ---


class _RecordedSpan(NonRecordingSpan):
    def __init__(self, name: str, span_id: int) -> None:
        super().__init__(SpanContext(trace_id=1, span_id=span_id, is_remote=False))
        self.name = name

    def update_name(self, name: str) -> None:
        self.name = name


class _RecordingTracer(Tracer):
    def __init__(self, spans: list[_RecordedSpan]) -> None:
        self.spans = spans
        self.ids = itertools.count(1)

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> Span:
        span = _RecordedSpan(name, next(self.ids))
        self.spans.append(span)
        return span

    @contextmanager
    def start_as_current_span(self, name: str, *args: Any, end_on_exit: bool = True, **kwargs: Any) -> Iterator[Span]:
        span = self.start_span(name)
        with trace.use_span(span, end_on_exit=end_on_exit):
            yield span


class _RecordingTracerProvider(TracerProvider):
    def __init__(self) -> None:
        self.spans: list[_RecordedSpan] = []

    def get_tracer(self, *args: Any, **kwargs: Any) -> Tracer:
        return _RecordingTracer(self.spans)


def _names(spans: Sequence[_RecordedSpan]) -> list[str]:
    return [span.name for span in spans]


async def test_ask_user_emits_no_spans_beyond_those_of_a_plain_tool_of_the_same_name() -> None:
    current_during_wait: list[str] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        span = trace.get_current_span()
        current_during_wait.append(span.name if isinstance(span, _RecordedSpan) else '<none>')
        return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))

    with_capability = _RecordingTracerProvider()
    model = script([ask_call(question('Database'))])
    agent = Agent(
        model.model,
        name='migrator',
        capabilities=[
            AskUser(answerer=answerer),
            Instrumentation(InstrumentationSettings(tracer_provider=with_capability)),
        ],
    )
    await agent.run('migrate')

    async def ask_user_question(questions: list[dict[str, Any]]) -> dict[str, list[str]]:
        return {'Database': ['SQLite']}

    plain = _RecordingTracerProvider()
    baseline = Agent(
        script([ask_call(question('Database'))]).model,
        name='migrator',
        tools=[Tool(ask_user_question, name=TOOL_NAME)],
        capabilities=[Instrumentation(InstrumentationSettings(tracer_provider=plain))],
    )
    await baseline.run('migrate')

    assert _names(with_capability.spans)  # the tracer really recorded the run
    assert any(TOOL_NAME in name for name in _names(with_capability.spans))
    assert _names(with_capability.spans) == _names(plain.spans), _names(with_capability.spans)
    # The wait happens inside the framework's tool-call span.
    (during,) = current_during_wait
    assert TOOL_NAME in during
