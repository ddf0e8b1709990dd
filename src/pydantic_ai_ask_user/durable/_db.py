"""The tables where durable questions and waits are kept, in the DBOS system database next to the workflows.

All the SQL of the durable package is here, as named functions; the other modules call them.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Generator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import sqlalchemy as sa
from sqlalchemy import event, exc
from sqlalchemy.dialects import postgresql, sqlite

from .._answers import LATEST_DEADLINE, MAX_ANSWERED_BY_LENGTH, AskUserRequest, AskUserResponse, QuestionWithdrawn
from .._json import questions_to_json, response_from_json, response_to_json
from .._question_store import EVERYTHING, NO_DEADLINE_ORDER, PendingFilter
from .._text import printable

__all__ = (
    'shown_database_url',
    'TABLE_NAME',
    'DEFAULT_DATABASE_URL',
    'Status',
    'StoredRequest',
    'Identity',
    'ACTIVE_WORKFLOW_STATUSES',
    'create_engine',
    'ensure_table',
    'ensure_columns',
    'table_exists',
    'NotAQuestionDatabaseError',
    'check_sqlite_file',
    'insert_pending',
    'insert_encoded',
    'shared_engine',
    'transaction',
    'has_table',
    'select_requests',
    'select_pending_page',
    'count_pending_rows',
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

TABLE_NAME = 'ask_user_requests'
"""The table holding one row per durable question: pending, answered or withdrawn."""

DEFAULT_DATABASE_URL = 'sqlite:///ask_user.sqlite'
"""The embedded default: a SQLite file in the working directory, no server to run."""

Status = Literal['pending', 'answered', 'withdrawn']
"""Where a question stands: waiting, answered (or declined) once, or given up by its run."""

ANSWERED_BY_LENGTH = MAX_ANSWERED_BY_LENGTH
"""The width of the `answered_by` column: the longest `AskUserResponse.answered_by`."""

_metadata = sa.MetaData()

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
    # When the wait runs out (the request's deadline), or `NO_DEADLINE_ORDER` for none: the first key of the inbox's
    # order, so that a page is a range of one index rather than a sort of every pending row.
    sa.Column('due_at', sa.Float(), nullable=False, server_default=sa.text(repr(NO_DEADLINE_ORDER))),
    # The inbox's order, keyset-paged: `status = 'pending' AND (due_at, created_at, id) > cursor ORDER BY ... LIMIT n`
    # reads n entries of this index, and counting the pending rows reads only it.
    sa.Index('ix_ask_user_requests_pending_order', 'status', 'due_at', 'created_at', 'id'),
    # The change feed every open inbox polls (`updated_at >= since`), and the pruning of finished rows.
    sa.Index('ix_ask_user_requests_updated_at', 'updated_at'),
)
"""One row per question; `status` moves from `pending` to `answered` or `withdrawn` once, atomically.

`id` is the question's `AskUserRequest.key`: what the store, `ask-user answer` and the wait look it up by.
`run_id` and `tool_call_id` are the run that asked and the call's own id, so a row reads back as the request
that was asked (`id` the tool call id, `key` the row's `id`). Both are `NULL` on rows of earlier versions,
whose `id` was the tool call id: such a row reads back as a request without a run, whose key is that id, so
it keeps its address. A request without a run is stored the same way (its key is its id).

`answered_by` is who answered (`AskUserResponse.answered_by`), set with the answer; `NULL` while pending, when
withdrawn, and when the answer did not say. `due_at` is the deadline the request carries (in its questions' JSON too),
or `NO_DEADLINE_ORDER`. Databases made before these columns and indexes existed get them at start-up
(`ensure_columns`, `ensure_indexes`); a worker of an earlier version inserts rows without `due_at`, which then sort as
having no deadline.

Lookups by key use the primary key; the pending list and the change feed have the two indexes above.
"""

EVENT_TABLE_NAME = 'ask_user_event_requests'
"""The table tying questions put to a person through `RequestInput` to the resume token of their run's wait."""

event_requests_table = sa.Table(
    EVENT_TABLE_NAME,
    _metadata,
    sa.Column('request_id', sa.String(200), primary_key=True),
    sa.Column('token', sa.String(500), nullable=False, index=True),
)
"""One row per question published by `ask_through_store`: its key and the `DBOSEventWaiter` token its answer resolves.

The questions of one token are answered one by one; the answer that completes the set resolves the token.
"""

EVENT_WAITS_TABLE_NAME = 'ask_user_event_waits'
"""The table holding one row per `DBOSEventWaiter` wait: whether it is still open, resolved, or expired."""

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

EVENT_CALLS_TABLE_NAME = 'ask_user_event_calls'
"""The table holding the calls each `RequestInput` wait decides, so a resolver is checked against them."""

event_calls_table = sa.Table(
    EVENT_CALLS_TABLE_NAME,
    _metadata,
    sa.Column('token', sa.String(500), primary_key=True),
    sa.Column('calls', sa.Text(), nullable=False),
)
"""One row per wait opened by `RequestInput`, written with its `event_waits_table` row: its pending calls as JSON.

A table of its own, not a column of the waits table, so databases made before it get it the way they got
the others (created when missing), and a wait opened by an earlier version simply has no row.
"""


@dataclass(frozen=True)
class StoredRequest:
    """One row of the table, decoded."""

    request: AskUserRequest
    """The questions as asked: `request.id` is the tool call id, `request.key` the row's id."""

    workflow_id: str
    """The DBOS workflow that waits for the answer."""

    status: Status
    """Where the question stands."""

    response: AskUserResponse | None
    """The answer, once `status` is `answered`."""

    created_at: float
    """When the question was first published, in seconds since the epoch."""

    answered_by: str | None = None
    """Who answered, from the `answered_by` column, once `status` is `answered` and the answer said who."""

    @property
    def key(self) -> str:
        """The question's key, the row's id: what `DBOSQuestionStore.get`, `respond` and `ask-user answer` take."""
        return self.request.key


def shown_database_url(database_url: str) -> str:
    """`database_url` as messages may show it: the password hidden, undrawable characters replaced."""
    try:
        shown = sa.make_url(database_url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: nothing in it is known not to be a secret
        shown = 'the database URL given'
    return printable(shown, allow_newline=False)


def create_engine(database_url: str) -> sa.Engine:
    """An engine on the DBOS system database at `database_url` (`sqlite:///file` or `postgresql://...`)."""
    url = sa.make_url(database_url)
    if url.get_backend_name() == 'sqlite':
        engine = sa.create_engine(url, connect_args={'timeout': 30})

        @event.listens_for(engine, 'connect')
        def _immediate(dbapi_connection: Any, _record: Any) -> None:  # pyright: ignore[reportUnusedFunction]
            # As DBOS does: writers take the lock when they begin, so two answers cannot interleave.
            dbapi_connection.isolation_level = 'IMMEDIATE'
            dbapi_connection.execute('PRAGMA busy_timeout=30000')

        return engine
    if url.get_backend_name() == 'postgresql':
        return sa.create_engine(url.set(drivername='postgresql+psycopg'), pool_pre_ping=True, pool_size=5)
    raise ValueError(f'unsupported database URL {url.render_as_string()!r}: use sqlite:///FILE or postgresql://...')


class NotAQuestionDatabaseError(RuntimeError):
    """The database is not one where questions wait: a SQLite file that does not exist, or a database with
    neither the questions table nor DBOS's own tables (a typo in the URL, or somebody else's database).

    Raised by a `DBOSQuestionStore(create_table=False)`, which writes no schema into such a database.
    """


_DBOS_TABLE = 'workflow_status'
"""A table every DBOS system database has, in the `dbos` schema on PostgreSQL and in the file on SQLite."""


def check_sqlite_file(database_url: str) -> None:
    """Raise `NotAQuestionDatabaseError` when `database_url` names a SQLite file that does not exist (or none).

    Opening a missing file would create it, empty: `sqlite:///typo.sqlite` would look like a database where
    no question waits. Other URLs pass.
    """
    url = sa.make_url(database_url)
    if url.get_backend_name() != 'sqlite':
        return
    path = url.database or ''
    if path in ('', ':memory:') or path.startswith('file:'):
        raise NotAQuestionDatabaseError(f'{database_url} is not a SQLite file; no questions can wait there')
    if not os.path.isfile(path):
        raise NotAQuestionDatabaseError(f'there is no SQLite database at {os.path.abspath(path)}')


def table_exists(engine: sa.Engine) -> bool:
    """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
    inspector = sa.inspect(engine)
    if inspector.has_table(TABLE_NAME):
        return True
    schema = 'dbos' if engine.dialect.name == 'postgresql' else None
    if inspector.has_table(_DBOS_TABLE, schema=schema):
        return False  # a DBOS database where no question was asked yet
    raise NotAQuestionDatabaseError(
        f'{engine.url.render_as_string()} is not a question database: it has neither the {TABLE_NAME} table '
        'nor the tables of DBOS'
    )


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
    ensure_columns(engine)


_ADDED_COLUMNS = (
    requests_table.c.answered_by,
    requests_table.c.run_id,
    requests_table.c.tool_call_id,
    requests_table.c.due_at,
)
"""The columns of the questions table that earlier versions did not create, added to their databases at start-up."""


class MissingColumnError(RuntimeError):
    """The questions table lacks a column of this version, and the database user may not add it."""


def ensure_columns(engine: sa.Engine) -> None:
    """Add to an existing questions table the columns an earlier version did not create; idempotent.

    Safe when several processes start at once: PostgreSQL's `ADD COLUMN IF NOT EXISTS` lets the second one
    through; on SQLite, which has no such clause, a process that loses the race sees the column there and goes on.
    Old workers keep working on the new table: they do not name the new columns, which are nullable.
    """
    if not sa.inspect(engine).has_table(TABLE_NAME):
        return
    missing = [column for column in _ADDED_COLUMNS if not _has_column(engine, column.name)]
    for column in missing:
        kind = column.type.compile(dialect=engine.dialect)
        if column.server_default is not None:
            kind += f' NOT NULL DEFAULT {NO_DEADLINE_ORDER!r}'
        if_not_exists = ' IF NOT EXISTS' if engine.dialect.name == 'postgresql' else ''
        statement = f'ALTER TABLE {TABLE_NAME} ADD COLUMN{if_not_exists} {column.name} {kind}'
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(statement))
                if column is requests_table.c.due_at:
                    _backfill_due_at(conn)
        except exc.DBAPIError as error:
            # Another process added it between our look and our ALTER ("duplicate column name"): go on.
            if _has_column(engine, column.name):
                continue
            # Not the table's owner (PostgreSQL), or a read-only database: say what to do, not only what failed.
            raise MissingColumnError(
                f'the questions table {TABLE_NAME} was made by an earlier version and lacks the column '
                f'{column.name}, which this database user cannot add ({str(error.orig).splitlines()[0]}); '
                f"have the table's owner run once: {statement}"
            ) from None
    ensure_indexes(engine)


def _backfill_due_at(conn: sa.Connection) -> None:
    """Copy into the new `due_at` column the deadline each pending row's questions carry (as `encode_request` wrote
    it), in one statement; rows without one, or with one out of range (shown as none), keep `NO_DEADLINE_ORDER`.
    """
    if conn.dialect.name == 'postgresql':
        deadline = "(questions::jsonb ->> 'deadline')::double precision"
        kind = "jsonb_typeof(questions::jsonb -> 'deadline') = 'number'"
    else:
        deadline = "json_extract(questions, '$.deadline')"
        kind = "json_valid(questions) AND json_type(questions, '$.deadline') IN ('integer', 'real')"
    conn.execute(
        sa.text(
            f'UPDATE {TABLE_NAME} SET due_at = {deadline} '
            f"WHERE status = 'pending' AND questions LIKE '%\"deadline\"%' AND {kind} "
            f'AND {deadline} BETWEEN 0 AND {LATEST_DEADLINE!r}'
        )
    )


_log = logging.getLogger('pydantic_ai_ask_user.durable')


def ensure_indexes(engine: sa.Engine) -> None:
    """Create the questions table's indexes where an earlier version made the table without them; idempotent.

    `CREATE INDEX IF NOT EXISTS` on both databases, so processes starting together do not collide. A database user who
    may not create them (not the table's owner) gets a warning naming the statement, and the store works on, slower.
    """
    for index in requests_table.indexes:
        try:
            with engine.begin() as conn:
                index.create(conn, checkfirst=True)
        except exc.DBAPIError as error:
            if any(found['name'] == index.name for found in sa.inspect(engine).get_indexes(TABLE_NAME)):
                continue  # another process made it between our look and our CREATE
            statement = str(sa.schema.CreateIndex(index).compile(dialect=engine.dialect))
            _log.warning(
                'the questions table has no index %s and this database user cannot create it (%s); listing the '
                "questions reads the whole table until the table's owner runs once: %s",
                index.name,
                str(error.orig).splitlines()[0],
                statement,
            )


def _has_column(engine: sa.Engine, name: str) -> bool:
    # A fresh inspector each time: one caches what it read, and the column may have appeared since.
    return any(column['name'] == name for column in sa.inspect(engine).get_columns(TABLE_NAME))


def insert_pending(
    conn: sa.Connection, request: AskUserRequest, workflow_id: str, *, status: Status = 'pending'
) -> None:
    """Publish `request` as pending (or `status`), unless a row with its key exists already (a replay)."""
    insert_encoded(conn, Identity.of(request), encode_request(request), workflow_id, status=status)


@dataclass(frozen=True)
class Identity:
    """Who a stored question is: its key (the row's id), and the run and tool call it was made from."""

    key: str
    """`AskUserRequest.key`: the row's id."""

    tool_call_id: str
    """`AskUserRequest.id`: the tool call id, as the model and the UIs see it."""

    run_id: str | None = None
    """`AskUserRequest.run_id`: the run that asked, or `None` for a request that belongs to no run."""

    @classmethod
    def of(cls, request: AskUserRequest) -> Identity:
        """The identity of `request`."""
        return cls(key=request.key, tool_call_id=request.id, run_id=request.run_id)


def insert_encoded(
    conn: sa.Connection, identity: Identity, questions_json: str, workflow_id: str, *, status: Status = 'pending'
) -> None:
    """`insert_pending` for a request already encoded by `encode_request`."""
    now = time.time()
    values = {
        'id': identity.key,
        'workflow_id': workflow_id,
        'questions': questions_json,
        'status': status,
        'response': None,
        'created_at': now,
        'updated_at': now,
        'run_id': identity.run_id,
        'tool_call_id': identity.tool_call_id,
        'due_at': _due_at(questions_json),
    }
    conn.execute(_dialect(conn).insert(requests_table).values(values).on_conflict_do_nothing(index_elements=['id']))


def _due_at(questions_json: str) -> float:
    """The `due_at` of a row: the deadline `encode_request` wrote into its questions, or `NO_DEADLINE_ORDER`."""
    try:
        deadline = json.loads(questions_json).get('deadline')
    except (ValueError, AttributeError):
        return NO_DEADLINE_ORDER
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 <= deadline <= LATEST_DEADLINE:
        return float(deadline)
    return NO_DEADLINE_ORDER


def _dialect(conn: sa.Connection) -> Any:
    return postgresql if conn.dialect.name == 'postgresql' else sqlite


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


def select_requests(
    conn: sa.Connection,
    *,
    status: Status | None = None,
    request_id: str | None = None,
    request_ids: Sequence[str] | None = None,
    decoded: MutableMapping[str, AskUserRequest] | None = None,
) -> list[StoredRequest]:
    """The decoded rows with this status, this key or these keys (all when no filter is given), oldest first.

    `decoded` holds requests decoded before, by key: a row's questions never change once published, so a
    request found there is not decoded (and validated) again, and one decoded here is added to it.
    """
    query = sa.select(requests_table)
    if status is not None:
        query = query.where(requests_table.c.status == status)
    if request_id is not None:
        query = query.where(requests_table.c.id == request_id)
    if request_ids is not None:
        query = query.where(requests_table.c.id.in_(request_ids))
    rows = conn.execute(query.order_by(requests_table.c.created_at, requests_table.c.id)).all()
    return _decode_rows(rows, decoded)


def _decode_rows(
    rows: Sequence[sa.Row[Any]], decoded: MutableMapping[str, AskUserRequest] | None
) -> list[StoredRequest]:
    if decoded is None:
        return [decode_row(row) for row in rows]
    stored: list[StoredRequest] = []
    for row in rows:
        stored.append(decode_row(row, decoded.get(row.id)))
        decoded[row.id] = stored[-1].request
    return stored


_PENDING_ORDER = (requests_table.c.due_at, requests_table.c.created_at, requests_table.c.id)
"""The inbox's order of pending rows: the nearest deadline first (none last), then the oldest, then by key."""


def _pending_where(where: PendingFilter) -> list[sa.ColumnElement[bool]]:
    conditions: list[sa.ColumnElement[bool]] = [requests_table.c.status == 'pending']
    if where.asked_before is not None:
        conditions.append(requests_table.c.created_at < where.asked_before)
    if where.asked_after is not None:
        conditions.append(requests_table.c.created_at >= where.asked_after)
    return conditions


def pending_page_query(
    *, after: tuple[float, float, str] | None, limit: int, where: PendingFilter = EVERYTHING
) -> sa.Select[Any]:
    """The statement of `select_pending_page`: a range of the pending-order index, never a sort of every row."""
    query = sa.select(requests_table).where(*_pending_where(where))
    if after is not None:
        query = query.where(sa.tuple_(*_PENDING_ORDER) > sa.tuple_(*(sa.literal(value) for value in after)))
    return query.order_by(*_PENDING_ORDER).limit(limit)


def select_pending_page(
    conn: sa.Connection,
    *,
    after: tuple[float, float, str] | None,
    limit: int,
    where: PendingFilter = EVERYTHING,
    decoded: MutableMapping[str, AskUserRequest] | None = None,
) -> list[StoredRequest]:
    """At most `limit` pending rows after the position `after` (an `order_key`), in the inbox's order, decoded."""
    rows = conn.execute(pending_page_query(after=after, limit=limit, where=where)).all()
    return _decode_rows(rows, decoded)


def count_pending_query(where: PendingFilter = EVERYTHING) -> sa.Select[Any]:
    """The statement of `count_pending_rows`: it reads the pending-order index only."""
    return sa.select(sa.func.count()).select_from(requests_table).where(*_pending_where(where))


def count_pending_rows(conn: sa.Connection, where: PendingFilter = EVERYTHING) -> int:
    """How many rows are pending (that pass `where`), without reading their questions."""
    return int(conn.execute(count_pending_query(where)).scalar_one())


def prune_finished(conn: sa.Connection, before: float, *, has_event_tables: bool) -> int:
    """Delete the questions answered or withdrawn before `before` (and their tie to a wait's token); how many.

    Not those of a `RequestInput` wait still open: its last answer reads every answer of its questions.
    """
    finished = [requests_table.c.status != 'pending', requests_table.c.updated_at < before]
    if has_event_tables:
        open_tokens = sa.select(event_waits_table.c.token).where(event_waits_table.c.status == 'pending')
        still_read = sa.select(event_requests_table.c.request_id).where(event_requests_table.c.token.in_(open_tokens))
        finished.append(requests_table.c.id.not_in(still_read))
        doomed = sa.select(requests_table.c.id).where(*finished)
        conn.execute(sa.delete(event_requests_table).where(event_requests_table.c.request_id.in_(doomed)))
    return conn.execute(sa.delete(requests_table).where(*finished)).rowcount


def publication(conn: sa.Connection, request_id: str) -> tuple[str, Status, float, str]:
    """The workflow id, status, creation time and questions (as `encode_request` wrote them) of a published request."""
    columns = (
        requests_table.c.workflow_id,
        requests_table.c.status,
        requests_table.c.created_at,
        requests_table.c.questions,
    )
    workflow_id, status, created_at, questions = conn.execute(
        sa.select(*columns).where(requests_table.c.id == request_id)
    ).one()
    return workflow_id, status, float(created_at), questions


def status_and_response(conn: sa.Connection, request_id: str) -> tuple[Status, str | None]:
    """The status and response (JSON, or `None`) of a published request."""
    columns = (requests_table.c.status, requests_table.c.response)
    status, response = conn.execute(sa.select(*columns).where(requests_table.c.id == request_id)).one()
    return status, response


def request_status(conn: sa.Connection, request_id: str) -> Status | None:
    """Where the request stands, or `None` when there is no such row."""
    found = conn.execute(sa.select(requests_table.c.status).where(requests_table.c.id == request_id)).scalar()
    return cast(Status | None, found)


def changes_since(conn: sa.Connection, since: float) -> list[tuple[str, Status, float]]:
    """The id, status and creation time of every row changed at or after `since`, oldest first.

    Without the questions and the response, so a poll decodes nothing for rows it already knows.
    """
    columns = (requests_table.c.id, requests_table.c.status, requests_table.c.created_at)
    query = sa.select(*columns).where(requests_table.c.updated_at >= since)
    rows = conn.execute(query.order_by(requests_table.c.created_at, requests_table.c.id)).all()
    return [(request_id, status, float(created_at)) for request_id, status, created_at in rows]


ACTIVE_WORKFLOW_STATUSES = ('PENDING', 'ENQUEUED', 'DELAYED')
"""DBOS workflow statuses under which a question can still be answered; any other means nobody waits."""

_dbos_workflows = sa.Table(
    'workflow_status',
    sa.MetaData(),  # DBOS's own table: never created or altered here
    sa.Column('workflow_uuid', sa.Text(), primary_key=True),
    sa.Column('status', sa.Text()),
)
"""The two columns of DBOS's `workflow_status` table that a claim reads (in schema `dbos` on PostgreSQL)."""

_dbos_workflows_postgres = _dbos_workflows.to_metadata(sa.MetaData(), schema='dbos')


def active_workflows(conn: sa.Connection, workflow_ids: Sequence[str]) -> set[str]:
    """Those of these DBOS workflows that can still receive an answer (`ACTIVE_WORKFLOW_STATUSES`), read from DBOS's
    `workflow_status` table: a workflow that ended, or was deleted, is not among them.
    """
    if not workflow_ids:
        return set()
    workflows = _dbos_workflows_postgres if conn.dialect.name == 'postgresql' else _dbos_workflows
    query = sa.select(workflows.c.workflow_uuid).where(
        workflows.c.workflow_uuid.in_(list(workflow_ids)), workflows.c.status.in_(ACTIVE_WORKFLOW_STATUSES)
    )
    return set(conn.execute(query).scalars())


_PORTABLE_JSON = 'portable_json'
"""DBOS's language-neutral serialization of a message (`DBOSPortableJSON`): compact JSON, read by any DBOS client."""


def send_message(conn: sa.Connection, workflow_id: str, message: str, topic: str, idempotency_key: str) -> None:
    """Send `message` (a string) to DBOS workflow `workflow_id` on `topic`, in the transaction of `conn`, as `DBOS.send`
    does, without DBOS: no DBOS launch, client or import, so `ask-user answer` starts in tenths of a second.

    A DBOS message is one row of its `notifications` table, which the receiving `DBOS.recv` finds (woken by the
    table's `NOTIFY` trigger on PostgreSQL, by polling on SQLite). On PostgreSQL this calls `dbos.send_message`, the
    SQL function DBOS's schema provides for clients in any language; on SQLite, which has no functions, it is the
    same `INSERT` that function makes. The message is stored in DBOS's portable JSON serialization, which every DBOS
    reader decodes (to this same string), and its id is `IDEMPOTENCY_KEY::WORKFLOW_ID`, as `DBOSClient.send` names it,
    so a message sent twice (a retried transaction) is received once.
    """
    serialized = json.dumps(message, separators=(',', ':'), ensure_ascii=False)
    message_id = f'{idempotency_key}::{workflow_id}'
    values = {'workflow_id': workflow_id, 'message': serialized, 'topic': topic, 'message_id': message_id}
    if conn.dialect.name == 'postgresql':
        statement = 'SELECT dbos.send_message(:workflow_id, CAST(:message AS json), :topic, :message_id)'
    else:
        statement = (
            'INSERT INTO notifications (destination_uuid, topic, message, message_uuid, serialization) '
            f"VALUES (:workflow_id, :topic, :message, :message_id, '{_PORTABLE_JSON}') "
            'ON CONFLICT (message_uuid) DO NOTHING'
        )
    conn.execute(sa.text(statement), values)


def claim_answer(
    conn: sa.Connection,
    request_id: str,
    response_json: str,
    answered_by: str | None = None,
    *,
    workflow_id: str | None = None,
) -> bool:
    """Move a pending request to answered with `response_json` and who answered; False when it was not pending
    (whoever raced it), or, given the `workflow_id` waiting for it, when that DBOS workflow no longer waits.

    One conditional UPDATE decides it. With `workflow_id`, the workflow's status row is share-locked by the same
    statement on PostgreSQL, so a cancellation either commits first (no claim) or waits until the answer is
    recorded and sent; SQLite's writers take the database lock when they begin, which orders them the same way.
    """
    conditions = [requests_table.c.id == request_id, requests_table.c.status == 'pending']
    if workflow_id is not None:
        workflows = _dbos_workflows_postgres if conn.dialect.name == 'postgresql' else _dbos_workflows
        waiting = (
            sa.select(workflows.c.workflow_uuid)
            .where(workflows.c.workflow_uuid == workflow_id, workflows.c.status.in_(ACTIVE_WORKFLOW_STATUSES))
            .with_for_update(read=True)
        )
        conditions.append(requests_table.c.workflow_id.in_(waiting))
    claimed = conn.execute(
        sa.update(requests_table)
        .where(*conditions)
        .values(status='answered', response=response_json, answered_by=answered_by, updated_at=time.time())
    )
    return claimed.rowcount == 1


def withdraw_pending(conn: sa.Connection, request_ids: Sequence[str] = (), *, token: str | None = None) -> int:
    """Withdraw those of these requests (or of the questions of `token`) still pending; how many were.

    The one way a question is given up: by its run's deadline, by a run that ended, or by a cancelled caller.
    """
    if token is not None:
        ids: Any = sa.select(event_requests_table.c.request_id).where(event_requests_table.c.token == token)
    else:
        ids = list(request_ids)
    withdrawn = conn.execute(
        sa.update(requests_table)
        .where(requests_table.c.id.in_(ids), requests_table.c.status == 'pending')
        .values(status='withdrawn', updated_at=time.time())
    )
    return withdrawn.rowcount


def insert_event_request(conn: sa.Connection, request_id: str, token: str) -> None:
    """Tie the question whose key is `request_id` to the wait of `token`; idempotent."""
    conn.execute(
        _dialect(conn)
        .insert(event_requests_table)
        .values(request_id=request_id, token=token)
        .on_conflict_do_nothing(index_elements=['request_id'])
    )


def lock_event_token(conn: sa.Connection, request_id: str) -> str | None:
    """The token the question keyed `request_id` was published under, with every row of that token locked; `None` for
    a plain question.
    """
    token = conn.execute(
        sa.select(event_requests_table.c.token).where(event_requests_table.c.request_id == request_id)
    ).scalar_one_or_none()
    if token is not None:
        lock_token(conn, token)
    return token


def lock_token(conn: sa.Connection, token: str) -> None:
    """Lock the question rows of `token`, in a fixed order."""
    # On PostgreSQL, answers to sibling questions wait here for one another; SQLite's writers are serial anyway.
    conn.execute(
        sa.select(event_requests_table.c.request_id)
        .where(event_requests_table.c.token == token)
        .order_by(event_requests_table.c.request_id)
        .with_for_update()
    ).all()


def token_requests(conn: sa.Connection, token: str) -> list[StoredRequest]:
    """The decoded questions published for the wait of `token`."""
    ids = sa.select(event_requests_table.c.request_id).where(event_requests_table.c.token == token)
    rows = conn.execute(sa.select(requests_table).where(requests_table.c.id.in_(ids))).all()
    return [decode_row(row) for row in rows]


def open_wait_row(conn: sa.Connection, token: str, workflow_id: str) -> None:
    """Record the wait of `token` as open; idempotent."""
    values = {'token': token, 'workflow_id': workflow_id, 'status': 'pending', 'updated_at': time.time()}
    conn.execute(
        _dialect(conn).insert(event_waits_table).values(values).on_conflict_do_nothing(index_elements=['token'])
    )


def _move_wait(conn: sa.Connection, token: str, status: Literal['resolved', 'expired']) -> bool:
    moved = conn.execute(
        sa.update(event_waits_table)
        .where(event_waits_table.c.token == token, event_waits_table.c.status == 'pending')
        .values(status=status, updated_at=time.time())
    )
    return moved.rowcount == 1


def claim_wait(conn: sa.Connection, token: str) -> bool:
    """Move the wait of `token` from open to resolved; False if it is unknown, resolved already, or expired."""
    return _move_wait(conn, token, 'resolved')


def expire_wait(conn: sa.Connection, token: str) -> bool:
    """Move the wait of `token` from open to expired; False if a resolver claimed it first (or it is unknown)."""
    return _move_wait(conn, token, 'expired')


def open_wait_tokens(conn: sa.Connection) -> list[str]:
    """The tokens of every wait still open (neither resolved nor expired), oldest first."""
    query = sa.select(event_waits_table.c.token).where(event_waits_table.c.status == 'pending')
    return list(conn.execute(query.order_by(event_waits_table.c.updated_at)).scalars())


def record_wait_calls(conn: sa.Connection, token: str, calls: str) -> None:
    """Record the pending calls (JSON) the wait of `token` decides; idempotent, as the step calling it may run again."""
    values = {'token': token, 'calls': calls}
    conn.execute(
        _dialect(conn).insert(event_calls_table).values(values).on_conflict_do_nothing(index_elements=['token'])
    )


def pending_wait_calls(conn: sa.Connection, token: str) -> str | None:
    """The pending calls (JSON) the open wait of `token` decides; `None` when it is not open or recorded none."""
    joined = event_calls_table.join(event_waits_table, event_calls_table.c.token == event_waits_table.c.token)
    query = (
        sa.select(event_calls_table.c.calls)
        .select_from(joined)
        .where(event_calls_table.c.token == token, event_waits_table.c.status == 'pending')
    )
    return conn.execute(query).scalar_one_or_none()


def decode_row(row: sa.Row[Any], request: AskUserRequest | None = None) -> StoredRequest:
    """The decoded form of one table row; given `request` (its questions, decoded before), not decoded again."""
    mapping = row._mapping  # pyright: ignore[reportPrivateUsage]
    response = mapping['response']
    answered_by = mapping.get('answered_by')
    decoded = decode_response(response) if response is not None else None
    if decoded is not None and decoded.answered_by is None and answered_by is not None:
        decoded = replace(decoded, answered_by=answered_by)  # written by a version that kept it in the column only
    if request is None:
        # Rows of earlier versions have neither: their id is the tool call id, and the request belongs to no run.
        run_id = mapping.get('run_id')
        tool_call_id = mapping.get('tool_call_id')
        request = decode_request(mapping['questions'], tool_call_id or mapping['id'], run_id=run_id or None)
    return StoredRequest(
        request=request,
        workflow_id=mapping['workflow_id'],
        status=cast(Status, mapping['status']),
        response=decoded,
        created_at=float(mapping['created_at']),
        answered_by=answered_by if answered_by is not None else decoded.answered_by if decoded is not None else None,
    )


def encode_request(request: AskUserRequest) -> str:
    """The questions as the JSON arguments of an `ask_user_question` call, and `notes`, `deadline`, `run_step` if set.

    `{"questions": [...]}` for a request with none, as earlier versions wrote every request; `recommended`
    is kept in each question that has one. The run step is part of the key (a run may repeat a call id in
    another turn), so a row reads back as the request it was, key and all, without a column of its own.
    """
    data: dict[str, Any] = {'questions': questions_to_json(request)}
    if request.notes:
        data['notes'] = True
    if request.deadline is not None:
        data['deadline'] = request.deadline
    if request.run_step is not None:
        data['run_step'] = request.run_step
    return json.dumps(data, ensure_ascii=False)


def decode_request(text: str, request_id: str, *, run_id: str | None = None) -> AskUserRequest:
    """The request stored as `text`, validated again as the tool would; `notes` is False when the row has none.

    `request_id` is the tool call id, `run_id` the run that asked (`None` for a request that belongs to no run).
    """
    data = json.loads(text)
    if not isinstance(data, dict):
        return AskUserRequest.from_tool_args(text, id=request_id)  # refused, with the tool's own message
    arguments = cast(dict[str, Any], data)
    notes = arguments.pop('notes', False)
    deadline = arguments.pop('deadline', None)
    step = arguments.pop('run_step', None)
    run_step = step if isinstance(step, int) and not isinstance(step, bool) and step >= 0 and run_id else None
    request = AskUserRequest.from_tool_args(
        arguments, id=request_id, notes=notes is True, run_id=run_id, run_step=run_step
    )
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 <= deadline <= LATEST_DEADLINE:
        request = replace(request, deadline=float(deadline))  # one out of range (not ours) is shown as none
    return request


def encode_response(response: AskUserResponse) -> str:
    """`response` as JSON, in the `AskUserResponse` shape."""
    return json.dumps(response_to_json(response), ensure_ascii=False)


def decode_response(text: str) -> AskUserResponse:
    """The response stored as `text`."""
    return response_from_json(json.loads(text))


WITHDRAWN_MESSAGE = '{"withdrawn": true}'
"""The DBOS message that ends the wait of a withdrawn request (by its caller, or because its workflow ended).

It reads as `QuestionWithdrawn`, never as a decline: nobody answered.
"""


def answer_message(response_json: str) -> str:
    """The DBOS message that carries a response, encoded by `encode_response`, to the waiting workflow.

    Written around the encoded response, not encoded again: `{"response": ...}`.
    """
    return f'{{"response": {response_json}}}'


def decode_message(message: str) -> AskUserResponse:
    """The response an `answer_message` carries; `QuestionWithdrawn` for `WITHDRAWN_MESSAGE`."""
    data = json.loads(message)
    if data.get('withdrawn'):
        raise QuestionWithdrawn()
    return response_from_json(data['response'])


def message_topic(request_id: str) -> str:
    """The DBOS message topic the waiting workflow receives the answer to the question with this key on."""
    return f'ask_user:{request_id}'
