"""An app whose model gives every tool call the id `call_0`, as `FunctionModel`s and some providers do, over AG-UI and Vercel.

For the real JavaScript clients (`agui_client.mjs`, `vercel_client.mjs`): `/agent` and `/chat` ask one
question (Region: EU or US) and then say what they got back; `/agent-twice` and `/chat-twice` then ask a
second question (Database: Keep or Delete) under the same id `call_0`, and say what they got for it.
`/agent-server-twice` is `/agent-twice` with the history held on the server (`manage_message_history='server'`),
as `@ag-ui/client` merges a second tool call with a repeated id into the first one in its own copy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent, AgentRunResult, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from pydantic_ai_ask_user import TOOL_NAME, AskUser
from pydantic_ai_ask_user.ui.ag_ui import AskUserAGUIAdapter
from pydantic_ai_ask_user.ui.vercel_ai import AskUserVercelAIAdapter

TOOL_CALL_ID = 'call_0'
"""The id of every tool call the model makes, in every turn and every run."""

REGION = {
    'header': 'Region',
    'question': 'Where should I deploy the service?',
    'options': [{'label': 'EU'}, {'label': 'US'}],
}
DATABASE = {
    'header': 'Database',
    'question': 'What should I do with the production database?',
    'options': [{'label': 'Keep'}, {'label': 'Delete'}],
}


def fixed_id_model(*questions: dict[str, Any]) -> FunctionModel:
    """Asks each of `questions` in turn, each call with the id `call_0`, then replies with the last result it got."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        results = [
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart) and part.tool_name == TOOL_NAME
        ]
        if len(results) < len(questions):
            question = questions[len(results)]
            return ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [question]}, tool_call_id=TOOL_CALL_ID)])
        return ModelResponse(parts=[TextPart(json.dumps(results[-1]))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for part in respond(messages, info).parts:
            if isinstance(part, TextPart):
                yield part.content
            else:
                assert isinstance(part, ToolCallPart)
                yield {0: DeltaToolCall(part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id)}

    return FunctionModel(respond, stream_function=stream)


def deferred_agent(*questions: dict[str, Any]) -> Agent[None, Any]:
    return Agent(
        fixed_id_model(*questions), capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )


once = deferred_agent(REGION)
twice = deferred_agent(REGION, DATABASE)


async def ag_ui(request: Request) -> Response:
    return await AskUserAGUIAdapter.dispatch_request(request, agent=once)


async def ag_ui_twice(request: Request) -> Response:
    return await AskUserAGUIAdapter.dispatch_request(request, agent=twice)


held: dict[str, list[ModelMessage]] = {}
"""Each AG-UI thread's history, as the server keeps it for `/agent-server-twice`."""


async def ag_ui_server_twice(request: Request) -> Response:
    thread_id = str((await request.json())['threadId'])

    def keep(result: AgentRunResult[Any]) -> None:
        held[thread_id] = result.all_messages()

    return await AskUserAGUIAdapter.dispatch_request(
        request,
        agent=twice,
        message_history=held.get(thread_id),
        manage_message_history='server',
        on_complete=keep,
    )


async def vercel(request: Request) -> Response:
    return await AskUserVercelAIAdapter.dispatch_request(request, agent=once, sdk_version=6)


async def vercel_twice(request: Request) -> Response:
    return await AskUserVercelAIAdapter.dispatch_request(request, agent=twice, sdk_version=6)


async def home(request: Request) -> Response:
    return PlainTextResponse('ok')


app = Starlette(
    routes=[
        Route('/', home),
        Route('/agent', ag_ui, methods=['POST']),
        Route('/agent-twice', ag_ui_twice, methods=['POST']),
        Route('/agent-server-twice', ag_ui_server_twice, methods=['POST']),
        Route('/chat', vercel, methods=['POST']),
        Route('/chat-twice', vercel_twice, methods=['POST']),
    ]
)
