"""Where an `AskUser` wait runs when the agent runs inside a durable engine.

A durable engine replays a run after a crash. A question whose answer the engine did not record
would be put to the person again on replay, and the run could go on with a second, different
answer. So inside a durable run the answer is recorded by the engine before the run can act on it:

- DBOS: an ordinary answerer runs inside a DBOS step, which records its response; a replay returns
  the recorded response and never calls the answerer again. The deadline of `AskUser(timeout=...)`
  is recorded by a step of its own, so a recovered wait resumes with the time left.
- A `DurableAnswerer` (such as `DBOSAnswerer`) records its own wait; it is called as it is.
- Temporal: the tool runs in workflow code (its `'temporal': False` metadata), where a deferred call
  emits its event to the run's event stream handler and pauses the run, and `TemporalAnswerer` waits
  there on a durable timer for an Update. Any other live answerer is refused at run start: it would do
  its I/O in workflow code, which Temporal forbids, and a replay would ask again.
- Prefect: the tool runs in flow code (its `'prefect': False` metadata), where `PrefectAnswerer` suspends
  the flow run until it is resumed with the answer; the model requests before it are tasks whose persisted
  results the resumed run replays. Any other live answerer is refused at run start: a flow run killed
  while it waits would ask again when it is run again, since nothing recorded the answer.
- Any other engine: a live wait is refused at run start. There, the tool call runs inside an activity
  or task with its own timeout and retries, which is no place to wait for a person; defer the call
  instead (`AskUser(answerer=None)`).

Nothing here imports an engine: an engine is only looked at when its module is already loaded.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any, cast

import anyio

from ._answers import Answerer, AskUserRequest, AskUserResponse

__all__ = (
    'durable_engine',
    'capability_engine',
    'note_run_engine',
    'noted_run_engine',
    'ask_in_dbos_step',
    'is_suspension',
    'refusal_message',
    'temporal_workflow_time',
)


_run_capability_engine: ContextVar[str | None] = ContextVar('ask_user_run_capability_engine', default=None)
"""The engine whose durability capability runs the current agent run in its container (`capability_engine`), as
`AskUser` found it at the run's start; read by a durable answerer, which is handed the request and not the run."""


def capability_engine(capabilities: Iterable[Any]) -> str | None:
    """The engine of the durability capability among `capabilities` whose container this code runs in, or `None`."""
    for capability in list(capabilities):
        spec = getattr(capability, 'engine_spec', None)
        if spec is not None and getattr(capability, 'in_durable_context', False):
            return str(spec.engine_name)
    return None


def note_run_engine(capabilities: Iterable[Any]) -> None:
    """Record the current run's `capability_engine`, at its start, for `noted_run_engine`."""
    _run_capability_engine.set(capability_engine(capabilities))


def noted_run_engine() -> str | None:
    """The `capability_engine` of the current run, as its `AskUser` noted it at the run's start."""
    return _run_capability_engine.get()


def durable_engine(capabilities: Iterable[Any]) -> str | None:
    """The name of the durable engine whose container this code runs in (`'DBOS'`, `'Temporal'`, ...), or `None`.

    `capabilities` are the run's capabilities: a durability capability (`DBOSDurability`,
    `TemporalDurability`, `PrefectDurability`, ...) names its engine and says whether the code runs
    in its container. The older wrapper agents (`DBOSAgent`, `TemporalAgent`, `PrefectAgent`) install
    no capability, so the engines' own notion of "in a workflow" is asked too.
    """
    if (engine := capability_engine(capabilities)) is not None:
        return engine
    dbos = sys.modules.get('dbos')
    if dbos is not None and cast(Any, dbos).DBOS.workflow_id is not None:
        return 'DBOS'
    temporal = sys.modules.get('temporalio.workflow')
    if temporal is not None and cast(Any, temporal).in_workflow():
        return 'Temporal'
    prefect = sys.modules.get('prefect.context')
    if prefect is not None and cast(Any, prefect).FlowRunContext.get() is not None:
        return 'Prefect'
    return None


def is_suspension(error: BaseException) -> bool:
    """Whether `error` is an engine stopping the run to wait, to resume it later: Prefect's `Pause`, raised when a
    flow run is suspended. The run's process exits; the run is not cancelled, and its question not withdrawn.
    """
    prefect = sys.modules.get('prefect.exceptions')
    return prefect is not None and isinstance(error, cast(Any, prefect).Pause)


def temporal_workflow_time() -> float | None:
    """The time (`time.time()` seconds) as the running Temporal workflow sees it, or `None` outside one.

    Workflow code may not read the clock: Temporal's sandbox refuses it, and a replay would read another
    time. The workflow's own time is the same on every replay.
    """
    temporal = sys.modules.get('temporalio.workflow')
    if temporal is not None and cast(Any, temporal).in_workflow():
        return float(cast(Any, temporal).time())
    return None


def refusal_message(engine: str) -> str:
    """Why a live answerer cannot wait inside a durable run of `engine`, and what to do instead."""
    if engine == 'Temporal':
        why = (
            'the tool call runs in workflow code, where an answerer may do no I/O, and the answer would not be '
            'recorded by the run itself, so a replay would ask the person again. Wait with '
            'pydantic_ai_ask_user.temporal.TemporalAnswerer, which waits in the workflow on a durable timer and '
            'takes the answer by Update, or defer the call'
        )
    elif engine == 'Prefect':
        why = (
            'a flow run that stops while the answerer waits (a crash, a kill) runs again from its start, and '
            'nothing recorded the answer, so the person would be asked again. Wait with '
            'pydantic_ai_ask_user.prefect.PrefectAnswerer, which suspends the flow run until it is resumed with '
            'the answer, or defer the call'
        )
    else:
        why = (
            f'the tool call runs as a {engine} activity or task, with its own timeout and retries, so the wait '
            'would be cut short or the person asked again on a retry, and the answer would not be recorded by '
            'the run itself. Defer the call instead'
        )
    return (
        f'AskUser cannot wait for a person inside a {engine} run: {why}: AskUser(answerer=None) ends the run with '
        'DeferredToolRequests, and you start a new run with '
        'DeferredToolResults(calls={call.tool_call_id: ask_user_result(request, response)}) once the person '
        'has answered. On DBOS, an ordinary answerer or DBOSAnswerer waits durably inside the run.'
    )


async def ask_in_dbos_step(
    answerer: Answerer, request: AskUserRequest, timeout: float | None
) -> tuple[AskUserResponse | None, bool]:
    """Call `answerer` inside a DBOS step, so a replay returns its recorded response instead of asking again.

    Returns what the answerer returned (`None` if the timeout ran out first) and whether it ran out.
    The deadline is recorded once, by a step of its own, so a recovered wait has only the time left.
    """
    from dbos import DBOS

    deadline: float | None = None
    if timeout is not None:
        deadline = await DBOS.run_step_async({'name': 'ask_user.deadline'}, _deadline_after, timeout)

    async def answer() -> tuple[AskUserResponse | None, bool]:
        response: AskUserResponse | None = None
        remaining = None if deadline is None else max(deadline - time.time(), 0.0)
        with anyio.move_on_after(remaining) as scope:
            response = await answerer(request)
        # An answerer may return the answer it already had when the deadline cancelled it: that one counts.
        return response, response is None and scope.cancelled_caught

    # Preemptible: `DBOS.cancel_workflow` stops the wait at once, so a cancelled run stops asking the person.
    return await DBOS.run_step_async({'name': 'ask_user.answer', 'preemptible': True}, answer)


async def _deadline_after(timeout: float) -> float:
    return time.time() + timeout
