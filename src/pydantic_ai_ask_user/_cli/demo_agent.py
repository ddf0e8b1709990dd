"""The agent of `ask-user demo`: a whole exchange with an offline, deterministic model, no key and no network needed.

Imported only when `demo` runs: it loads Pydantic AI.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
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

from .._answers import DECLINED, TIMED_OUT, TOOL_NAME, Answerer, AskUserRequest
from .._asking import shown_answers
from .._capability import AskUser
from .._events import AskUserAnsweredEvent, AskUserRequestedEvent
from .._text import printable

__all__ = ('TASK', 'DEMO_QUESTIONS', 'SCRIPTED_REPLY', 'demo_model', 'run_demo', 'Timeline', 'pick_answerer', 'Person')

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

    _asked: dict[str, AskUserRequest] = field(default_factory=dict[str, AskUserRequest], init=False, repr=False)
    """The requests asked and not yet answered, by id: the answered event names only the id."""

    def say(self, text: str) -> None:
        """Print one entry of the timeline, made safe to draw and wrapped to the width."""
        stamp = f'[{time.monotonic() - self.started:6.2f}s] '
        write_wrapped(self.out, text, self.width, first=stamp, rest=' ' * len(stamp))
        self.out.flush()

    @on_event(AskUserRequestedEvent)
    async def requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        """Show what the model asked."""
        self._asked[event.request.id] = event.request
        # The whole key, as `ask-user pending` shows it and `answer` takes it: never cut short.
        self.say(f'AskUserRequestedEvent  request {event.request.key}, {len(event.request.questions)} question(s)')
        if self.show_questions:
            _print_request(event.request, self.out, self.width)

    @on_event(AskUserAnsweredEvent)
    async def answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        """Show what the person answered."""
        response = event.response
        request = self._asked.pop(event.request_id)
        if event.timed_out:
            outcome = 'timed out'
        elif event.failed:
            outcome = 'failed'
        elif response.cancelled:
            outcome = 'declined'
        else:
            # What the model gets, as `ask_user_result` makes it; a typed answer is quoted.
            picked = '; '.join(
                f'{shown.header} -> {shown.values[0]!r}'
                if shown.custom
                else f'{shown.header} -> {", ".join(shown.values)}'
                for shown in shown_answers(request, response)
            )
            outcome = f'answered: {picked}'
        self.say(f'AskUserAnsweredEvent   request {request.key}, {outcome}')


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
class Person:
    """Who answers the demo's questions."""

    answerer: Answerer
    """The answerer that reaches them."""

    who: str
    """How the demo's first line names them."""

    shows_questions: bool
    """Whether the answerer draws the questions itself (the terminal menu), so the timeline need not list them."""


def pick_answerer(scripted: bool, real_model: bool) -> Person:
    """The terminal menu when a person is at a terminal, else a scripted person."""
    if not scripted and sys.stdin.isatty() and sys.stdout.isatty():
        try:
            from ..terminal import TerminalAnswerer
        except ImportError:
            pass
        else:
            return Person(TerminalAnswerer(), 'you, in the terminal', shows_questions=True)
    from ..testing import ScriptedAnswerer

    if real_model:
        # A real model writes its own questions, so the script cannot know their headers.
        answerer = ScriptedAnswerer(delay=0.5, default=0)
        return Person(answerer, 'a scripted person who picks every first option', shows_questions=False)
    return Person(ScriptedAnswerer(SCRIPTED_REPLY, delay=0.5), 'a scripted person', shows_questions=False)


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
        person = pick_answerer(scripted=False, real_model=model is not None)
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
