"""What each ask puts on the framework's tool span, and the histogram of how long people take to answer.

`AskUser` opens no spans of its own. Pydantic AI's `Instrumentation` capability wraps every tool call
in an `execute_tool` span, current while the tool runs, so the tool sets its attributes there. A run
with no `Instrumentation` has no tool span: then nothing is set, rather than writing onto whatever
span of the application happens to be current. The histogram is recorded either way, on the
instrumentation's meter when the run has one, else on the global meter provider (a no-op until one
is set, for instance by `logfire.configure()`).
"""

from __future__ import annotations

import json
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry import metrics, trace
from opentelemetry.metrics import Histogram, Meter
from pydantic_ai import RunContext
from pydantic_ai.capabilities import Instrumentation

from ._answers import AskUserRequest, AskUserResponse
from ._durable import temporal_workflow_time
from ._json import response_to_json
from ._plain_questions import questions_to_json

__all__ = ('Outcome', 'AskObservation', 'WAIT_HISTOGRAM', 'WAIT_BUCKETS')

Outcome = Literal['answered', 'declined', 'timed_out', 'failed', 'deferred', 'withdrawn']
"""How an ask ended, as the `ask_user.outcome` span attribute says it."""

OUTCOME = 'ask_user.outcome'
"""Span attribute: how the ask ended (`Outcome`)."""

REQUEST_ID = 'ask_user.request_id'
"""Span attribute: the request id, which is the tool call id."""

REQUEST_KEY = 'ask_user.request_key'
"""Span attribute: the request's `key`, its run and its tool call: what stores and front ends address it by."""

QUESTION_COUNT = 'ask_user.question_count'
"""Span attribute: how many questions the call asked."""

WAIT_SECONDS = 'ask_user.wait_seconds'
"""Span attribute: how long the answerer took, in seconds; absent for a deferred call, where nothing waits."""

TIMEOUT_SECONDS = 'ask_user.timeout_seconds'
"""Span attribute: `AskUser(timeout=...)`, when there is one."""

QUESTIONS = 'ask_user.questions'
"""Span attribute, only when the instrumentation includes content: the questions as JSON."""

RESPONSE = 'ask_user.response'
"""Span attribute, only when the instrumentation includes content: the answerer's response as JSON."""

WAIT_HISTOGRAM = 'ask_user.wait'
"""The histogram of human wait time, in seconds, with the `ask_user.outcome` attribute."""

WAIT_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 43200.0, 86400.0)
"""Bucket boundaries advised for the histogram: a person takes seconds to a day, not milliseconds."""

_METER_NAME = 'pydantic-ai-ask-user'
"""The meter's scope name when the run has no instrumentation of its own."""


_histograms: weakref.WeakKeyDictionary[Meter, Histogram] = weakref.WeakKeyDictionary()
"""The wait histogram of each meter, made once: a proxy meter (before a provider is set) keeps every instrument
it is asked for, so creating the histogram on each ask would grow it for ever."""

_global_meter: list[Meter] = []
"""The meter taken from the global provider, once (the proxy provider keeps every meter it hands out)."""


def _histogram(meter: Meter) -> Histogram:
    histogram = _histograms.get(meter)
    if histogram is None:
        histogram = _histograms[meter] = meter.create_histogram(
            WAIT_HISTOGRAM,
            unit='s',
            description='How long a person took to answer (or not answer) an ask_user_question call',
            explicit_bucket_boundaries_advisory=WAIT_BUCKETS,
        )
    return histogram


def _default_meter() -> Meter:
    if not _global_meter:
        # Before a provider is set this is a proxy, which forwards to the provider set later.
        _global_meter.append(metrics.get_meter(_METER_NAME))
    return _global_meter[0]


def _now() -> float:
    """Seconds on a clock that only goes forward; inside a Temporal workflow, which may not read one, the workflow's."""
    workflow_time = temporal_workflow_time()
    return time.monotonic() if workflow_time is None else workflow_time


@dataclass
class AskObservation:
    """One ask, watched from the request to its outcome."""

    ctx: RunContext[Any]
    """The tool call's run context."""

    request: AskUserRequest
    """What was asked."""

    timeout: float | None
    """`AskUser(timeout=...)`."""

    started: float = field(default_factory=_now)
    """When the wait started (`time.monotonic()`, or the workflow's time in a Temporal workflow)."""

    def restart_clock(self) -> None:
        """Start measuring the wait now: the answerer is about to be called."""
        self.started = _now()

    def finish(self, outcome: Outcome, response: AskUserResponse | None = None) -> None:
        """Put the outcome on the tool span and, unless the call was deferred, record the wait."""
        wait = _now() - self.started
        instrumentation = _instrumentation(self.ctx)
        if instrumentation is not None:
            span = trace.get_current_span()
            if span.is_recording():
                span.set_attribute(OUTCOME, outcome)
                span.set_attribute(REQUEST_ID, self.request.id)
                span.set_attribute(REQUEST_KEY, self.request.key)
                span.set_attribute(QUESTION_COUNT, len(self.request.questions))
                if outcome != 'deferred':
                    span.set_attribute(WAIT_SECONDS, wait)
                if self.timeout is not None:
                    span.set_attribute(TIMEOUT_SECONDS, self.timeout)
                if instrumentation.settings.include_content:
                    span.set_attribute(QUESTIONS, json.dumps(questions_to_json(self.request), ensure_ascii=False))
                    if response is not None:
                        span.set_attribute(RESPONSE, json.dumps(response_to_json(response), ensure_ascii=False))
        # Not from Temporal workflow code, which may take no lock and would record it again on every replay.
        if outcome != 'deferred' and temporal_workflow_time() is None:
            meter = instrumentation.settings.meter if instrumentation is not None else _default_meter()
            _histogram(meter).record(wait, {OUTCOME: outcome})


def _instrumentation(ctx: RunContext[Any]) -> Instrumentation | None:
    for capability in ctx.capabilities.values():
        if isinstance(capability, Instrumentation):
            return capability
    return None
