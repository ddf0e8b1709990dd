"""Search and filter on `DBOSQuestionStore`: the pending questions, the pending approvals and the history, narrowed by
agent, title, conversation, addressee, kind and free text, paged, and never more than the person may see.

Each test runs on a real SQLite file and on the private PostgreSQL server (`database_url`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from ask_user_support import make_request
from durable_support import dbos_workflows

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._approvals import claim_approval, insert_approval
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending
from pydantic_ai_ask_user.dbos._waits import open_wait_row
from pydantic_ai_ask_user.store import (
    ApprovalDecision,
    HistoryFilter,
    PendingApproval,
    PendingFilter,
    page_approvals,
)

pytestmark = pytest.mark.anyio

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
ALICE = Person(name='alice', groups=frozenset({'team:billing'}))


def _context(agent: str, title: str, conversation: str) -> QuestionContext:
    return QuestionContext(agent_name=agent, title=title, conversation_id=conversation, summary=f'About {title}.')


ITEMS: list[tuple[str, str, str, str, tuple[str, ...] | None]] = [
    # key, agent, title, conversation, audience
    ('r1', 'refunds', 'Refund for order 1042', 'c1', None),
    ('r2', 'refunds', 'Refund for order 77', 'c2', ('alice',)),
    ('r3', 'refunds', 'Chargeback 9', 'c1', ('bob',)),
    ('d1', 'deploys', 'Deploy the API', 'c3', ('team:billing',)),
    ('d2', 'deploys', 'Deploy the docs', 'c1', None),
]


def _ask(url: str, key: str, agent: str, title: str, conversation: str, audience: tuple[str, ...] | None) -> None:
    request = replace(make_request(id=key), audience=audience, context=_context(agent, title, conversation))
    with shared_engine(url).begin() as conn:
        insert_pending(conn, request, 'wf')


def _approval(url: str, token: str, agent: str, tool: str, audience: tuple[str, ...] | None) -> PendingApproval:
    approval = PendingApproval(
        token,
        'call_0',
        tool,
        {'env': 'prod', 'note': f'{token} ticket'},
        workflow_id='wf',
        audience=audience,
        context=_context(agent, f'Approve {tool}', 'c9'),
    )
    with shared_engine(url).begin() as conn:
        open_wait_row(conn, token, 'wf')
        insert_approval(conn, approval)
    return approval


async def _keys(store: DBOSQuestionStore, where: PendingFilter, limit: int = 2, **kwargs: Any) -> list[str]:
    keys: list[str] = []
    cursor = None
    while True:
        page = await store.pending_page(limit=limit, cursor=cursor, where=where, **kwargs)
        assert len(page.records) <= limit
        keys += [record.key for record in page.records]
        if (cursor := page.next_cursor) is None:
            assert page.total == len(keys)
            return sorted(keys)


async def _history(store: DBOSQuestionStore, where: HistoryFilter, limit: int = 2, **kwargs: Any) -> list[str]:
    names: list[str] = []
    cursor = None
    total = None
    while True:
        page = await store.history_page(limit=limit, cursor=cursor, where=where, **kwargs)
        assert len(page.records) <= limit
        total = page.total if total is None else total
        names += [record.approval.token if record.approval is not None else record.key for record in page.records]
        if (cursor := page.next_cursor) is None:
            assert total == len(names)
            return sorted(names)


async def test_pending_questions_by_each_filter_and_their_combinations(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for item in ITEMS:
        _ask(database_url, *item)
    async with DBOSQuestionStore(database_url) as store:
        assert await _keys(store, PendingFilter(agent='refunds')) == ['r1', 'r2', 'r3']
        assert await _keys(store, PendingFilter(agent='refund')) == []  # exact
        assert await _keys(store, PendingFilter(title='REFUND for')) == ['r1', 'r2']
        assert await _keys(store, PendingFilter(conversation='c1')) == ['d2', 'r1', 'r3']
        assert await _keys(store, PendingFilter(addressee='team:billing')) == ['d1']
        assert await _keys(store, PendingFilter(addressee='alice')) == ['r2']
        assert await _keys(store, PendingFilter(text='about deploy the')) == ['d1', 'd2']  # the summary
        assert await _keys(store, PendingFilter(text='postgresql')) == sorted(key for key, *_ in ITEMS)  # an option
        assert await _keys(store, PendingFilter(agent='refunds', conversation='c1')) == ['r1', 'r3']
        assert await _keys(store, PendingFilter(agent='deploys', text='docs')) == ['d2']
        assert await _keys(store, PendingFilter(kind='question', agent='deploys')) == ['d1', 'd2']
        assert await _keys(store, PendingFilter(kind='approval')) == []
        # A filter never widens what a person sees: bob's question is not alice's, whatever she searches for.
        assert await _keys(store, PendingFilter(agent='refunds'), visible_to=ALICE) == ['r1', 'r2']
        assert await _keys(store, PendingFilter(addressee='bob'), visible_to=ALICE) == []
        assert await _keys(store, PendingFilter(conversation='c1'), limit=1, visible_to=ALICE) == ['d2', 'r1']
        assert await store.count_pending(PendingFilter(agent='refunds'), visible_to=ALICE) == 2


async def test_pending_approvals_by_filter(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    _ask(database_url, *ITEMS[0])
    _approval(database_url, 'a1', 'deploys', 'deploy', None)
    _approval(database_url, 'a2', 'deploys', 'rollback', ('bob',))
    _approval(database_url, 'a3', 'refunds', 'refund', ('alice',))
    async with DBOSQuestionStore(database_url) as store:

        async def tokens(where: PendingFilter, visible_to: Person | None = None) -> list[str]:
            page = await page_approvals(store, limit=10, where=where, visible_to=visible_to)
            assert page.total == len(page.records)
            return sorted(approval.token for approval in page.records)

        assert await tokens(PendingFilter(agent='deploys')) == ['a1', 'a2']
        assert await tokens(PendingFilter(text='ROLLBACK')) == ['a2']  # the tool name
        assert await tokens(PendingFilter(text='a3 ticket')) == ['a3']  # the arguments
        assert await tokens(PendingFilter(kind='question')) == []
        assert await tokens(PendingFilter(kind='approval', addressee='alice')) == ['a3']
        assert await tokens(PendingFilter(agent='deploys'), ALICE) == ['a1']


async def test_history_by_filter_across_pages_and_kinds(database_url: str) -> None:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for item in ITEMS:
        _ask(database_url, *item)
    with shared_engine(database_url).begin() as conn:
        for key, *_ in ITEMS[:4]:
            assert claim_answer(conn, key, encode_response(PICK), None)
    for token, audience in (('a1', None), ('a2', ('bob',))):
        approval = _approval(database_url, token, 'deploys', 'deploy', audience)
        with shared_engine(database_url).begin() as conn:
            assert claim_approval(conn, approval, ApprovalDecision.approve())
    async with DBOSQuestionStore(database_url) as store:
        assert await _history(store, HistoryFilter(agent='refunds'), limit=1) == ['r1', 'r2', 'r3']
        assert await _history(store, HistoryFilter(agent='deploys')) == ['a1', 'a2', 'd1']
        assert await _history(store, HistoryFilter(agent='deploys', kind='approval')) == ['a1', 'a2']
        assert await _history(store, HistoryFilter(title='deploy the')) == ['d1']  # d2 still waits
        assert await _history(store, HistoryFilter(conversation='c1')) == ['r1', 'r3']
        assert await _history(store, HistoryFilter(addressee='bob')) == ['a2', 'r3']
        assert await _history(store, HistoryFilter(text='1042')) == ['r1']
        assert await _history(store, HistoryFilter(text='deploy'), visible_to=ALICE) == ['a1', 'd1']
        assert await _history(store, HistoryFilter(agent='refunds'), limit=1, visible_to=ALICE) == ['r1', 'r2']
