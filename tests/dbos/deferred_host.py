"""The host of a deferred run, in a process of its own: publishes the paused question durably, then resumes the run.

    python tests/dbos/deferred_host.py --db URL --paused FILE --out FILE

`--paused` holds what the process that paused the run left: `{"messages": ..., "requests": ...}`, the run's
messages and its `DeferredToolRequests`, as Pydantic AI serializes them. The host rebuilds the question with
`AskUserRequest.from_deferred` (so it keeps the run that deferred it), waits for its answer with
`DBOSAnswerer` (any process answers it: `ask-user answer`, the web inbox), resumes the run with
`deferred_answer`, and writes the run's output to `--out`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from worker_support import QUESTIONS, run_under_dbos

from pydantic_ai_ask_user import TOOL_NAME, AskUser, AskUserRequest
from pydantic_ai_ask_user.dbos import DBOSAnswerer
from pydantic_ai_ask_user.deferred import deferred_answer

REQUESTS = TypeAdapter(DeferredToolRequests)
"""How the paused run's `DeferredToolRequests` travel between the processes."""


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(json.dumps(returns[-1].content))])
    # Always as the call `call_0`, as providers that number their calls per run do.
    return ModelResponse(parts=[ToolCallPart(TOOL_NAME, QUESTIONS, tool_call_id='call_0')])


def deferred_agent() -> Agent[None, str | DeferredToolRequests]:
    """The agent: pauses on its question (`AskUser(answerer=None)`), and reports the answer once resumed."""
    return Agent(FunctionModel(_model), capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests])


def paused_json(messages: list[ModelMessage], requests: DeferredToolRequests) -> str:
    """What a paused run leaves for the host."""
    return json.dumps(
        {
            'messages': json.loads(ModelMessagesTypeAdapter.dump_json(messages)),
            'requests': json.loads(REQUESTS.dump_json(requests)),
        }
    )


async def host(database_url: str, paused: dict[str, Any]) -> str:
    messages = ModelMessagesTypeAdapter.validate_python(paused['messages'])
    requests = REQUESTS.validate_python(paused['requests'])
    request = AskUserRequest.from_deferred(requests, 'call_0')
    answerer = DBOSAnswerer(database_url, recheck_seconds=600)
    response = await answerer(request)
    resumed = await deferred_agent().run(
        message_history=messages, deferred_tool_results=deferred_answer(request, response)
    )
    assert isinstance(resumed.output, str)
    return resumed.output


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--db', required=True)
    parser.add_argument('--paused', required=True, type=Path)
    parser.add_argument('--out', required=True, type=Path)
    args = parser.parse_args()
    paused = json.loads(args.paused.read_text())

    async def resume() -> None:
        args.out.write_text(await host(args.db, paused))

    run_under_dbos(args.db, 'ask-user-deferred-host', 'deferred-host-1', resume)
    return 0


if __name__ == '__main__':
    sys.exit(main())
