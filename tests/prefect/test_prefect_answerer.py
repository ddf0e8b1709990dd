"""`PrefectAnswerer` on a real Prefect server: a question suspends the flow run, survives kill -9 of the process
serving it, and is answered from another process; the resumed run does not call the model again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect_support import prefect_server_env
from waits import WAIT

PREFECT_ASK_FLOW = Path(__file__).with_name('prefect_ask_flow.py')
PREFECT_FLOW = Path(__file__).with_name('prefect_flow.py')


class Served:
    """One test's Prefect clients: the processes that serve the flow, and its files of model calls and finished runs."""

    def __init__(self, api_url: str, root: Path) -> None:
        self.root = root
        self.calls = root / 'model_calls.jsonl'
        self.finished = root / 'finished.jsonl'
        self.env = {
            **prefect_server_env(root / 'home'),
            'PREFECT_API_URL': api_url,
            # Every process serving the flow persists and reads task results here: the one place a resumed run
            # finds the model response of the run before it.
            'PREFECT_LOCAL_STORAGE_PATH': str(root / 'results'),
            # The process serving the flow asks the server for runs to start once a second, not every 10 s
            # (Prefect's default): a run started or resumed waits for that question before it runs again.
            'PREFECT_RUNNER_POLL_FREQUENCY': '1',
            'ASK_USER_MODEL_CALLS': str(self.calls),
            'ASK_USER_FINISHED': str(self.finished),
        }
        self.processes: list[subprocess.Popen[bytes]] = []

    def serve(self) -> subprocess.Popen[bytes]:
        """Start a process serving the deployment, in its own process group, so kill -9 takes its runs too."""
        log = (self.root / f'serve-{len(self.processes)}.log').open('wb')
        process = subprocess.Popen(
            [sys.executable, str(PREFECT_ASK_FLOW)],
            env=self.env,
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def logs(self) -> str:
        return '\n'.join(path.read_text(errors='replace')[-3000:] for path in sorted(self.root.glob('serve-*.log')))

    def lines(self, path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.fixture
def served(prefect_api_url: str, tmp_path: Path) -> Iterator[Served]:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    clients = Served(prefect_api_url, tmp_path)
    try:
        with temporary_settings({PREFECT_API_URL: prefect_api_url}):
            try:
                yield clients
            finally:
                _drain_prefect_workers()
    finally:
        for process in clients.processes:
            _kill(process)


def _drain_prefect_workers() -> None:
    """Send what Prefect's event and log workers of this process hold now, while the session's server is up.

    A flow run in this process starts them, pointed at that server. Left to the interpreter's exit they drain
    then, retrying against a server the session fixture has killed by then: the xdist worker would not exit.
    """
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for service in (EventsWorker, APILogWorker):
        _, not_done = service.drain_all(timeout=WAIT)  # pyright: ignore[reportGeneralTypeIssues]
        assert not not_done, f"Prefect's {service.__name__} did not send what it held within {WAIT:.0f} s"


async def _until(what: str, check: Any, served: Served, timeout: float = WAIT) -> Any:
    """Poll the server with `check()` until it returns something truthy; fail with the serving logs after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f'{what} did not happen within {timeout:.0f} s; serving logs:\n{served.logs()}')
        await asyncio.sleep(0.2)  # one round trip to the server per poll


async def _start_run(served: Served) -> UUID:
    from prefect import get_client
    from prefect.deployments import run_deployment

    async def deployed() -> bool:
        async with get_client() as client:
            try:
                await client.read_deployment_by_name('ask-flow/ask')
            except Exception:
                return False
        return True

    await _until('serving the deployment', deployed, served)
    flow_run = await run_deployment('ask-flow/ask', parameters={'task': 'migrate'}, timeout=0)  # pyright: ignore
    return flow_run.id


async def _state(flow_run_id: UUID) -> Any:
    from prefect import get_client

    async with get_client() as client:
        return (await client.read_flow_run(flow_run_id)).state


def test_a_question_suspends_the_run_survives_kill_9_and_resumes_without_calling_the_model_again(
    served: Served,
) -> None:
    from prefect.flow_runs import resume_flow_run

    from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse
    from pydantic_ai_ask_user.prefect import answer_question, pending_questions

    async def scenario() -> None:
        first = served.serve()
        flow_run_id = await _start_run(served)
        [request] = await _until('the question', lambda: pending_questions(flow_run_id), served)
        state = await _state(flow_run_id)
        assert state.is_paused()
        assert state.name == 'Suspended'
        [asked] = served.lines(served.calls)
        assert request.id == asked['asked']  # the tool call id the model made, at random
        assert request.questions[0].header == 'Database'

        # kill -9 the process serving the flow, and everything it started, while the question waits.
        _kill(first)
        served.serve()

        # An answer that does not fit the question is refused to its sender and not sent.
        wrong = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('MySQL',)),))
        with pytest.raises(ValueError, match="selects 'MySQL', which is not one of its options"):
            await answer_question(flow_run_id, request, wrong)
        assert (await _state(flow_run_id)).is_paused()

        # A resume sent around the check, straight to Prefect, resumes the run; the run does not use the
        # answer, and the question waits again.
        await resume_flow_run(flow_run_id, run_input={'key': request.key, 'response': {'answers': [
            {'header': 'Database', 'selected': ['MySQL']}]}})  # fmt: skip
        [again] = await _until(
            'the question waiting again', lambda: _pending_after(flow_run_id, pending_questions), served
        )
        assert again == request
        assert again.key == request.key

        right = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('PostgreSQL',)),))
        await answer_question(flow_run_id, request, right)
        # A second answer finds the run resumed already.
        with pytest.raises(ValueError, match='does not wait for question'):
            await answer_question(flow_run_id, request, right)

        async def completed() -> Any:
            state = await _state(flow_run_id)
            assert not state.is_failed(), f'{state}\n{served.logs()}'
            assert not state.is_crashed(), f'{state}\n{served.logs()}'
            return state.is_completed()

        await _until('the run finishing', completed, served)

    asyncio.run(scenario())
    calls = served.lines(served.calls)
    # Two model calls in all: the first one is not made again when the run resumes (its result is replayed),
    # so the answer goes to the tool call id the model made.
    assert [sorted(call) for call in calls] == [['asked'], ['answered', 'content']], calls
    assert calls[1] == {'answered': calls[0]['asked'], 'content': {'Database': ['PostgreSQL']}}
    assert served.lines(served.finished) == [{'output': 'migrating to {"Database": ["PostgreSQL"]}'}]


async def _pending_after(flow_run_id: UUID, pending_questions: Any) -> Any:
    # The run is scheduled, runs, and suspends again under the next key: the question waits once it is suspended.
    return await pending_questions(flow_run_id) if (await _state(flow_run_id)).is_paused() else []


def _agent(*capabilities: Any, timeout: float | None = None) -> Any:
    from pydantic_ai import Agent

    from pydantic_ai_ask_user import AskUser
    from pydantic_ai_ask_user.prefect import PrefectAnswerer
    from pydantic_ai_ask_user.testing import asking_model

    return Agent(
        asking_model(),
        name='asker',
        capabilities=[*capabilities, AskUser(answerer=PrefectAnswerer(), timeout=timeout)],
    )


def _ask_in_a_flow(agent: Any) -> str:
    """Run `agent` in a flow run of this process (no deployment); the error it ends with."""
    from prefect import flow

    @flow(name='ask-here')
    async def ask_here() -> str:
        try:
            await agent.run('migrate')
        except Exception as error:
            return f'{type(error).__name__}: {error}'
        return 'no error'

    return asyncio.run(ask_here())  # pyright: ignore[reportArgumentType]


def test_a_prefect_answerer_refuses_a_timeout_and_an_agent_without_prefect_durability(served: Served) -> None:
    from pydantic_ai.durable_exec.prefect import PrefectDurability

    # A suspended run runs no code, so nothing could act at the deadline: refused before the run is suspended.
    timed = _ask_in_a_flow(_agent(PrefectDurability(), timeout=60))
    assert timed.startswith('UserError: PrefectAnswerer cannot apply AskUser(timeout=...)'), timed
    # Without PrefectDurability the model call is no task, and the run id is random: the resumed run would ask anew.
    bare = _ask_in_a_flow(_agent())
    assert bare.startswith('UserError: PrefectAnswerer needs the agent to run with PrefectDurability'), bare


def test_a_prefect_answerer_outside_a_flow_says_where_it_waits() -> None:
    from pydantic_ai.exceptions import UserError

    with pytest.raises(UserError, match='PrefectAnswerer suspends the Prefect flow run that runs the agent'):
        asyncio.run(_agent().run('migrate'))


def test_inside_a_prefect_flow_a_live_wait_is_refused_and_a_deferred_call_is_a_question(
    prefect_api_url: str, tmp_path: Path
) -> None:
    """`prefect_flow.py`'s two flows, run against the session's server: a live answerer is refused inside a Prefect
    run (it could not outlive the process), and `AskUser(answerer=None)` defers the call as a question."""
    env = {**prefect_server_env(tmp_path / 'home'), 'PREFECT_API_URL': prefect_api_url}
    process = subprocess.Popen(
        [sys.executable, str(PREFECT_FLOW)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # so that a kill takes whatever the flow process started with it
    )
    try:
        out, err = process.communicate(timeout=min(4 * WAIT, 540.0))  # short of pytest-timeout's 600 s
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result['live'].startswith('UserError: AskUser cannot wait for a person inside a Prefect run')
    assert 'AskUser(answerer=None)' in result['live']
    assert result['deferred'] == {'kind': 'question', 'id': 'call-1'}
