"""Search and filter on `DBOSQuestionStore`: the pending questions, the pending approvals and the history, narrowed by
agent, title, conversation, addressee, kind and free text, paged, and never more than the person may see.

Each test runs on a real SQLite file and on the private PostgreSQL server (`database_url`).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa
from ask_user_support import make_request
from durable_support import dbos_workflows

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person, QuestionContext
from pydantic_ai_ask_user._question_store import NO_DEADLINE_ORDER
from pydantic_ai_ask_user.dbos import DBOSQuestionStore
from pydantic_ai_ask_user.dbos._approvals import claim_approval, insert_approval
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._history import count_finished_statement, finished_questions_statement
from pydantic_ai_ask_user.dbos._pending_statements import count_pending_statement, pending_page_statement
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending
from pydantic_ai_ask_user.dbos._schema import TABLE_NAME
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
        assert await _keys(store, PendingFilter(kind='approval'), visible_to=ALICE) == []
        assert await store.count_pending(PendingFilter(kind='approval'), visible_to=ALICE) == 0


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


def _plan(url: str, statement: str, parameters: dict[str, Any]) -> str:
    """The query plan of the SQL text (as `test_paging` reads it: on PostgreSQL, with scans of the table and sorts
    made dear, since on a small table they are cheaper; what is checked is that the index serves the query)."""
    engine = shared_engine(url)
    with engine.begin() as conn:
        if engine.dialect.name == 'postgresql':
            conn.execute(sa.text('SET LOCAL enable_seqscan = off'))
            conn.execute(sa.text('SET LOCAL enable_sort = off'))
            rows = conn.execute(sa.text(f'EXPLAIN {statement}'), parameters).scalars().all()
        else:
            rows = [row[-1] for row in conn.execute(sa.text(f'EXPLAIN QUERY PLAN {statement}'), parameters).all()]
    return '\n'.join(str(row) for row in rows)


def _items_and_600_others(database_url: str, *, answered: bool) -> sa.Engine:
    """`ITEMS` asked, and 600 more of 20 other agents and 600 conversations (answered by bob when `answered`): what
    the pending order's index, or the finished one, would read through."""
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for item in ITEMS:
        _ask(database_url, *item)
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        for index in range(600):
            context = _context(f'agent-{index % 20}', f'Other {index}', f'c-{index}')
            insert_pending(conn, replace(make_request(id=f'o{index}'), context=context), 'wf')
            if answered:
                claim_answer(conn, f'o{index}', encode_response(PICK), 'bob')
    return engine


async def test_the_agent_and_the_conversation_are_columns_whose_filters_read_their_own_indexes(
    database_url: str,
) -> None:
    """Everyone's page filtered by agent (or conversation) is a range of that column's index, in the inbox's order,
    and its total one exact count: not a read of every waiting question's context."""
    engine = _items_and_600_others(database_url, answered=False)
    with engine.begin() as conn:
        written = conn.execute(sa.text(f'SELECT id, agent_name, conversation_id FROM {TABLE_NAME}')).all()
        if engine.dialect.name == 'postgresql':
            conn.execute(sa.text('ANALYZE'))
    assert {key: (agent, conversation) for key, agent, conversation in written if key in ('r1', 'd1')} == {
        'r1': ('refunds', 'c1'),
        'd1': ('deploys', 'c3'),
    }
    with engine.begin() as conn:
        for where, index in (
            (PendingFilter(agent='refunds'), 'ix_ask_user_requests_pending_agent'),
            (PendingFilter(conversation='c1'), 'ix_ask_user_requests_pending_conversation'),
        ):
            for statement in (
                pending_page_statement(conn, after=None, limit=50, where=where),
                pending_page_statement(conn, after=(NO_DEADLINE_ORDER, 0.0, ''), limit=50, where=where),
                count_pending_statement(conn, where),
            ):
                plan = _plan(database_url, *statement)
                assert index in plan, (where, plan)
                assert 'TEMP B-TREE' not in plan, plan  # the index gives the order: no sort
                assert 'Sort' not in plan, plan
            # A person's page reads her own ranges (her names' through the addressees, the unaddressed: `test_paging`)
            # with the filter's condition, never the agent's every question by its index. PostgreSQL weighs the
            # unaddressed branch by its statistics: here, where nearly every question is unaddressed, the agent's
            # index is the smaller read for that branch (at 1 in 1,000 unaddressed, the unaddressed index is).
            for statement in (
                pending_page_statement(conn, after=None, limit=50, where=where, visible_to=ALICE),
                count_pending_statement(conn, where, visible_to=ALICE),
            ):
                plan = _plan(database_url, *statement)
                assert 'ix_ask_user_addressees_order' in plan or 'ask_user_addressees_pkey' in plan, plan
                if engine.dialect.name == 'sqlite':
                    assert index not in plan, plan
                    # Nor every waiting question by their status: the unaddressed ones by their own index.
                    assert 'ix_ask_user_requests_status' not in plan, plan
                    assert 'ix_ask_user_requests_unaddressed' in plan, plan
    async with DBOSQuestionStore(database_url) as store:
        page = await store.pending_page(limit=2, where=PendingFilter(agent='refunds'))
        assert (len(page.records), page.total, page.total_exact) == (2, 3, True)
        page = await store.pending_page(limit=50, where=PendingFilter(conversation='c1'), visible_to=ALICE)
        assert (sorted(record.key for record in page.records), page.total, page.total_exact) == (['d2', 'r1'], 2, True)


async def test_everyones_history_by_agent_or_conversation_is_a_range_of_that_columns_finished_index(
    database_url: str,
) -> None:
    """As the waiting list's: everyone's history filtered by agent (or conversation) reads that column's index of the
    finished rows, newest first, and counts it exactly; a person's reads her own ranges, never the agent's every row."""
    engine = _items_and_600_others(database_url, answered=True)
    with engine.begin() as conn:
        for key in ('r1', 'r2', 'r3', 'd1'):
            claim_answer(conn, key, encode_response(PICK), 'bob')
        if engine.dialect.name == 'postgresql':
            conn.execute(sa.text('ANALYZE'))
    before = (time.time(), 'r1')
    with engine.begin() as conn:
        for where, index in (
            (HistoryFilter(agent='refunds'), 'ix_ask_user_requests_finished_agent'),
            (HistoryFilter(conversation='c1'), 'ix_ask_user_requests_finished_conversation'),
        ):
            for statement in (
                finished_questions_statement(conn, before=None, limit=50, where=where),
                finished_questions_statement(conn, before=before, limit=50, where=where),
            ):
                plan = _plan(database_url, *statement)
                assert index in plan, (where, plan)
                assert 'TEMP B-TREE' not in plan, plan  # the index gives the order: no sort
                assert 'Sort' not in plan, plan
            plan = _plan(database_url, *count_finished_statement(conn, where))
            assert 'Seq Scan' not in plan, plan
            assert 'SCAN ask_user_requests' not in plan, plan
            # SQLite, without statistics, is told not to (`+agent_name`); PostgreSQL weighs it by its statistics (here
            # the agent's 3 finished rows are fewer than her branches').
            for statement in (
                finished_questions_statement(conn, before=None, limit=50, where=where, visible_to=ALICE),
                count_finished_statement(conn, where, ALICE),
            ):
                if engine.dialect.name == 'sqlite':
                    assert index not in _plan(database_url, *statement)
    async with DBOSQuestionStore(database_url) as store:
        page = await store.history_page(limit=2, where=HistoryFilter(agent='refunds'))
        assert (len(page.records), page.total, page.total_exact) == (2, 3, True)
        page = await store.history_page(where=HistoryFilter(conversation='c1'), visible_to=ALICE)
        assert ([record.key for record in page.records], page.total, page.total_exact) == (['r1'], 1, True)


INDEXES_OF_THE_COLUMNS = (
    'ix_ask_user_requests_pending_agent',
    'ix_ask_user_requests_pending_conversation',
    'ix_ask_user_requests_finished_agent',
    'ix_ask_user_requests_finished_conversation',
    'ix_ask_user_requests_unaddressed_agent',
    'ix_ask_user_requests_unaddressed_conversation',
)
"""The indexes of the agent and conversation columns: the waiting list's order (everyone's, and the unaddressed
questions') and the history's, of each."""


@pytest.mark.parametrize('pooled', [False, True], ids=['bare driver', 'sqlalchemy'])
async def test_a_table_of_the_version_before_gets_the_agent_and_conversation_columns_filled_from_the_context(
    database_url: str, pooled: bool
) -> None:
    """Opened by `ask-user` (`create_table=False`, the bare driver on SQLite) or by an inbox (SQLAlchemy's engine)."""
    dbos_workflows(database_url, {'wf': 'PENDING'})
    for item in ITEMS:
        _ask(database_url, *item)
    engine = shared_engine(database_url)
    with engine.begin() as conn:
        # The table as the version before this one left it: no agent or conversation column, nor their indexes; and a
        # row whose context is not what this version writes (a number for the agent).
        for name in INDEXES_OF_THE_COLUMNS:
            conn.execute(sa.text(f'DROP INDEX {name}'))
        for column in ('agent_name', 'conversation_id'):
            conn.execute(sa.text(f'ALTER TABLE {TABLE_NAME} DROP COLUMN {column}'))
        conn.execute(
            sa.text(f"UPDATE {TABLE_NAME} SET context = :context WHERE id = 'd2'"),
            {'context': json.dumps({'agent_name': 7, 'conversation_id': 'c1'})},
        )
    async with DBOSQuestionStore(database_url, create_table=not pooled, pooled=pooled) as store:
        assert await _keys(store, PendingFilter(agent='refunds')) == ['r1', 'r2', 'r3']
        assert await _keys(store, PendingFilter(conversation='c1')) == ['d2', 'r1', 'r3']
        assert await _keys(store, PendingFilter(agent='7')) == []  # a number is no agent's name
    with engine.connect() as conn:
        rows = conn.execute(sa.text(f'SELECT id, agent_name, conversation_id FROM {TABLE_NAME}')).all()
    assert {key: (agent, conversation) for key, agent, conversation in rows} == {
        'r1': ('refunds', 'c1'),
        'r2': ('refunds', 'c2'),
        'r3': ('refunds', 'c1'),
        'd1': ('deploys', 'c3'),
        'd2': (None, 'c1'),
    }
    names = {index['name'] for index in sa.inspect(engine).get_indexes(TABLE_NAME)}
    assert set(INDEXES_OF_THE_COLUMNS) <= names
