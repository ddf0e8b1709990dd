"""The JSON API a custom frontend is built on, over ASGI with httpx."""

from __future__ import annotations

import anyio
import httpx
import pytest
from web_support import WAIT, asgi_client, ask_one, asking, bearer, multi, single, sse_events

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio


async def test_listing_shows_the_pending_requests_with_their_questions(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web, ask_one(single(), multi())) as job:
        response = await client.get('/api/requests', headers=bearer(web))
    assert response.status_code == 200
    [listed] = response.json()['requests']
    assert (listed['kind'], listed['id']) == ('question', job.request.id)  # one `kind` on every record
    assert [q['header'] for q in listed['questions']] == ['Database', 'Environments']
    assert listed['questions'][0]['options'][0] == {'label': 'PostgreSQL', 'description': 'The production database.'}
    assert listed['questions'][1]['multi_select'] is True


async def test_getting_one_request_returns_it(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.get(f'/api/requests/{job.request.id}', headers=bearer(web))
    assert response.status_code == 200
    assert response.json()['id'] == job.request.id


async def test_posting_an_answer_returns_it_to_the_waiting_run(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web, ask_one(single(), multi())) as job:
        body = {
            'answers': [
                {'header': 'Database', 'selected': ['MySQL']},
                {'header': 'Environments', 'selected': ['dev', 'staging']},
            ]
        }
        response = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
        assert response.status_code == 200
        assert response.json() == {'id': job.request.id, 'status': 'answered'}
        assert await job.response() == AskUserResponse(
            answers=(AskUserAnswer('Database', ('MySQL',)), AskUserAnswer('Environments', ('dev', 'staging')))
        )


async def test_posting_a_custom_answer_returns_the_persons_words(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        body = {'answers': [{'header': 'Database', 'custom_answer': 'CockroachDB'}]}
        response = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
        assert response.status_code == 200
        assert (await job.response()).answers == (AskUserAnswer('Database', custom_answer='CockroachDB'),)


async def test_posting_a_decline_returns_a_cancelled_response(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.post(f'/api/requests/{job.request.id}/decline', headers=bearer(web))
        assert response.json() == {'id': job.request.id, 'status': 'declined'}
        assert await job.response() == AskUserResponse(cancelled=True)


async def test_an_answer_that_does_not_fit_gets_422_and_the_question_keeps_waiting(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        body = {'answers': [{'header': 'Database', 'selected': ['PostgreSQL', 'MySQL']}]}
        response = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
        assert response.status_code == 422
        assert 'single-select' in response.json()['message']
        assert (await client.get(f'/api/requests/{job.request.id}', headers=bearer(web))).status_code == 200


async def test_a_body_of_the_wrong_shape_gets_422_naming_the_field(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        body = {'answers': [{'header': 'Database', 'picked': ['MySQL']}]}
        response = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
    assert response.status_code == 422
    assert 'picked' in response.json()['message']


async def test_a_decline_with_fields_gets_422(web: WebAnswerer) -> None:
    async with asgi_client(web) as client, asking(web) as job:
        response = await client.post(
            f'/api/requests/{job.request.id}/decline', json={'answers': []}, headers=bearer(web)
        )
    assert response.status_code == 422


async def test_the_event_stream_sends_requested_and_answered_events(web: WebAnswerer) -> None:
    async with serve(web.app) as base, httpx.AsyncClient(base_url=base, headers=bearer(web)) as client:
        seen: list[tuple[str, dict[str, object]]] = []
        async with client.stream('GET', '/api/events') as stream:
            assert stream.headers['content-type'].startswith('text/event-stream')
            async with asking(web) as job:
                await client.post(f'/api/requests/{job.request.id}/decline')
                with anyio.fail_after(WAIT):
                    async for kind, data in sse_events(stream):
                        seen.append((kind, data))
                        if kind == 'answered':
                            break
    assert [kind for kind, _ in seen] == ['requested', 'answered']
    assert seen[0][1]['request']['id'] == job.request.id  # type: ignore[index]
    assert seen[1][1] == {'id': job.request.id}


async def test_the_event_stream_sends_withdrawn_when_the_run_stops_waiting(web: WebAnswerer) -> None:
    async with serve(web.app) as base, httpx.AsyncClient(base_url=base, headers=bearer(web)) as client:
        kinds: list[str] = []
        async with client.stream('GET', '/api/events') as stream:
            async with asking(web):
                pass  # leaving the block cancels the ask
            with anyio.fail_after(WAIT):
                async for line in stream.aiter_lines():
                    if line.startswith('event:'):
                        kinds.append(line.partition(':')[2].strip())
                        if len(kinds) == 2:
                            break
    assert kinds == ['requested', 'withdrawn']
