"""The UI integrations: what each adds per question over Pydantic AI's plain adapter, as a ratio within one run.

One round trip is two requests through the app in-process (httpx over ASGI, no network): the run that
ends on the question, and the run that takes the answer and finishes. The plain adapters take the
answer unchecked, in the model's shape (AG-UI: a `ToolMessage`; Vercel: an `output-available` part);
ours read it in the response JSON shape, check it against its call, and also send the interrupt,
the event and the converted results. Plain and ours alternate, so a busy neighbour slows both alike.

Goal: at most 1.5 times the plain adapter's round trip.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.ui.ag_ui import AGUIAdapter
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from benchmarks.quick import sized
from pydantic_ai_ask_user import AskUser
from pydantic_ai_ask_user.testing import asking_model
from pydantic_ai_ask_user.ui.ag_ui import AskUserAGUIAdapter
from pydantic_ai_ask_user.ui.vercel_ai import AskUserVercelAIAdapter

QUESTIONS = [
    {
        'header': f'Choice {n}',
        'question': f'Which option should step {n} use?',
        'options': [{'label': f'Option {k}', 'description': f'What option {k} does.'} for k in range(4)],
    }
    for n in range(4)
]
ROUNDS = sized(150, 2)
"""Measured round trips of each adapter, plain and ours alternating (2 in quick mode)."""

WARM_UP = sized(10, 1)
"""Round trips of each adapter before the measured ones (1 in quick mode)."""

GOOD_RESPONSE = {'answers': [{'header': q['header'], 'selected': ['Option 1']} for q in QUESTIONS]}
MODEL_SHAPE = {q['header']: ['Option 1'] for q in QUESTIONS}

Trip = Callable[[httpx.AsyncClient], Awaitable[None]]


def _client(adapter: Any, **options: Any) -> httpx.AsyncClient:
    agent = Agent(
        asking_model(*QUESTIONS), capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests]
    )

    async def run(request: Request) -> Response:
        return await adapter.dispatch_request(request, agent=agent, **options)

    app = Starlette(routes=[Route('/', run, methods=['POST'])])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url='http://bench')


def _events(response: httpx.Response) -> list[dict[str, Any]]:
    lines = [line[5:].strip() for line in response.text.splitlines() if line.startswith('data:')]
    return [json.loads(line) for line in lines if line != '[DONE]']


async def _ag_ui_trip(client: httpx.AsyncClient, ours: bool) -> None:
    messages: list[dict[str, Any]] = [{'id': 'u1', 'role': 'user', 'content': 'Go.'}]
    body = {'threadId': 't', 'runId': 'r', 'protocolVersion': '1.0', 'messages': messages}
    events = _events(await client.post('/', json=body))
    start = next(e for e in events if e['type'] == 'TOOL_CALL_START')
    arguments = ''.join(e['delta'] for e in events if e['type'] == 'TOOL_CALL_ARGS')
    call = {
        'id': start['toolCallId'],
        'type': 'function',
        'function': {'name': start['toolCallName'], 'arguments': arguments},
    }
    messages.append({'id': 'a1', 'role': 'assistant', 'toolCalls': [call]})
    if ours:
        entry = {'interruptId': f'ask-user-{call["id"]}', 'status': 'resolved', 'payload': GOOD_RESPONSE}
        body = {**body, 'messages': messages, 'resume': [entry]}
    else:
        messages.append({'id': 't1', 'role': 'tool', 'toolCallId': call['id'], 'content': json.dumps(MODEL_SHAPE)})
        body = {**body, 'messages': messages}
    events = _events(await client.post('/', json=body))
    assert events[-1]['type'] == 'RUN_FINISHED', events[-1]


async def _vercel_trip(client: httpx.AsyncClient, ours: bool) -> None:
    user = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Go.'}]}
    chunks = _events(await client.post('/', json={'id': 'c', 'trigger': 'submit-message', 'messages': [user]}))
    call = next(c for c in chunks if c['type'] == 'tool-input-available')
    part = {
        'type': f'tool-{call["toolName"]}',
        'toolCallId': call['toolCallId'],
        'state': 'output-available',
        'input': call['input'],
        'output': GOOD_RESPONSE if ours else MODEL_SHAPE,
    }
    messages = [user, {'id': 'a1', 'role': 'assistant', 'parts': [part]}]
    chunks = _events(await client.post('/', json={'id': 'c', 'trigger': 'submit-message', 'messages': messages}))
    assert not [c for c in chunks if c['type'] == 'error'], chunks


async def _compare(
    name: str, trip: Callable[[httpx.AsyncClient, bool], Awaitable[None]], plain: Any, ours: Any, **options: Any
) -> None:
    times: dict[bool, list[float]] = {False: [], True: []}
    async with _client(plain, **options) as plain_client, _client(ours, **options) as our_client:
        for _ in range(WARM_UP):
            await trip(plain_client, False)
            await trip(our_client, True)
        for _ in range(ROUNDS):
            for is_ours, client in ((False, plain_client), (True, our_client)):
                started = time.perf_counter()
                await trip(client, is_ours)
                times[is_ours].append(time.perf_counter() - started)
    base, with_us = statistics.median(times[False]), statistics.median(times[True])
    per_question = (with_us - base) / len(QUESTIONS)
    ratio = with_us / base
    print(
        f'{name}: plain round trip {base * 1e3:.2f} ms, ours {with_us * 1e3:.2f} ms '
        f'({len(QUESTIONS)} questions), added {per_question * 1e6:.0f} us per question, '
        f'ratio {ratio:.2f} ({"met" if ratio <= 1.5 else "not met"}: goal <= 1.5)'
    )


async def _main() -> None:
    await _compare('AG-UI', _ag_ui_trip, AGUIAdapter, AskUserAGUIAdapter)
    await _compare('Vercel AI', _vercel_trip, VercelAIAdapter, AskUserVercelAIAdapter, sdk_version=6)


def main() -> None:
    asyncio.run(_main())


if __name__ == '__main__':
    main()
