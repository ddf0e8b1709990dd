"""A client whose person answers the `redos` form of tests/mcp/mcp_servers.py, with a heartbeat on its event loop.

    python tests/mcp/hostile_pattern_client.py ANSWER

Connects over stdio, lets `elicitation_handler` ask the form, and the person answers ANSWER in their
own words. A heartbeat task ticks all along. Prints one JSON object: the server's view of the
elicitation result, and how many times the heartbeat ticked after the person answered (the loop is
alive once the answer was checked). It runs in a process of its own: a pattern run on a backtracking
engine would block this event loop, and the whole process, for minutes, and the test bounds the wait
on this process instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.mcp import elicitation_handler
from pydantic_ai_ask_user.testing import Custom, ScriptedAnswerer

SERVERS = Path(__file__).with_name('mcp_servers.py')
"""The test servers, run over stdio."""

TICKS_AFTER_ANSWER = 3
"""How many heartbeat ticks after the answer show the event loop is running again."""


def _fills_the_form(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    return ModelResponse(parts=[TextPart(part.model_response_str())])
    return ModelResponse(parts=[ToolCallPart('form', {'shape': 'redos'})])


async def main(answer: str) -> None:
    ticks = 0
    ticks_at_answer: int | None = None
    scripted = ScriptedAnswerer({'Name': Custom(answer)})

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        nonlocal ticks_at_answer
        response = await scripted(request)
        ticks_at_answer = ticks  # the handler checks the answer against the server's pattern after this
        return response

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.005)
            ticks += 1

    server = StdioTransport(sys.executable, [str(SERVERS), 'stdio'])
    client = FastMCPClient(server, elicitation_handler=elicitation_handler(answerer))
    agent = Agent(FunctionModel(_fills_the_form), toolsets=[MCPToolset(client)])
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(heartbeat)
        result = await agent.run('Fill in the form.')
        assert ticks_at_answer is not None, 'the person was never asked'
        while ticks < ticks_at_answer + TICKS_AFTER_ANSWER:
            await anyio.sleep(0.005)
        tasks.cancel_scope.cancel()
    print(json.dumps({'result': json.loads(result.output), 'ticks_after_answer': ticks - ticks_at_answer}))


if __name__ == '__main__':
    anyio.run(main, sys.argv[1])
