"""MCP servers the tests connect real clients to: `python mcp_servers.py stdio` or `python mcp_servers.py http PORT`.

Tools:
- `plan`: runs a Pydantic AI agent whose model asks two rounds of questions, answered by the MCP client
  through `run_agent_in_tool` (elicitation on 2025 sessions, input-required results on 2026-07-28 ones).
  Returns `{"protocol": ..., "answers": [...]}` with what the model got back each round.
- `ask_once`: the same with one question put through `MCPElicitationAnswerer` directly.
- `plan_noted`: `run_agent_in_tool` with `notes=True, recommended_options=True`; the model asks `NOTED` once.
- `ask_noted`: `NOTED` with notes through `MCPElicitationAnswerer`; returns the answers with notes and `answered_by`.
- `form`: puts the form named `shape` (see `FORMS`) to the client and returns what came back, `_meta` included.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.mcp import MCPElicitationAnswerer, run_agent_in_tool

ROUND_ONE = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database should the service use?',
            'options': [
                {'label': 'PostgreSQL', 'description': 'relational, the team knows it'},
                {'label': 'SQLite'},
            ],
        },
        {
            'header': 'Environments',
            'question': 'Where should it be deployed?',
            'options': [{'label': 'staging'}, {'label': 'production'}, {'label': 'preview'}],
            'multi_select': True,
        },
    ]
}

ROUND_TWO = {
    'questions': [
        {
            'header': 'Name',
            'question': 'What should the service be called?',
            'options': [{'label': 'orders'}, {'label': 'billing'}],
        }
    ]
}

NOTED = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
            'recommended': 'SQLite',
        },
        {
            'header': 'Environments',
            'question': 'Where?',
            'options': [{'label': 'staging'}, {'label': 'production'}],
            'multi_select': True,
            'recommended': 'staging',
        },
    ]
}

FORMS: dict[str, dict[str, Any]] = {
    'deploy': {
        'type': 'object',
        'properties': {
            'env': {
                'type': 'string',
                'title': 'Environment',
                'description': 'Where to deploy',
                'oneOf': [{'const': 'stg', 'title': 'Staging'}, {'const': 'prd', 'title': 'Production'}],
            },
            'regions': {
                'type': 'array',
                'title': 'Regions',
                'items': {'anyOf': [{'const': 'eu', 'title': 'Europe'}, {'const': 'us', 'title': 'Americas'}]},
            },
            'confirm': {'type': 'boolean', 'title': 'Confirm', 'description': 'Really deploy?'},
            'note': {'type': 'string', 'title': 'Note'},
        },
        'required': ['env', 'regions', 'confirm'],
    },
    'name': {
        'type': 'object',
        'properties': {
            'name': {'type': 'string', 'title': 'Name', 'default': 'orders', 'examples': ['billing'], 'maxLength': 20}
        },
        'required': ['name'],
    },
    'age': {
        'type': 'object',
        'properties': {'age': {'type': 'integer', 'title': 'Age', 'minimum': 0}},
        'required': ['age'],
    },
    'many': {
        'type': 'object',
        'properties': {
            'pick': {'type': 'string', 'title': 'Pick', 'enum': [f'v{i}' for i in range(9)]},
        },
        'required': ['pick'],
    },
    'redos': {
        'type': 'object',
        'properties': {
            'name': {
                'type': 'string',
                'title': 'Name',
                'default': 'orders',
                'examples': ['billing'],
                # Catastrophic on a backtracking engine: 'a' * n + '!' takes 2**n steps there.
                'allOf': [{'pattern': '^(a+)+$'}],
            }
        },
        'required': ['name'],
    },
    'backreference': {
        'type': 'object',
        'properties': {
            'name': {
                'type': 'string',
                'title': 'Name',
                'default': 'orders',
                'examples': ['billing'],
                'allOf': [{'pattern': r'^(\w+) \1$'}],
            }
        },
        'required': ['name'],
    },
}
"""Form shapes: `deploy`, `name` and `redos` can be asked; `age` (a free number), `many` (nine options) and
`backreference` (a pattern no linear-time engine runs) cannot."""


def _asks_twice(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [
        part.model_response_str()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    if not returns:
        return ModelResponse(parts=[ToolCallPart('ask_user_question', ROUND_ONE)])
    if len(returns) == 1:
        return ModelResponse(parts=[ToolCallPart('ask_user_question', ROUND_TWO)])
    return ModelResponse(parts=[TextPart(json.dumps([json.loads(r) if r.startswith('{') else r for r in returns]))])


def _asks_noted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    return ModelResponse(parts=[TextPart(part.model_response_str())])
    return ModelResponse(parts=[ToolCallPart('ask_user_question', NOTED)])


agent = Agent(FunctionModel(_asks_twice))
noted_agent = Agent(FunctionModel(_asks_noted))
server = MCPServer('ask-user-tests')


@server.tool()
async def plan(ctx: Context) -> str | InputRequiredResult:
    output = await run_agent_in_tool(agent, ctx, 'Plan the service.')
    if isinstance(output, InputRequiredResult):
        return output
    return json.dumps({'protocol': ctx.protocol_version, 'answers': json.loads(output)})


@server.tool()
async def ask_once(ctx: Context) -> str:
    request = AskUserRequest.from_tool_args(ROUND_TWO)
    response = await MCPElicitationAnswerer.from_context(ctx, allow_custom_answers=False)(request)
    return json.dumps({'protocol': ctx.protocol_version, 'result': ask_user_result(request, response)})


@server.tool()
async def plan_noted(ctx: Context) -> str | InputRequiredResult:
    output = await run_agent_in_tool(noted_agent, ctx, 'Plan.', notes=True, recommended_options=True)
    if isinstance(output, InputRequiredResult):
        return output
    return json.dumps({'protocol': ctx.protocol_version, 'result': json.loads(output)})


@server.tool()
async def ask_noted(ctx: Context) -> str:
    request = AskUserRequest.from_tool_args(NOTED, notes=True)
    response = await MCPElicitationAnswerer.from_context(ctx)(request)
    answers = [{'header': a.header, 'selected': list(a.selected), 'note': a.note} for a in response.answers]
    return json.dumps({'answers': answers, 'answered_by': response.answered_by})


@server.tool()
async def form(shape: str, ctx: Context) -> str | InputRequiredResult:
    schema = FORMS[shape]
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if not ctx.input_responses:
            params = ElicitRequestFormParams(message=f'Form {shape}', requested_schema=schema)
            return InputRequiredResult(input_requests={'form': ElicitRequest(params=params)}, request_state=shape)
        result = ctx.input_responses['form']
    else:
        result = await ctx.session.elicit_form(f'Form {shape}', schema, related_request_id=ctx.request_id)
    data = result.model_dump(mode='json', by_alias=True, exclude_none=True)
    return json.dumps({'protocol': ctx.protocol_version, **data})


if __name__ == '__main__':
    if sys.argv[1] == 'stdio':
        server.run('stdio')
    else:
        server.run('streamable-http', port=int(sys.argv[2]))
