"""`ask-user demo`: a whole exchange with an offline, deterministic model, no key and no network needed."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import pydantic_ai
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
from pydantic_ai.exceptions import UnexpectedModelBehavior, UserError
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
from pydantic_ai.models import Model, infer_model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from ._answers import DECLINED, TIMED_OUT, TOOL_NAME, Answerer, AskUserRequest
from ._capability import AskUser
from ._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ._text import printable

__all__ = ('register', 'TASK', 'DEMO_QUESTIONS', 'demo_model', 'run_demo', 'EXIT_BAD_MODEL', 'EXIT_MISSING_PACKAGE')

EXIT_BAD_MODEL = 2
"""`--model` names no model Pydantic AI knows, or one it cannot set up (a missing API key); one line on stderr."""

EXIT_MISSING_PACKAGE = 4
"""`--model` needs a provider package that is not installed; stderr names the extra to install."""

TEST_MODEL_NOTE = (
    "'test' is Pydantic AI's TestModel, whose made-up tool arguments AskUser refuses (two options both "
    "labelled 'a'); asking the demo's questions with pydantic_ai_ask_user.testing.asking_model() instead"
)
"""What `ask-user demo --model test` says before it runs `asking_model` in place of `TestModel`."""

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

    width: int | None = None
    """The width to wrap to, in terminal cells; `None` asks the terminal (or `COLUMNS`) at each line."""

    show_questions: bool = True
    """List each question and its options; off when the answerer shows them itself (the terminal menu)."""

    def say(self, text: str) -> None:
        """Print one entry of the timeline, made safe to draw and wrapped to the width."""
        stamp = f'[{time.monotonic() - self.started:6.2f}s] '
        write_wrapped(self.out, text, self.width, first=stamp, rest=' ' * len(stamp))
        self.out.flush()

    @on_event(AskUserRequestedEvent)
    async def requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        """Show what the model asked."""
        self.say(f'AskUserRequestedEvent  request {event.request.id[:8]}, {len(event.request.questions)} question(s)')
        if self.show_questions:
            _print_request(event.request, self.out, self.width)

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


def _print_request(request: AskUserRequest, out: TextIO, width: int | None) -> None:
    total = len(request.questions)
    for number, question in enumerate(request.questions, 1):
        # The same words as the terminal menu's title.
        kind = 'pick one or more' if question.multi_select else 'pick one'
        text = f'{number}/{total} {question.header} ({kind}): {question.question}'
        write_wrapped(out, text, width, first=' ' * 10, rest=' ' * 10)
        for option in question.options:
            detail = f' - {option.description}' if option.description else ''
            write_wrapped(out, f'{option.label}{detail}', width, first=' ' * 12 + '* ', rest=' ' * 14)


def _char_cells(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ('Mn', 'Me'):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ('W', 'F') else 1


def cell_width(text: str) -> int:
    """How many terminal cells `text` takes (wide East Asian characters 2, combining marks 0), without wcwidth."""
    return sum(_char_cells(char) for char in text)


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` as rows of at most `width` cells, broken at spaces, and inside a word only when it is wider than a row."""
    width = max(width, 1)
    rows: list[str] = []
    for paragraph in text.split('\n'):
        row, used = '', 0
        for word in paragraph.split(' '):
            size = cell_width(word)
            gap = 1 if row else 0
            if used + gap + size <= width:
                row, used = (f'{row} {word}' if row else word), used + gap + size
                continue
            if row:
                rows.append(row)
                row, used = '', 0
            for char in word:  # only a word wider than a row (a long JSON result, a URL) breaks between characters
                char_size = _char_cells(char)
                if row and used + char_size > width:
                    rows.append(row)
                    row, used = '', 0
                row, used = row + char, used + char_size
        rows.append(row)
    return rows


def write_wrapped(out: TextIO, text: str, width: int | None, *, first: str, rest: str) -> None:
    """Write `text`, made printable, wrapped to `width` cells (the terminal's when `None`), after the prefixes."""
    columns = width if width is not None else shutil.get_terminal_size().columns
    rows = wrap_cells(printable(text), max(columns - max(len(first), len(rest)), 10))
    for index, row in enumerate(rows):
        out.write(f'{first if index == 0 else rest}{row}'.rstrip() + '\n')


async def _print_events(out: TextIO, timeline: Timeline, events: AsyncIterable[AgentStreamEvent]) -> None:
    async for event in events:
        if isinstance(event, FunctionToolCallEvent) and event.part.tool_name == TOOL_NAME:
            timeline.say(f'model calls {TOOL_NAME}')
        elif isinstance(event, FunctionToolResultEvent) and event.part.tool_name == TOOL_NAME:
            timeline.say(f'model receives          {event.part.model_response_str()}')


@dataclass(frozen=True)
class _Person:
    """Who answers the demo's questions."""

    answerer: Answerer
    """The answerer that reaches them."""

    who: str
    """How the demo's first line names them."""

    shows_questions: bool
    """Whether the answerer draws the questions itself (the terminal menu), so the timeline need not list them."""


def _pick_answerer(scripted: bool, real_model: bool) -> _Person:
    """The terminal menu when a person is at a terminal, else a scripted person."""
    if not scripted and sys.stdin.isatty() and sys.stdout.isatty():
        try:
            from .terminal import TerminalAnswerer
        except ImportError:
            pass
        else:
            return _Person(TerminalAnswerer(), 'you, in the terminal', shows_questions=True)
    from .testing import ScriptedAnswerer

    if real_model:
        # A real model writes its own questions, so the script cannot know their headers.
        answerer = ScriptedAnswerer(delay=0.5, default=0)
        return _Person(answerer, 'a scripted person who picks every first option', shows_questions=False)
    return _Person(ScriptedAnswerer(SCRIPTED_REPLY, delay=0.5), 'a scripted person', shows_questions=False)


def _model_label(model: Model | str | None) -> str:
    if model is None:
        return 'the offline demo model'
    return model if isinstance(model, str) else model.model_name


async def run_demo(
    *,
    model: Model | str | None = None,
    answerer: Answerer | None = None,
    who: str = '',
    out: TextIO | None = None,
    width: int | None = None,
    show_questions: bool | None = None,
) -> str:
    """Run the demo agent once, printing the exchange (to `sys.stdout` by default); return the model's final message.

    The output is wrapped to `width` cells, by default the terminal's (or `COLUMNS`). The questions are
    listed unless `show_questions` is false; by default they are not when the answerer is the terminal
    menu, which shows them itself.
    """
    # Looked up now, not bound at import, so a redirected or captured stdout gets the output.
    sink = sys.stdout if out is None else out
    if answerer is None:
        person = _pick_answerer(scripted=False, real_model=model is not None)
        answerer, who = person.answerer, person.who
        if show_questions is None:
            show_questions = not person.shows_questions
    timeline = Timeline(out=sink, width=width, show_questions=show_questions is not False)
    agent = Agent(model or demo_model(), capabilities=[AskUser(answerer=answerer), timeline])
    write_wrapped(sink, f'ask-user demo: {_model_label(model)}, answered by {who}', width, first='', rest='  ')
    write_wrapped(sink, f'task: {TASK}', width, first='', rest='      ')
    sink.write('\n')

    async def handler(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        await _print_events(sink, timeline, events)

    result = await agent.run(TASK, event_stream_handler=handler)
    sink.write('\n')
    write_wrapped(sink, f'model: {result.output}', width, first='', rest='       ')
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
    name: str | None = args.model
    try:
        model = _resolve_model(name)
    except UserError as error:  # an unknown model name, a missing key
        _say(str(error))
        return EXIT_BAD_MODEL
    except ImportError as error:  # the provider's package is not installed
        _say(_missing_package_message(name or '', error))
        return EXIT_MISSING_PACKAGE
    if name == 'test':
        _say(TEST_MODEL_NOTE)
    person = _pick_answerer(scripted=args.scripted, real_model=model is not None and name != 'test')
    try:
        anyio.run(
            lambda: run_demo(
                model=model, answerer=person.answerer, who=person.who, show_questions=not person.shows_questions
            )
        )
    except UserError as error:  # a provider that refuses the model only when it is called
        _say(str(error))
        return EXIT_BAD_MODEL
    except UnexpectedModelBehavior as error:  # a real model that kept breaking the question rules
        _say(f'the model gave up: {error}')
        return 1
    return 0


def _resolve_model(name: str | None) -> Model | None:
    """The model `--model` names: `None` for the demo's own, `asking_model` for `test`, else Pydantic AI's."""
    if name is None:
        return None
    if name == 'test':
        from .testing import asking_model

        return asking_model(*DEMO_QUESTIONS['questions'], model_name='asking_model')
    return infer_model(name)


_EXTRA = re.compile(r'pydantic-ai-slim\[([\w,-]+)\]')
"""Finds the optional group Pydantic AI's ImportError names, as in `pip install "pydantic-ai-slim[openai]"`."""


def _missing_package_message(name: str, error: ImportError) -> str:
    """One line saying which package the model needs and the command that installs it."""
    found = _EXTRA.search(str(error))
    provider, colon, _ = name.partition(':')
    extra = found.group(1) if found else provider if colon else ''
    if not extra:
        return f'the model {name!r} cannot be loaded: {error}'
    package = error.name or extra
    # Pydantic AI re-raises with its own message; the module that failed to import is the cause's name.
    cause = error.__cause__
    if isinstance(cause, ImportError) and cause.name:
        package = cause.name.partition('.')[0]
    return f"the model {name!r} needs the {package} package; install it with: pip install 'pydantic-ai-slim[{extra}]'"


def _say(message: str) -> None:
    print(f'ask-user: {printable(message, allow_newline=False)}', file=sys.stderr)
