"""Helpers shared by the tests: a scripted model that really runs through `Agent`, sample questions, free ports."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from waits import wait_until

from pydantic_ai_ask_user import AskUserAnsweredEvent, AskUserRequest, AskUserRequestedEvent, Question, QuestionOption
from pydantic_ai_ask_user._deferred_handlers import HANDLERS_TAKE_TOKENS

if TYPE_CHECKING:
    from pydantic_ai_ask_user.hub import QuestionHub

Turn = Sequence[ModelResponsePart] | Callable[[list[ModelMessage]], Sequence[ModelResponsePart]]


@dataclass
class ModelScript:
    """A `FunctionModel` that plays one scripted turn per model request, then says 'done'.

    It streams too (a run with an event stream handler, `agent.iter` or `run_stream_events` streams),
    and remembers the messages of every request so a test can read what the model got back.
    """

    turns: list[Turn]
    seen: list[list[ModelMessage]] = field(default_factory=list[list[ModelMessage]])

    def _parts(self, messages: list[ModelMessage]) -> Sequence[ModelResponsePart]:
        self.seen.append(list(messages))
        index = sum(isinstance(message, ModelResponse) for message in messages)
        if index >= len(self.turns):
            return [TextPart('done')]
        turn = self.turns[index]
        return turn(messages) if callable(turn) else turn

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=list(self._parts(messages)))

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for index, part in enumerate(self._parts(messages)):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                yield {
                    index: DeltaToolCall(
                        name=part.tool_name, json_args=part.args_as_json_str(), tool_call_id=part.tool_call_id
                    )
                }

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self._respond, stream_function=self._stream)

    def returns(self, request_index: int = -1) -> list[ToolReturnPart]:
        """The tool returns (results and retries) the model got in one of its requests (default: the last)."""
        messages = self.seen[request_index]
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        return [part for part in last.parts if isinstance(part, ToolReturnPart)]


def ask_call(*questions: dict[str, Any], call_id: str | None = None, **extra: Any) -> ToolCallPart:
    """A model's `ask_user_question` call with these questions (and any extra top-level fields)."""
    args = {'questions': list(questions), **extra}
    if call_id is None:
        return ToolCallPart('ask_user_question', args)
    return ToolCallPart('ask_user_question', args, tool_call_id=call_id)


def question(header: str = 'Database', *labels: str, multi_select: bool = False, **fields: Any) -> dict[str, Any]:
    """The JSON of one question, as a model writes it."""
    options = [{'label': label} for label in (labels or ('PostgreSQL', 'SQLite'))]
    result: dict[str, Any] = {'header': header, 'question': f'Which {header.lower()}?', 'options': options, **fields}
    if multi_select:
        result['multi_select'] = True
    return result


def script(*turns: Turn) -> ModelScript:
    """A `ModelScript` playing these turns: `script([ask_call(question())])`."""
    return ModelScript(list(turns))


class Watch(AbstractCapability[Any]):
    """Records both AskUser events of a run, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[AskUserRequestedEvent | AskUserAnsweredEvent] = []

    @on_event(AskUserRequestedEvent)
    async def requested(self, ctx: RunContext[Any], event: AskUserRequestedEvent) -> None:
        self.events.append(event)

    @on_event(AskUserAnsweredEvent)
    async def answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        self.events.append(event)


def make_question(header: str = 'Database', *labels: str, multi_select: bool = False) -> Question:
    """A validated `Question` whose text is `header?`, offering `labels` (`PostgreSQL`, `SQLite` when none)."""
    return Question(
        header=header,
        question=f'{header}?',
        options=tuple(QuestionOption(label=label) for label in labels or ('PostgreSQL', 'SQLite')),
        multi_select=multi_select,
    )


def make_request(*headers: str, id: str | None = None) -> AskUserRequest:
    """A request of one sample question per header (`Database` when none)."""
    questions = tuple(make_question(header) for header in headers or ('Database',))
    return AskUserRequest(questions=questions) if id is None else AskUserRequest(questions=questions, id=id)


def single(header: str = 'Database') -> Question:
    return Question(
        header=header,
        question='Which database should the migration target?',
        options=(
            QuestionOption(label='PostgreSQL', description='The production database.'),
            QuestionOption(label='SQLite', description='A local file, for development.'),
            QuestionOption(label='MySQL'),
        ),
    )


def multi(header: str = 'Environments') -> Question:
    return Question(
        header=header,
        question='Which environments should be migrated?',
        options=(
            QuestionOption(label='dev'),
            QuestionOption(label='staging'),
            QuestionOption(label='production', description='Needs a maintenance window.'),
        ),
        multi_select=True,
    )


def ask_one(*questions: Question) -> AskUserRequest:
    return AskUserRequest(questions=questions or (single(),))


async def wait_pending(hub: QuestionHub, request_id: str) -> None:
    """Return once `request_id` waits in `hub`."""

    async def waiting() -> bool:
        return any(item.id == request_id for item in await hub.pending())

    await wait_until(waiting, f'{request_id} to wait in the hub')


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago: for a server to take, or to find closed."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


COVERAGE_VARIABLES = ('COVERAGE_PROCESS_CONFIG', 'COVERAGE_PROCESS_START')
"""What makes a Python process the tests start measure itself (coverage's `patch = ["subprocess"]`)."""


def unmeasured(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a Python program that is not ours (the Prefect server, mkdocs): coverage would trace it for
    nothing, at about twice its CPU, while the suite's own processes wait for their share of the 2 cores."""
    return {key: value for key, value in env.items() if key not in COVERAGE_VARIABLES}


UV_MISSING = (
    'uv is not on PATH and `python3 -m uv` does not run it either: `make test` installs it '
    '(scripts/bootstrap.sh, with `pip install --user uv`), or install it yourself (https://docs.astral.sh/uv/)'
)
"""What a test that starts uv says when it cannot: where uv comes from."""


@functools.cache
def uv_command() -> tuple[str, ...]:
    """The command that starts uv, found as the Makefile finds it: `uv` on PATH, else `python3 -m uv`.

    `scripts/bootstrap.sh` installs uv with `pip install --user` where there is none, and pip puts its `uv` in a
    directory (`~/.local/bin`) that may not be on PATH: then only `python3 -m uv` starts it. That `python3` is the
    one on PATH outside this test session's virtualenv (which `uv run` put first, and which has no uv), as the
    Makefile's is; never `sys.executable`. Fails the test with `UV_MISSING` when neither starts uv.
    """
    if found := shutil.which('uv'):
        return (found,)
    import pytest
    import waits  # measuring its bound starts a process: imported when needed

    python = shutil.which('python3', path=_path_outside_this_virtualenv())
    if python is not None:
        command = (python, '-m', 'uv')
        probe = subprocess.run([*command, '--version'], capture_output=True, check=False, timeout=waits.WAIT)
        if probe.returncode == 0:
            return command
    pytest.fail(UV_MISSING, pytrace=False)


def _path_outside_this_virtualenv() -> str:
    """PATH without the directory of this interpreter's virtualenv (none when it runs outside one)."""
    if sys.prefix == sys.base_prefix:
        return os.environ.get('PATH', '')
    ours = (Path(sys.prefix) / 'bin').resolve()
    return os.pathsep.join(
        part for part in os.environ.get('PATH', '').split(os.pathsep) if part and Path(part).resolve() != ours
    )


def handler_order_refusal(spelling: str, handler_first: bool, events: str) -> str | None:
    """What a run whose waiting handler is spelled `spelling` (`'handle'` or `'request-input'`) and listed before
    (`handler_first`) or after the engine's `events` capability (`'DBOSExternalEvents'`, ...) is refused with at its
    start, on this Pydantic AI; `None`: it runs."""
    if spelling == 'handle' and not HANDLERS_TAKE_TOKENS:
        return '`HandleDeferredToolCalls` hands a resume token to its handler only from Pydantic AI 2.78'
    if spelling == 'handle' and handler_first:
        return (
            f'`HandleDeferredToolCalls(...)`, which waits for a decision, comes before `{events}()` among the '
            "agent's capabilities"
        )
    return None
