"""What the durable test workers share: the question they ask, how they record and die, how they run under DBOS.

Imported by the worker programs (`worker.py`, `request_input_worker.py`, `deferred_host.py`), which the tests
start as scripts from this folder, and by the tests that launch DBOS in their own process; it imports nothing of
the tests themselves, so a worker starts without pytest.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dbos import DBOS
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls

from pydantic_ai_ask_user.dbos import dbos_config

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database should the migration target?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
        }
    ]
}
"""The arguments of the `ask_user_question` call every test worker's model makes."""


def append_line(path: str | Path, line: str) -> None:
    """Append `line` to `path` and sync it: the worker may be killed with -9 the next moment, and the test reads it."""
    with open(path, 'a', encoding='utf-8') as handle:
        handle.write(line + '\n')
        handle.flush()
        os.fsync(handle.fileno())


def die_once(marker: str | Path) -> None:
    """Kill this process with SIGKILL, unless `marker` says it died here already (a restarted worker goes on)."""
    if os.path.exists(marker):
        return
    append_line(marker, 'x')
    os.kill(os.getpid(), signal.SIGKILL)


ModelFunction = Callable[[list[ModelMessage], AgentInfo], ModelResponse]
"""A `FunctionModel` function: the model's whole response to the messages so far."""


def streamed(model: ModelFunction) -> Callable[[list[ModelMessage], AgentInfo], AsyncIterator[str | DeltaToolCalls]]:
    """The `stream_function` giving the same turns as `model`, for runs that stream (those with an event listener)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for index, part in enumerate(model(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                yield {index: DeltaToolCall(part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id)}

    return stream


@contextmanager
def dbos_launched(database_url: str, name: str, application_version: str) -> Iterator[None]:
    """DBOS launched in this process on `database_url` while inside; shut down at the end without waiting for
    the workflows still running (a test's, or a worker's that another worker recovers).

    `application_version` is fixed per program, so a restarted worker recovers the workflows of the one it replaces.
    """
    DBOS(config=dbos_config(database_url, name=name, application_version=application_version))
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy(workflow_completion_timeout_sec=0)


def run_under_dbos(
    database_url: str, name: str, application_version: str, work: Callable[[], Coroutine[Any, Any, None]]
) -> None:
    """Run `work()` to its end with DBOS launched (`dbos_launched`): the main of a worker program."""
    with dbos_launched(database_url, name, application_version):
        asyncio.run(work())
