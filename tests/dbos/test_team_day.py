"""A support team's day on the team inbox, end to end (issue 35): a question forwarded, one escalated after its timer,
an approval answered with *respond*, one ignored, and each found again in the history by search.

Real parts: four DBOS-durable agent runs in worker processes of their own (`worker.py`: a question for `alice`, and
one for `team:support` that escalates to `team:oncall`; `request_input_worker.py --approvals`: a `deploy_to` call
that needs approval and a question, twice), `ask-user inbox` serving their database, the people signed in with
`ask-user inbox link`, and the command line for what one of them does at a terminal. On SQLite the people act in
Chromium; on PostgreSQL through the JSON API, which keeps the second run of the day short: the pages are the same
whatever the database, and the store's work behind them is what the second run checks. Every wait is for a state (a
row on a page, a record in the store, a run's end), bounded by `WAIT`.

On SQLite the test also takes the docs' screenshots of the search form on the waiting list, the Forward form and the
History tab with a search applied, at 1280 and 390 px (`test-artifacts/screenshots/`, copied into `docs/images/`).
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from cli_support import run_cli_in_process, run_cli_process
from durable_support import RequestInputWorker, Worker
from inbox_browser import chromium
from inbox_support import inbox
from playwright.async_api import Page, expect
from test_cli_inbox import signed_in
from waits import WAIT, wait_until

from pydantic_ai_ask_user._approvals import IGNORED_DENIAL, RESPONDED_DENIAL
from pydantic_ai_ask_user.dbos import DBOSQuestionStore, StoredRequest
from pydantic_ai_ask_user.store import PendingApproval

pytestmark = pytest.mark.anyio

expect.set_options(timeout=WAIT * 1000)  # the machine is shared: an assertion waits as long as a page may take

SCREENSHOTS = Path(__file__).resolve().parents[2] / 'test-artifacts' / 'screenshots'
"""Where the screenshots go (the docs' images are copies of them)."""

ESCALATE_AFTER = 2.0
"""How long the second question waits for `team:support` before it escalates to `team:oncall`, in seconds."""

HANDOFF_NOTE = 'Bob looks after billing this week.'
"""What alice writes when she forwards the first question to bob."""

REPLY = 'Ship to staging first; production after the freeze.'
"""What the owner of `release-7` replies instead of approving its deploy."""


LAID_OUT = '() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))'
"""Resolves once the page has been laid out and painted at its new size (two frames later)."""


async def _screenshots(page: Page, name: str) -> None:
    """`name-1280.png` and `name-390.png` of `page` as it is, checked not to scroll sideways at either width."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        await page.set_viewport_size({'width': width, 'height': 720})
        await page.evaluate(LAID_OUT)
        wide = await page.evaluate('document.documentElement.scrollWidth')
        assert wide <= width, f'{name} scrolls sideways at {width} px: {wide} px wide'
        await page.screenshot(path=str(SCREENSHOTS / f'{name}-{width}.png'), full_page=True)
    await page.set_viewport_size({'width': 1280, 'height': 720})


async def _search(page: Page, **fields: str) -> None:
    """Fill the page's search form (folded beside its heading) with `fields` and submit it."""
    box = page.locator('#search-box')
    if await box.get_attribute('open') is None:
        await box.locator('summary').click()
    for name, value in fields.items():
        if name == 'kind':
            await page.locator('#search select[name="kind"]').select_option(value)
        else:
            await page.locator(f'#search input[name="{name}"]').fill(value)
    async with page.expect_navigation():  # a GET form: the next page is the search's
        await page.locator('#search button[type="submit"]').click()
    await expect(box).to_have_attribute('open', '')  # open while a search is active


async def _answer(page: Page, base: str, key: str, label: str) -> None:
    """On `page`'s inbox, open the question `key` (its row live or after a reload) and pick `label`."""
    await page.locator(f'#pending li[data-id="{key}"] a').click()
    await page.get_by_label(label).check()
    await page.get_by_role('button', name='Submit').click()
    await expect(page.get_by_text('Thank you, your answer was sent')).to_be_visible()
    await page.goto(base)


async def _cli(*args: str) -> tuple[int, str, str]:
    """`ask-user ARGS` run in this process (its exit code, output and errors): the commands the test reads with,
    without an interpreter's start each (the one that stands for a person at a terminal runs as a process)."""
    return await anyio.to_thread.run_sync(lambda: run_cli_in_process(list(args)))


async def _link(*args: str) -> str:
    """The sign-in link `ask-user inbox link ARGS` prints (given `--key-file`, it needs no config directory)."""
    code, out, err = await _cli('inbox', 'link', *args)
    assert code == 0, err
    [printed] = out.splitlines()
    return printed


async def _history(client: httpx.AsyncClient, **query: str) -> list[dict[str, Any]]:
    """`GET /api/history` as the person signed in on `client`, narrowed by `query`."""
    response = await client.get('api/history', params=query)
    assert response.status_code == 200, response.text
    return response.json()['history']


async def _waiting(client: httpx.AsyncClient, **query: str) -> list[str]:
    """The ids of the questions `GET /api/requests` lists for the person signed in on `client`."""
    response = await client.get('api/requests', params=query)
    assert response.status_code == 200, response.text
    return [request['id'] for request in response.json()['requests']]


def _pick(label: str) -> dict[str, Any]:
    """The answer to the runs' one question, `Database`, that picks `label`, as `POST .../answer` takes it."""
    return {'answers': [{'header': 'Database', 'selected': [label]}]}


PEOPLE = (
    ('alice', '--group', 'team:support'),
    ('bob', '--group', 'team:support'),
    ('carol', '--group', 'team:oncall'),
    ('owner-release-7',),
    ('lead', '--admin'),
)
"""Who works in the inbox today, with the options of their link: support, on call, a release's owner, and the lead,
who sees every item."""


@dataclass
class Day:
    """The day's inbox: where it serves, how links are made for it, and what the runs asked."""

    base: str
    """Where `ask-user inbox` serves."""

    source: list[str]
    """`--db URL --key-file FILE`: what `ask-user inbox link` and the other commands take."""

    questions: dict[str, StoredRequest]
    """The waiting questions, by workflow id (`order-1042-0`, `order-1043-0`, `release-7`, `release-8`)."""

    approvals: dict[str, PendingApproval]
    """The waiting approvals, by workflow id (`release-7`, `release-8`)."""

    @property
    def refund(self) -> StoredRequest:
        """Alice's question, which she forwards to bob."""
        return self.questions['order-1042-0']

    @property
    def parcel(self) -> StoredRequest:
        """`team:support`'s question, which escalates to `team:oncall`."""
        return self.questions['order-1043-0']

    async def client(self, stack: AsyncExitStack, who: str, *options: str) -> httpx.AsyncClient:
        """An HTTP client signed in as `who` with a link of their own, as a browser opening it is (closed by `stack`)."""
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=self.base, timeout=WAIT))
        signed = await client.get(await _link(who, *options, *self.source), headers={'sec-fetch-site': 'none'})
        assert signed.status_code == 303, signed.text
        return client


async def _in_chromium(day: Day, pages: dict[str, Page]) -> None:
    """The people's part of the day in Chromium, with the screenshots of the docs."""
    alice, bob, carol, owner, lead = (pages[who] for who, *_ in PEOPLE)
    refund, parcel = day.refund, day.parcel

    # The lead looks over what waits: the search form, open on the waiting list.
    await expect(lead.locator('#pending li')).to_have_count(4)
    await expect(lead.locator('#approvals li')).to_have_count(2)
    await _search(lead, q='order')
    await expect(lead.locator('#pending li')).to_have_count(2)
    await _screenshots(lead, 'inbox-search')

    # Alice forwards the refund to bob, with a note; it leaves her inbox and reaches his.
    await alice.locator(f'#pending li[data-id="{refund.key}"] a').click()
    await alice.click('#forward-choice summary')
    await alice.fill('#forward-to', 'bob')
    await alice.fill('#forward-note', HANDOFF_NOTE)
    await _screenshots(alice, 'forward')
    await alice.click('#forward')
    await expect(alice.locator('h1')).to_have_text('Forwarded')
    await expect(alice.locator('main')).to_contain_text('It now waits for bob.')
    await alice.goto(day.base)
    await expect(alice.locator(f'#pending li[data-id="{parcel.key}"]')).to_have_count(1)
    await expect(alice.locator(f'#pending li[data-id="{refund.key}"]')).to_have_count(0)
    await bob.locator(f'#pending li[data-id="{refund.key}"] a').click()
    await expect(bob.locator('#handoffs li')).to_have_text(f'alice to bob: {HANDOFF_NOTE}')
    await bob.goto(day.base)
    await _answer(bob, day.base, refund.key, 'SQLite')

    # Nobody of team:support answers the parcel: at its timer it escalates, and reaches carol's inbox.
    await expect(carol.locator(f'#pending li[data-id="{parcel.key}"]')).to_have_count(1)
    await _answer(carol, day.base, parcel.key, 'PostgreSQL')

    # The owner of release-7 answers its deploy with words instead, and its question.
    await owner.locator(f'#approvals li[data-id="{day.approvals["release-7"].key}"] a').click()
    await expect(owner.locator('#tool')).to_have_text('deploy_to')
    await owner.click('#respond-choice summary')
    await owner.fill('#response', REPLY)
    await owner.click('#respond')
    await expect(owner.locator('h1')).to_have_text('Replied: deploy_to does not run')
    await owner.goto(day.base)
    await _answer(owner, day.base, day.questions['release-7'].key, 'SQLite')


async def _history_tab(day: Day, lead: Page) -> None:
    """The lead finds each of the four again in Chromium's History tab, by search."""
    await lead.goto(day.base)
    await lead.get_by_role('link', name='History', exact=True).click()
    rows = lead.locator('#history > li')
    await expect(rows).to_have_count(6)  # four questions (two of them the approvals' runs'), two approvals
    await _search(lead, q='refund')
    await expect(rows).to_have_count(1)
    await expect(rows).to_have_attribute('data-id', day.refund.key)
    await expect(rows.locator('.outcome')).to_have_text('Answered')
    await expect(rows.locator('.by')).to_have_text('by bob')
    await rows.locator('summary').click()
    await expect(rows.locator('.handoff')).to_have_text(f'alice to bob: {HANDOFF_NOTE}')
    await expect(rows.get_by_text('Database: SQLite')).to_be_visible()
    await _screenshots(lead, 'history-search')

    await _search(lead, q='', addressee='team:oncall')
    await expect(rows).to_have_count(1)
    await expect(rows).to_have_attribute('data-id', day.parcel.key)
    await expect(rows.locator('.by')).to_have_text('by carol')
    await rows.locator('summary').click()
    await expect(rows.locator('.handoff')).to_contain_text('Escalated: unanswered after 2 seconds.')

    await _search(lead, addressee='', kind='approval', q='release-7')
    await expect(rows).to_have_count(1)
    await expect(rows).to_have_attribute('data-id', day.approvals['release-7'].key)
    await expect(rows.locator('.outcome')).to_have_text('Replied instead')
    await expect(rows.locator('.by')).to_have_text('by owner-release-7')
    await rows.locator('summary').click()
    await expect(rows.get_by_text(REPLY)).to_be_visible()

    await _search(lead, q='release-8')
    await expect(rows).to_have_count(1)
    await expect(rows).to_have_attribute('data-id', day.approvals['release-8'].key)
    await expect(rows.locator('.outcome')).to_have_text('Ignored')


async def _through_the_api(day: Day, people: dict[str, httpx.AsyncClient]) -> None:
    """The people's part of the day through the JSON API, each signed in with their link."""
    alice, bob, carol, owner, lead = (people[who] for who, *_ in PEOPLE)
    refund, parcel = day.refund, day.parcel

    assert sorted(await _waiting(lead, q='order')) == sorted([refund.key, parcel.key])

    forwarded = await alice.post(f'api/requests/{refund.key}/forward', json={'to': ['bob'], 'note': HANDOFF_NOTE})
    assert forwarded.status_code == 200, forwarded.text
    assert refund.key not in await _waiting(alice)
    shown = (await bob.get(f'api/requests/{refund.key}')).json()
    assert [(each['by'], each['note']) for each in shown['handoffs']] == [('alice', HANDOFF_NOTE)]
    assert (await bob.post(f'api/requests/{refund.key}/answer', json=_pick('SQLite'))).status_code == 200

    async def escalated() -> bool:
        return parcel.key in await _waiting(carol)

    await wait_until(escalated, 'the parcel to escalate to carol')
    assert (await carol.post(f'api/requests/{parcel.key}/answer', json=_pick('PostgreSQL'))).status_code == 200

    decided = await owner.post(f'api/approvals/{day.approvals["release-7"].key}/decide', json={'respond': REPLY})
    assert decided.status_code == 200, decided.text
    answered = await owner.post(f'api/requests/{day.questions["release-7"].key}/answer', json=_pick('SQLite'))
    assert answered.status_code == 200, answered.text


async def test_a_support_team_s_day_in_the_inbox(database_url: str, tmp_path: Path) -> None:
    in_chromium = database_url.startswith('sqlite')
    forwarded = Worker(
        database_url, tmp_path / 'forwarded', prefix='order-1042', audience='alice', title='Refund for order 1042'
    )
    escalated = Worker(
        database_url,
        tmp_path / 'escalated',
        prefix='order-1043',
        audience='team:support',
        title='Late parcel, order 1043',
        escalate=ESCALATE_AFTER,
    )
    replied = RequestInputWorker(database_url, tmp_path / 'replied', approvals=True, workflow_id='release-7')
    ignored = RequestInputWorker(database_url, tmp_path / 'ignored', approvals=True, workflow_id='release-8')
    workers = (forwarded, escalated, replied, ignored)
    db = ['--db', database_url]
    source = [*db, '--key-file', str(tmp_path / 'inbox-key.json')]
    with forwarded, escalated, replied, ignored:
        async with (
            DBOSQuestionStore(database_url) as store,  # first: it makes the table the inbox reads
            inbox(tmp_path, *source, '--title', 'Support') as served,
            AsyncExitStack() as stack,
        ):
            # The morning: the runs start asking while everyone opens the inbox from their link.
            for worker in workers:
                worker.directory.mkdir()
                worker.start()
            pages: dict[str, Page] = {}
            if in_chromium:
                browser = await stack.enter_async_context(chromium())
                for who, *options in PEOPLE:
                    pages[who] = page = await signed_in(browser, await _link(who, *options, *source))
                    await expect(page.locator('#live-status')).to_contain_text('appear here')

            async def asked() -> tuple[dict[str, StoredRequest], dict[str, PendingApproval]] | None:
                for worker in workers:
                    assert worker.running(), worker.log_text()
                questions = {record.workflow_id: record for record in await store.pending_records()}
                approvals = {approval.workflow_id or '': approval for approval in await store.pending_approvals()}
                return (questions, approvals) if len(questions) == 4 and len(approvals) == 2 else None

            day = Day(served.base, source, *await wait_until(asked, 'four questions and two approvals waiting'))
            people = {who: await day.client(stack, who, *options) for who, *options in PEOPLE}
            if in_chromium:
                await _in_chromium(day, pages)
            else:
                await _through_the_api(day, people)

            # release-8's deploy is a duplicate: ignored at a terminal, its question answered there too.
            decided = await anyio.to_thread.run_sync(
                lambda: run_cli_process('answer', day.approvals['release-8'].key, '--ignore', *db)
            )
            assert decided.returncode == 1, decided.stderr  # decided, and the call did not run
            assert json.loads(decided.stdout)['decision'] == 'ignored'
            release_8 = day.questions['release-8'].key
            answered = await anyio.to_thread.run_sync(
                lambda: run_cli_process('answer', release_8, '--json', '-', *db, stdin='{"Database": "SQLite"}')
            )
            assert answered.returncode == 0, answered.stderr

            # Each run got one answer or decision, and read what the docs say it reads.
            for worker in workers:
                await anyio.to_thread.run_sync(worker.wait_succeeded)
            assert json.loads(forwarded.outputs()['order-1042-0']) == {'Database': ['SQLite']}
            assert forwarded.calls() == ['ask order-1042-0', 'final order-1042-0']  # one answer, one model turn
            assert json.loads(escalated.outputs()['order-1043-0']) == {'Database': ['PostgreSQL']}
            assert replied.output() == {
                'call_0': RESPONDED_DENIAL.format(response=REPLY),
                'call_1': {'Database': ['SQLite']},
            }
            assert ignored.output() == {'call_0': IGNORED_DENIAL, 'call_1': {'Database': ['SQLite']}}
            assert not (replied.directory / 'deployed.txt').exists()
            assert not (ignored.directory / 'deployed.txt').exists()

            # The evening: each of the four found again by search, with who, when and what, and the hand-offs.
            if in_chromium:
                await _history_tab(day, pages['lead'])
            lead, bob, carol = people['lead'], people['bob'], people['carol']
            (record,) = await _history(lead, q='refund')
            assert (record['id'], record['outcome'], record['by']) == (day.refund.key, 'answered', 'bob')
            assert record['response']['answers'] == [{'header': 'Database', 'selected': ['SQLite']}]
            assert [(each['by'], each['from'], each['to'], each['note']) for each in record['handoffs']] == [
                ('alice', ['alice'], ['bob'], HANDOFF_NOTE)
            ]
            assert record['asked_at'] <= record['handoffs'][0]['at'] <= record['finished_at']
            # Bob's own history: the refund he answered, and the parcel, addressed to his group too.
            assert {record['id'] for record in await _history(bob)} == {day.refund.key, day.parcel.key}
            (record,) = await _history(carol, addressee='team:oncall')
            assert (record['id'], record['by']) == (day.parcel.key, 'carol')
            (escalation,) = record['handoffs']
            assert (escalation['by'], escalation['from'], escalation['to']) == (
                None,
                ['team:support'],
                ['team:oncall', 'team:support'],
            )
            assert escalation['note'] == 'Escalated: unanswered after 2 seconds.'
            assert escalation['at'] >= record['asked_at'] + ESCALATE_AFTER
            (record,) = await _history(lead, kind='approval', q='release-7')
            assert (record['outcome'], record['by'], record['decision']['response']) == (
                'responded',
                'owner-release-7',
                REPLY,
            )
            code, out, err = await _cli('history', *db, '--kind', 'approval', '--search', 'release-8', '--json')
            assert code == 0, err
            (record, trailer) = [json.loads(line) for line in out.splitlines()]
            assert (record['id'], record['outcome'], trailer['total']) == (day.approvals['release-8'].key, 'ignored', 1)
            assert '@' in record['by']  # the OS user at the host of the terminal that ignored it
            code, out, err = await _cli('history', *db, '--search', 'late parcel')
            assert code == 0, err
            assert 'carol' in out
            assert 'Escalated: unanswered after 2 seconds.' in out
