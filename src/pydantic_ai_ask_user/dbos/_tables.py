"""The tables of the DBOS package as SQLAlchemy declares them, which creates them (`_engine.ensure_table`): the
questions, and the event tables of the waiting handler's waits (their questions, calls and approvals).

Their names, their later columns and their indexes are in `_schema`, shared with the SQL text that brings an earlier
version's table up to date; the addressees (`_addressees`) and the change log (`_changes`) are made as SQL text.
"""

from __future__ import annotations

import sqlalchemy as sa

from .._question_store import NO_DEADLINE_ORDER
from ._schema import (
    ANSWERED_BY_LENGTH,
    APPROVAL_INDEXES,
    EVENT_APPROVALS_TABLE_NAME,
    EVENT_CALLS_TABLE_NAME,
    EVENT_TABLE_NAME,
    EVENT_WAITS_TABLE_NAME,
    INDEXES,
    TABLE_NAME,
)

__all__ = (
    'metadata',
    'requests_table',
    'event_requests_table',
    'event_waits_table',
    'event_calls_table',
    'event_approvals_table',
)

metadata = sa.MetaData()
"""The tables SQLAlchemy creates (`_engine.ensure_table`): all but the addressees and the change log (SQL text)."""


def _index(name: str, columns: tuple[str, ...], rows: str | None) -> sa.Index:
    """An index of `INDEXES`; a partial one (`rows`, a `WHERE`) on both databases."""
    if rows is None:
        return sa.Index(name, *columns)
    return sa.Index(name, *columns, sqlite_where=sa.text(rows), postgresql_where=sa.text(rows))


requests_table = sa.Table(
    TABLE_NAME,
    metadata,
    # The question's key (`AskUserRequest.key`), not the bare tool call id, which other runs repeat.
    sa.Column('id', sa.String(200), primary_key=True),
    sa.Column('workflow_id', sa.String(500), nullable=False),
    sa.Column('questions', sa.Text(), nullable=False),
    sa.Column('status', sa.String(16), nullable=False, index=True),
    sa.Column('response', sa.Text(), nullable=True),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.Column('answered_by', sa.String(ANSWERED_BY_LENGTH), nullable=True),
    sa.Column('run_id', sa.Text(), nullable=True),
    sa.Column('tool_call_id', sa.Text(), nullable=True),
    sa.Column('audience', sa.Text(), nullable=True),
    sa.Column('context', sa.Text(), nullable=True),
    # When the wait runs out (the request's deadline), or `NO_DEADLINE_ORDER` for none: the first key of the inbox's
    # order, so that a page is a range of one index rather than a sort of every pending row.
    sa.Column('due_at', sa.Float(), nullable=False, server_default=sa.text(repr(NO_DEADLINE_ORDER))),
    # The context's agent and conversation (in `context` too), for the search's filters by either and their indexes.
    sa.Column('agent_name', sa.Text(), nullable=True),
    sa.Column('conversation_id', sa.Text(), nullable=True),
    # The run's signed receipt of the answer (`receipt_to_json`'s JSON), kept by `DBOSAnswerer.keep_receipt`.
    sa.Column('receipt', sa.Text(), nullable=True),
    # The pending order (of all, and of the unaddressed ones) and the change feed (`_questions.changes_since`).
    *(_index(name, columns, rows) for name, columns, rows in INDEXES),
)
"""One row per question; `status` moves from `pending` to `answered` or `withdrawn` once, atomically.

`id` is the question's `AskUserRequest.key`: what the store, `ask-user answer` and the wait look it up by.
`run_id` and `tool_call_id` are the run that asked and the call's own id, so a row reads back as the request
that was asked (`id` the tool call id, `key` the row's `id`). Both are `NULL` on rows of earlier versions,
whose `id` was the tool call id: such a row reads back as a request without a run, whose key is that id, so
it keeps its address. A request without a run is stored the same way (its key is its id).

`answered_by` is who answered (`AskUserResponse.answered_by`), set with the answer; `NULL` while pending, when
withdrawn, and when the answer did not say. Databases made before these columns existed get them at start-up
(`ensure_columns`).

`audience` is who may answer (`AskUserRequest.audience`) as a JSON list of names, `NULL` for a question anyone may
answer; `context` is `AskUserRequest.context` as a JSON object, `NULL` for none. Columns of their own, not part of
`questions`, so an earlier version reading a row still decodes its questions (it cannot filter by audience, though:
upgrade every inbox before addressing questions). Each name of a pending addressed question is a row of the
addressees too (`_addressees.ADDRESSEES_TABLE_NAME`, made by `ensure_columns` as SQL text, both ways to the database
alike), written with the question, which a person's own page reads instead of everybody's audience.

`due_at` is the deadline the request carries (in its questions' JSON too), or `NO_DEADLINE_ORDER`: a worker of an
earlier version inserts rows without it, which then sort as having no deadline. Databases made before these columns
and the indexes (`_schema.INDEXES`) existed get them at start-up (`ensure_columns`, `ensure_indexes`). Lookups by key
use the primary key; the pending list and the change feed have their indexes.

`agent_name` and `conversation_id` are the context's (`QuestionContext.agent_name`, `.conversation_id`; in `context`
too), `NULL` for none: what a filter by agent or conversation reads, by their indexes, instead of every row's
context. Added to an earlier version's table with the context's values copied in (`_schema.backfill_statement`); a
worker of an earlier version inserts rows without them, which a filter by agent or conversation then does not find.
"""

event_requests_table = sa.Table(
    EVENT_TABLE_NAME,
    metadata,
    sa.Column('request_id', sa.String(200), primary_key=True),
    sa.Column('token', sa.String(500), nullable=False, index=True),
)
"""One row per question published by `ask_through_store`: its key and the `DBOSEventWaiter` token its answer resolves.

The questions of one token are answered one by one; the answer that completes the set resolves the token.
"""

event_waits_table = sa.Table(
    EVENT_WAITS_TABLE_NAME,
    metadata,
    sa.Column('token', sa.String(500), primary_key=True),
    sa.Column('workflow_id', sa.String(500), nullable=False),
    sa.Column('status', sa.String(16), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
)
"""One row per wait; `status` moves once from `pending` to `resolved` (a resolver's claim) or `expired` (the deadline).

The resolver sends its message in the transaction that claims the row, so a resolution is either the
one the run goes on with, or refused (`NoWaitError`), never reported as taken and then dropped.
"""

event_calls_table = sa.Table(
    EVENT_CALLS_TABLE_NAME,
    metadata,
    sa.Column('token', sa.String(500), primary_key=True),
    sa.Column('calls', sa.Text(), nullable=False),
)
"""One row per wait opened by the waiting handler, written with its `event_waits_table` row: its pending calls as JSON.

A table of its own, not a column of the waits table, so databases made before it get it the way they got
the others (created when missing), and a wait opened by an earlier version simply has no row.
"""


event_approvals_table = sa.Table(
    EVENT_APPROVALS_TABLE_NAME,
    metadata,
    # `PendingApproval.key`: the wait's token and the call id, so a call id another run repeats is another row.
    sa.Column('id', sa.String(200), primary_key=True),
    sa.Column('token', sa.String(500), nullable=False, index=True),
    sa.Column('workflow_id', sa.String(500), nullable=False),
    sa.Column('run_id', sa.Text(), nullable=True),
    sa.Column('tool_call_id', sa.Text(), nullable=False),
    sa.Column('tool_name', sa.Text(), nullable=False),
    sa.Column('args', sa.Text(), nullable=False),
    sa.Column('parameters', sa.Text(), nullable=True),
    sa.Column('addressing', sa.Text(), nullable=True),
    sa.Column('status', sa.String(16), nullable=False, index=True),
    sa.Column('decision', sa.Text(), nullable=True),
    sa.Column('decided_by', sa.String(ANSWERED_BY_LENGTH), nullable=True),
    sa.Column('created_at', sa.Float(), nullable=False),
    # The change feed every open inbox polls (`updated_at >= since`), and the pruning of decided approvals.
    sa.Column('updated_at', sa.Float(), nullable=False, index=True),
    # The inbox's order of the approvals, keyset-paged (`status = 'pending' AND (created_at, id) > cursor`).
    sa.Index('ix_ask_user_event_approvals_pending_order', 'status', 'created_at', 'id'),
    # The history of the approvals (`_schema.APPROVAL_INDEXES`).
    *(_index(name, columns, rows) for name, columns, rows in APPROVAL_INDEXES),
)
"""One row per tool call a waiting handler's wait needs approved, published by `ask_through_store` with the wait's
questions: the tool, the model's arguments (JSON), the tool's parameters JSON schema recorded then (edited
arguments are checked against it), who may decide it and where it comes from (`addressing`: the audience and
context, as JSON), and, once decided, the decision (`ApprovalDecision.to_json`) and who made it.

`status` moves once from `pending` to `decided` or (at the wait's deadline) `withdrawn`. A table of its own, so a
database made by an earlier version gets it the way it got the other event tables (created when missing).
"""
