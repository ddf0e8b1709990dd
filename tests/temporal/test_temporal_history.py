"""The history on Temporal, read back from the workflows' own event histories: a question answered by alice, an
approval denied by bob with his reason, a question withdrawn at its deadline; paged, each once; seen by whom it
concerns; and through `ask-user history --temporal`. On the real Temporal dev server.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
from temporal_support import RECEIPT_KEY, AnsweredAskWorkflow, ApprovalWorkflow, TimedAskWorkflow
from temporal_testing import ANSWER, ask_user_cli, start_run, waiting_question
from temporalio.client import Client
from waits import wait_until

from pydantic_ai_ask_user import Person
from pydantic_ai_ask_user.store import (
    ApprovalDecision,
    BadCursorError,
    FinishedRecord,
    HistoryFilter,
    PendingApproval,
    record_receipt,
)
from pydantic_ai_ask_user.temporal import TemporalQuestionStore
from pydantic_ai_ask_user.web import create_app

pytestmark = pytest.mark.anyio


async def _all_history(store: TemporalQuestionStore, keys: set[str], **options: Any) -> list[FinishedRecord]:
    """Every page, first to last, of the items whose key is in `keys` (the namespace holds other tests' too)."""
    found: list[FinishedRecord] = []
    cursor: str | None = None
    while True:
        page = await store.history_page(cursor=cursor, **options)
        found += [record for record in page.records if record.key in keys]
        cursor = page.next_cursor
        if cursor is None:
            return found


async def test_what_finished_in_temporal_workflows_is_listed_with_who_when_and_what(
    client: Client, worker: str, temporal_address: str
) -> None:
    store = TemporalQuestionStore(client=client)
    asked = await start_run(client, worker, AnsweredAskWorkflow, prefix='history')
    request = await waiting_question(asked)
    await store.respond(request.key, replace(ANSWER, answered_by='alice'))
    await asked.result()

    deploy = await start_run(client, worker, ApprovalWorkflow, prefix='history')

    async def listed() -> PendingApproval | None:
        return next((a for a in await store.pending_approvals() if a.workflow_id == deploy.id), None)

    approval: PendingApproval = await wait_until(listed, 'the approval to be listed')
    await store.decide(approval.key, ApprovalDecision.deny('not on a Friday', decided_by='bob'))
    await deploy.result()

    timed = await start_run(client, worker, TimedAskWorkflow, prefix='history')
    late = await waiting_question(timed)
    await timed.result()  # nobody answered within its deadline

    keys = {request.key, approval.key, late.key}

    async def all_three() -> list[FinishedRecord] | None:
        found = await _all_history(store, keys, limit=2)
        return found if len(found) == 3 else None

    records = {record.key: record for record in await wait_until(all_three, 'the three to be in the history')}
    answered, denied, withdrawn = records[request.key], records[approval.key], records[late.key]
    assert (answered.kind, answered.outcome, answered.by) == ('question', 'answered', 'alice')
    assert answered.request == request
    assert answered.response is not None
    assert answered.response.answers == ANSWER.answers
    assert answered.workflow_id == asked.id
    assert answered.asked_at <= answered.finished_at
    assert (denied.kind, denied.outcome, denied.by) == ('approval', 'denied', 'bob')
    assert denied.decision is not None
    assert denied.decision.reason == 'not on a Friday'
    assert denied.approval is not None
    assert denied.approval.tool_name == approval.tool_name
    assert (withdrawn.outcome, withdrawn.by, withdrawn.response) == ('withdrawn', None, None)
    # The receipt the run signed for alice's answer, kept in the workflow's history: verified with the runs' key, not
    # with another (nor would one changed be), not checked without one; the others have none.
    checks = {key: record_receipt(answered, key) for key in (RECEIPT_KEY, b'another key, not the runs one', None)}
    assert {key: None if status is None else status.check for key, status in checks.items()} == {
        RECEIPT_KEY: 'verified',
        b'another key, not the runs one': 'not_verified',
        None: 'not_checked',
    }
    assert answered.receipt['answered_by'] == 'alice'
    assert (denied.receipt, withdrawn.receipt) == (None, None)

    # Filters and people: only approvals; alice's own answer is hers to see, and bob's decision his.
    only_approvals = await _all_history(store, keys, where=HistoryFilter(kind='approval'))
    assert [record.key for record in only_approvals] == [approval.key]
    assert request.key in {r.key for r in await _all_history(store, keys, visible_to=Person('alice'))}
    assert approval.key in {r.key for r in await _all_history(store, keys, visible_to=Person('bob'))}
    with pytest.raises(BadCursorError):
        await store.history_page(cursor='not-a-cursor')

    # The web inbox's API and History tab read it too.
    app = create_app(store, access_token='t' * 32, receipt_key=RECEIPT_KEY)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url='http://inbox') as web:
        headers = {'authorization': 'Bearer ' + 't' * 32}
        seen: set[str] = set()
        checked: dict[str, str | None] = {}
        cursor: str | None = None
        while True:
            reply = await web.get(
                '/api/history', params={'limit': 50, **({'cursor': cursor} if cursor else {})}, headers=headers
            )
            assert reply.status_code == 200, reply.text
            body = reply.json()
            seen |= {item['id'] for item in body['history']}
            checked |= {item['id']: item.get('receipt_check') for item in body['history']}
            cursor = body.get('next_cursor')
            if not cursor:
                break
        assert keys <= seen
        assert (checked[request.key], checked[approval.key]) == ('verified', None)
        tab = await web.get('/history', headers=headers)
        assert tab.status_code == 200
        assert 'not on a Friday' in tab.text
        assert 'Signed by the run, verified' in tab.text

    # The command line reads the same history.
    key = {'ASK_USER_RECEIPT_KEY': RECEIPT_KEY.decode()}
    code, out, err = await ask_user_cli('history', '--temporal', temporal_address, '--json', '--limit', '500', env=key)
    assert code == 0, err
    *lines, trailer = [json.loads(line) for line in out.splitlines()]
    listed_keys = {line['id'] for line in lines}
    assert keys <= listed_keys
    assert {line['id']: line.get('receipt_check') for line in lines}[request.key] == 'verified'
    assert 'total' in trailer
