"""What each ask puts on Pydantic AI's tool span, and the histogram of human wait, read with the OpenTelemetry SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from ask_user_support import Watch, ask_call, question, script
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings

from pydantic_ai_ask_user import (
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    AskUserTimeoutError,
)
from pydantic_ai_ask_user.testing import DECLINE, ScriptedAnswerer

pytestmark = pytest.mark.anyio


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def instrumentation(self, include_content: bool = False) -> Instrumentation:
        return Instrumentation(
            settings=InstrumentationSettings(
                tracer_provider=self.tracer_provider,
                meter_provider=self.meter_provider,
                include_content=include_content,
            )
        )

    def tool_span(self) -> dict[str, Any]:
        (span,) = [s for s in self.spans.get_finished_spans() if _attributes(s).get('gen_ai.tool.name') == TOOL_NAME]
        return _attributes(span)

    def waits(self) -> list[HistogramDataPoint]:
        data = self.metrics.get_metrics_data()
        if data is None:
            return []
        points: list[HistogramDataPoint] = []
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == 'ask_user.wait':
                        assert metric.unit == 's'
                        points.extend(p for p in metric.data.data_points if isinstance(p, HistogramDataPoint))
        return points


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Telemetry(spans, reader, tracer_provider, meter_provider)
    tracer_provider.shutdown()
    meter_provider.shutdown()


TWO_QUESTIONS = [question('Database'), question('Region', 'EU', 'US')]


async def test_an_answered_ask_puts_its_outcome_id_count_and_wait_on_the_tool_span(telemetry: Telemetry) -> None:
    model = script([ask_call(*TWO_QUESTIONS, call_id='call-1')])
    answerer = ScriptedAnswerer({'Database': 'SQLite', 'Region': 'EU'}, delay=0.2)
    agent = Agent(model.model, capabilities=[telemetry.instrumentation(), AskUser(answerer=answerer, timeout=600)])
    await agent.run('migrate')
    span = telemetry.tool_span()
    assert span['ask_user.outcome'] == 'answered'
    assert span['ask_user.request_id'] == 'call-1'
    assert span['gen_ai.tool.call.id'] == 'call-1'
    assert span['ask_user.question_count'] == 2
    assert 0.2 <= span['ask_user.wait_seconds'] < 600
    assert span['ask_user.timeout_seconds'] == 600
    # Without content in the instrumentation, neither the questions nor the answers are recorded.
    assert not any(key in span for key in ('ask_user.questions', 'ask_user.response', 'gen_ai.tool.call.arguments'))
    (point,) = telemetry.waits()
    assert dict(point.attributes or {}) == {'ask_user.outcome': 'answered'}
    assert point.count == 1
    assert point.sum == span['ask_user.wait_seconds']


async def test_with_content_the_span_carries_the_questions_and_the_response(telemetry: Telemetry) -> None:
    model = script([ask_call(*TWO_QUESTIONS)])
    answerer = ScriptedAnswerer({'Database': 'SQLite', 'Region': 'EU'})
    agent = Agent(
        model.model, capabilities=[telemetry.instrumentation(include_content=True), AskUser(answerer=answerer)]
    )
    await agent.run('migrate')
    span = telemetry.tool_span()
    questions = json.loads(span['ask_user.questions'])
    assert [q['header'] for q in questions] == ['Database', 'Region']
    assert questions[1]['options'] == [{'label': 'EU', 'description': None}, {'label': 'US', 'description': None}]
    assert json.loads(span['ask_user.response']) == {
        'answers': [
            {'header': 'Database', 'selected': ['SQLite']},
            {'header': 'Region', 'selected': ['EU']},
        ],
        'cancelled': False,
    }
    assert 'ask_user.timeout_seconds' not in span


async def test_a_declined_ask_says_declined(telemetry: Telemetry) -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[telemetry.instrumentation(), AskUser(answerer=ScriptedAnswerer(DECLINE))])
    await agent.run('migrate')
    assert telemetry.tool_span()['ask_user.outcome'] == 'declined'
    assert [dict(p.attributes or {}) for p in telemetry.waits()] == [{'ask_user.outcome': 'declined'}]


async def _never(request: AskUserRequest) -> AskUserResponse:
    await anyio.sleep_forever()
    raise AssertionError('not reached')  # pragma: no cover


@pytest.mark.parametrize('on_timeout', ['tell', 'fail'])
async def test_a_timed_out_ask_says_timed_out_not_success(telemetry: Telemetry, on_timeout: Any) -> None:
    model = script([ask_call(question('Database'))])
    capability = AskUser(answerer=_never, timeout=0.1, on_timeout=on_timeout)
    agent = Agent(model.model, capabilities=[telemetry.instrumentation(), capability])
    with anyio.fail_after(60):
        if on_timeout == 'fail':
            with pytest.raises(AskUserTimeoutError):
                await agent.run('migrate')
        else:
            await agent.run('migrate')
    span = telemetry.tool_span()
    assert span['ask_user.outcome'] == 'timed_out'
    assert span['ask_user.wait_seconds'] >= 0.1
    (point,) = telemetry.waits()
    assert dict(point.attributes or {}) == {'ask_user.outcome': 'timed_out'}


async def _raises(request: AskUserRequest) -> AskUserResponse:
    raise RuntimeError('the inbox is down')


async def _misfit(request: AskUserRequest) -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('Oracle',)),))


@pytest.mark.parametrize(
    ('answerer', 'error'), [(_raises, RuntimeError), (_misfit, ValueError)], ids=['raises', 'misfit']
)
async def test_an_answerer_that_fails_says_failed(telemetry: Telemetry, answerer: Any, error: type[Exception]) -> None:
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[telemetry.instrumentation(), AskUser(answerer=answerer)])
    with pytest.raises(error):
        await agent.run('migrate')
    assert telemetry.tool_span()['ask_user.outcome'] == 'failed'
    assert [dict(p.attributes or {}) for p in telemetry.waits()] == [{'ask_user.outcome': 'failed'}]


async def test_a_deferred_ask_says_deferred_and_records_no_wait(telemetry: Telemetry) -> None:
    model = script([ask_call(question('Database'), call_id='call-9')])
    agent = Agent(
        model.model,
        capabilities=[telemetry.instrumentation(), AskUser(answerer=None)],
        output_type=[str, DeferredToolRequests],
    )
    result = await agent.run('migrate')
    assert isinstance(result.output, DeferredToolRequests)
    span = telemetry.tool_span()
    assert span['ask_user.outcome'] == 'deferred'
    assert span['ask_user.request_id'] == 'call-9'
    assert span['ask_user.question_count'] == 1
    assert 'ask_user.wait_seconds' not in span
    assert telemetry.waits() == []


async def test_an_ask_cancelled_with_its_run_says_withdrawn(telemetry: Telemetry) -> None:
    model = script([ask_call(question('Database'))])
    watch = Watch()
    agent = Agent(model.model, capabilities=[telemetry.instrumentation(), AskUser(answerer=_never), watch])
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, 'migrate')
            while not any(isinstance(event, AskUserRequestedEvent) for event in watch.events):
                await anyio.sleep(0.01)
            group.cancel_scope.cancel()
    assert telemetry.tool_span()['ask_user.outcome'] == 'withdrawn'
    assert [dict(p.attributes or {}) for p in telemetry.waits()] == [{'ask_user.outcome': 'withdrawn'}]


async def test_without_instrumentation_no_span_of_the_application_is_written_on(telemetry: Telemetry) -> None:
    # The tool span is the instrumentation's; with none, the span current around the run is someone else's.
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))])
    with telemetry.tracer_provider.get_tracer('app').start_as_current_span('request handler'):
        await agent.run('migrate')
    (span,) = telemetry.spans.get_finished_spans()
    assert span.name == 'request handler'
    assert not any(key.startswith('ask_user.') for key in _attributes(span))


async def test_with_content_a_timed_out_ask_carries_the_questions_and_no_response(telemetry: Telemetry) -> None:
    model = script([ask_call(question('Database'))])
    capability = AskUser(answerer=_never, timeout=0.1)
    agent = Agent(model.model, capabilities=[telemetry.instrumentation(include_content=True), capability])
    with anyio.fail_after(60):
        await agent.run('migrate')
    span = telemetry.tool_span()
    assert span['ask_user.outcome'] == 'timed_out'
    assert [q['header'] for q in json.loads(span['ask_user.questions'])] == ['Database']
    assert 'ask_user.response' not in span


async def test_a_span_sampled_out_gets_nothing_but_the_wait_is_still_measured() -> None:
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(sampler=ALWAYS_OFF)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(spans, reader, tracer_provider, MeterProvider(metric_readers=[reader]))
    model = script([ask_call(question('Database'))])
    agent = Agent(
        model.model, capabilities=[telemetry.instrumentation(), AskUser(answerer=ScriptedAnswerer(default=0))]
    )
    await agent.run('migrate')
    assert spans.get_finished_spans() == ()
    assert [dict(p.attributes or {}) for p in telemetry.waits()] == [{'ask_user.outcome': 'answered'}]


_GLOBAL_METER_SCRIPT = """
import gc, json
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from pydantic_ai import Agent
from pydantic_ai_ask_user import AskUser
from pydantic_ai_ask_user.testing import ScriptedAnswerer, asking_model

def ask():
    Agent(asking_model(), capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))]).run_sync('go')

for _ in range(30):
    ask()  # no provider yet: recorded on a proxy, which must not keep an instrument per ask
proxies = sum(type(o).__name__ == '_ProxyHistogram' for o in gc.get_objects())
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
ask()
points = [
    (dict(p.attributes), p.count)
    for r in reader.get_metrics_data().resource_metrics
    for s in r.scope_metrics
    for m in s.metrics
    if m.name == 'ask_user.wait'
    for p in m.data.data_points
]
print(json.dumps({'proxies': proxies, 'points': points}))
"""


def test_without_instrumentation_the_wait_goes_to_the_global_meter_provider_even_one_set_later() -> None:
    # A fresh interpreter: the global meter provider can be set once per process.
    done = subprocess.run(
        [sys.executable, '-c', _GLOBAL_METER_SCRIPT], capture_output=True, text=True, timeout=300, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result['proxies'] <= 1
    assert result['points'] == [[{'ask_user.outcome': 'answered'}, 1]]
