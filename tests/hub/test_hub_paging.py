"""`QuestionHub` pages its waiting questions as every store does: deadline order, keyset cursors, counts, filters."""

from __future__ import annotations

import time
from dataclasses import replace

import anyio
import pytest
from ask_user_support import make_request
from waits import wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person
from pydantic_ai_ask_user._question_store import EVERYTHING, encode_cursor
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.store import BadCursorError, PendingFilter, count_pending, page_pending

pytestmark = pytest.mark.anyio

ANSWER = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


async def _keys(hub: QuestionHub, limit: int, where: PendingFilter = EVERYTHING) -> list[str]:
    keys: list[str] = []
    cursor: str | None = None
    while True:
        page = await hub.pending_page(limit=limit, cursor=cursor, where=where)
        keys.extend(record.request.key for record in page.records)
        if (cursor := page.next_cursor) is None:
            return keys


async def test_the_hub_pages_in_deadline_order_across_questions_asked_and_answered_between_pages() -> None:
    hub = QuestionHub()
    now = time.time()
    async with anyio.create_task_group() as group:

        def ask(key: str, deadline: float | None) -> None:
            request = make_request(id=key)
            group.start_soon(hub.ask, request if deadline is None else replace(request, deadline=deadline))

        for index in range(12):
            ask(f'q{index:02d}', now + 100 + index if index % 3 else None)
        await wait_until(lambda: _count(hub, 12), '12 questions waiting')
        dated = [f'q{index:02d}' for index in range(12) if index % 3]
        undated = [f'q{index:02d}' for index in range(12) if not index % 3]  # asked in this order, so oldest first
        assert await _keys(hub, 5) == dated + undated
        first = await hub.pending_page(limit=5)
        assert first.total == 12
        assert first.next_cursor is not None
        await hub.respond('q07', ANSWER)  # not shown yet: it must not show
        await hub.respond('q01', ANSWER)  # shown already
        ask('early', now + 1)  # sorts before the cursor: on a page already read
        ask('late', now + 109.5)
        await wait_until(lambda: _count(hub, 12), 'the new questions')
        rest: list[str] = []
        cursor = first.next_cursor
        while cursor is not None:
            page = await hub.pending_page(limit=5, cursor=cursor)
            rest.extend(record.request.key for record in page.records)
            cursor = page.next_cursor
        assert rest == ['q08', 'late', 'q10', 'q11', *undated]
        assert await count_pending(hub) == 12
        assert await count_pending(hub, PendingFilter(asked_after=time.time() + 60)) == 0
        assert await _keys(hub, 3, PendingFilter(asked_before=now - 1)) == []
        # The helper every front end uses takes the hub's own paging.
        assert [record.request.key for record in (await page_pending(hub, limit=2)).records] == ['early', 'q02']
        with pytest.raises(BadCursorError):
            await hub.pending_page(cursor=encode_cursor(['temporal', 'abc']))
        with pytest.raises(ValueError, match='from 1 to 500'):
            await hub.pending_page(limit=0)
        group.cancel_scope.cancel()  # every asker gives up: each question is withdrawn
    assert (await hub.pending_page()).total == 0
    assert (await hub.pending_page()).records == []


async def _count(hub: QuestionHub, count: int) -> bool:
    return await hub.count_pending() == count


class _OldStore:
    """A store written against the protocol before paging: only `pending()` and no times."""

    def __init__(self, keys: list[str]) -> None:
        self.requests = [make_request(id=key) for key in keys]

    async def pending(self) -> list[object]:
        return list(self.requests)


async def test_a_store_without_paging_is_paged_in_memory_by_the_front_ends_helper() -> None:
    store = _OldStore(['c', 'a', 'b'])
    page = await page_pending(store, limit=2)  # pyright: ignore[reportArgumentType]
    assert [record.request.key for record in page.records] == ['a', 'b']
    assert page.total == 3
    rest = await page_pending(store, limit=2, cursor=page.next_cursor)  # pyright: ignore[reportArgumentType]
    assert ([record.request.key for record in rest.records], rest.next_cursor) == (['c'], None)
    assert await count_pending(store) == 3  # pyright: ignore[reportArgumentType]


async def test_a_persons_pages_and_count_hold_only_their_questions_and_the_unaddressed() -> None:
    # Paging and the audience together: no page holds, and no total counts, a question addressed to someone else,
    # through the hub's own pages and through `page_pending` / `count_pending` (what the inbox calls).
    hub = QuestionHub()
    alice, sam = Person('alice'), Person('sam', groups=['team:support'])
    audiences = {'a1': ('alice',), 'b1': ('bob',), 'any': None, 'a2': ('alice', 'team:support'), 'b2': ('bob',)}
    async with anyio.create_task_group() as group:
        for key, audience in audiences.items():
            group.start_soon(hub.ask, replace(make_request(id=key), audience=audience))
        await wait_until(lambda: _count(hub, len(audiences)), 'every question waiting')
        for person, expected in ((alice, ['a1', 'any', 'a2']), (sam, ['any', 'a2']), (Person(), ['any'])):
            keys: list[str] = []
            cursor: str | None = None
            while True:
                page = await page_pending(hub, limit=1, cursor=cursor, visible_to=person)
                assert page.total == len(expected)
                keys.extend(record.request.key for record in page.records)
                if (cursor := page.next_cursor) is None:
                    break
            assert keys == expected
            assert await count_pending(hub, visible_to=person) == len(expected)
        everyone = await hub.pending_page(limit=500, visible_to=Person('op', sees_all=True))
        assert (everyone.total, len(everyone.records)) == (5, 5)
        group.cancel_scope.cancel()
