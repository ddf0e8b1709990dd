"""The tables where durable questions and waits are kept, in the DBOS system database next to the workflows, through
SQLAlchemy: their definitions and their creation, and the engine of the DBOS side (workers, `DBOSAnswerer`, the
waiter) and of every database that is not a plain SQLite file.

The SQL itself is in `_sql`, run as the same text by `sqlite3` (`_sqlite`); its names are importable from here too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event, exc

from .._question_store import NO_DEADLINE_ORDER
from ._sql import (
    ACTIVE_WORKFLOW_STATUSES,
    ADDED_COLUMNS,
    ANSWERED_BY_LENGTH,
    DBOS_TABLE,
    DEFAULT_DATABASE_URL,
    EVENT_APPROVALS_TABLE_NAME,
    EVENT_CALLS_TABLE_NAME,
    EVENT_TABLE_NAME,
    EVENT_WAITS_TABLE_NAME,
    INDEXES,
    TABLE_NAME,
    WITHDRAWN_MESSAGE,
    Identity,
    MissingColumnError,
    NotAQuestionDatabaseError,
    Status,
    StoredRequest,
    active_workflows,
    add_column_statement,
    answer_message,
    backfill_statement,
    changes_since,
    claim_answer,
    claim_wait,
    count_pending_rows,
    count_pending_statement,
    decode_message,
    decode_request,
    decode_response,
    decode_row,
    encode_request,
    encode_response,
    ensure_addressees,
    expire_wait,
    index_statements,
    insert_encoded,
    insert_event_request,
    insert_pending,
    lock_event_token,
    lock_token,
    message_topic,
    missing_column_error,
    not_a_question_database,
    open_wait_row,
    open_wait_tokens,
    pending_page_statement,
    pending_wait_calls,
    prune_finished,
    publication,
    record_wait_calls,
    request_status,
    select_pending_page,
    select_requests,
    send_message,
    status_and_response,
    token_requests,
    warn_missing_index,
    withdraw_pending,
)
from ._sqlite import BUSY_TIMEOUT_SECONDS, check_plain_sqlite_file, shown_sqlite_url

__all__ = (
    'shown_database_url',
    'TABLE_NAME',
    'DEFAULT_DATABASE_URL',
    'Status',
    'StoredRequest',
    'Identity',
    'ACTIVE_WORKFLOW_STATUSES',
    'create_engine',
    'EngineDatabase',
    'ensure_table',
    'ensure_columns',
    'table_exists',
    'NotAQuestionDatabaseError',
    'MissingColumnError',
    'check_sqlite_file',
    'insert_pending',
    'insert_encoded',
    'shared_engine',
    'transaction',
    'has_table',
    'select_requests',
    'select_pending_page',
    'pending_page_statement',
    'count_pending_rows',
    'count_pending_statement',
    'prune_finished',
    'ensure_indexes',
    'publication',
    'status_and_response',
    'request_status',
    'changes_since',
    'active_workflows',
    'send_message',
    'claim_answer',
    'withdraw_pending',
    'insert_event_request',
    'lock_event_token',
    'lock_token',
    'token_requests',
    'open_wait_row',
    'claim_wait',
    'expire_wait',
    'open_wait_tokens',
    'encode_request',
    'decode_request',
    'encode_response',
    'decode_response',
    'message_topic',
    'answer_message',
    'decode_message',
    'WITHDRAWN_MESSAGE',
    'decode_row',
    'requests_table',
    'event_requests_table',
    'event_waits_table',
    'EVENT_WAITS_TABLE_NAME',
    'EVENT_TABLE_NAME',
    'event_calls_table',
    'EVENT_CALLS_TABLE_NAME',
    'record_wait_calls',
    'pending_wait_calls',
)

_metadata = sa.MetaData()


def _index(name: str, columns: tuple[str, ...], rows: str | None) -> sa.Index:
    """An index of `INDEXES`; a partial one (`rows`, a `WHERE`) on both databases."""
    if rows is None:
        return sa.Index(name, *columns)
    return sa.Index(name, *columns, sqlite_where=sa.text(rows), postgresql_where=sa.text(rows))


requests_table = sa.Table(
    TABLE_NAME,
    _metadata,
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
    # The pending order (of all, and of the unaddressed ones) and the change feed (`_sql`).
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
addressees too (`_sql.ADDRESSEES_TABLE_NAME`, made by `ensure_columns` as SQL text, both ways to the database alike),
written with the question, which a person's own page reads instead of everybody's audience.

`due_at` is the deadline the request carries (in its questions' JSON too), or `NO_DEADLINE_ORDER`: a worker of an
earlier version inserts rows without it, which then sort as having no deadline. Databases made before these columns and
the indexes (`_sql.INDEXES`) existed get them at start-up (`ensure_columns`, `ensure_indexes`). Lookups by key use the
primary key; the pending list and the change feed have their indexes.
"""

event_requests_table = sa.Table(
    EVENT_TABLE_NAME,
    _metadata,
    sa.Column('request_id', sa.String(200), primary_key=True),
    sa.Column('token', sa.String(500), nullable=False, index=True),
)
"""One row per question published by `ask_through_store`: its key and the `DBOSEventWaiter` token its answer resolves.

The questions of one token are answered one by one; the answer that completes the set resolves the token.
"""

event_waits_table = sa.Table(
    EVENT_WAITS_TABLE_NAME,
    _metadata,
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
    _metadata,
    sa.Column('token', sa.String(500), primary_key=True),
    sa.Column('calls', sa.Text(), nullable=False),
)
"""One row per wait opened by the waiting handler, written with its `event_waits_table` row: its pending calls as JSON.

A table of its own, not a column of the waits table, so databases made before it get it the way they got
the others (created when missing), and a wait opened by an earlier version simply has no row.
"""


event_approvals_table = sa.Table(
    EVENT_APPROVALS_TABLE_NAME,
    _metadata,
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
)
"""One row per tool call a waiting handler's wait needs approved, published by `ask_through_store` with the wait's
questions: the tool, the model's arguments (JSON), the tool's parameters JSON schema recorded then (edited
arguments are checked against it), who may decide it and where it comes from (`addressing`: the audience and
context, as JSON), and, once decided, the decision (`ApprovalDecision.to_json`) and who made it.

`status` moves once from `pending` to `decided` or (at the wait's deadline) `withdrawn`. A table of its own, so a
database made by an earlier version gets it the way it got the other event tables (created when missing).
"""


def shown_database_url(database_url: str) -> str:
    """`database_url` as messages may show it: the password hidden, undrawable characters replaced."""
    return shown_sqlite_url(database_url) or _shown_by_sqlalchemy(database_url)


def _shown_by_sqlalchemy(database_url: str) -> str:
    from .._text import printable

    try:
        shown = sa.make_url(database_url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: nothing in it is known not to be a secret
        shown = 'the database URL given'
    return printable(shown, allow_newline=False)


def create_engine(database_url: str) -> sa.Engine:
    """An engine on the DBOS system database at `database_url` (`sqlite:///file` or `postgresql://...`)."""
    url = sa.make_url(database_url)
    if url.get_backend_name() == 'sqlite':
        engine = sa.create_engine(url, connect_args={'timeout': BUSY_TIMEOUT_SECONDS})

        @event.listens_for(engine, 'connect')
        def _immediate(dbapi_connection: Any, _record: Any) -> None:  # pyright: ignore[reportUnusedFunction]
            # As DBOS does: writers take the lock when they begin, so two answers cannot interleave.
            # `_sqlite.SqliteDatabase` opens its connections the same way.
            dbapi_connection.isolation_level = 'IMMEDIATE'
            dbapi_connection.execute(f'PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}')

        return engine
    if url.get_backend_name() == 'postgresql':
        return sa.create_engine(url.set(drivername='postgresql+psycopg'), pool_pre_ping=True, pool_size=5)
    raise ValueError(f'unsupported database URL {url.render_as_string()!r}: use sqlite:///FILE or postgresql://...')


def check_sqlite_file(database_url: str) -> None:
    """Raise `NotAQuestionDatabaseError` when `database_url` names a SQLite file that does not exist (or none).

    Opening a missing file would create it, empty: `sqlite:///typo.sqlite` would look like a database where
    no question waits. Other URLs pass.
    """
    if check_plain_sqlite_file(database_url):
        return
    url = sa.make_url(database_url)
    if url.get_backend_name() != 'sqlite':
        return
    path = url.database or ''
    if path in ('', ':memory:') or path.startswith('file:'):
        raise NotAQuestionDatabaseError(f'{database_url} is not a SQLite file; no questions can wait there')
    check_plain_sqlite_file(f'sqlite:///{path}')


def table_exists(engine: sa.Engine) -> bool:
    """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
    inspector = sa.inspect(engine)
    if inspector.has_table(TABLE_NAME):
        return True
    schema = 'dbos' if engine.dialect.name == 'postgresql' else None
    if inspector.has_table(DBOS_TABLE, schema=schema):
        return False  # a DBOS database where no question was asked yet
    raise not_a_question_database(engine.url.render_as_string())


def ensure_table(engine: sa.Engine) -> None:
    """Create the tables if they are missing, and the columns later versions added; safe when several processes
    start at once.
    """
    for attempt in range(3):
        try:
            _metadata.create_all(engine, checkfirst=True)
            break
        except exc.DatabaseError:
            # Another process created it between our check and our CREATE.
            if attempt == 2:
                raise
            time.sleep(0.1)
    ensure_columns(engine, creating=True)


def ensure_columns(engine: sa.Engine, *, creating: bool = False) -> None:
    """Add to an existing questions table the columns an earlier version did not create, and the addressees
    (`_sql.ensure_addressees`); idempotent.

    Safe when several processes start at once: PostgreSQL's `ADD COLUMN IF NOT EXISTS` lets the second one
    through; on SQLite, which has no such clause, a process that loses the race sees the column there and goes on.
    Old workers keep working on the new table: they do not name the new columns, which are nullable. `creating`
    (`ensure_table`): a database user who may not create the addressees gets the database's error, not a warning.
    """
    if not sa.inspect(engine).has_table(TABLE_NAME):
        return
    for name, kind in ADDED_COLUMNS:
        if _has_column(engine, name):
            continue
        statement = add_column_statement(name, kind, engine.dialect.name)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(statement))
                if (backfill := backfill_statement(name, engine.dialect.name)) is not None:
                    conn.execute(sa.text(backfill))
        except exc.DBAPIError as error:
            # Another process added it between our look and our ALTER ("duplicate column name"): go on.
            if _has_column(engine, name):
                continue
            raise missing_column_error(name, statement, str(error.orig)) from None
    ensure_addressees(EngineDatabase(engine), exc.DBAPIError, required=creating)
    ensure_indexes(engine)
    from ._changes import ensure_change_log

    ensure_change_log(EngineDatabase(engine), exc.DBAPIError)


def ensure_indexes(engine: sa.Engine) -> None:
    """Create the questions table's indexes where an earlier version made the table without them; idempotent.

    `CREATE INDEX IF NOT EXISTS` on both databases, so processes starting together do not collide. A database user who
    may not create them (not the table's owner) gets a warning naming the statement, and the store works on, slower.
    """
    for name, statement in index_statements():
        if _has_index(engine, name):
            continue  # a read: a database user who may not write indexes is not warned at every start
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(statement))
        except exc.DBAPIError as error:
            if not _has_index(engine, name):
                warn_missing_index(name, statement, str(error.orig))


def _has_index(engine: sa.Engine, name: str) -> bool:
    return any(found['name'] == name for found in sa.inspect(engine).get_indexes(TABLE_NAME))


def _has_column(engine: sa.Engine, name: str) -> bool:
    # A fresh inspector each time: one caches what it read, and the column may have appeared since.
    return any(column['name'] == name for column in sa.inspect(engine).get_columns(TABLE_NAME))


_engines: dict[str, sa.Engine] = {}
_engines_lock = threading.Lock()


def shared_engine(database_url: str) -> sa.Engine:
    """One engine per database URL for this process, its tables created on first use.

    For the short transactions of `ask_through_store`, `DBOSEventWaiter` and `resolve_dbos_event`, which
    would otherwise connect (and create the tables) anew every time.
    """
    with _engines_lock:
        engine = _engines.get(database_url)
        if engine is None:
            engine = create_engine(database_url)
            try:
                ensure_table(engine)
            except BaseException:
                engine.dispose()
                raise
            _engines[database_url] = engine
        return engine


@contextmanager
def transaction(database_url: str) -> Generator[sa.Connection]:
    """A transaction on the shared engine of `database_url`: committed on leaving, rolled back on an error."""
    with shared_engine(database_url).begin() as conn:
        yield conn


def has_table(engine: sa.Engine, name: str) -> bool:
    """Whether the table `name` is in the database (older databases lack the event tables)."""
    return sa.inspect(engine).has_table(name)


class EngineDatabase:
    """The `_sql.Database` of a SQLAlchemy engine: PostgreSQL, or a SQLite URL with options."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        """The engine, which this owns (`dispose` disposes of it)."""

    def connect(self) -> Any:
        """A connection for reads; rolled back when it is left."""
        return self.engine.connect()

    def begin(self) -> Any:
        """A transaction: committed on leaving, rolled back on an error."""
        return self.engine.begin()

    def has_table(self, name: str) -> bool:
        """Whether the table `name` is in the database."""
        return has_table(self.engine, name)

    def table_exists(self) -> bool:
        """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
        return table_exists(self.engine)

    def ensure_table(self) -> None:
        """Create the tables if they are missing, and the columns later versions added."""
        ensure_table(self.engine)

    def ensure_columns(self) -> None:
        """Add the columns an earlier version did not create."""
        ensure_columns(self.engine)

    def dispose(self) -> None:
        """Close the engine's connections; it reconnects if used again."""
        self.engine.dispose()
