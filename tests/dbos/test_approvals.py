"""Tool approvals as pending items beside questions in `DBOSQuestionStore`: listed with the tool's schema, decided
(approve, deny with a reason, edit the arguments, checked against the schema), all or nothing per wait.

Real DBOS workers (`request_input_worker.py --approvals`): two runs whose models both use the call ids `call_0`
(the approval) and `call_1` (the question), so an approval is told apart by its wait, never its call id.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import httpx
import pytest
from cli_support import run_recording
from durable_support import RequestInputWorker, pick
from inbox_browser import authorize, chromium, page_of
from waits import wait_until

from pydantic_ai_ask_user import TIMED_OUT, Person
from pydantic_ai_ask_user._approvals import DEFAULT_DENIAL, TIMED_OUT_DENIAL
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.store import (
    AlreadyAnsweredError,
    ApprovalDecision,
    PendingApproval,
    UnknownRequestError,
    WithdrawnError,
)
from pydantic_ai_ask_user.web import create_app, serve

pytestmark = pytest.mark.anyio


async def pending_approvals_of(
    store: DBOSQuestionStore, count: int, workers: Sequence[RequestInputWorker]
) -> Sequence[PendingApproval]:
    """The approvals pending in `store`, once there are `count`; fails at once if a worker dies first."""

    async def enough() -> Sequence[PendingApproval] | None:
        for worker in workers:
            assert worker.process is None or worker.process.poll() is None, worker.log_text()
        approvals = await store.pending_approvals()
        questions = await store.pending_records()
        return approvals if len(approvals) >= count and len(questions) >= count else None

    return await wait_until(enough, f'{count} pending approval(s) and question(s)')


async def test_two_runs_with_the_same_call_ids_each_get_their_own_decision(database_url: str, tmp_path: Path) -> None:
    workers = {
        run: RequestInputWorker(database_url, tmp_path / run, approvals=True, workflow_id=run)
        for run in ('ri-0', 'ri-1')
    }
    with workers['ri-0'], workers['ri-1']:
        for worker in workers.values():
            worker.directory.mkdir()
            worker.start()
        async with DBOSQuestionStore(database_url) as store:
            approvals = await pending_approvals_of(store, 2, list(workers.values()))
            by_run = {approval.workflow_id: approval for approval in approvals}
            assert sorted(by_run) == ['ri-0', 'ri-1']
            assert {approval.tool_call_id for approval in approvals} == {'call_0'}
            assert len({approval.key for approval in approvals}) == 2  # the same call id, two waits, two keys
            first, second = by_run['ri-0'], by_run['ri-1']
            assert (first.tool_name, first.args) == ('deploy_to', {'env': 'production', 'replicas': 3})
            assert first.parameters is not None
            assert first.parameters['properties']['env']['enum'] == ['staging', 'production']
            assert first.run_id is not None
            assert first.run_id != second.run_id
            assert await store.get_approval(first.key) == first
            # Addressed and in context as the run's question is: each owner sees only their own run's approval.
            assert first.audience == ('owner-ri-0',)
            assert first.context is not None
            assert first.context.title == 'Release of ri-0'
            assert await store.pending_approvals(visible_to=Person('owner-ri-1')) == [second]
            assert await store.pending_approvals(visible_to=Person('mallory', groups=['ri-0'])) == []
            assert len(await store.pending_approvals(visible_to=Person('op', sees_all=True))) == 2
            questions = {record.workflow_id: record for record in await store.pending_records()}

            # Edited arguments that do not fit the tool's schema: refused, saying what is wrong, nothing recorded.
            with pytest.raises(ValueError, match=r'do not fit the parameters of deploy_to at env: .moon. is not one'):
                await store.decide(first.key, ApprovalDecision.edit({'env': 'moon', 'replicas': 3}))
            with pytest.raises(ValueError, match=r"'replicas' is a required property"):
                await store.decide(first.key, ApprovalDecision.edit({'env': 'staging'}))
            with pytest.raises(ValueError, match=r'U\+001B'):
                await store.decide(first.key, ApprovalDecision.deny('no\x1b[2J'))
            assert await store.get_approval(first.key) == first

            # All or nothing: a fitting decision with an answer that does not fit is refused whole.
            wrong = pick('Oracle')
            with pytest.raises(ValueError, match='Oracle'):
                await store.decide_wait({first.key: ApprovalDecision.approve()}, {questions['ri-0'].key: wrong})
            assert await store.get_approval(first.key) == first
            # Items of two waits are never decided together.
            with pytest.raises(ValueError, match='all be of one wait'):
                await store.decide_wait(
                    {first.key: ApprovalDecision.approve()}, {questions['ri-1'].key: pick('SQLite')}
                )
            assert {approval.key for approval in await store.pending_approvals()} == {first.key, second.key}

            # Run ri-0: the approval alone first (recorded, the run still waits for its question), then the answer.
            await store.decide(first.key, ApprovalDecision.edit({'env': 'staging', 'replicas': 1}, decided_by='ana'))
            with pytest.raises(AlreadyAnsweredError):
                await store.decide(first.key, ApprovalDecision.approve())
            await store.respond(questions['ri-0'].key, pick('SQLite'))
            # Run ri-1: both in one call, denied with a reason.
            await store.decide_wait(
                {second.key: ApprovalDecision.deny('not on a Friday', decided_by='bo')},
                {questions['ri-1'].key: pick('PostgreSQL')},
            )
            assert await store.pending_approvals() == []
            with pytest.raises(UnknownRequestError):
                await store.get_approval('0' * 32)
        for worker in workers.values():
            await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert workers['ri-0'].output() == {'call_0': 'deployed 1 to staging', 'call_1': {'Database': ['SQLite']}}
    assert workers['ri-0'].lines('deployed.txt') == [json.dumps({'env': 'staging', 'replicas': 1})]
    assert workers['ri-1'].output() == {'call_0': 'not on a Friday', 'call_1': {'Database': ['PostgreSQL']}}
    assert workers['ri-1'].lines('deployed.txt') == []
    who = [json.loads(line) for line in workers['ri-1'].lines('answered_by.txt')]
    assert who
    assert who[0]['call_0'] == 'bo'
    assert DEFAULT_DENIAL not in json.dumps(workers['ri-1'].output())


async def test_ask_user_pending_shows_approvals_and_answer_decides_a_wait_all_or_nothing(
    database_url: str, tmp_path: Path
) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='ri-cli')
    worker.directory.mkdir()
    sqlite = database_url.startswith('sqlite')
    with worker:
        worker.start()
        async with DBOSQuestionStore(database_url) as store:
            [approval] = await pending_approvals_of(store, 1, [worker])
            [question] = await store.pending_records()

        def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            done, heavy = run_recording(tmp_path / 'modules.json', *args, '--db', database_url, stdin=stdin)
            if sqlite:  # on a SQLite file: the standard library's sqlite3, neither DBOS, Pydantic AI nor SQLAlchemy
                assert heavy == set(), (args, heavy)
            return done

        listed = await anyio.to_thread.run_sync(lambda: cli('pending'))
        assert listed.returncode == 0, listed.stderr
        assert f'{approval.key}  approval' in listed.stdout
        assert '  for owner-ri-cli\n  Release of ri-cli\n' in listed.stdout
        others = await anyio.to_thread.run_sync(lambda: cli('pending', '--for', 'someone-else'))
        assert approval.key not in others.stdout
        mine = await anyio.to_thread.run_sync(lambda: cli('pending', '--for', 'owner-ri-cli'))
        assert approval.key in mine.stdout
        assert 'run deploy_to {"env":"production","replicas":3}?  call call_0' in listed.stdout
        lines = [
            json.loads(line)
            for line in (await anyio.to_thread.run_sync(lambda: cli('pending', '--json'))).stdout.splitlines()
        ]
        [shown] = [line for line in lines if line.get('kind') == 'approval']
        assert shown['id'] == approval.key
        assert shown['token'] == approval.token
        assert (shown['tool_name'], shown['args']) == ('deploy_to', {'env': 'production', 'replicas': 3})
        assert shown['parameters']['required'] == ['env', 'replicas']
        assert shown['audience'] == ['owner-ri-cli']
        assert shown['context']['title'] == 'Release of ri-cli'
        # Approvals and questions are one listing: one `kind` on every record, one total, and pages that go on
        # from the approvals (the oldest first) to the questions, each on one page.
        assert [line.get('kind') for line in lines] == ['approval', 'question', None]
        assert lines[-1]['total'] == 2
        first = [json.loads(line) for line in (await anyio.to_thread.run_sync(
            lambda: cli('pending', '--json', '--limit', '1'))).stdout.splitlines()]  # fmt: skip
        assert [(line['kind'], line['id']) for line in first[:-1]] == [('approval', approval.key)]
        assert first[-1]['total'] == 2
        cursor: str = first[-1]['next_cursor']
        second = [json.loads(line) for line in (await anyio.to_thread.run_sync(
            lambda: cli('pending', '--json', '--limit', '1', '--cursor', cursor))).stdout.splitlines()]  # fmt: skip
        assert [(line['kind'], line['id']) for line in second[:-1]] == [('question', question.key)]
        assert (second[-1]['total'], second[-1].get('next_cursor')) == (2, None)
        counted = await anyio.to_thread.run_sync(lambda: cli('pending', '--limit', '1'))
        assert '1 of 2 waiting items shown; the next ones: ask-user pending --db ' in counted.stderr

        # Refused, nothing recorded: arguments that do not fit, a wait decided in part, an unknown call.
        refused = await anyio.to_thread.run_sync(
            lambda: cli('answer', approval.key, '--args', '{"env": "moon", "replicas": 1}')
        )
        assert refused.returncode == 2
        assert "at env: 'moon' is not one of ['staging', 'production']" in refused.stderr
        part = await anyio.to_thread.run_sync(
            lambda: cli('answer', approval.token, '--json', '-', stdin='{"call_0": "approve"}')
        )
        assert part.returncode == 2
        assert "a wait is decided whole: it leaves out 'call_1'" in part.stderr
        foreign = '{"call_0": "approve", "call_1": {"Database": ["SQLite"]}, "call_9\\u001b[2J": "approve"}'
        unknown = await anyio.to_thread.run_sync(lambda: cli('answer', approval.token, '--json', '-', stdin=foreign))
        assert unknown.returncode == 2
        assert "'call_9\\x1b[2J': no pending item" in unknown.stderr
        assert '\x1b' not in unknown.stderr
        async with DBOSQuestionStore(database_url) as store:
            assert await store.get_approval(approval.key) == approval
            assert [record.key for record in await store.pending_records()] == [question.key]

        # One call decides the approval (edited) and answers the question, by call id.
        decision = '{"call_0": {"args": {"env": "staging", "replicas": 2}}, "call_1": {"Database": ["sqlite"]}}'
        done = await anyio.to_thread.run_sync(lambda: cli('answer', approval.token, '--json', '-', stdin=decision))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {
            'token': approval.token,
            'decided': {
                'call_0': {'decision': 'edited', 'args': {'env': 'staging', 'replicas': 2}},
                'call_1': {'answered': True},
            },
        }
        again = await anyio.to_thread.run_sync(lambda: cli('answer', approval.key, '--approve'))
        assert again.returncode == 6
        assert 'has already been decided' in again.stderr
        await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output() == {'call_0': 'deployed 2 to staging', 'call_1': {'Database': ['SQLite']}}
    assert worker.lines('deployed.txt') == [json.dumps({'env': 'staging', 'replicas': 2})]


def test_pending_draws_no_character_of_the_model_s() -> None:
    from pydantic_ai_ask_user._cli.approvals import approval_lines

    approval = PendingApproval(
        token='dbos1.x.wf\x1b]0;t\x07',
        tool_call_id='c\x1b[2J',
        tool_name='rm\x1b[31m',
        args={'path': '/\x1b]8;;http://evil\x07x\u202e'},
        workflow_id='wf\r\n',
    )
    text = '\n'.join(approval_lines(approval))
    assert '\x1b' not in text
    assert '\x07' not in text
    assert '\u202e' not in text
    assert '\r' not in text
    assert len(text.splitlines()) == 3


async def test_the_web_inbox_lists_and_decides_approvals_in_chromium(database_url: str, tmp_path: Path) -> None:
    # Two runs, each addressed to its owner: each owner sees only their own approval, decides it in the browser,
    # and the other's address is a 404, on the page and in the JSON API.
    workers = {
        run: RequestInputWorker(database_url, tmp_path / run, approvals=True, workflow_id=run)
        for run in ('ri-0', 'ri-1')
    }

    with workers['ri-0'], workers['ri-1']:
        for worker in workers.values():
            worker.directory.mkdir()
            worker.start()
        async with DBOSQuestionStore(database_url) as store:
            approvals = {a.workflow_id: a for a in await pending_approvals_of(store, 2, list(workers.values()))}
            questions = {record.workflow_id: record for record in await store.pending_records()}
            mine, theirs = approvals['ri-0'], approvals['ri-1']
            app = create_app(store, authorize=authorize)
            async with serve(app) as base, chromium() as browser:
                page = await page_of(browser, 'owner-ri-0')
                context = page.context
                await page.goto(base)
                listed = page.locator('#approvals li')
                assert await listed.count() == 1
                assert await listed.first.get_attribute('data-id') == mine.key
                assert 'deploy_to' in await listed.first.inner_text()
                await page.click(f'#approvals a[href$="{mine.key}"]')
                assert await page.inner_text('#tool') == 'deploy_to'
                assert json.loads(await page.text_content('#args') or '') == {'env': 'production', 'replicas': 3}
                assert 'Release of ri-0' in await page.inner_text('#context')
                # Arguments that do not fit: the page again, saying why, as a message.
                await page.click('#edit-choice summary')  # the other choices open on demand
                await page.fill('#edited', '{"env": "moon", "replicas": 1}')
                await page.click('#edit')
                error = await page.inner_text('#error-summary')
                assert "at env: 'moon' is not one of ['staging', 'production']" in error
                assert 'Traceback' not in await page.content()
                assert await store.get_approval(mine.key) == mine  # nothing recorded
                await page.fill('#edited', '{"env": "staging", "replicas": 1}')
                await page.click('#edit')
                assert await page.inner_text('h1') == 'Approved with your arguments: deploy_to runs'
                assert 'staging' in await page.inner_text('#ran-with')
                # The other owner's approval does not exist for this person.
                other = await page.goto(f'{base}approvals/{theirs.key}')
                assert other is not None
                assert other.status == 404
                api = await context.request.get(f'{base}api/approvals/{theirs.key}')
                assert api.status == 404
                denied = await context.request.post(
                    f'{base}api/approvals/{theirs.key}/decide',
                    data=json.dumps('approve'),
                    headers={'content-type': 'application/json'},
                )
                assert denied.status == 404
                listing = await (await context.request.get(f'{base}api/approvals')).json()
                assert listing == {'approvals': [], 'next_cursor': None, 'total': 0}
            assert await store.get_approval(theirs.key) == theirs
            await store.respond(questions['ri-0'].key, pick('SQLite'))
            # The other owner decides through the JSON API: denied, with a reason.
            async with serve(app) as base, httpx.AsyncClient(base_url=base, headers={'x-user': 'owner-ri-1'}) as client:
                listed_json = (await client.get('api/approvals')).json()['approvals']
                assert [item['id'] for item in listed_json] == [theirs.key]
                refused = await client.post(f'api/approvals/{theirs.key}/decide', json={'args': {'env': 'moon'}})
                assert refused.status_code == 422
                decided = await client.post(f'api/approvals/{theirs.key}/decide', json={'deny': 'not on a Friday'})
                assert decided.json() == {'id': theirs.key, 'status': 'denied'}
            await store.respond(questions['ri-1'].key, pick('SQLite'))
        for worker in workers.values():
            await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert workers['ri-0'].output()['call_0'] == 'deployed 1 to staging'
    assert workers['ri-1'].output()['call_0'] == 'not on a Friday'
    who = [json.loads(line) for line in workers['ri-0'].lines('answered_by.txt')]
    assert who[0]['call_0'] == 'owner-ri-0'


async def test_an_approval_nobody_decides_is_denied_at_the_deadline_and_a_late_decision_is_refused(
    database_url: str, tmp_path: Path
) -> None:
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='ri-late', timeout=3)
    worker.directory.mkdir()
    with worker:
        worker.start()
        async with DBOSQuestionStore(database_url) as store:
            [approval] = await pending_approvals_of(store, 1, [worker])
            await anyio.to_thread.run_sync(worker.wait_succeeded)
            with pytest.raises(WithdrawnError):
                await store.decide(approval.key, ApprovalDecision.approve())
            assert await store.pending_approvals() == []
    assert worker.output() == {'call_0': TIMED_OUT_DENIAL, 'call_1': TIMED_OUT}
    assert worker.lines('deployed.txt') == []


async def test_a_pending_approval_and_a_missing_one_cost_the_store_the_same_so_a_foreign_one_does_not_show(
    database_url: str, tmp_path: Path
) -> None:
    # The web tells a person an approval they may not see is unknown, after reading it: if a row that exists cost
    # more to read than a missing one (a second query ran only for it), the time of the 404 would tell it exists.
    worker = RequestInputWorker(database_url, tmp_path / 'run', approvals=True, workflow_id='timed')
    with worker:
        worker.directory.mkdir()
        worker.start()
        async with DBOSQuestionStore(database_url) as store:
            [approval] = await pending_approvals_of(store, 1, [worker])
            missing = approval.key[:-4] + 'ffff'

            async def took(key: str) -> float:
                started = time.perf_counter()
                with contextlib.suppress(UnknownRequestError):
                    await store.get_approval(key)
                return time.perf_counter() - started

            existing: list[float] = []
            absent: list[float] = []
            for _ in range(200):  # interleaved, so load on the machine falls on both alike
                existing.append(await took(approval.key))
                absent.append(await took(missing))
            # The least of each: load only ever adds time, and under heavy load (CI at a load average of 15 on two
            # cores) the medians drifted apart by chance (1.57x once), while a second query would double the least.
            ratio = min(existing) / min(absent)
            assert ratio < 1.5, f'a pending approval took {ratio:.2f}x as long to read as a missing one'
