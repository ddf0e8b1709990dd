"""Tool approvals in an open inbox: they arrive live (the event stream's `approval_*` events), only on the pages of
the people they are addressed to, leave when decided elsewhere (the CLI), and are paged (keyset, addressed) in the
store, the JSON API and the page.

Real DBOS workers (`request_input_worker.py --approvals`, each run's approval addressed to `owner-<run>`), real
Chromium, and the JSON API as the other person, listening on the event stream for what is not theirs.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest
from cli_support import run_recording
from durable_support import RequestInputWorker
from inbox_browser import authorize, chromium, page_of
from playwright.async_api import expect
from test_approvals import pending_approvals_of
from waits import WAIT

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user._approvals import PendingApproval
from pydantic_ai_ask_user._audience import QuestionContext, audience_includes
from pydantic_ai_ask_user._question_store import page_approvals_in_memory
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._approvals import count_pending_approvals, insert_approval, select_approvals
from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_table
from pydantic_ai_ask_user.dbos._pending_statements import approval_audience_condition
from pydantic_ai_ask_user.dbos._waits import open_wait_row
from pydantic_ai_ask_user.store import BadCursorError
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take


async def _listen(base: str, who: str, heard: list[tuple[str, str]], ready: anyio.Event) -> None:
    """The event stream as `who` receives it, every `(event, data)` pair, for as long as it runs."""
    async with (
        httpx.AsyncClient(base_url=base, headers={'x-user': who}, timeout=None) as client,
        client.stream('GET', 'api/events') as stream,
    ):
        ready.set()
        event = 'message'
        async for line in stream.aiter_lines():
            if line.startswith('event:'):
                event = line.partition(':')[2].strip()
            elif line.startswith('data:'):
                heard.append((event, line.partition(':')[2].strip()))
                event = 'message'


async def test_approvals_arrive_live_only_for_their_audience_leave_when_decided_and_are_paged(
    database_url: str, tmp_path: Path
) -> None:
    workers = {
        run: RequestInputWorker(database_url, tmp_path / run, approvals=True, workflow_id=run) for run in ('la', 'lb')
    }
    async with DBOSQuestionStore(database_url, events_poll_seconds=0.2) as store:
        app = create_app(store, authorize=authorize)
        async with serve(app) as base, chromium() as browser, anyio.create_task_group() as group:
            heard: list[tuple[str, str]] = []
            listening = anyio.Event()
            group.start_soon(_listen, base, 'owner-lb', heard, listening)
            await listening.wait()
            try:
                pages = {}
                for who in ('owner-la', 'owner-lb'):
                    pages[who] = page = await page_of(browser, who)
                    await page.goto(base)
                    await expect(page.locator('#live-status')).to_contain_text('appear here')
                    assert await page.locator('#approvals-wrap').is_hidden()
                with workers['la'], workers['lb']:
                    for worker in workers.values():
                        worker.directory.mkdir()
                        worker.start()
                    found = {a.workflow_id: a for a in await pending_approvals_of(store, 2, list(workers.values()))}
                    mine, theirs = found['la'], found['lb']

                    # Each open page shows its owner's approval, live, and never the other's.
                    for who, approval, other in (('owner-la', mine, theirs), ('owner-lb', theirs, mine)):
                        page = pages[who]
                        row = page.locator(f'#approvals li[data-id="{approval.key}"]')
                        await expect(row).to_contain_text('deploy_to')
                        await expect(row).to_contain_text('"env":"production"')
                        await expect(page.locator('#approvals-wrap')).to_be_visible()
                        assert await page.locator(f'[data-id="{other.key}"]').count() == 0
                        href = await row.locator('a').get_attribute('href')
                        assert href is not None
                        assert href.endswith(f'approvals/{approval.key}')

                    # Decided from the command line: it leaves the open page of its owner.
                    done, _ = await anyio.to_thread.run_sync(
                        lambda: run_recording(
                            tmp_path / 'modules.json', 'answer', mine.key, '--approve', '--db', database_url
                        )
                    )
                    assert done.returncode == 0, done.stderr
                    await expect(pages['owner-la'].locator(f'#approvals li[data-id="{mine.key}"]')).to_have_count(0)
                    await expect(pages['owner-la'].locator('#approvals-wrap')).to_be_hidden()
                    await expect(pages['owner-lb'].locator(f'#approvals li[data-id="{theirs.key}"]')).to_have_count(1)

                    # Paged: one at a time for the operator, in the API and on the page.
                    async with httpx.AsyncClient(base_url=base, headers={'x-user': 'admin'}) as admin:
                        first = (await admin.get('api/approvals', params={'limit': 1})).json()
                        assert first['total'] == 1
                        assert [a['id'] for a in first['approvals']] == [theirs.key]
                        assert first['next_cursor'] is None
                        bad = await admin.get('api/approvals', params={'cursor': 'not-a-cursor'})
                        assert (bad.status_code, bad.json()['error']) == (400, 'bad_cursor')
                        asked = await admin.get('api/requests', params={'limit': 1})
                        question_cursor = asked.json()['next_cursor']
                        if question_cursor is not None:  # a questions' cursor is no approvals' cursor
                            mixed = await admin.get('api/approvals', params={'cursor': question_cursor})
                            assert mixed.status_code == 400
                    # The attacker's stream heard of their own approval, never of the other's, not even its id.
                    assert any(event == 'approval_requested' and theirs.key in data for event, data in heard), heard
                    assert not any(mine.key in data for _, data in heard), heard
                    assert not any(mine.token in data for _, data in heard), heard
                    async with httpx.AsyncClient(base_url=base, headers={'x-user': 'owner-lb'}) as attacker:
                        listing = (await attacker.get('api/approvals')).json()
                        assert listing == {
                            'approvals': [listing['approvals'][0]],
                            'next_cursor': None,
                            'total': 1,
                        }
                        assert listing['approvals'][0]['id'] == theirs.key
            finally:
                group.cancel_scope.cancel()


async def test_the_inbox_pages_approvals_a_page_at_a_time_in_chromium(database_url: str, tmp_path: Path) -> None:
    # Three runs, each with an approval; the operator's inbox at `?limit=1` shows one and loads the rest on "More
    # tool calls", and the pages of the API hold each exactly once; each owner's listing holds only their own.
    runs = ('pa', 'pb', 'pc')
    workers = [RequestInputWorker(database_url, tmp_path / run, approvals=True, workflow_id=run) for run in runs]
    with workers[0], workers[1], workers[2]:
        for worker in workers:
            worker.directory.mkdir()
            worker.start()
        async with DBOSQuestionStore(database_url) as store:
            approvals = await pending_approvals_of(store, 3, workers)
            keys = [a.key for a in sorted(approvals, key=lambda a: (a.created_at, a.key))]
            seen: list[str] = []
            cursor = None
            while True:
                page = await store.pending_approvals_page(limit=2, cursor=cursor)
                assert page.total == 3
                seen += [a.key for a in page.records]
                if (cursor := page.next_cursor) is None:
                    break
            assert seen == keys
            owned = await store.pending_approvals_page(limit=1, visible_to=Person('owner-pb'))
            assert [a.workflow_id for a in owned.records] == ['pb']
            assert (owned.total, owned.next_cursor) == (1, None)
            nobody = await store.pending_approvals_page(visible_to=Person('owner-p'))  # a prefix of every owner
            assert (list(nobody.records), nobody.total) == ([], 0)
            with pytest.raises(BadCursorError):
                await store.pending_approvals_page(cursor='x' * 10)

            app = create_app(store, authorize=authorize)
            async with serve(app) as base, chromium() as browser:
                page = await page_of(browser, 'admin')
                await page.goto(f'{base}?limit=1')
                await expect(page.locator('#live-status')).to_contain_text('appear here')
                rows = page.locator('#approvals li')
                await expect(rows).to_have_count(1)
                for count in (2, 3):
                    await page.click('#more-approvals')
                    await expect(rows).to_have_count(count)
                assert [await row.get_attribute('data-id') for row in await rows.all()] == keys
                await expect(page.locator('#more-approvals-wrap')).to_be_hidden()
                # Without the script, the link leads to the next page of approvals.
                plain = await browser.new_context(java_script_enabled=False, extra_http_headers={'x-user': 'admin'})
                static = await plain.new_page()
                await static.goto(f'{base}?limit=1')
                listed: list[str] = []
                while True:
                    listed += [
                        await row.get_attribute('data-id') or '' for row in await static.locator('#approvals li').all()
                    ]
                    if await static.locator('#more-approvals-wrap').is_hidden():
                        break
                    await static.click('#more-approvals')
                assert listed == keys


async def test_an_approval_leaves_the_open_inbox_at_its_wait_s_deadline(database_url: str, tmp_path: Path) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='ld', timeout=10)
    worker.directory.mkdir()
    async with DBOSQuestionStore(database_url, events_poll_seconds=0.2) as store:
        app = create_app(store, authorize=authorize)
        async with serve(app) as base, chromium() as browser:
            page = await page_of(browser, 'owner-ld')
            await page.goto(base)
            await expect(page.locator('#live-status')).to_contain_text('appear here')
            with worker:
                worker.start()
                rows = page.locator('#approvals li')
                await expect(rows).to_have_count(1)
                # Nobody decides: at the deadline it is withdrawn (and denied to the model), and leaves the page.
                await expect(rows).to_have_count(0)
                await expect(page.locator('#approvals-wrap')).to_be_hidden()
                await anyio.to_thread.run_sync(worker.wait_succeeded)


def test_the_audience_condition_takes_names_never_parameters_per_approval() -> None:
    # Its parameters are the person's names, whatever waits; a name matches whole list elements only.
    condition = approval_audience_condition(Person('ann', groups=['ops']), 'sqlite')
    assert condition is not None
    assert set(condition[1]) == {'addressed', 'first_0', 'later_0', 'first_1', 'later_1'}
    assert approval_audience_condition(Person('root', sees_all=True), 'postgresql') is None
    assert approval_audience_condition(None, 'sqlite') is None


def test_approvals_paged_in_memory_are_addressed_and_keyset() -> None:
    approvals = [
        PendingApproval(f't{i}', 'call_0', 'tool', {}, created_at=float(i % 3), audience=('ann',) if i % 2 else None)
        for i in range(7)
    ]
    everyone: list[str] = []
    cursor = None
    while True:
        page = page_approvals_in_memory(approvals, limit=2, cursor=cursor)
        everyone += [a.key for a in page.records]
        if (cursor := page.next_cursor) is None:
            break
    assert everyone == [a.key for a in sorted(approvals, key=lambda a: (a.created_at, a.key))]
    bob = page_approvals_in_memory(approvals, limit=10, cursor=None, visible_to=Person('bob'))
    assert bob.total == 4
    assert all(a.audience is None for a in bob.records)
    with pytest.raises(BadCursorError):
        page_approvals_in_memory(approvals, limit=1, cursor=json.dumps([1, 2]))


@pytest.mark.parametrize('anyio_backend', ['asyncio'])
def test_the_sql_page_and_count_of_approvals_match_audience_includes_for_hostile_names(
    database_url: str, anyio_backend: str
) -> None:
    # Names an attacker would pick: a context key (`title`), a prefix and an extension of a real name, quotes and
    # brackets, and non-ASCII text; the page and the count in SQL agree with `audience_includes` for each of them.
    audiences: list[tuple[str, ...] | None] = [
        None,
        ('ann',),
        ('ann', 'ops'),
        ('anne',),
        ('an"n', '[x]'),
        ('김민지',),
        ('ops', 'b, "c"'),
    ]
    approvals = [
        PendingApproval(
            f'tok{i}',
            'call_0',
            'tool',
            {'n': i},
            workflow_id=f'wf{i}',
            audience=audience,
            context=QuestionContext(title='ann', summary='"ann", "ops"]'),
        )
        for i, audience in enumerate(audiences)
    ]
    engine = create_engine(database_url)
    ensure_table(engine)
    with engine.begin() as conn:
        for approval in approvals:
            open_wait_row(conn, approval.token, approval.workflow_id)
            insert_approval(conn, approval)
    people = [
        Person(name) for name in ('ann', 'an', 'anne', 'title', 'ops', 'an"n', '[x]', '김민지', 'b, "c"', 'summary')
    ]
    with engine.connect() as conn:
        # In the order they were published (`insert_approval` stamps the time), then by key.
        every = select_approvals(conn, pending=True)
        assert len(every) == len(approvals)
        for person in [*people, Person('x', groups=['ann', 'ops']), None]:
            expected = [stored.key for stored in every if audience_includes(stored.approval.audience, person)]
            assert count_pending_approvals(conn, person) == len(expected), person
            paged: list[str] = []
            after = None
            while True:
                page = select_approvals(conn, pending=True, visible_to=person, after=after, limit=2)
                paged += [stored.key for stored in page]
                if len(page) < 2:
                    break
                after = (page[-1].approval.created_at, page[-1].key)
            assert paged == expected, person
    engine.dispose()
