"""`ask-user demo`: a whole exchange with an offline, deterministic model, no key and no network needed."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import pydantic_ai
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from ._answers import DECLINED, TIMED_OUT, TOOL_NAME, Answerer, AskUserRequest
from ._capability import AskUser
from ._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ._text import printable

__all__ = ('register', 'TASK', 'DEMO_QUESTIONS', 'demo_model', 'run_demo')

TASK = 'Add a `shipped_at` column to the orders table and roll the migration out.'
"""What the demo asks the agent to do: ambiguous enough that a careful agent asks first."""

DEMO_QUESTIONS: dict[str, Any] = {
    'questions': [
        {
            'header': 'Database',
            'question': 'The orders service has two databases configured. Which one should the migration target?',
            'options': [
                {'label': 'PostgreSQL', 'description': 'The production database (orders-db, 14 GB).'},
                {'label': 'SQLite', 'description': 'The local development file, data/orders.sqlite.'},
            ],
        },
        {
            'header': 'Environments',
            'question': 'Where should the migration be rolled out this time?',
            'options': [
                {'label': 'dev', 'description': 'Developer sandboxes.'},
                {'label': 'staging', 'description': 'The pre-production copy.'},
                {'label': 'production', 'description': 'Needs a maintenance window.'},
            ],
            'multi_select': True,
        },
    ]
}
"""The two clarifying questions the demo model asks: one single-select, one multi-select."""

SCRIPTED_REPLY = {'Database': 'PostgreSQL', 'Environments': ['staging', 'production']}
"""How the scripted person answers the demo's questions."""


def _final_message(result: str) -> str:
    if result in (DECLINED, TIMED_OUT):
        return (
            'You did not pick, so I chose the safe default: the migration targets PostgreSQL and goes to '
            'staging only. It adds a nullable `shipped_at TIMESTAMP` column, so no rewrite of existing rows.'
        )
    try:
        answers: dict[str, list[str]] = json.loads(result)
    except ValueError:
        return f'I could not read the answers ({result!r}), so I stopped before changing anything.'
    database = answers.get('Database', ['PostgreSQL'])[0]
    environments = answers.get('Environments', ['staging'])
    steps = ', then '.join(environments)
    return (
        f'Done: wrote migration 0042_add_shipped_at for {database}, adding a nullable `shipped_at TIMESTAMP` '
        f'column to orders, and rolled it out to {steps}. Existing rows keep NULL until they ship.'
    )


def _demo_turn(messages: list[ModelMessage]) -> ModelResponse:
    returns = [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == TOOL_NAME
    ]
    if not returns:
        return ModelResponse(
            parts=[
                TextPart('Before I touch a schema I need two things from you.'),
                ToolCallPart(TOOL_NAME, DEMO_QUESTIONS, tool_call_id='demo-call-1'),
            ]
        )
    return ModelResponse(parts=[TextPart(_final_message(returns[-1].model_response_str()))])


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return _demo_turn(messages)


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    response = _demo_turn(messages)
    for index, part in enumerate(response.parts):
        if isinstance(part, TextPart):
            yield part.content
        elif isinstance(part, ToolCallPart):
            yield {
                index: DeltaToolCall(
                    name=part.tool_name, json_args=part.args_as_json_str(), tool_call_id=part.tool_call_id
                )
            }


def demo_model() -> FunctionModel:
    """The offline demo model: asks the two `DEMO_QUESTIONS`, then acts on the answers."""
    return FunctionModel(_respond, stream_function=_stream, model_name='ask-user-demo')


@dataclass
class Timeline(AbstractCapability[Any]):
    """Prints the exchange as it happens: what the model asked, both events, and what it got back."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    """Where the timeline goes (by default `sys.stdout` as it is when the timeline is made)."""

    started: float = field(default_factory=time.monotonic)
    """When the run started, for the timestamps."""

    def say(self, text: str) -> None:
        """Print one line of the timeline, made safe to draw."""
        self.out.write(f'[{time.monotonic() - self.started:6.2f}s] {printable(text)}\n')
        self.out.flush()

    @on_event(AskUserRequestedEvent)
    async def requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        """Show what the model asked."""
        self.say(f'AskUserRequestedEvent  request {event.request.id[:8]}, {len(event.request.questions)} question(s)')
        _print_request(event.request, self.out)

    @on_event(AskUserAnsweredEvent)
    async def answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        """Show what the person answered."""
        response = event.response
        if event.timed_out:
            outcome = 'timed out'
        elif event.failed:
            outcome = 'failed'
        elif response.cancelled:
            outcome = 'declined'
        else:
            picked = '; '.join(
                f'{a.header} -> {a.custom_answer!r}'
                if a.custom_answer is not None
                else f'{a.header} -> {", ".join(a.selected)}'
                for a in response.answers
            )
            outcome = f'answered: {picked}'
        self.say(f'AskUserAnsweredEvent   request {event.request_id[:8]}, {outcome}')


def _print_request(request: AskUserRequest, out: TextIO) -> None:
    total = len(request.questions)
    for number, question in enumerate(request.questions, 1):
        kind = 'pick any' if question.multi_select else 'pick one'
        out.write(printable(f'           {number}/{total} {question.header} ({kind}): {question.question}') + '\n')
        for option in question.options:
            detail = f' - {option.description}' if option.description else ''
            out.write(printable(f'                 * {option.label}{detail}') + '\n')


async def _print_events(out: TextIO, timeline: Timeline, events: AsyncIterable[AgentStreamEvent]) -> None:
    async for event in events:
        if isinstance(event, FunctionToolCallEvent) and event.part.tool_name == TOOL_NAME:
            timeline.say(f'model calls {TOOL_NAME}')
        elif isinstance(event, FunctionToolResultEvent) and event.part.tool_name == TOOL_NAME:
            timeline.say(f'model receives          {event.part.model_response_str()}')


def _pick_answerer(scripted: bool, real_model: bool) -> tuple[Answerer, str]:
    """The terminal menu when a person is at a terminal, else a scripted person."""
    if not scripted and sys.stdin.isatty() and sys.stdout.isatty():
        try:
            from .terminal import TerminalAnswerer
        except ImportError:
            pass
        else:
            return TerminalAnswerer(), 'you, in the terminal'
    from .testing import ScriptedAnswerer

    if real_model:
        # A real model writes its own questions, so the script cannot know their headers.
        return ScriptedAnswerer(delay=0.5, default=0), 'a scripted person who picks every first option'
    return ScriptedAnswerer(SCRIPTED_REPLY, delay=0.5), 'a scripted person'


async def run_demo(
    *, model: Model | str | None = None, answerer: Answerer | None = None, who: str = '', out: TextIO | None = None
) -> str:
    """Run the demo agent once, printing the exchange (to `sys.stdout` by default); return the model's final message."""
    # Looked up now, not bound at import, so a redirected or captured stdout gets the output.
    sink = sys.stdout if out is None else out
    if answerer is None:
        answerer, who = _pick_answerer(scripted=False, real_model=model is not None)
    timeline = Timeline(out=sink)
    agent = Agent(model or demo_model(), capabilities=[AskUser(answerer=answerer), timeline])
    shown = 'the offline demo model' if model is None else printable(str(model), allow_newline=False)
    sink.write(f'ask-user demo: {shown}, answered by {printable(who)}\n')
    sink.write(f'task: {TASK}\n\n')

    async def handler(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        await _print_events(sink, timeline, events)

    result = await agent.run(TASK, event_stream_handler=handler)
    sink.write(f'\nmodel: {printable(result.output)}\n')
    sink.flush()
    return result.output


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `demo` to the `ask-user` command line."""
    parser = subparsers.add_parser(
        'demo',
        help='run an agent that asks you two clarifying questions',
        description=(
            'Run an agent that asks two clarifying questions and acts on the answers. Offline and '
            'deterministic by default; in a terminal you answer, elsewhere a scripted person does.'
        ),
    )
    parser.add_argument('--model', metavar='NAME', help="a Pydantic AI model name, e.g. 'openai:gpt-5' (needs its key)")
    parser.add_argument('--scripted', action='store_true', help='let a scripted person answer even in a terminal')
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # The demo owns its output: the exchange it prints is the point, so Pydantic AI's first-run banner stays out.
    pydantic_ai.BANNER_ENABLED = False
    answerer, who = _pick_answerer(scripted=args.scripted, real_model=args.model is not None)
    try:
        anyio.run(lambda: run_demo(model=args.model, answerer=answerer, who=who))
    except UserError as error:  # an unknown model name, a missing key or provider package
        print(f'ask-user: {printable(str(error))}', file=sys.stderr)
        return 2
    return 0
