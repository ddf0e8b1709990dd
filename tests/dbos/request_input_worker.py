"""A worker whose DBOS-durable agent needs a tool approval and an AskUser answer, through `RequestInput`.

    python tests/dbos/request_input_worker.py --db URL --dir DIR [--resume] [--inbox [--timeout S]]
        [--workflow-id ID]

The model's first response calls `deploy` (which requires approval) and `ask_user_question` (deferred,
`AskUser(answerer=None)`). `RequestInput` hands both to its `ask`, which writes the token and the
pending calls to `DIR/token.json` and returns `None`; the run then waits durably (`DBOSExternalEvents`)
until another process calls `resolve_dbos_event`. The model appends a line per call to `DIR/calls.txt`,
`deploy` appends to `DIR/deployed.txt`, and the run's output goes to `DIR/out.txt`. The run's workflow
id is `--workflow-id` (`ri-0`); its model's tool call ids are the same in every run; with `--inbox`,
who answered each resolved call (`DeferredToolResultsEvent.results.answered_by`) goes to `DIR/answered_by.txt`.

With `--inbox`, the model instead asks two questions in two calls, and `RequestInput`'s `ask` is
`ask_through_store`: the questions wait in the question table, answered through `DBOSQuestionStore`
or `ask-user answer`; `--timeout` bounds the wait.

With `--approvals`, the model calls `deploy_to(env=..., replicas=...)` (which requires approval) as `call_0` and
asks one question as `call_1`, the same ids in every run; `ask_through_store` publishes both, and `deploy_to`
appends the arguments it ran with to `DIR/deployed.txt`. Its question is addressed to `owner-WORKFLOW_ID`, with the
title `Release of WORKFLOW_ID`, and so is its approval (`ask_through_store` gives it its wait's question's);
`--escalate S` escalates the approval to `team:oncall` when undecided S seconds (`DBOSExternalEvents(escalate=...)`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import AsyncIterable
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from dbos import DBOS, SetWorkflowID
from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import (
    AgentStreamEvent,
    DeferredToolResultsEvent,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from worker_support import QUESTIONS, append_line, die_once, run_under_dbos, streamed

from pydantic_ai_ask_user import TOOL_NAME, AskUser, QuestionContext
from pydantic_ai_ask_user.dbos import DBOSExternalEvents, ask_through_store
from pydantic_ai_ask_user.deferred import waiting_handler
from pydantic_ai_ask_user.store import Escalation


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--db', required=True)
    parser.add_argument('--dir', required=True, type=Path)
    parser.add_argument('--resume', action='store_true')
    parser.add_argument('--inbox', action='store_true')
    parser.add_argument('--approvals', action='store_true')
    parser.add_argument('--workflow-id', default='ri-0', help="the run's workflow id")
    parser.add_argument('--timeout', type=float, default=None)
    parser.add_argument('--escalate', type=float, default=None, help='seconds until the approvals escalate')
    parser.add_argument(
        '--spelling',
        choices=('current', 'handle', 'request-input'),
        default='current',
        help="the waiting handler: this Pydantic AI's own spelling (`waiting_handler`), `HandleDeferredToolCalls` "
        'or `RequestInput`, whatever the version',
    )
    parser.add_argument(
        '--handler-first', action='store_true', help='list the waiting handler before DBOSExternalEvents'
    )
    parser.add_argument(
        '--crash-after-ask', action='store_true', help='SIGKILL once, after ask ran, before DBOS records it'
    )
    args = parser.parse_args()
    directory: Path = args.dir
    # An executor of its run's own: DBOS recovers at launch the pending workflows of its executor id, so with the
    # shared default (`local`) a worker started beside another recovered (and ran, with its own settings, such as
    # the audience) the other's run. A restart of this worker (`--resume`, the same run) still recovers its own.
    os.environ['DBOS__VMID'] = f'request-input-{args.workflow_id}'

    def inbox_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = {p.tool_call_id: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
        if not returns:
            append_line(directory / 'calls.txt', 'ask')
            second = {'questions': [{**QUESTIONS['questions'][0], 'header': 'Cache'}]}
            calls = [
                ToolCallPart(TOOL_NAME, QUESTIONS, tool_call_id='q-1'),
                ToolCallPart(TOOL_NAME, second, tool_call_id='q-2'),
            ]
            return ModelResponse(parts=calls)
        append_line(directory / 'calls.txt', 'final')
        return ModelResponse(parts=[TextPart(json.dumps(returns, sort_keys=True))])

    def approvals_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = {p.tool_call_id: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
        if not returns:
            append_line(directory / 'calls.txt', 'ask')
            deploy = {'env': 'production', 'replicas': 3}
            calls = [
                ToolCallPart('deploy_to', deploy, tool_call_id='call_0'),
                ToolCallPart(TOOL_NAME, QUESTIONS, tool_call_id='call_1'),
            ]
            return ModelResponse(parts=calls)
        append_line(directory / 'calls.txt', 'final')
        return ModelResponse(parts=[TextPart(json.dumps(returns, sort_keys=True))])

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
        if not returns:
            append_line(directory / 'calls.txt', 'ask')
            return ModelResponse(
                parts=[ToolCallPart('deploy', {}, tool_call_id='deploy-1'), ToolCallPart(TOOL_NAME, QUESTIONS)]
            )
        append_line(directory / 'calls.txt', 'final')
        by_tool = {part.tool_name: part.content for part in returns}
        return ModelResponse(parts=[TextPart(json.dumps(by_tool, sort_keys=True))])

    async def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> None:
        pending = {
            'token': token,
            'approvals': [call.tool_call_id for call in requests.approvals],
            'calls': [
                {'id': call.tool_call_id, 'kind': requests.kind(call.tool_call_id), 'args': call.args_as_dict()}
                for call in requests.calls
            ],
        }
        # Keyed on the token, as RequestInput asks: writing it twice writes the same thing.
        (directory / 'token.json').write_text(json.dumps(pending))
        return None

    publish = ask_through_store(args.db)

    async def publish_then_maybe_die(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> None:
        await publish(ctx, requests, token)
        append_line(directory / 'tokens.txt', token)
        if args.crash_after_ask:
            die_once(directory / 'crashed-after-ask')

    if args.inbox or args.approvals:
        timeout = None if args.timeout is None else timedelta(seconds=args.timeout)
        # With --approvals, the run's question (and so its approval) is addressed to the run's owner, in context.
        addressing: dict[str, Any] = (
            {
                'audience': f'owner-{args.workflow_id}',
                'context': QuestionContext(title=f'Release of {args.workflow_id}'),
            }
            if args.approvals
            else {}
        )
        agent = Agent(
            # Streamed, so that the run's event stream handler sees who answered.
            FunctionModel(
                approvals_model if args.approvals else inbox_model,
                stream_function=streamed(approvals_model if args.approvals else inbox_model),
            ),
            name='request_input_inbox_agent',
            capabilities=[
                DBOSDurability(),
                DBOSExternalEvents(
                    database_url=args.db,
                    escalate=None if args.escalate is None else Escalation(after=args.escalate, to='team:oncall'),
                ),
                AskUser(answerer=None, **addressing),
                waiting_handler(publish_then_maybe_die, timeout=timeout),
            ],
        )
    else:
        timeout = None if args.timeout is None else timedelta(seconds=args.timeout)
        handler = _waiting_handler(args.spelling, ask, timeout)
        events = DBOSExternalEvents[None](database_url=args.db)
        agent = Agent(
            FunctionModel(model),
            name='request_input_agent',
            capabilities=[
                DBOSDurability(),
                *([handler, events] if args.handler_first else [events, handler]),
                AskUser(answerer=None),
            ],
        )

    @agent.tool_plain(requires_approval=True)
    def deploy() -> str:
        append_line(directory / 'deployed.txt', 'deployed')
        return 'deployed'

    @agent.tool_plain(requires_approval=True)
    def deploy_to(env: Literal['staging', 'production'], replicas: int) -> str:
        """Deploy to an environment."""
        append_line(directory / 'deployed.txt', json.dumps({'env': env, 'replicas': replicas}, sort_keys=True))
        return f'deployed {replicas} to {env}'

    async def record_who_answered(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for event in events:
            if isinstance(event, DeferredToolResultsEvent):
                append_line(directory / 'answered_by.txt', json.dumps(event.results.answered_by, sort_keys=True))

    @DBOS.workflow(name='request_input_test.run')
    async def run(prompt: str) -> str:
        handler = record_who_answered if args.inbox or args.approvals else None
        return (await agent.run(prompt, event_stream_handler=handler)).output

    async def go() -> None:
        if args.resume:
            handle = await DBOS.retrieve_workflow_async(args.workflow_id)
        else:
            with SetWorkflowID(args.workflow_id):
                handle = await DBOS.start_workflow_async(run, 'ship it')
        output = await handle.get_result()
        append_line(directory / 'out.txt', output)

    run_under_dbos(args.db, 'ask-user-request-input', 'request-input-1', go)
    return 0


def _waiting_handler(spelling: str, ask: Any, timeout: timedelta | None) -> AbstractCapability[None]:
    """The waiting handler in `spelling`: `HandleDeferredToolCalls` and `RequestInput` as written, whatever this
    Pydantic AI makes of them (a `RequestInput` warns on 2.78, which deprecates it)."""
    if spelling == 'handle':
        return HandleDeferredToolCalls(ask) if timeout is None else HandleDeferredToolCalls(ask, timeout=timeout)  # pyright: ignore
    if spelling == 'request-input':
        from pydantic_ai import capabilities

        return capabilities.RequestInput(ask, timeout=timeout)  # pyright: ignore
    return waiting_handler(ask, timeout=timeout)


if __name__ == '__main__':
    sys.exit(main())
