"""Runs AskUser inside real Prefect flows and prints what happened.

    PREFECT_API_URL=http://127.0.0.1:4200/api python tests/prefect/prefect_flow.py

Prints one JSON object: the error a live answerer got, and the deferred call's kind and request id.
"""

from __future__ import annotations

import asyncio
import json
import warnings

from prefect import flow
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.durable_exec.prefect import PrefectDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import TOOL_NAME, AskUser, AskUserRequest, AskUserResponse

QUESTION = {'header': 'Database', 'question': 'Which database?', 'options': [{'label': 'A'}, {'label': 'B'}]}


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
        return ModelResponse(parts=[TextPart('done')])
    return ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [QUESTION]}, tool_call_id='call-1')])


async def never_called(request: AskUserRequest) -> AskUserResponse:
    raise AssertionError('a live answerer must not be called inside a Prefect flow')


live = Agent(FunctionModel(model), name='live', capabilities=[PrefectDurability(), AskUser(answerer=never_called)])
deferred = Agent(FunctionModel(model), name='deferred', capabilities=[PrefectDurability(), AskUser(answerer=None)])


@flow
async def ask_live() -> str:
    try:
        await live.run('migrate')
    except Exception as error:
        return f'{type(error).__name__}: {error}'
    return 'no error'


@flow
async def ask_deferred() -> dict[str, str]:
    result = await deferred.run('migrate', output_type=[str, DeferredToolRequests])
    assert isinstance(result.output, DeferredToolRequests)
    (call,) = result.output.calls
    return {'kind': result.output.kind(call.tool_call_id), 'id': AskUserRequest.from_tool_call(call).id}


if __name__ == '__main__':
    warnings.simplefilter('ignore')
    print(json.dumps({'live': asyncio.run(ask_live()), 'deferred': asyncio.run(ask_deferred())}))
