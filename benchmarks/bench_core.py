"""The core's cost: a maximal call through the whole tool path against plain pydantic validation, and import time.

(a) A maximal `ask_user_question` call (10 questions x 6 options, every string at its maximum length) goes
    through what the tool does on every call: the tool's own argument validator (the fast path, with the exact
    rules only on rejection), both events emitted with a listener attached (inside a real agent run, so
    `ctx.emit` is the framework's), the answerer, the check and the rendering of the result for the model, and
    the check of that result before the next model request. The floor is a plain pydantic `TypeAdapter`
    validating the same JSON against the same shape and limits, with none of our rules; a plain tool of the same
    call is the floor's validation, a function that takes the validated arguments and returns, and the rendering.
    Each round times the floor and then each measured part, one after the other, so a busy machine slows both
    sides of a ratio alike; the figure is the median of the per-round ratios, with the lowest and highest. Goal:
    validation <= 1.3x. The whole tool path is also given beyond the plain tool (its time less the plain tool's,
    over the floor): what asking costs beyond any tool's call. The call is measured twice: in accented Latin text
    (where the text checks run in C) and in Cyrillic and Korean (where they run in Rust).
(b) Import time of `pydantic_ai_ask_user` over `pydantic_ai`, best of N fresh interpreters, with the bytecode
    cache as users have it: written by a first, untimed import, and used by every timed one
    (`PYTHONDONTWRITEBYTECODE` is removed from their environment). Goal: <= 10 ms.
"""

from __future__ import annotations

import json
import os
import statistics
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
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_core import to_json

from benchmarks.quick import sized
from pydantic_ai_ask_user import (
    MAX_QUESTIONS,
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
)
from pydantic_ai_ask_user._capability import _check_question_results  # pyright: ignore[reportPrivateUsage]
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.limits import (
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
)

CALLS = sized(100, 2)
"""Calls per timed part of a round (2 in quick mode)."""

ROUNDS = sized(21, 1)
"""Timed rounds; each gives one ratio per part, and the median is reported with the lowest and highest (1 in quick
mode)."""

IMPORT_RUNS = sized(15, 1)
"""Fresh interpreters per import measurement (1 in quick mode)."""


_LATIN = 'Wörd ñ '
"""Accented Latin text: the text rules' fast path (printable Latin-1, checked in C) applies."""

_NON_LATIN = 'Слово 낱말 '
"""Cyrillic and Korean text: the text rules walk it (invisible characters, combining marks)."""


def _text(prefix: str, length: int, *, multi_line: bool = False, words: str = _LATIN) -> str:
    # Mixed text with spaces, accents and (where allowed) line breaks, so no fast path for pure ASCII is flattered.
    unit = words + ('line\n' if multi_line else 'text ')
    body = (prefix + ' ' + unit * length)[: length - 1]
    return body.rstrip() + 'x' * (length - len(body.rstrip()))


def maximal_call(words: str = _LATIN) -> dict[str, Any]:
    """10 questions x 6 options, every header, question, label and description at its maximum length."""
    questions: list[dict[str, Any]] = []
    for q in range(MAX_QUESTIONS):
        options = [
            {
                'label': _text(f'Option {q}-{o}', MAX_LABEL_LENGTH, words=words),
                'description': _text(f'Detail {q}-{o}', MAX_DESCRIPTION_LENGTH, multi_line=True, words=words),
            }
            for o in range(MAX_OPTIONS)
        ]
        questions.append(
            {
                'header': _text(f'H{q}', MAX_HEADER_LENGTH, words=words),
                'question': _text(f'Question {q}', MAX_QUESTION_LENGTH, multi_line=True, words=words),
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


async def plain_tool(arguments: object) -> str:
    """A plain tool: it takes the validated arguments and returns."""
    return 'done' if arguments is not None else 'nothing'


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


PARTS = ('validation', 'events', 'answer and result', 'whole tool path', 'plain tool')
"""What each round times besides the floor, per call."""

BEYOND_PLAIN = 'whole tool path beyond a plain tool'
"""The whole tool path's time less the plain tool's, over the floor: what asking costs beyond any tool's call."""


def measure(args_json: str) -> tuple[dict[str, list[float]], dict[str, list[float]], int]:
    """Per round: microseconds per call of the floor and of each part, and each part's ratio to the floor.

    Runs inside a real agent run, so `ctx.emit` is the framework's own, with a listener attached. Returns the
    timings, the ratios, and how many events the listener saw.
    """
    floor = TypeAdapter(_PlainArguments)
    capability = AskUser(answerer=_first_labels)
    # The validator the agent runs on the model's arguments: the fast path, the exact rules only on rejection.
    validator: Any = capability.get_toolset().arguments  # pyright: ignore[reportAttributeAccessIssue]
    listener = _Listener()
    times: dict[str, list[float]] = {name: [] for name in ('floor', *PARTS)}
    ratios: dict[str, list[float]] = {name: [] for name in (*PARTS, BEYOND_PLAIN)}

    async def bench(ctx: RunContext[None]) -> str:
        """Run the measured rounds with this run's context."""
        request = AskUserRequest.from_tool_args(args_json)
        response = await _first_labels(request)
        assert ctx.tool_call_id is not None
        assert ctx.run_id is not None
        run_id = ctx.run_id
        call = ToolCallPart(TOOL_NAME, args_json, tool_call_id=ctx.tool_call_id)
        call_response = ModelResponse(parts=[call])

        def floor_part() -> None:
            for _ in range(CALLS):
                floor.validate_json(args_json)

        def validation_part() -> None:
            for _ in range(CALLS):
                validator.validate_json(args_json)

        async def events_part() -> None:
            for _ in range(CALLS):
                await ctx.emit(AskUserRequestedEvent(request=request))
                await ctx.emit(AskUserAnsweredEvent(request_id=request.id, response=response))
                await anyio.lowlevel.checkpoint()

        async def answer_part() -> None:
            for _ in range(CALLS):
                answered = await _first_labels(request)
                to_json(ask_user_result(request, answered))

        async def whole_part() -> None:
            for _ in range(CALLS):
                arguments = validator.validate_json(args_json)  # the model's JSON, as the tool receives it
                # `_ask` builds the request from the checked questions, as the tool does.
                result = await capability._ask(ctx, arguments['questions'])  # pyright: ignore[reportPrivateUsage]
                to_json(result)  # rendered for the model
                # The check of the result before the next model request, as `before_model_request` makes it: with
                # the request the tool made in this run, so the call is not validated again.
                returned = ModelRequest(parts=[ToolReturnPart(TOOL_NAME, result, tool_call_id=call.tool_call_id)])
                asked = capability._asked.pop(run_id, {})  # pyright: ignore[reportPrivateUsage]
                _check_question_results([call_response, returned], False, (), asked)  # pyright: ignore[reportPrivateUsage]
                # Let the run's stream consumer drain the two events, as it does between real tool calls;
                # without it they pile up in one buffer, which no real run does.
                await anyio.lowlevel.checkpoint()

        async def plain_part() -> None:
            # A plain tool of the same call: the floor's validation, a function that takes the validated arguments
            # and returns, and its result rendered for the model.
            for _ in range(CALLS):
                arguments = floor.validate_json(args_json)
                to_json(await plain_tool(arguments))
                await anyio.lowlevel.checkpoint()

        for _ in range(ROUNDS):
            started = time.perf_counter()
            floor_part()
            floor_us = (time.perf_counter() - started) / CALLS * 1e6
            times['floor'].append(floor_us)
            parts = (validation_part, events_part, answer_part, whole_part, plain_part)
            for name, part in zip(PARTS, parts, strict=True):
                started = time.perf_counter()
                done = part()
                if done is not None:
                    await done
                part_us = (time.perf_counter() - started) / CALLS * 1e6
                times[name].append(part_us)
                ratios[name].append(part_us / floor_us)
            ratios[BEYOND_PLAIN].append((times['whole tool path'][-1] - times['plain tool'][-1]) / floor_us)
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
    return times, ratios, listener.requested + listener.answered


def _best_import_ms(setup: str, statement: str) -> float:
    """Best-of-N milliseconds of `statement` in a fresh interpreter, after `setup` (not timed).

    With the bytecode cache as users have it: a first, untimed run writes it, and every timed run reads it.
    """
    env = {key: value for key, value in os.environ.items() if key != 'PYTHONDONTWRITEBYTECODE'}
    code = f'{setup}; import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)'
    subprocess.run([sys.executable, '-c', code], capture_output=True, check=True, env=env)  # writes the cache
    best = float('inf')
    for _ in range(IMPORT_RUNS):
        done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=env)
        best = min(best, float(done.stdout))
    return best * 1e3


def import_overhead_ms() -> tuple[float, float]:
    """Best-of-N import time of pydantic_ai, and of pydantic_ai_ask_user once pydantic_ai is imported."""
    base = _best_import_ms('pass', 'import pydantic_ai')
    extra = _best_import_ms('import pydantic_ai', 'import pydantic_ai_ask_user')
    return base, extra


def _spread(values: list[float]) -> str:
    return f'{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})'


def report(label: str, args_json: str) -> None:
    """Print one payload's figures: microseconds per call (medians) and ratios to the floor."""
    times, ratios, events = measure(args_json)
    floor = statistics.median(times['floor'])
    print(f'{label}: {MAX_QUESTIONS} questions x {MAX_OPTIONS} options, {len(args_json)} bytes of JSON')
    print(f'  floor (plain TypeAdapter validation)            {floor:7.1f} us/call')
    goals = {'validation': ' (goal <= 1.3)'}
    for name in PARTS:
        median_us = statistics.median(times[name])
        print(f'  {name:<47} {median_us:7.1f} us/call, ratio {_spread(ratios[name])}{goals.get(name, "")}')
    print(f'  {BEYOND_PLAIN:<47} {"":>15} ratio {_spread(ratios[BEYOND_PLAIN])}')
    print(f'  ({ROUNDS} rounds of {CALLS} calls, floor and parts interleaved; the listener saw {events} events)')


def main() -> None:
    for label, words in (('maximal call, accented Latin', _LATIN), ('maximal call, Cyrillic and Korean', _NON_LATIN)):
        args_json = json.dumps(maximal_call(words))
        AskUserRequest.from_tool_args(args_json)  # the maximal call is valid
        report(label, args_json)
    base, extra = import_overhead_ms()
    print(f'import pydantic_ai: {base:.1f} ms (best of {IMPORT_RUNS} fresh interpreters, bytecode cached)')
    print(f'  import pydantic_ai_ask_user after it: {extra:.1f} ms extra (goal <= 10 ms)')


if __name__ == '__main__':
    main()
