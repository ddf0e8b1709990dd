"""The core's cost: a maximal call through the whole tool path against plain pydantic validation, and import time.

(a) A maximal `ask_user_question` call (10 questions x 6 options, every string at its maximum length) goes
    through what the tool does on every call: the tool's own argument validator, both events emitted with a
    listener attached (inside a real agent run, so `ctx.emit` is the framework's), the answerer, the check
    and the rendering of the result for the model. The floor is a plain pydantic `TypeAdapter` validating
    the same JSON against the same shape and limits, with none of our rules. Goal: ratio <= 1.3.
(b) Import time of `pydantic_ai_ask_user` over `pydantic_ai`, best of N fresh interpreters. Goal: <= 10 ms.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import anyio.lowlevel
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic_ai import Agent, FunctionToolset, RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_core import to_json

from pydantic_ai_ask_user import (
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS,
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
)

CALLS = 300
"""Calls per timed round."""

ROUNDS = 7
"""Timed rounds; the best is reported, as the least disturbed by the rest of the machine."""

IMPORT_RUNS = 15
"""Fresh interpreters per import measurement."""


def _text(prefix: str, length: int, *, multi_line: bool = False) -> str:
    # Mixed text with spaces, accents and (where allowed) line breaks, so no fast path for pure ASCII is flattered.
    unit = 'Wörd ñ ' + ('line\n' if multi_line else 'text ')
    body = (prefix + ' ' + unit * length)[: length - 1]
    return body.rstrip() + 'x' * (length - len(body.rstrip()))


def maximal_call() -> dict[str, Any]:
    """10 questions x 6 options, every header, question, label and description at its maximum length."""
    questions: list[dict[str, Any]] = []
    for q in range(MAX_QUESTIONS):
        options = [
            {
                'label': _text(f'Option {q}-{o}', MAX_LABEL_LENGTH),
                'description': _text(f'Detail {q}-{o}', MAX_DESCRIPTION_LENGTH, multi_line=True),
            }
            for o in range(MAX_OPTIONS)
        ]
        questions.append(
            {
                'header': _text(f'H{q}', MAX_HEADER_LENGTH),
                'question': _text(f'Question {q}', MAX_QUESTION_LENGTH, multi_line=True),
                'options': options,
                'multi_select': q % 2 == 1,
            }
        )
    return {'questions': questions}


# The floor: the same shape and limits in plain pydantic, without our text and uniqueness rules.
class _PlainOption(BaseModel):
    model_config = ConfigDict(extra='forbid', frozen=True)
    label: Annotated[str, Field(min_length=1, max_length=MAX_LABEL_LENGTH)]
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION_LENGTH)] | None = None


class _PlainQuestion(BaseModel):
    model_config = ConfigDict(extra='forbid', frozen=True)
    header: Annotated[str, Field(min_length=1, max_length=MAX_HEADER_LENGTH)]
    question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_LENGTH)]
    options: Annotated[tuple[_PlainOption, ...], Field(min_length=2, max_length=MAX_OPTIONS)]
    multi_select: bool = False


class _PlainArguments(BaseModel):
    model_config = ConfigDict(extra='forbid', frozen=True)
    questions: Annotated[tuple[_PlainQuestion, ...], Field(min_length=1, max_length=MAX_QUESTIONS)]


def _best_per_call(run_round: Any) -> float:
    best = float('inf')
    for _ in range(ROUNDS):
        started = time.perf_counter()
        run_round()
        best = min(best, (time.perf_counter() - started) / CALLS)
    return best


def floor_us(args_json: str) -> float:
    adapter = TypeAdapter(_PlainArguments)

    def run_round() -> None:
        for _ in range(CALLS):
            adapter.validate_json(args_json)

    return _best_per_call(run_round) * 1e6


def validation_us(args_json: str) -> float:
    """Per-call microseconds of the tool's own argument validation alone: the schema and every text rule."""
    validator: Any = AskUser(answerer=None).get_toolset().tools[TOOL_NAME].function_schema.validator  # pyright: ignore[reportAttributeAccessIssue]

    def run_round() -> None:
        for _ in range(CALLS):
            validator.validate_json(args_json)

    return _best_per_call(run_round) * 1e6


async def _first_labels(request: AskUserRequest) -> AskUserResponse:
    return AskUserResponse(
        answers=tuple(AskUserAnswer(header=q.header, selected=(q.options[0].label,)) for q in request.questions)
    )


class _Listener(AbstractCapability[Any]):
    """A listener on both events, as a UI's 'waiting for you' indicator would be."""

    def __init__(self) -> None:
        super().__init__()
        self.requested = 0
        self.answered = 0

    @on_event(AskUserRequestedEvent)
    async def on_requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        self.requested += 1

    @on_event(AskUserAnsweredEvent)
    async def on_answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        self.answered += 1


def tool_path_us(args_json: str) -> tuple[float, int]:
    """Per-call microseconds of the tool path, measured inside a real run; and how many events the listener saw."""
    capability = AskUser(answerer=_first_labels)
    validator: Any = capability.get_toolset().tools[TOOL_NAME].function_schema.validator  # pyright: ignore[reportAttributeAccessIssue]
    listener = _Listener()
    timings: list[float] = []

    async def bench(ctx: RunContext[None]) -> str:
        """Run the measured loop with this run's context."""
        for _ in range(ROUNDS):
            started = time.perf_counter()
            for _ in range(CALLS):
                arguments = validator.validate_json(args_json)  # the model's JSON, as the tool receives it
                request = AskUserRequest(questions=arguments['questions'])
                result = await capability._ask(ctx, request)  # pyright: ignore[reportPrivateUsage]
                to_json(result)  # rendered for the model
                # Let the run's stream consumer drain the two events, as it does between real tool calls;
                # without it they pile up in one buffer, which no real run does.
                await anyio.lowlevel.checkpoint()
            timings.append((time.perf_counter() - started) / CALLS)
        return 'measured'

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('bench', {})])
        return ModelResponse(parts=[TextPart('done')])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        # A run with event listeners streams its model requests.
        if len(messages) == 1:
            yield {0: DeltaToolCall(name='bench', json_args='{}')}
        else:
            yield 'done'

    class _Bench(AbstractCapability[None]):
        # Capability events may only be emitted from a capability's own tool, so the loop runs in one.
        def get_toolset(self) -> FunctionToolset[None]:
            toolset: FunctionToolset[None] = FunctionToolset()
            toolset.add_function(bench, name='bench')
            return toolset

    agent = Agent(FunctionModel(model, stream_function=stream), capabilities=[capability, listener, _Bench()])
    anyio.run(agent.run, 'benchmark')
    return min(timings) * 1e6, listener.requested + listener.answered


def _best_import_ms(setup: str, statement: str) -> float:
    """Best-of-N milliseconds of `statement` in a fresh interpreter, after `setup` (not timed)."""
    best = float('inf')
    for _ in range(IMPORT_RUNS):
        code = f'{setup}; import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)'
        done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
        best = min(best, float(done.stdout))
    return best * 1e3


def import_overhead_ms() -> tuple[float, float]:
    """Best-of-N import time of pydantic_ai, and of pydantic_ai_ask_user once pydantic_ai is imported."""
    base = _best_import_ms('pass', 'import pydantic_ai')
    extra = _best_import_ms('import pydantic_ai', 'import pydantic_ai_ask_user')
    return base, extra


def main() -> None:
    call = maximal_call()
    args_json = json.dumps(call)
    AskUserRequest.from_tool_args(args_json)  # the maximal call is valid
    floor = floor_us(args_json)
    validation = validation_us(args_json)
    path, events = tool_path_us(args_json)
    print(f'maximal call: {MAX_QUESTIONS} questions x {MAX_OPTIONS} options, {len(args_json)} bytes of JSON')
    print(f'  floor (plain TypeAdapter validation): {floor:8.1f} us/call')
    print(
        f"  the tool's validation alone (schema + text and uniqueness rules): {validation:8.1f} us/call, "
        f'ratio {validation / floor:.2f}'
    )
    print(f'  whole tool path (validate, 2 events + listener, check, render): {path:8.1f} us/call')
    print(f'  ratio: {path / floor:.2f} (goal <= 1.3); listener saw {events} events')
    base, extra = import_overhead_ms()
    print(f'import pydantic_ai: {base:.1f} ms (best of {IMPORT_RUNS} fresh interpreters)')
    print(f'  import pydantic_ai_ask_user after it: {extra:.1f} ms extra (goal <= 10 ms), best of {IMPORT_RUNS}')


if __name__ == '__main__':
    main()
