"""A question belongs to its run: tool call ids repeat across runs, and the web hub never mixes two runs up.

Real parts: agent runs with a `FunctionModel` that names every call `call_0` (as `FunctionModel`, `TestModel`
and many OpenAI-compatible providers do), the web answerer's app over HTTP, and the person answering there.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from web_support import WAIT, asgi_client, bearer, csrf_of, log_in

from pydantic_ai_ask_user import (
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    DifferentQuestionsError,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import StoreEvent
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

STAGING = 'Deploy to staging?'
DROP = 'Delete the production database?'


def yes_or_no(header: str, question: str) -> dict[str, Any]:
    return {'header': header, 'question': question, 'options': [{'label': 'Yes'}, {'label': 'No'}]}


def asking_with_id(header: str, question: str, *, call_id: str | None = 'call_0') -> FunctionModel:
    """A model that asks one yes/no question in a call named `call_id` (`None`: no id), then says what it got."""
    args = json.dumps({'questions': [yes_or_no(header, question)]})

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns: list[ToolReturnPart[Any]] = [
            p for m in messages for p in getattr(m, 'parts', ()) if isinstance(p, ToolReturnPart)
        ]
        if not returns:
            call = (
                ToolCallPart(TOOL_NAME, args)
                if call_id is None
                else ToolCallPart(TOOL_NAME, args, tool_call_id=call_id)
            )
            return ModelResponse(parts=[call])
        content = returns[-1].content
        return ModelResponse(parts=[TextPart(content if isinstance(content, str) else json.dumps(content))])

    return FunctionModel(respond)


@dataclass
class Run:
    """An agent run going on in the background: `output` once it ended, `error` if it failed."""

    finished: anyio.Event = field(default_factory=anyio.Event)
    output: Any = None
    error: BaseException | None = None


@asynccontextmanager
async def running() -> AsyncGenerator[Callable[[Callable[[], Awaitable[Any]]], Run]]:
    """Start agent runs in the background; the block cancels whatever is still running when it ends."""
    async with anyio.create_task_group() as group:

        def start(run_agent: Callable[[], Awaitable[Any]]) -> Run:
            run = Run()

            async def go() -> None:
                try:
                    run.output = json.loads((await run_agent()).output)
                except Exception as error:
                    run.error = error
                finally:
                    run.finished.set()

            group.start_soon(go)
            return run

        yield start
        group.cancel_scope.cancel()


async def next_requested(events: AsyncIterator[StoreEvent], *runs: Run) -> StoreEvent:
    """The hub's next `requested` event; fails at once if one of `runs` ends first (it did not wait to be asked)."""
    got: list[StoreEvent] = []
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:

            async def take() -> None:
                async for event in events:
                    if event.kind == 'requested':
                        got.append(event)
                        break
                group.cancel_scope.cancel()

            async def ended(run: Run) -> None:
                await run.finished.wait()
                group.cancel_scope.cancel()

            group.start_soon(take)
            for run in runs:
                group.start_soon(ended, run)
    ended_early = [run for run in runs if run.finished.is_set()]
    assert not ended_early, f'a run ended without waiting for the person: {[(r.output, r.error) for r in ended_early]}'
    assert got, 'nothing was asked'
    return got[0]


async def listed(client: httpx.AsyncClient, web: WebAnswerer) -> list[dict[str, Any]]:
    reply = await client.get('/api/requests', headers=bearer(web))
    assert reply.status_code == 200
    return reply.json()['requests']


async def answer(client: httpx.AsyncClient, web: WebAnswerer, key: str, header: str, label: str) -> None:
    body = {'answers': [{'header': header, 'selected': [label]}]}
    reply = await client.post(f'/api/requests/{key}/answer', json=body, headers=bearer(web))
    assert reply.status_code == 200, reply.text
    assert reply.json() == {'id': key, 'status': 'answered'}


async def finished(run: Run) -> Any:
    with anyio.fail_after(WAIT):
        await run.finished.wait()
    if run.error is not None:
        raise run.error
    return run.output


async def test_a_second_run_reusing_call_0_waits_for_its_own_answer_never_the_first_runs_yes(web: WebAnswerer) -> None:
    staging = Agent(asking_with_id('Deploy', STAGING), capabilities=[AskUser(answerer=web)])
    drop = Agent(asking_with_id('Delete', DROP), capabilities=[AskUser(answerer=web)])
    events = web.hub.events()
    async with asgi_client(web) as client, running() as start:
        first = start(lambda: staging.run('ship it'))
        asked = await next_requested(events, first)
        [shown] = await listed(client, web)
        assert shown['id'] == asked.request_id != 'call_0'
        assert shown['tool_call_id'] == 'call_0'
        await answer(client, web, shown['id'], 'Deploy', 'Yes')
        assert await finished(first) == {'Deploy': ['Yes']}

        second = start(lambda: drop.run('clean up'))
        asked_again = await next_requested(events, second)
        assert asked_again.request_id != asked.request_id
        [waiting] = await listed(client, web)
        assert waiting['id'] == asked_again.request_id
        assert waiting['tool_call_id'] == 'call_0'
        assert [q['question'] for q in waiting['questions']] == [DROP]
        # Run 1's question is answered: its address says so, and it does not stand for run 2's.
        assert (await client.get(f'/api/requests/{asked.request_id}', headers=bearer(web))).status_code == 409
        await answer(client, web, waiting['id'], 'Delete', 'No')
        assert await finished(second) == {'Delete': ['No']}


async def test_a_second_run_asking_the_very_same_question_under_call_0_is_asked_again(web: WebAnswerer) -> None:
    """Same id, same words, another run: the person decides again; an answer is never carried across runs."""
    agent = Agent(asking_with_id('Deploy', STAGING), capabilities=[AskUser(answerer=web)])
    events = web.hub.events()
    async with asgi_client(web) as client, running() as start:
        first = start(lambda: agent.run('ship it'))
        asked = await next_requested(events, first)
        await answer(client, web, asked.request_id, 'Deploy', 'Yes')
        assert await finished(first) == {'Deploy': ['Yes']}
        second = start(lambda: agent.run('ship it again'))
        asked_again = await next_requested(events, second)
        await answer(client, web, asked_again.request_id, 'Deploy', 'No')
        assert await finished(second) == {'Deploy': ['No']}


async def test_two_concurrent_runs_with_call_0_both_wait_and_each_gets_its_own_answer(web: WebAnswerer) -> None:
    staging = Agent(asking_with_id('Deploy', STAGING), capabilities=[AskUser(answerer=web)])
    drop = Agent(asking_with_id('Delete', DROP), capabilities=[AskUser(answerer=web)])
    events = web.hub.events()
    async with asgi_client(web) as client, running() as start:
        first = start(lambda: staging.run('ship it'))
        await next_requested(events, first)
        second = start(lambda: drop.run('clean up'))
        await next_requested(events, first, second)
        shown = {q['questions'][0]['question']: q for q in await listed(client, web)}
        assert set(shown) == {STAGING, DROP}
        assert {q['tool_call_id'] for q in shown.values()} == {'call_0'}
        assert shown[STAGING]['id'] != shown[DROP]['id']
        assert shown[STAGING]['run_id'] != shown[DROP]['run_id']
        # The inbox links each to its own form, which shows its own question.
        await log_in(client, web)
        inbox = (await client.get('/')).text
        for question, item in shown.items():
            assert f'href="/requests/{item["id"]}"' in inbox
            form = await client.get(f'/requests/{item["id"]}')
            assert form.status_code == 200
            assert question in form.text
            assert f'action="/requests/{item["id"]}"' in form.text
        # Answered the other way round from how they were asked.
        await answer(client, web, shown[DROP]['id'], 'Delete', 'No')
        assert await finished(second) == {'Delete': ['No']}
        assert not first.finished.is_set()
        await answer(client, web, shown[STAGING]['id'], 'Deploy', 'Yes')
        assert await finished(first) == {'Deploy': ['Yes']}
    assert len(web.hub) == 0


async def test_a_model_that_sends_no_call_ids_is_asked_and_answered(web: WebAnswerer) -> None:
    """Pydantic AI makes up an id for a call without one; the question is addressed by its key all the same."""
    agent = Agent(asking_with_id('Deploy', STAGING, call_id=None), capabilities=[AskUser(answerer=web)])
    events = web.hub.events()
    async with asgi_client(web) as client, running() as start:
        for label in ('Yes', 'No'):
            run = start(lambda: agent.run('ship it'))
            asked = await next_requested(events, run)
            [shown] = await listed(client, web)
            assert shown['id'] == asked.request_id
            assert shown['tool_call_id']
            await answer(client, web, shown['id'], 'Deploy', label)
            assert await finished(run) == {'Deploy': [label]}


async def test_the_same_run_and_call_asking_other_questions_is_refused_loudly(web: WebAnswerer) -> None:
    """A run id given twice with a repeated call id: the remembered answer is for other questions, so it is refused."""
    staging = Agent(asking_with_id('Deploy', STAGING), capabilities=[AskUser(answerer=web)])
    drop = Agent(asking_with_id('Delete', DROP), capabilities=[AskUser(answerer=web)])
    events = web.hub.events()
    async with asgi_client(web) as client, running() as start:
        first = start(lambda: staging.run('ship it', run_id='run-1'))
        asked = await next_requested(events, first)
        await answer(client, web, asked.request_id, 'Deploy', 'Yes')
        assert await finished(first) == {'Deploy': ['Yes']}
        with pytest.raises(DifferentQuestionsError, match='Delete') as refused:
            await drop.run('clean up', run_id='run-1')
        assert refused.value.stored.questions[0].question == STAGING
        assert await listed(client, web) == []


async def test_on_a_real_server_the_event_stream_and_the_forms_name_each_runs_question_by_its_key(
    web: WebAnswerer,
) -> None:
    """uvicorn, the SSE stream a page follows, and the HTML forms a person sends: two `call_0`s, two questions."""
    staging = Agent(asking_with_id('Deploy', STAGING), capabilities=[AskUser(answerer=web)])
    drop = Agent(asking_with_id('Delete', DROP), capabilities=[AskUser(answerer=web)])
    async with (
        serve(web.app) as base,
        httpx.AsyncClient(base_url=base, timeout=WAIT) as client,
        running() as start,
    ):
        await log_in(client, web)
        requested: list[dict[str, Any]] = []
        async with client.stream('GET', '/api/events') as stream:
            runs = [start(lambda: staging.run('ship it')), start(lambda: drop.run('clean up'))]
            kind = ''
            with anyio.fail_after(WAIT):
                async for line in stream.aiter_lines():
                    if line.startswith('event:'):
                        kind = line.partition(':')[2].strip()
                    elif line.startswith('data:') and kind == 'requested':
                        requested.append(json.loads(line.partition(':')[2]))
                        if len(requested) == 2:
                            break
        assert [event['request']['tool_call_id'] for event in requested] == ['call_0', 'call_0']
        assert len({event['id'] for event in requested}) == 2
        assert all(event['id'] == event['request']['id'] for event in requested)
        by_question = {event['request']['questions'][0]['question']: event['id'] for event in requested}
        for question, label in ((STAGING, '0'), (DROP, '1')):
            page = await client.get(f'/requests/{by_question[question]}')
            assert question in page.text
            sent = await client.post(
                f'/requests/{by_question[question]}', data={'csrf': csrf_of(page.text), 'action': 'answer', 'q0': label}
            )
            assert sent.status_code == 200, sent.text
        assert [await finished(run) for run in runs] == [{'Deploy': ['Yes']}, {'Delete': ['No']}]


def _yes_no(question: str) -> Question:
    return Question(header='Go', question=question, options=(QuestionOption(label='Yes'), QuestionOption(label='No')))


async def test_the_hub_keys_by_run_and_call_and_a_replay_in_the_same_run_joins_the_wait() -> None:
    hub = QuestionHub()
    run_1 = AskUserRequest(questions=(_yes_no(STAGING),), id='call_0', run_id='run-1')
    replay = AskUserRequest(questions=(_yes_no(STAGING),), id='call_0', run_id='run-1')
    run_2 = AskUserRequest(questions=(_yes_no(STAGING),), id='call_0', run_id='run-2')
    yes = AskUserResponse(answers=(AskUserAnswer(header='Go', selected=('Yes',)),))
    no = AskUserResponse(answers=(AskUserAnswer(header='Go', selected=('No',)),))
    got: dict[str, list[AskUserResponse]] = {'run-1': [], 'run-2': []}

    async def ask(request: AskUserRequest) -> None:
        assert request.run_id is not None
        got[request.run_id].append(await hub.ask(request))

    events = hub.events()
    async with anyio.create_task_group() as group:
        for request in (run_1, replay, run_2):
            group.start_soon(ask, request)
        with anyio.fail_after(WAIT):
            keys = [event.request_id async for event in _requested(events, 2)]
        assert keys == [run_1.key, run_2.key]
        assert [request.key for request in await hub.pending()] == [run_1.key, run_2.key]
        await hub.respond(run_2.key, no)
        await hub.respond(run_1.key, yes)
    assert got == {'run-1': [yes, yes], 'run-2': [no]}
    # A replay after the answer gets the remembered answer: the person is not asked twice in one run.
    assert await hub.ask(replay) == yes


async def test_the_hub_refuses_other_questions_under_a_waiting_or_answered_key() -> None:
    hub = QuestionHub()
    asked = AskUserRequest(questions=(_yes_no(STAGING),), id='call_0', run_id='run-1')
    other = AskUserRequest(questions=(_yes_no(DROP),), id='call_0', run_id='run-1')
    yes = AskUserResponse(answers=(AskUserAnswer(header='Go', selected=('Yes',)),))
    events = hub.events()
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, asked)
        with anyio.fail_after(WAIT):
            [_ async for _ in _requested(events, 1)]
        with pytest.raises(DifferentQuestionsError):
            await hub.ask(other)
        assert await hub.pending() == (asked,)
        await hub.respond(asked.key, yes)
    with pytest.raises(DifferentQuestionsError):
        await hub.ask(other)
    assert await hub.ask(asked) == yes


async def _requested(events: AsyncIterator[StoreEvent], count: int) -> AsyncIterator[StoreEvent]:
    seen = 0
    async for event in events:
        if event.kind == 'requested':
            yield event
            seen += 1
            if seen == count:
                return
