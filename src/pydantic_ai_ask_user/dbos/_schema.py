"""The tables of the DBOS package by name, and the SQL that brings an earlier version's questions table up to this
one: the columns and indexes it lacks, and the errors of a database where that cannot be done or that holds no
questions at all.

SQL text only, the same on SQLite and PostgreSQL (`_connection`): SQLAlchemy declares the tables (`_tables`), and
the two ways to a database (`_sqlite`, `_engine`) run these statements when they open an earlier version's table.
"""

from __future__ import annotations

import logging
from typing import Any

from .._question_limits import LATEST_DEADLINE, MAX_ANSWERED_BY_LENGTH
from .._question_store import NO_DEADLINE_ORDER

__all__ = (
    'TABLE_NAME',
    'ANSWERED_BY_LENGTH',
    'EVENT_TABLE_NAME',
    'EVENT_WAITS_TABLE_NAME',
    'EVENT_CALLS_TABLE_NAME',
    'EVENT_APPROVALS_TABLE_NAME',
    'DBOS_TABLE',
    'ADDED_COLUMNS',
    'INDEXES',
    'APPROVAL_INDEXES',
    'FINISHED',
    'index_statements',
    'PENDING_ORDER',
    'after_position',
    'warn_missing_index',
    'backfill_statement',
    'add_column_statement',
    'MissingColumnError',
    'missing_column_error',
    'NotAQuestionDatabaseError',
    'not_a_question_database',
)

_log = logging.getLogger('pydantic_ai_ask_user.dbos')
"""The DBOS package's logger, which its warnings go to."""

TABLE_NAME = 'ask_user_requests'
"""The table holding one row per durable question: pending, answered or withdrawn."""


ANSWERED_BY_LENGTH = MAX_ANSWERED_BY_LENGTH
"""The width of the `answered_by` column: the longest `AskUserResponse.answered_by`."""


EVENT_TABLE_NAME = 'ask_user_event_requests'
"""The table tying questions put to a person through the waiting handler to the resume token of their run's wait."""

EVENT_WAITS_TABLE_NAME = 'ask_user_event_waits'
"""The table holding one row per `DBOSEventWaiter` wait: whether it is still open, resolved, or expired."""

EVENT_CALLS_TABLE_NAME = 'ask_user_event_calls'
"""The table holding the calls each waiting handler's wait decides, so a resolver is checked against them."""

EVENT_APPROVALS_TABLE_NAME = 'ask_user_event_approvals'
"""The table holding the tool calls a waiting handler's wait needs approved, published with it by `ask_through_store`,
each decided by a person once: the second kind of pending item, beside the questions."""


DBOS_TABLE = 'workflow_status'
"""A table every DBOS system database has, in the `dbos` schema on PostgreSQL and in the file on SQLite."""


ADDED_COLUMNS = (
    ('answered_by', f'VARCHAR({ANSWERED_BY_LENGTH})'),
    ('run_id', 'TEXT'),
    ('tool_call_id', 'TEXT'),
    ('audience', 'TEXT'),
    ('context', 'TEXT'),
    ('due_at', f'FLOAT NOT NULL DEFAULT {NO_DEADLINE_ORDER!r}'),
    ('agent_name', 'TEXT'),
    ('conversation_id', 'TEXT'),
    ('receipt', 'TEXT'),
)
"""The columns of the questions table that earlier versions did not create, with their SQL types, added to their
databases at start-up (`ensure_columns` of `_sqlite` and `_engine`): the types `_tables.requests_table` declares
them with."""

INDEXES: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    # The inbox's order, keyset-paged: `status = 'pending' AND (due_at, created_at, id) > cursor ORDER BY ... LIMIT n`
    # reads n entries of this index, and counting the pending rows reads only it.
    ('ix_ask_user_requests_pending_order', ('status', 'due_at', 'created_at', 'id'), None),
    # The change feed every open inbox polls (`updated_at >= since`), and the pruning of finished rows.
    ('ix_ask_user_requests_updated_at', ('updated_at',), None),
    # The same order, of the pending questions addressed to nobody in particular only: the part of a person's page
    # (and count) that is everyone's, read without passing the addressed ones (theirs come from the addressees).
    # It holds `audience` (`NULL` in each of its rows) so that SQLite reads it alone, without the table's rows.
    ('ix_ask_user_requests_unaddressed', ('status', 'due_at', 'created_at', 'id', 'audience'), 'audience IS NULL'),
    # The history, newest first (`ORDER BY updated_at DESC, id DESC`, read backwards): every finished question; those
    # addressed to nobody in particular (the part of a person's history that is everyone's); and each person's own
    # answers (`answered_by`). Partial, so that the pending rows, which change most, are in none of them.
    ('ix_ask_user_requests_finished', ('updated_at', 'id'), "status <> 'pending'"),
    (
        # `audience` first (`NULL` in each row): `audience IS NULL` is then a key of the index, which SQLite prefers
        # to the range of every finished question's for a person's unaddressed branch.
        'ix_ask_user_requests_finished_unaddressed',
        ('audience', 'updated_at', 'id'),
        "status <> 'pending' AND audience IS NULL",
    ),
    (
        'ix_ask_user_requests_finished_by',
        ('answered_by', 'updated_at', 'id'),
        "status <> 'pending' AND answered_by IS NOT NULL",
    ),
    # The history of one agent's finished questions, and of one conversation's, newest first: everyone's history
    # filtered by either (`?agent=`, `?conversation=`) is a range of one of them, and its total one count of it.
    (
        'ix_ask_user_requests_finished_agent',
        ('agent_name', 'updated_at', 'id'),
        "status <> 'pending' AND agent_name IS NOT NULL",
    ),
    (
        'ix_ask_user_requests_finished_conversation',
        ('conversation_id', 'updated_at', 'id'),
        "status <> 'pending' AND conversation_id IS NOT NULL",
    ),
    # The pending order of one agent's questions, and of one conversation's: a page filtered by either (`?agent=`,
    # `?conversation=`) is a range of one of them, and its count reads only it, however many others wait. Of the rows
    # that name one. `status` a column, not in the `WHERE`: PostgreSQL drops a condition the `WHERE` implies from the
    # index's, and the cursor's range must follow an equality on every column before it; SQLite, without statistics,
    # takes two equalities over the status index's one.
    (
        'ix_ask_user_requests_pending_agent',
        ('agent_name', 'status', 'due_at', 'created_at', 'id'),
        'agent_name IS NOT NULL',
    ),
    (
        'ix_ask_user_requests_pending_conversation',
        ('conversation_id', 'status', 'due_at', 'created_at', 'id'),
        'conversation_id IS NOT NULL',
    ),
    # The same, of the questions addressed to nobody in particular only: the part of a person's page (and count)
    # filtered by agent or conversation that is everyone's (theirs come from the addressees), a range of these
    # rather than of the agent's every waiting question, or of every unaddressed one. `audience` first (`NULL` in
    # each row): `audience IS NULL` is then a key of the index, three equalities, which SQLite prefers to the two of
    # the agent's index above.
    (
        'ix_ask_user_requests_unaddressed_agent',
        ('audience', 'agent_name', 'status', 'due_at', 'created_at', 'id'),
        'audience IS NULL AND agent_name IS NOT NULL',
    ),
    (
        'ix_ask_user_requests_unaddressed_conversation',
        ('audience', 'conversation_id', 'status', 'due_at', 'created_at', 'id'),
        'audience IS NULL AND conversation_id IS NOT NULL',
    ),
)
"""The indexes of the questions table, by name, columns and the rows they hold (`None`: all; else a `WHERE`, a
partial index, which SQLite and PostgreSQL both use for a query whose conditions include it): `_tables.requests_table`
declares them (so a new table has them), and `index_statements` adds them to a table an earlier version made without
them."""

FINISHED = "status <> 'pending'"
"""The rows of the history: answered (or declined) and withdrawn questions, decided and withdrawn approvals. Written
exactly as the partial indexes' `WHERE` begins, so that both databases see that a query's conditions imply it."""

APPROVAL_INDEXES: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    # The approvals' history, newest first, as the questions' (`ix_ask_user_requests_finished`), and who decided.
    ('ix_ask_user_event_approvals_finished', ('updated_at', 'id'), "status <> 'pending'"),
    (
        'ix_ask_user_event_approvals_finished_by',
        ('decided_by', 'updated_at', 'id'),
        "status <> 'pending' AND decided_by IS NOT NULL",
    ),
)
"""The indexes of the approvals table that `_tables.event_approvals_table` declares and `index_statements` adds to a
table an earlier version made without them (as `INDEXES` for the questions)."""


def index_statements(*, approvals: bool) -> list[tuple[str, str, str]]:
    """Each index's name, table and the `CREATE INDEX IF NOT EXISTS` that makes it (the same on SQLite and
    PostgreSQL): the questions table's, and with `approvals` (the database has that table) the approvals table's.
    """
    tables = [(TABLE_NAME, INDEXES), *([(EVENT_APPROVALS_TABLE_NAME, APPROVAL_INDEXES)] if approvals else [])]
    return [
        (name, table, f'CREATE INDEX IF NOT EXISTS {name} ON {table} ({", ".join(columns)})' + _where(rows))
        for table, indexes in tables
        for name, columns, rows in indexes
    ]


def _where(rows: str | None) -> str:
    return '' if rows is None else f' WHERE {rows}'


PENDING_ORDER = 'due_at, created_at, id'
"""The inbox's order of pending rows: the nearest deadline first (none last), then the oldest, then by key."""


def after_position(order: str, after: tuple[float, float, str] | None) -> tuple[list[str], dict[str, Any]]:
    """The condition that a row (its columns `order`) sorts after the cursor's position `after`, and its parameters."""
    if after is None:
        return [], {}
    values = {'after_due': after[0], 'after_created': after[1], 'after_id': after[2]}
    return [f'({order}) > (:after_due, :after_created, :after_id)'], values


def warn_missing_index(name: str, statement: str, reason: str) -> None:
    """Tell that an index could not be made (not the table's owner): the store works on, slower; say what to run."""
    _log.warning(
        'the questions table has no index %s and this database user cannot create it (%s); listing the '
        "questions reads the whole table until the table's owner runs once: %s",
        name,
        reason.splitlines()[0] if reason else reason,
        statement,
    )


def backfill_statement(name: str, dialect: str) -> str | None:
    """What to run after adding the column `name` to an earlier version's table, in the same transaction, or `None`.

    `due_at`: copy into it the deadline each pending row's questions carry (as `encode_request` wrote it), in one
    statement; rows without one, or with one out of range (shown as none), keep `NO_DEADLINE_ORDER`.

    `agent_name`, `conversation_id`: copy into it that field of each row's `context` (a JSON object), where it is a
    string; `NULL` elsewhere.
    """
    if name in ('agent_name', 'conversation_id'):
        if dialect == 'postgresql':
            value = f"context::jsonb ->> '{name}'"
            kind = f"jsonb_typeof(context::jsonb -> '{name}') = 'string'"
        else:
            value = f"json_extract(context, '$.{name}')"
            kind = f"json_valid(context) AND json_type(context, '$.{name}') = 'text'"
        return f'UPDATE {TABLE_NAME} SET {name} = {value} WHERE context LIKE \'%"{name}"%\' AND {kind}'
    if name != 'due_at':
        return None
    if dialect == 'postgresql':
        deadline = "(questions::jsonb ->> 'deadline')::double precision"
        kind = "jsonb_typeof(questions::jsonb -> 'deadline') = 'number'"
    else:
        deadline = "json_extract(questions, '$.deadline')"
        kind = "json_valid(questions) AND json_type(questions, '$.deadline') IN ('integer', 'real')"
    return (
        f'UPDATE {TABLE_NAME} SET due_at = {deadline} '
        f"WHERE status = 'pending' AND questions LIKE '%\"deadline\"%' AND {kind} "
        f'AND {deadline} BETWEEN 0 AND {LATEST_DEADLINE!r}'
    )


def add_column_statement(name: str, kind: str, dialect: str) -> str:
    """The `ALTER TABLE` that adds the column `name` of type `kind` to an earlier version's questions table.

    PostgreSQL's `IF NOT EXISTS` lets a second process through; SQLite has no such clause (its caller looks again).
    """
    if_not_exists = ' IF NOT EXISTS' if dialect == 'postgresql' else ''
    return f'ALTER TABLE {TABLE_NAME} ADD COLUMN{if_not_exists} {name} {kind}'


class MissingColumnError(RuntimeError):
    """The questions table lacks a column of this version, and the database user may not add it."""


def missing_column_error(name: str, statement: str, reason: str) -> MissingColumnError:
    """Say what to do, not only what failed: not the table's owner (PostgreSQL), or a read-only database."""
    return MissingColumnError(
        f'the questions table {TABLE_NAME} was made by an earlier version and lacks the column '
        f'{name}, which this database user cannot add ({reason.splitlines()[0] if reason else reason}); '
        f"have the table's owner run once: {statement}"
    )


class NotAQuestionDatabaseError(RuntimeError):
    """The database is not one where questions wait: a SQLite file that does not exist, or a database with
    neither the questions table nor DBOS's own tables (a typo in the URL, or somebody else's database).

    Raised by a `DBOSQuestionStore(create_table=False)`, which writes no schema into such a database.
    """


def not_a_question_database(shown_url: str) -> NotAQuestionDatabaseError:
    """The error for a database that has neither the questions table nor DBOS's."""
    return NotAQuestionDatabaseError(
        f'{shown_url} is not a question database: it has neither the {TABLE_NAME} table nor the tables of DBOS'
    )
