"""Helpers for the web answerer's tests: sample questions, a request being asked, and a logged-in client."""

from __future__ import annotations

import json
import pathlib
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import waits
from ask_user_support import ask_one, wait_pending
from ask_user_support import multi as multi
from ask_user_support import single as single
from playwright.async_api import BrowserContext, Page, expect
from processes import Served as Served
from processes import served as served

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, Person
from pydantic_ai_ask_user._question_store import EVERYTHING, page_in_memory
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import DEFAULT_PAGE_SIZE, PendingFilter, PendingPage, addressed_to
from pydantic_ai_ask_user.web import CONTENT_SECURITY_POLICY, WebAnswerer

WAIT = waits.WAIT
"""Generous: the machine is shared and noisy."""

ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / 'test-artifacts'
"""Where the browser tests leave their screenshots."""


@dataclass
class Asking:
    """A request being asked in the background; `response()` waits for what the answerer returned."""

    request: AskUserRequest
    done: anyio.Event = field(default_factory=anyio.Event)
    result: AskUserResponse | None = None

    async def response(self) -> AskUserResponse:
        with anyio.fail_after(WAIT):
            await self.done.wait()
        assert self.result is not None
        return self.result


@asynccontextmanager
async def asking(web: WebAnswerer, request: AskUserRequest | None = None) -> AsyncIterator[Asking]:
    """Ask `request` through `web` while the block runs; the ask is cancelled when the block ends unanswered."""
    job = Asking(request or ask_one())

    async def ask() -> None:
        job.result = await web(job.request)
        job.done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await wait_pending(web.hub, job.request.id)
        yield job
        group.cancel_scope.cancel()


async def open_inbox_as(context: BrowserContext, web: WebAnswerer, base: str, name: str) -> Page:
    """A new page of `context`, signed in as `name` by their link, once its live stream is connected."""
    page = await context.new_page()
    await page.goto(web.login_url(base, name=name))
    await expect(page.locator('#live-status')).to_contain_text('appear here')
    return page


def asgi_client(web: WebAnswerer, base_url: str = 'http://testserver') -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url=base_url)


async def log_in(client: httpx.AsyncClient, web: WebAnswerer, prefix: str = '') -> None:
    response = await client.get(prefix + '/' + web.app.login_path())
    assert response.status_code == 303, response.text


def answer_body(
    header: str = 'Database', *, selected: Sequence[str] = ('SQLite',), custom: str | None = None
) -> dict[str, object]:
    """What `POST /api/requests/<id>/answer` takes: one answer, by its options' labels or in the person's words."""
    answer: dict[str, object] = {'header': header}
    if custom is not None:
        answer['custom_answer'] = custom
    else:
        answer['selected'] = list(selected)
    return {'answers': [answer]}


def assert_security_headers(response: httpx.Response) -> None:
    """Every response carries the content security policy and is never framed or sniffed."""
    assert response.headers['content-security-policy'] == CONTENT_SECURITY_POLICY
    assert response.headers['x-frame-options'] == 'DENY'
    assert response.headers['x-content-type-options'] == 'nosniff'


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, 'the form has no CSRF field'
    return found.group(1)


async def sse_events(stream: httpx.Response) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Each event of a server-sent event stream as it arrives: its kind (`requested`, ...) and its JSON data."""
    kind = ''
    async for line in stream.aiter_lines():
        if line.startswith('event:'):
            kind = line.partition(':')[2].strip()
        elif line.startswith('data:'):
            yield kind, json.loads(line.partition(':')[2])


def bearer(web: WebAnswerer) -> dict[str, str]:
    assert web.access_token is not None
    return {'authorization': f'Bearer {web.access_token}'}


@dataclass
class Tab:
    """A fresh browser page, with every dialog and script error it ran into."""

    page: Page
    dialogs: list[str] = field(default_factory=list[str])
    errors: list[str] = field(default_factory=list[str])


@dataclass(frozen=True)
class Record:
    """A pending request as a durable store lists it: with its workflow and when it was asked."""

    request: AskUserRequest
    workflow_id: str
    created_at: float


class RecordingStore(QuestionHub):
    """A hub that, like `DBOSQuestionStore.pending_records`, says when each request was asked and by which run."""

    def __init__(self, records: Sequence[Record]) -> None:
        super().__init__()
        self.records = records

    async def pending_records(self, *, visible_to: Person | None = None) -> Sequence[Record]:
        return [record for record in self.records if addressed_to(record.request, visible_to)]

    async def pending_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: PendingFilter = EVERYTHING,
        visible_to: Person | None = None,
    ) -> PendingPage[Record]:
        return page_in_memory(self.records, limit=limit, cursor=cursor, where=where, visible_to=visible_to)


@asynccontextmanager
async def waiting_in(hub: QuestionHub, *requests: AskUserRequest) -> AsyncIterator[None]:
    """`requests` waiting in `hub` while the block runs (each withdrawn when it ends unanswered)."""
    async with anyio.create_task_group() as group:
        for request in requests:
            group.start_soon(hub.ask, request)
            await wait_pending(hub, request.id)
        yield
        group.cancel_scope.cancel()


def client_as(web: WebAnswerer, user: str) -> httpx.AsyncClient:
    """An ASGI client of `web.app` whose requests say they are `user`'s (`x-user`, for an `authorize` that reads it)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=web.app), base_url='http://testserver', headers={'x-user': user}
    )
