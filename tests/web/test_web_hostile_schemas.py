"""Edited approval arguments checked against a tool's schema that an attacker, or an unlucky author, shaped.

Served by uvicorn (one event loop, as in production): alice decides her approval through the JSON API and the
form, bob uses the same inbox meanwhile. A `pattern` that backtracks on Python's `re` must not stall bob; a
`$ref` to itself or to the network must be a 422, never a 500 or a fetch; NaN and Infinity are refused. Nothing
refused is recorded.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from web_support import WAIT, csrf_of

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.store import PendingApproval
from pydantic_ai_ask_user.web import WebAnswerer, serve

pytestmark = pytest.mark.anyio

BACKTRACKING = r'^([a-z0-9]+\.?)+@example\.com$'
"""A pattern Pydantic checks in linear time, and Python's `re` in time doubling with each character."""

HOSTILE = 'a' * 26 + '!'
"""Seconds of backtracking on `re` (each further character doubles it); microseconds on a linear engine."""


def who(request: Request) -> Person | bool:
    name = request.headers.get('x-user')
    return Person(name) if name in ('alice', 'bob') else False


def schema(**email: Any) -> dict[str, Any]:
    return {
        'type': 'object',
        'properties': {'email': {'type': 'string', **email}, 'amount': {'type': 'number', 'exclusiveMinimum': 0}},
        'required': ['email'],
    }


@asynccontextmanager
async def waiting(web: WebAnswerer, parameters: dict[str, Any]) -> AsyncGenerator[PendingApproval]:
    """An approval for alice of a `notify(email=..., amount=...)` call, checked against `parameters`."""
    approval = PendingApproval(
        'w1', 'call_0', 'notify', {'email': 'ops@example.com'}, parameters=parameters, audience=('alice',)
    )
    async with anyio.create_task_group() as group:
        group.start_soon(web.hub.ask_wait, 'w1', [], [approval])
        with anyio.fail_after(WAIT):
            while not await web.hub.pending_approvals():
                await anyio.sleep(0.01)
        yield approval
        group.cancel_scope.cancel()


@asynccontextmanager
async def people(base: str) -> AsyncGenerator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=base, headers={'x-user': 'alice'}, timeout=WAIT) as alice,
        httpx.AsyncClient(base_url=base, headers={'x-user': 'bob'}, timeout=WAIT) as bob,
    ):
        yield alice, bob


async def timed(send: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = await send()
    return response, time.perf_counter() - started


async def test_a_backtracking_pattern_in_a_tool_schema_neither_stalls_the_decider_nor_anyone_else() -> None:
    web = WebAnswerer(authorize=who)
    async with serve(web.app) as base, people(base) as (alice, bob), waiting(web, schema(pattern=BACKTRACKING)) as ask:
        decide = f'api/approvals/{ask.key}/decide'

        async def edit(email: str) -> httpx.Response:
            return await alice.post(decide, json={'args': {'email': email}})

        await edit('warm-up!')  # the first check loads jsonschema
        benign = [await timed(lambda: edit('x!')) for _ in range(5)]
        assert {response.status_code for response, _ in benign} == {422}
        alone = [(await timed(lambda: bob.get('api/requests')))[1] for _ in range(5)]
        hostile: list[float] = []
        meanwhile: list[float] = []
        for _ in range(3):
            async with anyio.create_task_group() as both:

                async def attack() -> None:
                    response, seconds = await timed(lambda: edit(HOSTILE))
                    assert response.status_code == 422, response.text
                    assert 'does not match' in response.json()['message']
                    hostile.append(seconds)

                both.start_soon(attack)
                await anyio.sleep(0)  # the attack is sent first
                meanwhile.append((await timed(lambda: bob.get('api/requests')))[1])
        # Ratios within this run: the hostile check costs what a benign one does, and bob waits as he would alone.
        assert statistics.median(meanwhile) / statistics.median(alone) < 20, (meanwhile, alone)
        assert statistics.median(hostile) / statistics.median(s for _, s in benign) < 20, (hostile, benign)
        assert (await web.hub.get_approval(ask.key)).key == ask.key  # still pending: nothing recorded


async def test_a_pattern_only_backtracking_could_run_is_refused_with_its_reason() -> None:
    web = WebAnswerer(authorize=who)
    async with serve(web.app) as base, people(base) as (alice, _), waiting(web, schema(pattern=r'^(\w+) \1$')) as ask:
        refused = await alice.post(f'api/approvals/{ask.key}/decide', json={'args': {'email': 'a a'}})
        assert refused.status_code == 422
        assert 'backreferences are not supported' in refused.json()['message']
        assert (await web.hub.get_approval(ask.key)).key == ask.key  # still pending: nothing recorded


@asynccontextmanager
async def probe() -> AsyncGenerator[tuple[str, list[str]]]:
    """A server that records every request it gets: where a remote `$ref` would be fetched from."""
    fetched: list[str] = []

    async def schema_document(request: Request) -> JSONResponse:
        fetched.append(str(request.url))
        return JSONResponse({'type': 'string'})

    async with serve(Starlette(routes=[Route('/schema.json', schema_document)])) as base:
        yield base + 'schema.json', fetched


@pytest.mark.parametrize('reference', ['#', '#/$defs/loop', 'remote', '#/$defs/nowhere'])
async def test_a_reference_to_itself_or_outside_the_schema_is_a_422_and_nothing_is_fetched(reference: str) -> None:
    web = WebAnswerer(authorize=who)
    async with probe() as (remote, fetched), serve(web.app) as base, people(base) as (alice, _):
        ref = remote if reference == 'remote' else reference
        parameters = {**schema(), '$defs': {'loop': {'$ref': '#/$defs/loop'}}}
        parameters['properties']['email'] = {'$ref': ref}
        async with waiting(web, parameters) as ask:
            refused = await alice.post(f'api/approvals/{ask.key}/decide', json={'args': {'email': 'a@example.com'}})
            assert refused.status_code == 422, refused.text
            detail = refused.json()['message']
            assert 'the parameters of notify cannot check edited arguments' in detail
            assert 'approve or deny it as it is' in detail
            # Approved as it is, it still can be.
            approved = await alice.post(f'api/approvals/{ask.key}/decide', json='approve')
            assert approved.status_code == 200, approved.text
    assert fetched == []


@pytest.mark.parametrize('number', ['NaN', 'Infinity', '-Infinity', '1e999'])
async def test_nan_and_infinity_are_refused_in_edited_arguments_through_the_api_and_the_form(number: str) -> None:
    web = WebAnswerer(authorize=who)
    async with serve(web.app) as base, people(base) as (alice, _), waiting(web, schema()) as ask:
        edited = '{"email": "a@example.com", "amount": ' + number + '}'
        body = '{"args": ' + edited + '}'
        refused = await alice.post(
            f'api/approvals/{ask.key}/decide', content=body, headers={'content-type': 'application/json'}
        )
        assert refused.status_code == 422, refused.text
        assert 'NaN and Infinity are refused' in refused.json()['message']
        page = await alice.get(f'approvals/{ask.key}')
        form = {
            'csrf': csrf_of(page.text),
            'action': 'edit',
            'args': edited,
        }
        refused_form = await alice.post(f'approvals/{ask.key}', data=form)
        assert refused_form.status_code == 422, refused_form.text
        assert 'NaN and Infinity are refused' in refused_form.text
        assert (await web.hub.get_approval(ask.key)).key == ask.key  # still pending: nothing recorded
