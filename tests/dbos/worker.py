"""A worker process for the durable tests: runs DBOS-durable agents that ask one question each.

    python tests/dbos/worker.py --db URL --calls FILE --out FILE [--runs N] [--timeout S] [--resume]
        [--answerer dbos|plain] [--crash before-publish|after-publish|after-answer] [--call-id ID] [--events FILE]
        [--clock-offset S] [--escalate S] [--audience NAME] [--title TEXT] [--prefix NAME]

The model is a `FunctionModel` that appends one line per call to `--calls` ("ask RUN" before the
question, "final RUN" after it), so a test can tell whether a call was repeated after a restart.
Each finished run appends `{"run": RUN, "output": ...}` to `--out`.

`--answerer plain` replaces `DBOSAnswerer` with an ordinary async function standing in for a person
at some UI: it appends the request id to `asked.txt` and returns the answer a test writes to
`answer-ID.json` (the response JSON shape). `--crash POINT` kills the worker with SIGKILL at that
point, once (a marker file in the working directory says it happened): before the question's row is
written, after it is committed but before DBOS records the publish step, or after the answer came
back but before the next model step.

`--call-id ID` makes the model give every call that tool call id, in every run, as providers that
repeat ids do (`call_0`); `--call-id ''` gives none at all. Without it, each call gets a new id.
`--events FILE` appends one JSON line per `AskUserAnsweredEvent` (`request_id`, `withdrawn`, ...).
`--escalate S` addresses the question to `alice` and escalates it to `team:oncall` when unanswered S seconds;
`--crash after-escalate` dies once the escalation's forward is committed, before DBOS records its step.
`--audience NAME` addresses the question to NAME instead (escalating from it), `--title TEXT` gives it a
`QuestionContext` with that title, and `--prefix NAME` names the runs `NAME-0`... and gives the worker an executor
of its own, so that it runs beside another worker without recovering the other's runs at launch.
`--clock-offset S` sets this process's wall clock (`time.time`) S seconds ahead, as if it were restarted S
seconds later: a deadline test need not sleep through the deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync
from dbos._error import DBOSAwaitedWorkflowCancelledError
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from worker_support import QUESTIONS, append_line, die_once, run_under_dbos, streamed

from pydantic_ai_ask_user import (
    TOOL_NAME,
    AskUser,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserResponse,
    QuestionContext,
)
from pydantic_ai_ask_user._json import response_from_json
from pydantic_ai_ask_user.dbos import DBOSAnswerer
from pydantic_ai_ask_user.dbos import _answerer as durable_answerer
from pydantic_ai_ask_user.store import Escalation

APPLICATION_VERSION = 'ask-user-tests-1'
"""Fixed, so a restarted worker recovers the workflows of the one it replaces."""


def crash_once(point: str | None, here: str) -> None:
    """Die by SIGKILL at `here` if it is the crash point asked for and the worker has not died there yet."""
    if point == here:
        die_once(f'crashed-{here}')


def install_crash_points(point: str | None) -> None:
    """Wrap the durable answerer's database writes so the worker can die between a write and its record."""
    insert_encoded = durable_answerer.insert_encoded
    publish = DBOSAnswerer._publish  # pyright: ignore[reportPrivateUsage]
    escalate = DBOSAnswerer._escalate  # pyright: ignore[reportPrivateUsage]

    def insert_then_maybe_not(*args: Any, **kwargs: Any) -> None:
        crash_once(point, 'before-publish')
        insert_encoded(*args, **kwargs)

    def publish_then_die(self: DBOSAnswerer, *args: Any, **kwargs: Any) -> Any:
        published = publish(self, *args, **kwargs)  # committed...
        crash_once(point, 'after-publish')  # ...but DBOS has not recorded the step yet
        return published

    def escalate_then_die(self: DBOSAnswerer, *args: Any, **kwargs: Any) -> Any:
        escalated = escalate(self, *args, **kwargs)  # the forward committed...
        crash_once(point, 'after-escalate')  # ...but DBOS has not recorded the step yet
        return escalated

    durable_answerer.insert_encoded = insert_then_maybe_not
    DBOSAnswerer._publish = publish_then_die  # pyright: ignore[reportPrivateUsage]
    DBOSAnswerer._escalate = escalate_then_die  # pyright: ignore[reportPrivateUsage]


async def plain_answerer(request: AskUserRequest) -> AskUserResponse:
    """A person at some UI: the question is shown (a line in asked.txt), the answer read from a file."""
    append_line('asked.txt', request.id)
    path = f'answer-{request.id}.json'
    while not os.path.exists(path):
        await asyncio.sleep(0.05)
    with open(path, encoding='utf-8') as handle:
        return response_from_json(json.load(handle))


class RecordAnswered(AbstractCapability[Any]):
    """Appends each `AskUserAnsweredEvent` of a run to a file, one JSON object a line."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    @on_event(AskUserAnsweredEvent)
    async def answered(self, ctx: RunContext[Any], event: AskUserAnsweredEvent) -> None:
        flags = {'withdrawn': event.withdrawn, 'timed_out': event.timed_out, 'failed': event.failed}
        append_line(self.path, json.dumps({'request_id': event.request_id, 'run_id': event.run_id, **flags}))


def build_agent(
    database_url: str,
    calls_file: str,
    timeout: float | None,
    answerer_kind: str = 'dbos',
    crash: str | None = None,
    call_id: str | None = None,
    events_file: str | None = None,
    escalate: float | None = None,
    audience: str | None = None,
    title: str | None = None,
) -> Agent[None, str]:
    """The agent: asks once, then reports the tool result it got."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(
            str(part.content) for message in messages for part in message.parts if isinstance(part, UserPromptPart)
        )
        returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
        if not returns:
            append_line(calls_file, f'ask {prompt}')
            if call_id is None:
                return ModelResponse(parts=[ToolCallPart(TOOL_NAME, QUESTIONS)])
            return ModelResponse(parts=[ToolCallPart(TOOL_NAME, QUESTIONS, tool_call_id=call_id)])
        append_line(calls_file, f'final {prompt}')
        crash_once(crash, 'after-answer')
        content = returns[-1].content
        return ModelResponse(parts=[TextPart(json.dumps(content) if not isinstance(content, str) else content)])

    install_crash_points(crash)
    answerer = DBOSAnswerer(database_url, recheck_seconds=600) if answerer_kind == 'dbos' else plain_answerer
    addressing: dict[str, Any] = {}
    if escalate is not None:
        addressing['escalate'] = Escalation(after=escalate, to='team:oncall')
    if escalate is not None or audience is not None:
        addressing['audience'] = audience or 'alice'
    if title is not None:
        addressing['context'] = QuestionContext(title=title)
    capabilities: list[AbstractCapability[Any]] = [
        DBOSDurability(),
        AskUser(answerer=answerer, timeout=timeout, **addressing),
    ]
    if events_file is None:
        return Agent(FunctionModel(model), name='durable_test_agent', capabilities=capabilities)

    capabilities.append(RecordAnswered(events_file))
    # A run with an event listener streams its model responses: the same turns, streamed.
    return Agent(
        FunctionModel(model, stream_function=streamed(model)), name='durable_test_agent', capabilities=capabilities
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--db', required=True)
    parser.add_argument('--calls', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--runs', type=int, default=1)
    parser.add_argument('--prefix', default='run')
    parser.add_argument('--timeout', type=float, default=None)
    parser.add_argument('--resume', action='store_true', help='only wait for the runs recovered at launch')
    parser.add_argument('--answerer', choices=['dbos', 'plain'], default='dbos')
    parser.add_argument(
        '--crash', choices=['before-publish', 'after-publish', 'after-answer', 'after-escalate'], default=None
    )
    parser.add_argument('--escalate', type=float, default=None, help='seconds until the question escalates')
    parser.add_argument('--audience', default=None, help="the question's audience (with --escalate: alice)")
    parser.add_argument('--title', default=None, help="the title of the question's context")
    parser.add_argument('--call-id', default=None, help="the tool call id of every call ('' for none)")
    parser.add_argument('--events', default=None, help='append the answered events here')
    parser.add_argument('--clock-offset', type=float, default=0.0, help='seconds to set the wall clock ahead')
    args = parser.parse_args()
    if args.clock_offset:
        # Every wall-clock reading (DBOS's durable sleeps, the answerer's deadline checks) goes through
        # `time.time`; the event loop's timers use `time.monotonic` and are left alone.
        real_time = time.time
        time.time = lambda: real_time() + args.clock_offset

    if args.prefix != 'run':
        # An executor of its own (DBOS recovers at launch the pending workflows of its executor id): a worker of
        # another prefix started beside it must not take over, with its own settings, the runs of this one.
        os.environ['DBOS__VMID'] = f'worker-{args.prefix}'
    agent = build_agent(
        args.db,
        args.calls,
        args.timeout,
        args.answerer,
        args.crash,
        args.call_id,
        args.events,
        args.escalate,
        args.audience,
        args.title,
    )

    @DBOS.workflow(name='durable_test.run')
    async def run(prompt: str) -> str:
        return (await agent.run(prompt)).output

    async def result_after_any_resume(name: str, handle: WorkflowHandleAsync[str]) -> str:
        # A test may cancel a waiting run and resume it: if this worker looks in between, the run is cancelled for
        # a moment. It then waits for the resume (up to a minute), as the run itself does.
        while True:
            try:
                return await handle.get_result()
            except DBOSAwaitedWorkflowCancelledError:
                for _ in range(600):
                    await asyncio.sleep(0.1)
                    status = await DBOS.get_workflow_status_async(name)
                    if status is not None and status.status != 'CANCELLED':
                        break
                else:
                    raise

    async def go() -> None:
        names = [f'{args.prefix}-{index}' for index in range(args.runs)]

        async def one(name: str) -> None:
            if args.resume:
                handle = await DBOS.retrieve_workflow_async(name)
            else:
                with SetWorkflowID(name):
                    handle = await DBOS.start_workflow_async(run, name)
            output = await result_after_any_resume(name, handle)
            append_line(args.out, json.dumps({'run': name, 'output': output}))

        await asyncio.gather(*(one(name) for name in names))

    run_under_dbos(args.db, 'ask-user-tests', APPLICATION_VERSION, go)
    return 0


if __name__ == '__main__':
    sys.exit(main())
