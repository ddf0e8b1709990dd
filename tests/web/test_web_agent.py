"""`WebAnswerer` behind `AskUser` in a real agent run: the answer posted over HTTP is what the model gets back."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from web_support import WAIT, asgi_client, bearer

from pydantic_ai_ask_user import TIMED_OUT, TOOL_NAME, WITHDRAWN, AskUser
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio

ARGS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
        }
    ]
}


def model() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, 'parts', ()) if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart(TOOL_NAME, json.dumps(ARGS), tool_call_id='call-1')])
        content = returns[-1].content
        return ModelResponse(parts=[TextPart(content if isinstance(content, str) else json.dumps(content))])

    return FunctionModel(respond)


async def test_an_answer_posted_to_the_api_is_what_the_model_gets_back(web: WebAnswerer) -> None:
    agent = Agent(model(), capabilities=[AskUser(answerer=web)])
    outputs: list[str] = []

    async def run() -> None:
        outputs.append((await agent.run('migrate')).output)

    async with asgi_client(web) as client, anyio.create_task_group() as group:
        group.start_soon(run)
        listed: list[dict[str, str]] = []
        with anyio.fail_after(WAIT):
            while not listed:
                listed = (await client.get('/api/requests', headers=bearer(web))).json()['requests']
                await anyio.sleep(0.01)
        body = {'answers': [{'header': 'Database', 'selected': ['SQLite']}]}
        reply = await client.post(f'/api/requests/{listed[0]["id"]}/answer', json=body, headers=bearer(web))
        assert reply.status_code == 200
    assert json.loads(outputs[0]) == {'Database': ['SQLite']}
    assert len(web.hub) == 0


async def test_a_timeout_withdraws_the_question_and_tells_the_model(web: WebAnswerer) -> None:
    agent = Agent(model(), capabilities=[AskUser(answerer=web, timeout=0.2)])
    result = await agent.run('migrate')
    assert result.output == TIMED_OUT
    assert len(web.hub) == 0
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url='http://t') as client:
        listed = (await client.get('/api/requests', headers=bearer(web))).json()
        assert listed == {'requests': [], 'next_cursor': None, 'total': 0, 'total_exact': True}


async def test_closing_the_answerer_withdraws_the_open_question_and_the_model_is_told_withdrawn_at_once(
    web: WebAnswerer,
) -> None:
    # A shutdown mid-question: the run must not wait for the hour-long timeout, nor be told TIMED_OUT.
    agent = Agent(model(), capabilities=[AskUser(answerer=web, timeout=3600)])
    outputs: list[str] = []

    async def run() -> None:
        outputs.append((await agent.run('migrate')).output)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            while not len(web.hub):
                await anyio.sleep(0.01)
            assert web.close() == 1
        # A model that asks again after the shutdown is told at once too, without waiting for anyone.
        outputs.append((await agent.run('migrate again')).output)
    assert outputs == [WITHDRAWN, WITHDRAWN]
    assert web.closed
    assert web.app.finished
    assert len(web.hub) == 0
