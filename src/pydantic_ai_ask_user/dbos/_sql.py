"""The SQL of the durable package, as text shared by its two ways to a database, and what its rows decode to.

Every statement here runs unchanged through SQLAlchemy (`sa.text`, on PostgreSQL and SQLite: the DBOS workers,
`DBOSAnswerer`, the waiter) and through the standard library's `sqlite3` (`DBOSQuestionStore` on a SQLite file,
so `ask-user pending`, `answer` and `resolve` start without SQLAlchemy). Parameters are named (`:name`), which
both take; the few differences between the dialects (PostgreSQL's row locks, DBOS's `dbos` schema and its
`send_message` function) are chosen by the connection's dialect. This module imports neither SQLAlchemy nor
DBOS: the tables are created by SQLAlchemy (`_db.ensure_table`), never here.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, MutableMapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from pydantic import ValidationError

from .._answers import (
    LATEST_DEADLINE,
    MAX_ANSWERED_BY_LENGTH,
    AskUserRequest,
    AskUserResponse,
    QuestionWithdrawn,
    format_validation_error,
)
from .._approvals import ApprovalDecision, PendingApproval
from .._audience import (
    MAX_NAME_LENGTH,
    Person,
    QuestionContext,
    addressed_to,
    audience_from_json,
    check_audience,
    context_from_json,
    context_to_json,
)
from .._json import questions_to_json, response_from_json, response_to_json
from .._question_store import EVERYTHING, NO_DEADLINE_ORDER, PendingFilter
from .._text import printable

if TYPE_CHECKING:
    import sqlalchemy as sa

    Connection = sqlite3.Connection | sa.Connection
    """A connection the statements run on: the standard library's, or SQLAlchemy's (any dialect)."""

__all__ = (
    'TABLE_NAME',
    'DEFAULT_DATABASE_URL',
    'Status',
    'ANSWERED_BY_LENGTH',
    'EVENT_TABLE_NAME',
    'EVENT_WAITS_TABLE_NAME',
    'EVENT_CALLS_TABLE_NAME',
    'EVENT_APPROVALS_TABLE_NAME',
    'ApprovalStatus',
    'StoredApproval',
    'insert_approval',
    'select_approvals',
    'count_pending_approvals',
    'approval_changes_since',
    'claim_approval',
    'withdraw_approvals',
    'DBOS_TABLE',
    'ADDED_COLUMNS',
    'ADDRESSEES_TABLE_NAME',
    'ADDRESSEES_ORDER_INDEX',
    'addressees_statements',
    'insert_addressees',
    'ensure_addressees',
    'has_addressees',
    'add_column_statement',
    'MissingColumnError',
    'missing_column_error',
    'NotAQuestionDatabaseError',
    'not_a_question_database',
    'Database',
    'StoredRequest',
    'Identity',
    'ACTIVE_WORKFLOW_STATUSES',
    'insert_pending',
    'insert_encoded',
    'select_requests',
    'audience_condition',
    'INDEXES',
    'index_statements',
    'backfill_statement',
    'warn_missing_index',
    'pending_page_statement',
    'select_pending_page',
    'count_pending_statement',
    'count_pending_rows',
    'prune_finished',
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
    'record_wait_calls',
    'pending_wait_calls',
    'decode_row',
    'UnreadableRowError',
    'on_unreadable_row',
    'encode_request',
    'decode_request',
    'encode_response',
    'decode_response',
    'message_topic',
    'answer_message',
    'decode_message',
    'WITHDRAWN_MESSAGE',
)

TABLE_NAME = 'ask_user_requests'
"""The table holding one row per durable question: pending, answered or withdrawn."""

DEFAULT_DATABASE_URL = 'sqlite:///ask_user.sqlite'
"""The embedded default: a SQLite file in the working directory, no server to run."""

Status = Literal['pending', 'answered', 'withdrawn']
"""Where a question stands: waiting, answered (or declined) once, or given up by its run."""

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

ApprovalStatus = Literal['pending', 'decided', 'withdrawn']
"""Where an approval stands: waiting, decided once, or given up by its run (its wait's deadline passed)."""

DBOS_TABLE = 'workflow_status'
"""A table every DBOS system database has, in the `dbos` schema on PostgreSQL and in the file on SQLite."""

ADDED_COLUMNS = (
    ('answered_by', f'VARCHAR({ANSWERED_BY_LENGTH})'),
    ('run_id', 'TEXT'),
    ('tool_call_id', 'TEXT'),
    ('audience', 'TEXT'),
    ('context', 'TEXT'),
    ('due_at', f'FLOAT NOT NULL DEFAULT {NO_DEADLINE_ORDER!r}'),
)
"""The columns of the questions table that earlier versions did not create, with their SQL types, added to their
databases at start-up (`ensure_columns`): the types `_db.requests_table` declares them with."""

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
)
"""The indexes of the questions table, by name, columns and the rows they hold (`None`: all; else a `WHERE`, a
partial index, which SQLite and PostgreSQL both use for a query whose conditions include it): `_db.requests_table`
declares them (so a new table has them), and `index_statements` adds them to a table an earlier version made without
them."""


def index_statements() -> list[tuple[str, str]]:
    """Each index's name and the `CREATE INDEX IF NOT EXISTS` that makes it (the same on SQLite and PostgreSQL)."""
    return [
        (name, f'CREATE INDEX IF NOT EXISTS {name} ON {TABLE_NAME} ({", ".join(columns)})' + _where(rows))
        for name, columns, rows in INDEXES
    ]


def _where(rows: str | None) -> str:
    return '' if rows is None else f' WHERE {rows}'


ADDRESSEES_TABLE_NAME = 'ask_user_addressees'
"""The table holding one row per name each addressed question was published to (pending) with: the index of a
person's own list, which finds their questions without reading everybody's audience.

The questions table's `audience` column stays what decides: a person's page and count take a question through this
table only if its audience (the JSON text) names them too, so a row here never widens who sees a question.
"""

ADDRESSEES_ORDER_INDEX = 'ix_ask_user_addressees_order'
"""The index of `ADDRESSEES_TABLE_NAME` a person's page reads: each name's questions in the inbox's order. Made last,
after the rows of an earlier version's questions were copied in, so its presence says the table is complete."""

_ADDRESSEES_COLUMNS = 'request_id, name, due_at, created_at'
"""The columns of an addressee row: the question's key, a name, and the question's place in the inbox's order (its
`due_at` and `created_at`, which never change once it is published), so that a name's questions are read in order."""


def addressees_statements() -> tuple[str, str]:
    """The `CREATE TABLE` and the `CREATE INDEX` of the addressees (both `IF NOT EXISTS`; the same on both databases).

    Not declared to SQLAlchemy: `ensure_addressees` makes it, through either way to the database, and fills it from
    the questions an earlier version published before it makes the index (so `create_all` must not make it empty).
    """
    return (
        f'CREATE TABLE IF NOT EXISTS {ADDRESSEES_TABLE_NAME} (request_id VARCHAR(200) NOT NULL, '
        f'name VARCHAR({MAX_NAME_LENGTH}) NOT NULL, due_at FLOAT NOT NULL, created_at FLOAT NOT NULL, '
        'PRIMARY KEY (request_id, name))',
        f'CREATE INDEX IF NOT EXISTS {ADDRESSEES_ORDER_INDEX} ON {ADDRESSEES_TABLE_NAME} '
        '(name, due_at, created_at, request_id)',
    )


_log = logging.getLogger('pydantic_ai_ask_user.dbos')


def warn_missing_index(name: str, statement: str, reason: str) -> None:
    """Tell that an index could not be made (not the table's owner): the store works on, slower; say what to run."""
    _log.warning(
        'the questions table has no index %s and this database user cannot create it (%s); listing the '
        "questions reads the whole table until the table's owner runs once: %s",
        name,
        reason.splitlines()[0] if reason else reason,
        statement,
    )


def has_addressees(conn: Connection) -> bool:
    """Whether the addressees are there and complete (`ADDRESSEES_ORDER_INDEX`, made last, is): what a person's own
    page and count read; without them they read every pending question's audience, as earlier versions did.
    """
    if _dialect(conn) == 'postgresql':
        query = 'SELECT 1 FROM pg_indexes WHERE indexname = :name AND schemaname = ANY (current_schemas(false))'
    else:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = :name"
    return _execute(conn, query, {'name': ADDRESSEES_ORDER_INDEX}).fetchone() is not None


def ensure_addressees(
    database: Database, errors: type[Exception] | tuple[type[Exception], ...], *, required: bool
) -> bool:
    """Make the addressees of a questions table that has none (a new table, or an earlier version's), with a row for
    each name of each pending addressed question already there; whether they are there now. Idempotent.

    The table, its rows, then its index: a start that crashed, or that raced another, leaves no index, and the next one
    does the rest (each row is written unless it is there). `errors` are the exceptions of `database`'s driver; when
    the database user may not create a table, a `required` caller (one that publishes questions, which need the table)
    gets the database's error, any other (a reader: `ask-user pending`, an inbox) a warning, and reads on as before.
    """
    with database.connect() as conn:
        if has_addressees(conn):
            return True
    table, index = addressees_statements()
    try:
        with database.begin() as conn:
            _execute(conn, table)
            _copy_addressees(conn)
            _execute(conn, index)
    except errors as error:
        with database.connect() as conn:
            if has_addressees(conn):
                return True  # another process made them meanwhile
        if required:
            raise
        reason = str(getattr(error, 'orig', None) or error)
        _log.warning(
            "the questions table has no %s table and this database user cannot create it (%s); a person's own list "
            'reads the audience of every pending question until a database user who may create tables opens it once',
            ADDRESSEES_TABLE_NAME,
            reason.splitlines()[0] if reason else reason,
        )
        return False
    return True


_COPY_BATCH = 500
"""How many questions `_copy_addressees` reads at a time."""


def _copy_addressees(conn: Connection) -> None:
    """Write the addressee rows of every pending addressed question (an earlier version published them without),
    reading them a batch at a time in the inbox's order (a range of its index each, never a sort).
    """
    after: tuple[float, float, str] | None = None
    while True:
        later, parameters = _after(_PENDING_ORDER, after)
        conditions = ' AND '.join(["status = 'pending'", 'audience IS NOT NULL', *later])
        rows = _execute(
            conn,
            f'SELECT id, audience, due_at, created_at FROM {TABLE_NAME} WHERE {conditions} '
            f'ORDER BY {_PENDING_ORDER} LIMIT {_COPY_BATCH}',
            parameters,
        ).fetchall()
        insert_addressees(
            conn, [(key, _names_of(audience), due_at, created_at) for key, audience, due_at, created_at in rows]
        )
        if len(rows) < _COPY_BATCH:
            return
        key, _, due_at, created_at = rows[-1]
        after = (due_at, created_at, key)


def _names_of(audience: str) -> tuple[str, ...]:
    """The names a stored audience (JSON text) addresses; none for a damaged one, which no person's page shows."""
    data = _json_value(audience)
    if not isinstance(data, list):
        return ()
    try:
        return check_audience(cast(list[object], data)) or ()
    except (TypeError, ValueError):
        return ()


_ADDRESSEE_ROWS_PER_STATEMENT = 500
"""The most addressee rows one `INSERT` writes: its parameters are bounded, however many questions are copied."""


def insert_addressees(conn: Connection, questions: Sequence[tuple[str, Sequence[str], float, float]]) -> None:
    """Write the addressee rows of these questions (each its key, names, `due_at` and `created_at`), but those there."""
    rows = [(key, name, due_at, created_at) for key, names, due_at, created_at in questions for name in names]
    for start in range(0, len(rows), _ADDRESSEE_ROWS_PER_STATEMENT):
        batch = rows[start : start + _ADDRESSEE_ROWS_PER_STATEMENT]
        parameters: dict[str, Any] = {}
        for index, (key, name, due_at, created_at) in enumerate(batch):
            parameters |= {
                f'r{index}': key,
                f'n{index}': name,
                f'd{index}': float(due_at),
                f'c{index}': float(created_at),
            }
        values = ', '.join(f'(:r{index}, :n{index}, :d{index}, :c{index})' for index in range(len(batch)))
        _execute(
            conn,
            f'INSERT INTO {ADDRESSEES_TABLE_NAME} ({_ADDRESSEES_COLUMNS}) VALUES {values} '
            'ON CONFLICT (request_id, name) DO NOTHING',
            parameters,
        )


def backfill_statement(name: str, dialect: str) -> str | None:
    """What to run after adding the column `name` to an earlier version's table, in the same transaction, or `None`.

    `due_at`: copy into it the deadline each pending row's questions carry (as `encode_request` wrote it), in one
    statement; rows without one, or with one out of range (shown as none), keep `NO_DEADLINE_ORDER`.
    """
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


class Database(Protocol):
    """A database the durable package reads and writes: SQLAlchemy's engine (`_db.EngineDatabase`), or a SQLite file
    through the standard library (`_sqlite.SqliteDatabase`). `open_database` picks one for a URL.
    """

    def connect(self) -> AbstractContextManager[Connection]:
        """A connection for reads; whatever it began is rolled back when it is left."""
        ...

    def begin(self) -> AbstractContextManager[Connection]:
        """A transaction: committed on leaving, rolled back on an error."""
        ...

    def has_table(self, name: str) -> bool:
        """Whether the table `name` is in the database (older databases lack the event tables)."""
        ...

    def table_exists(self) -> bool:
        """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
        ...

    def ensure_table(self) -> None:
        """Create the tables if they are missing, and the columns later versions added."""
        ...

    def ensure_columns(self) -> None:
        """Add to an existing questions table the columns an earlier version did not create; idempotent."""
        ...

    def dispose(self) -> None:
        """Close its connections; it connects again if used again."""
        ...


def open_database(database_url: str) -> Database:
    """The database at `database_url`: a plain SQLite file (`sqlite:///FILE`) through the standard library's `sqlite3`,
    anything else (PostgreSQL; a SQLite URL with options) through SQLAlchemy, imported only then.

    Nothing is created or connected yet.
    """
    from ._sqlite import SqliteDatabase, sqlite_file

    path = sqlite_file(database_url)
    if path is not None:
        return SqliteDatabase(database_url, path)
    from ._db import EngineDatabase, create_engine

    return EngineDatabase(create_engine(database_url))


def _dialect(conn: Connection) -> str:
    return 'sqlite' if isinstance(conn, sqlite3.Connection) else conn.dialect.name


class _Rows(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Sequence[Any]: ...


def _execute(conn: Connection, statement: str, parameters: dict[str, Any] | None = None) -> _Rows:
    """Run `statement` (named parameters, `:name`) on either kind of connection."""
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(statement, parameters or {})
    import sqlalchemy as sa

    return cast(_Rows, conn.execute(sa.text(statement), parameters or {}))


def _in(name: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """`(:name_0, :name_1, ...)` and its parameters, for `IN` with a list (neither driver expands one); not empty."""
    parameters = {f'{name}_{index}': value for index, value in enumerate(values)}
    return '(' + ', '.join(f':{key}' for key in parameters) + ')', parameters


def _workflows_table(conn: Connection) -> str:
    """DBOS's `workflow_status` table: in schema `dbos` on PostgreSQL, in the file on SQLite."""
    return f'dbos.{DBOS_TABLE}' if _dialect(conn) == 'postgresql' else DBOS_TABLE


def _lock(conn: Connection, kind: Literal['UPDATE', 'SHARE']) -> str:
    """A row lock on PostgreSQL; SQLite's writers take the database lock when they begin, which orders them anyway."""
    return f' FOR {kind}' if _dialect(conn) == 'postgresql' else ''


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


@dataclass(frozen=True)
class Identity:
    """Who a stored question is: its key (the row's id), and the run and tool call it was made from."""

    key: str
    """`AskUserRequest.key`: the row's id."""

    tool_call_id: str
    """`AskUserRequest.id`: the tool call id, as the model and the UIs see it."""

    run_id: str | None = None
    """`AskUserRequest.run_id`: the run that asked, or `None` for a request that belongs to no run."""

    audience: tuple[str, ...] | None = None
    """`AskUserRequest.audience`: who may answer, or `None` for anyone."""

    context: QuestionContext | None = None
    """`AskUserRequest.context`: where the question comes from, or `None`."""

    @classmethod
    def of(cls, request: AskUserRequest) -> Identity:
        """The identity of `request`."""
        return cls(
            key=request.key,
            tool_call_id=request.id,
            run_id=request.run_id,
            audience=request.audience,
            context=request.context,
        )


def insert_pending(conn: Connection, request: AskUserRequest, workflow_id: str, *, status: Status = 'pending') -> None:
    """Publish `request` as pending (or `status`), unless a row with its key exists already (a replay)."""
    insert_encoded(conn, Identity.of(request), encode_request(request), workflow_id, status=status)


def insert_encoded(
    conn: Connection, identity: Identity, questions_json: str, workflow_id: str, *, status: Status = 'pending'
) -> None:
    """`insert_pending` for a request already encoded by `encode_request`."""
    now = time.time()
    due_at = _due_at(questions_json)
    values = {
        'id': identity.key,
        'workflow_id': workflow_id,
        'questions': questions_json,
        'status': status,
        'created_at': now,
        'updated_at': now,
        'run_id': identity.run_id,
        'tool_call_id': identity.tool_call_id,
        # Who may answer, as a JSON list of names (ASCII, so the `LIKE` of `select_requests` matches escapes as
        # written), and where the question comes from, as a JSON object; `NULL` for none.
        'audience': None if identity.audience is None else json.dumps(list(identity.audience), ensure_ascii=True),
        'context': None if identity.context is None else json.dumps(context_to_json(identity.context)),
        'due_at': due_at,
    }
    inserted = _execute(
        conn,
        f'INSERT INTO {TABLE_NAME} (id, workflow_id, questions, status, response, created_at, updated_at, run_id, '
        'tool_call_id, audience, context, due_at) VALUES (:id, :workflow_id, :questions, :status, NULL, :created_at, '
        ':updated_at, :run_id, :tool_call_id, :audience, :context, :due_at) ON CONFLICT (id) DO NOTHING',
        values,
    )
    if inserted.rowcount == 1 and status == 'pending' and identity.audience:
        # Its names, in the same transaction, for a person's own page: not a replay's (the row was there).
        insert_addressees(conn, [(identity.key, identity.audience, due_at, now)])


def _due_at(questions_json: str) -> float:
    """The `due_at` of a row: the deadline `encode_request` wrote into its questions, or `NO_DEADLINE_ORDER`."""
    try:
        deadline = json.loads(questions_json).get('deadline')
    except (ValueError, AttributeError):
        return NO_DEADLINE_ORDER
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 <= deadline <= LATEST_DEADLINE:
        return float(deadline)
    return NO_DEADLINE_ORDER


_REQUEST_COLUMNS = (
    'id, workflow_id, questions, status, response, created_at, answered_by, run_id, tool_call_id, audience, context'
)
"""The columns a question is read back from, in the order `decode_row` takes them."""

_QUALIFIED_COLUMNS = ', '.join(f'q.{column.strip()}' for column in _REQUEST_COLUMNS.split(','))
"""`_REQUEST_COLUMNS` of the questions table as `q`."""


def select_requests(
    conn: Connection,
    *,
    status: Status | None = None,
    request_id: str | None = None,
    request_ids: Sequence[str] | None = None,
    decoded: MutableMapping[str, AskUserRequest] | None = None,
    visible_to: Person | None = None,
) -> list[StoredRequest]:
    """The decoded rows with this status, this key or these keys (all when no filter is given), oldest first.

    `decoded` holds requests decoded before, by key: a row's questions never change once published, so a
    request found there is not decoded (and validated) again, and one decoded here is added to it.
    `visible_to`: only the rows that person may see (`addressed_to`); `None` for all of them.
    """
    conditions, parameters = _audience_where(conn, visible_to)
    if status is not None:
        conditions.append('status = :status')
        parameters['status'] = status
    if request_id is not None:
        conditions.append('id = :id')
        parameters['id'] = request_id
    if request_ids is not None:
        if not request_ids:
            return []
        listed, values = _in('id', request_ids)
        conditions.append(f'id IN {listed}')
        parameters |= values
    where = f' WHERE {" AND ".join(conditions)}' if conditions else ''
    query = f'SELECT {_REQUEST_COLUMNS} FROM {TABLE_NAME}{where} ORDER BY created_at, id'
    rows = _execute(conn, query, parameters).fetchall()
    # Asked for by its key, a damaged row is an error its caller reports; in a listing, it is left out.
    return _visible(_decode_rows(rows, decoded, strict=request_id is not None), visible_to)


def _decode_rows(
    rows: Sequence[Any], decoded: MutableMapping[str, AskUserRequest] | None, *, strict: bool = False
) -> list[StoredRequest]:
    """The rows decoded; a row that cannot be (`UnreadableRowError`) is left out and logged, or raised if `strict`.

    One damaged row (written by hand, or by another program) must not take every listing down with it.
    """
    stored: list[StoredRequest] = []
    for row in rows:
        try:
            one = decode_row(row, None if decoded is None else decoded.get(row[0]))
        except UnreadableRowError as error:
            if strict:
                raise
            _report_unreadable(error)
            continue
        stored.append(one)
        if decoded is not None:
            decoded[row[0]] = one.request
    return stored


_REPORTED_LIMIT = 1024
"""How many damaged rows a process remembers having logged, so that each is logged once, not on every listing."""

_reported: dict[str, None] = {}


def _report_unreadable(error: UnreadableRowError) -> None:
    if error.request_id in _reported:
        return
    if len(_reported) >= _REPORTED_LIMIT:
        del _reported[next(iter(_reported))]
    _reported[error.request_id] = None
    if not _unreadable_listeners:
        _log.warning('%s; it is left out of every listing', error)
    for listener in list(_unreadable_listeners):
        listener(error)


_unreadable_listeners: list[Callable[[UnreadableRowError], None]] = []
"""Who is told of each damaged row a listing leaves out instead of the log (`ask-user pending` warns on stderr)."""


def on_unreadable_row(listener: Callable[[UnreadableRowError], None]) -> Callable[[], None]:
    """Tell `listener` of every damaged row left out of a listing from now on (once per row and process), instead of
    the log; returns what stops it, so that the log has them again (a command run in a process that goes on).
    """
    _unreadable_listeners.append(listener)
    return lambda: _unreadable_listeners.remove(listener)


def _visible(stored: list[StoredRequest], visible_to: Person | None) -> list[StoredRequest]:
    """The rows `visible_to` may see, decided on the decoded request (a damaged audience column hides the row)."""
    return stored if visible_to is None else [one for one in stored if addressed_to(one.request, visible_to)]


def audience_condition(visible_to: Person | None, dialect: str) -> tuple[str, dict[str, Any]] | None:
    """The SQL condition on the rows `visible_to` may see, and its parameters; `None` when every row is theirs.

    The `audience` column holds a JSON list of names as `insert_encoded` writes it (`json.dumps`: ASCII, `", "`
    between names). A row is theirs when it is `NULL` (anyone may answer) or one of its elements is one of the
    person's names: that name, quoted, right after `[` or `, `. Inside a JSON string every `"` is escaped, so neither
    can match within another name: the condition is exact for every row this module wrote, so a page and its count
    agree with `addressed_to` (still applied to the decoded rows, for a damaged column). Matched with `instr` on SQLite
    and `strpos` on PostgreSQL: exact bytes, case-sensitive on both (SQLite's `LIKE` ignores ASCII case).
    """
    if visible_to is None or visible_to.sees_all:
        return None
    found, parameters = _names_found(visible_to, dialect, 'audience')
    return '(' + ' OR '.join(['audience IS NULL', *found]) + ')', parameters


def _names_found(
    person: Person, dialect: str, column: str, *, ensure_ascii: bool = True, closed: bool = False
) -> tuple[list[str], dict[str, Any]]:
    """The conditions (any one will do) that the JSON list of names in `column` (written by `json.dumps` with
    `ensure_ascii` as given, `", "` between names) holds one of `person`'s names, as `audience_condition` tells, and
    their parameters: two a name, the quoted name after `[` or after `, `.

    `closed`: each match must also be followed by `,` or `]`, where the list's element ends, for a column whose JSON
    holds more than the list (an approval's `addressing`, where a context key is followed by `:`).
    """
    parameters: dict[str, Any] = {}
    found: list[str] = []
    find = 'strpos' if dialect == 'postgresql' else 'instr'
    for index, name in enumerate(sorted(person.names)):
        quoted = json.dumps(name, ensure_ascii=ensure_ascii)
        for key, text in ((f'first_{index}', '[' + quoted), (f'later_{index}', ', ' + quoted)):
            parameters[key] = text
            at = f'{find}({column}, :{key})'
            # The length is a number this code made, never the person's text.
            after = f'substr({column}, {at} + {len(text)}, 1)'
            found.append(f"({at} > 0 AND {after} IN (',', ']'))" if closed else f'{at} > 0')
    return found, parameters


def _audience_where(conn: Connection, visible_to: Person | None) -> tuple[list[str], dict[str, Any]]:
    condition = audience_condition(visible_to, _dialect(conn))
    return ([], {}) if condition is None else ([condition[0]], condition[1])


_PENDING_ORDER = 'due_at, created_at, id'
"""The inbox's order of pending rows: the nearest deadline first (none last), then the oldest, then by key."""

_ADDRESSEES_ORDER = 'a.due_at, a.created_at, a.request_id'
"""The same order, of the addressee rows (`a`) of the questions."""


def _ages(where: PendingFilter, column: str) -> tuple[list[str], dict[str, Any]]:
    """The conditions of `where` on when a question was asked (`column`), and their parameters."""
    conditions: list[str] = []
    parameters: dict[str, Any] = {}
    if where.asked_before is not None:
        conditions.append(f'{column} < :asked_before')
        parameters['asked_before'] = where.asked_before
    if where.asked_after is not None:
        conditions.append(f'{column} >= :asked_after')
        parameters['asked_after'] = where.asked_after
    return conditions, parameters


def _after(order: str, after: tuple[float, float, str] | None) -> tuple[list[str], dict[str, Any]]:
    """The condition that a row (its columns `order`) sorts after the cursor's position `after`, and its parameters."""
    if after is None:
        return [], {}
    values = {'after_due': after[0], 'after_created': after[1], 'after_id': after[2]}
    return [f'({order}) > (:after_due, :after_created, :after_id)'], values


def _pending_where(
    conn: Connection, where: PendingFilter, visible_to: Person | None
) -> tuple[list[str], dict[str, Any]]:
    conditions, parameters = _audience_where(conn, visible_to)
    ages, values = _ages(where, 'created_at')
    return ["status = 'pending'", *conditions, *ages], parameters | values


def _addressed_names(visible_to: Person | None, addressees: bool) -> list[str]:
    """The names whose questions a page or count for `visible_to` reads through the addressees (sorted); none when it
    reads the pending-order index alone: for everyone, for a person of no name, or without the addressees.
    """
    if visible_to is None or visible_to.sees_all or not addressees:
        return []
    return sorted(visible_to.names)


def _theirs(conn: Connection, visible_to: Person, names: list[str]) -> tuple[str, str, dict[str, Any]]:
    """For a person's page and count: the addressee rows (`a`) of their names whose question (`q`) is pending and
    (its audience column decides, as for everyone else's) addressed to them, as `FROM ... WHERE` without the
    conditions on age and order; `IN` and the name parameters; and the parameters of both.
    """
    found, parameters = _names_found(visible_to, _dialect(conn), 'q.audience')
    listed, values = _in('name', names)
    # `CROSS JOIN`: SQLite then reads the addressees first (PostgreSQL plans it as any join); without statistics it
    # would read every pending question by the status index, and look each one up among the addressees.
    rows = (
        f'{ADDRESSEES_TABLE_NAME} AS a CROSS JOIN {TABLE_NAME} AS q '
        f"WHERE q.id = a.request_id AND q.status = 'pending' AND ({' OR '.join(found)})"
    )
    return rows, listed, parameters | values


def pending_page_statement(
    conn: Connection,
    *,
    after: tuple[float, float, str] | None,
    limit: int,
    where: PendingFilter = EVERYTHING,
    visible_to: Person | None = None,
    addressees: bool = True,
) -> tuple[str, dict[str, Any]]:
    """The statement of `select_pending_page` and its parameters: a range of the pending-order index (a row value
    compared with the cursor's, which SQLite and PostgreSQL both seek by), never a sort of every row.

    A person's page (`addressees`: the database has them, `has_addressees`) is the first `limit` of: the unaddressed
    questions after the cursor (a range of their own index), and each of the person's names' (a range of the
    addressees' index, each row's question looked up by key): `limit` or fewer rows from each, merged, the ones
    reached through two names (theirs and a group's) once. Never a read of everybody's audience.
    """
    names = _addressed_names(visible_to, addressees)
    if visible_to is not None and names:
        return _person_page_statement(conn, after, limit, where, visible_to, names)
    conditions, parameters = _pending_where(conn, where, visible_to)
    later, values = _after(_PENDING_ORDER, after)
    query = (
        f'SELECT {_REQUEST_COLUMNS} FROM {TABLE_NAME} WHERE {" AND ".join([*conditions, *later])} '
        f'ORDER BY {_PENDING_ORDER} LIMIT :limit'
    )
    return query, parameters | values | {'limit': limit}


def _person_page_statement(
    conn: Connection,
    after: tuple[float, float, str] | None,
    limit: int,
    where: PendingFilter,
    visible_to: Person,
    names: list[str],
) -> tuple[str, dict[str, Any]]:
    rows, _, parameters = _theirs(conn, visible_to, names)  # `name_0`, `name_1`, ... in `parameters`, one a range
    ages, values = _ages(where, 'created_at')
    later, cursor = _after(_PENDING_ORDER, after)
    parameters |= values | cursor | {'limit': limit}
    everyone = ' AND '.join(["status = 'pending'", 'audience IS NULL', *ages, *later])
    branches = [f'SELECT {_PENDING_ORDER} FROM {TABLE_NAME} WHERE {everyone} ORDER BY {_PENDING_ORDER} LIMIT :limit']
    by_name = [*_ages(where, 'a.created_at')[0], *_after(_ADDRESSEES_ORDER, after)[0]]
    for index in range(len(names)):
        branches.append(
            f'SELECT {_ADDRESSEES_ORDER} FROM {rows} AND {" AND ".join([f"a.name = :name_{index}", *by_name])} '
            f'ORDER BY {_ADDRESSEES_ORDER} LIMIT :limit'
        )
    merged = ' UNION '.join(f'SELECT * FROM ({branch}) AS b{index}' for index, branch in enumerate(branches))
    query = (
        f'SELECT {_QUALIFIED_COLUMNS} FROM ({merged}) AS page JOIN {TABLE_NAME} AS q ON q.id = page.id '
        'ORDER BY page.due_at, page.created_at, page.id LIMIT :limit'
    )
    return query, parameters


def select_pending_page(
    conn: Connection,
    *,
    after: tuple[float, float, str] | None,
    limit: int,
    where: PendingFilter = EVERYTHING,
    visible_to: Person | None = None,
    decoded: MutableMapping[str, AskUserRequest] | None = None,
    addressees: bool = True,
) -> list[StoredRequest]:
    """At most `limit` pending rows after the position `after` (an `order_key`), in the inbox's order, decoded; only
    those `visible_to` may see (a damaged row the SQL took is left out, so a page may come short by it).

    `addressees`: whether the database has them (`has_addressees`), which a person's page then reads.
    """
    statement, parameters = pending_page_statement(
        conn, after=after, limit=limit, where=where, visible_to=visible_to, addressees=addressees
    )
    return _visible(_decode_rows(_execute(conn, statement, parameters).fetchall(), decoded), visible_to)


def count_pending_statement(
    conn: Connection, where: PendingFilter = EVERYTHING, visible_to: Person | None = None, *, addressees: bool = True
) -> tuple[str, dict[str, Any]]:
    """The statement of `count_pending_rows` and its parameters: it reads the pending-order index; for a person, the
    unaddressed questions' index and, through the addressees, their own questions (each once, however many of their
    names it is addressed to).
    """
    names = _addressed_names(visible_to, addressees)
    if visible_to is None or not names:
        conditions, parameters = _pending_where(conn, where, visible_to)
        return f'SELECT count(*) FROM {TABLE_NAME} WHERE {" AND ".join(conditions)}', parameters
    rows, listed, parameters = _theirs(conn, visible_to, names)
    ages, values = _ages(where, 'created_at')
    everyone = ' AND '.join(["status = 'pending'", 'audience IS NULL', *ages])
    by_name = ' AND '.join([f'a.name IN {listed}', *_ages(where, 'a.created_at')[0]])
    query = (
        f'SELECT (SELECT count(*) FROM {TABLE_NAME} WHERE {everyone}) '
        f'+ (SELECT count(DISTINCT a.request_id) FROM {rows} AND {by_name})'
    )
    return query, parameters | values


def count_pending_rows(
    conn: Connection, where: PendingFilter = EVERYTHING, visible_to: Person | None = None, *, addressees: bool = True
) -> int:
    """How many rows are pending (that pass `where`, and that `visible_to` may see), without reading their questions.

    `addressees`: whether the database has them (`has_addressees`), which a person's count then reads.
    """
    statement, parameters = count_pending_statement(conn, where, visible_to, addressees=addressees)
    return int(_one(conn, statement, parameters)[0])


def prune_finished(
    conn: Connection, before: float, *, has_event_tables: bool, has_addressees: bool, has_approvals: bool = False
) -> int:
    """Delete the questions answered or withdrawn before `before` (their tie to a wait's token, and their addressees
    too), and with `has_approvals` the tool approvals decided or withdrawn before it; how many questions.

    Not those of a waiting handler's wait still open: its last answer reads every answer of its questions, and every
    decision of its approvals.
    """
    if has_approvals:
        _execute(
            conn,
            f"DELETE FROM {EVENT_APPROVALS_TABLE_NAME} WHERE status <> 'pending' AND updated_at < :before AND token "
            f"NOT IN (SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE status = 'pending')",
            {'before': before},
        )
    finished = "status <> 'pending' AND updated_at < :before"
    if has_event_tables:
        still_read = (
            f'SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token IN '
            f"(SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE status = 'pending')"
        )
        finished += f' AND id NOT IN ({still_read})'
    tables = [EVENT_TABLE_NAME] if has_event_tables else []
    if has_addressees:
        tables.append(ADDRESSEES_TABLE_NAME)
    for table in tables:
        _execute(
            conn,
            f'DELETE FROM {table} WHERE request_id IN (SELECT id FROM {TABLE_NAME} WHERE {finished})',
            {'before': before},
        )
    return _execute(conn, f'DELETE FROM {TABLE_NAME} WHERE {finished}', {'before': before}).rowcount


def _one(conn: Connection, query: str, parameters: dict[str, Any]) -> Any:
    row = _execute(conn, query, parameters).fetchone()
    if row is None:
        raise LookupError(f'no row for {parameters}')
    return row


def publication(conn: Connection, request_id: str) -> tuple[str, Status, float, str]:
    """The workflow id, status, creation time and questions (as `encode_request` wrote them) of a published request."""
    query = f'SELECT workflow_id, status, created_at, questions FROM {TABLE_NAME} WHERE id = :id'
    workflow_id, status, created_at, questions = _one(conn, query, {'id': request_id})
    return workflow_id, status, float(created_at), questions


def status_and_response(conn: Connection, request_id: str) -> tuple[Status, str | None]:
    """The status and response (JSON, or `None`) of a published request."""
    status, response = _one(conn, f'SELECT status, response FROM {TABLE_NAME} WHERE id = :id', {'id': request_id})
    return status, response


def request_status(conn: Connection, request_id: str) -> Status | None:
    """Where the request stands, or `None` when there is no such row."""
    found = _execute(conn, f'SELECT status FROM {TABLE_NAME} WHERE id = :id', {'id': request_id}).fetchone()
    return None if found is None else cast(Status, found[0])


def changes_since(conn: Connection, since: float) -> list[tuple[str, Status, float]]:
    """The id, status and creation time of every row changed at or after `since`, oldest first.

    Without the questions and the response, so a poll decodes nothing for rows it already knows.
    """
    query = f'SELECT id, status, created_at FROM {TABLE_NAME} WHERE updated_at >= :since ORDER BY created_at, id'
    rows = _execute(conn, query, {'since': since}).fetchall()
    return [(request_id, status, float(created_at)) for request_id, status, created_at in rows]


ACTIVE_WORKFLOW_STATUSES = ('PENDING', 'ENQUEUED', 'DELAYED')
"""DBOS workflow statuses under which a question can still be answered; any other means nobody waits."""


def _active(conn: Connection, workflow_ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The query of those of these DBOS workflows that can still receive an answer, and its parameters."""
    listed, parameters = _in('workflow', workflow_ids)
    statuses, values = _in('status', ACTIVE_WORKFLOW_STATUSES)
    query = (
        f'SELECT workflow_uuid FROM {_workflows_table(conn)} WHERE workflow_uuid IN {listed} AND status IN {statuses}'
    )
    return query, parameters | values


def active_workflows(conn: Connection, workflow_ids: Sequence[str]) -> set[str]:
    """Those of these DBOS workflows that can still receive an answer (`ACTIVE_WORKFLOW_STATUSES`), read from DBOS's
    `workflow_status` table: a workflow that ended, or was deleted, is not among them.
    """
    if not workflow_ids:
        return set()
    query, parameters = _active(conn, workflow_ids)
    return {row[0] for row in _execute(conn, query, parameters).fetchall()}


_PORTABLE_JSON = 'portable_json'
"""DBOS's language-neutral serialization of a message (`DBOSPortableJSON`): compact JSON, read by any DBOS client."""


def send_message(conn: Connection, workflow_id: str, message: str, topic: str, idempotency_key: str) -> None:
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
    if _dialect(conn) == 'postgresql':
        statement = 'SELECT dbos.send_message(:workflow_id, CAST(:message AS json), :topic, :message_id)'
    else:
        statement = (
            'INSERT INTO notifications (destination_uuid, topic, message, message_uuid, serialization) '
            f"VALUES (:workflow_id, :topic, :message, :message_id, '{_PORTABLE_JSON}') "
            'ON CONFLICT (message_uuid) DO NOTHING'
        )
    _execute(conn, statement, values)


def claim_answer(
    conn: Connection,
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
    parameters: dict[str, Any] = {
        'id': request_id,
        'response': response_json,
        'answered_by': answered_by,
        'updated_at': time.time(),
    }
    waiting = ''
    if workflow_id is not None:
        active, values = _active(conn, [workflow_id])
        waiting = f' AND workflow_id IN ({active}{_lock(conn, "SHARE")})'
        parameters |= values
    claimed = _execute(
        conn,
        f"UPDATE {TABLE_NAME} SET status = 'answered', response = :response, answered_by = :answered_by, "
        f"updated_at = :updated_at WHERE id = :id AND status = 'pending'{waiting}",
        parameters,
    )
    return claimed.rowcount == 1


def withdraw_pending(conn: Connection, request_ids: Sequence[str] = (), *, token: str | None = None) -> int:
    """Withdraw those of these requests (or of the questions of `token`) still pending; how many were.

    The one way a question is given up: by its run's deadline, by a run that ended, or by a cancelled caller.
    """
    if token is not None:
        ids, parameters = f'(SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token = :token)', {'token': token}
    elif request_ids:
        ids, parameters = _in('id', request_ids)
    else:
        return 0
    withdrawn = _execute(
        conn,
        f"UPDATE {TABLE_NAME} SET status = 'withdrawn', updated_at = :updated_at "
        f"WHERE id IN {ids} AND status = 'pending'",
        parameters | {'updated_at': time.time()},
    )
    return withdrawn.rowcount


def insert_event_request(conn: Connection, request_id: str, token: str) -> None:
    """Tie the question whose key is `request_id` to the wait of `token`; idempotent."""
    _execute(
        conn,
        f'INSERT INTO {EVENT_TABLE_NAME} (request_id, token) VALUES (:request_id, :token) '
        'ON CONFLICT (request_id) DO NOTHING',
        {'request_id': request_id, 'token': token},
    )


def lock_event_token(conn: Connection, request_id: str) -> str | None:
    """The token the question keyed `request_id` was published under, with every row of that token locked; `None` for
    a plain question.
    """
    query = f'SELECT token FROM {EVENT_TABLE_NAME} WHERE request_id = :request_id'
    found = _execute(conn, query, {'request_id': request_id}).fetchone()
    if found is None:
        return None
    lock_token(conn, found[0])
    return found[0]


def lock_token(conn: Connection, token: str) -> None:
    """Lock the wait of `token` and its question rows, in a fixed order."""
    # The wait's own row first: it orders the deciders of a wait that holds approvals and no question.
    wait = f'SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE token = :token{_lock(conn, "UPDATE")}'
    _execute(conn, wait, {'token': token}).fetchall()
    # On PostgreSQL, answers to sibling questions wait here for one another; SQLite's writers are serial anyway.
    query = f'SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token = :token ORDER BY request_id{_lock(conn, "UPDATE")}'
    _execute(conn, query, {'token': token}).fetchall()


def token_requests(conn: Connection, token: str) -> list[StoredRequest]:
    """The decoded questions published for the wait of `token`."""
    query = (
        f'SELECT {_REQUEST_COLUMNS} FROM {TABLE_NAME} '
        f'WHERE id IN (SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token = :token)'
    )
    return [decode_row(row) for row in _execute(conn, query, {'token': token}).fetchall()]


def open_wait_row(conn: Connection, token: str, workflow_id: str) -> None:
    """Record the wait of `token` as open; idempotent."""
    _execute(
        conn,
        f'INSERT INTO {EVENT_WAITS_TABLE_NAME} (token, workflow_id, status, updated_at) '
        "VALUES (:token, :workflow_id, 'pending', :updated_at) ON CONFLICT (token) DO NOTHING",
        {'token': token, 'workflow_id': workflow_id, 'updated_at': time.time()},
    )


def _move_wait(conn: Connection, token: str, status: Literal['resolved', 'expired']) -> bool:
    moved = _execute(
        conn,
        f'UPDATE {EVENT_WAITS_TABLE_NAME} SET status = :status, updated_at = :updated_at '
        "WHERE token = :token AND status = 'pending'",
        {'token': token, 'status': status, 'updated_at': time.time()},
    )
    return moved.rowcount == 1


def claim_wait(conn: Connection, token: str) -> bool:
    """Move the wait of `token` from open to resolved; False if it is unknown, resolved already, or expired."""
    return _move_wait(conn, token, 'resolved')


def expire_wait(conn: Connection, token: str) -> bool:
    """Move the wait of `token` from open to expired; False if a resolver claimed it first (or it is unknown)."""
    return _move_wait(conn, token, 'expired')


def open_wait_tokens(conn: Connection) -> list[str]:
    """The tokens of every wait still open (neither resolved nor expired), oldest first."""
    query = f"SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE status = 'pending' ORDER BY updated_at"
    return [row[0] for row in _execute(conn, query).fetchall()]


def record_wait_calls(conn: Connection, token: str, calls: str) -> None:
    """Record the pending calls (JSON) the wait of `token` decides; idempotent, as the step calling it may run again."""
    _execute(
        conn,
        f'INSERT INTO {EVENT_CALLS_TABLE_NAME} (token, calls) VALUES (:token, :calls) ON CONFLICT (token) DO NOTHING',
        {'token': token, 'calls': calls},
    )


def pending_wait_calls(conn: Connection, token: str) -> str | None:
    """The pending calls (JSON) the open wait of `token` decides; `None` when it is not open or recorded none."""
    query = (
        f'SELECT calls.calls FROM {EVENT_CALLS_TABLE_NAME} AS calls JOIN {EVENT_WAITS_TABLE_NAME} AS waits '
        "ON calls.token = waits.token WHERE calls.token = :token AND waits.status = 'pending'"
    )
    found = _execute(conn, query, {'token': token}).fetchone()
    return None if found is None else found[0]


@dataclass(frozen=True)
class StoredApproval:
    """One row of the approvals table, decoded."""

    approval: PendingApproval
    """The tool call, its arguments, its tool's schema, and its wait."""

    status: ApprovalStatus
    """Where it stands; a `pending` one is still decidable only while its wait is open (`wait_open`)."""

    decision: ApprovalDecision | None
    """The decision, once `status` is `decided`."""

    wait_open: bool
    """Whether its wait is still open (neither resolved from elsewhere nor expired)."""

    @property
    def key(self) -> str:
        """`PendingApproval.key`: the row's id."""
        return self.approval.key


def insert_approval(conn: Connection, approval: PendingApproval) -> None:
    """Publish `approval` as pending, unless its row exists already (a replay)."""
    now = time.time()
    _execute(
        conn,
        f'INSERT INTO {EVENT_APPROVALS_TABLE_NAME} (id, token, workflow_id, run_id, tool_call_id, tool_name, args, '
        'parameters, addressing, status, decision, decided_by, created_at, updated_at) VALUES (:id, :token, '
        ":workflow_id, :run_id, :tool_call_id, :tool_name, :args, :parameters, :addressing, 'pending', NULL, NULL, "
        ':now, :now) ON CONFLICT (id) DO NOTHING',
        {
            'id': approval.key,
            'token': approval.token,
            'workflow_id': approval.workflow_id,
            'run_id': approval.run_id,
            'tool_call_id': approval.tool_call_id,
            'tool_name': approval.tool_name,
            'args': json.dumps(approval.args, ensure_ascii=False),
            'parameters': None if approval.parameters is None else json.dumps(approval.parameters, ensure_ascii=False),
            'addressing': _json_or_null(approval.addressing_json()),
            'now': now,
        },
    )


_APPROVAL_COLUMNS = (
    'a.token, a.workflow_id, a.run_id, a.tool_call_id, a.tool_name, a.args, a.parameters, a.addressing, a.created_at, '
    "a.status, a.decision, CASE WHEN w.status = 'pending' THEN 1 ELSE 0 END"
)
"""The columns an approval is read back from, with whether its wait is open, in the order `_decode_approval` takes."""


def select_approvals(
    conn: Connection,
    *,
    key: str | None = None,
    token: str | None = None,
    pending: bool = False,
    visible_to: Person | None = None,
    after: tuple[float, str] | None = None,
    limit: int | None = None,
) -> list[StoredApproval]:
    """The approvals with this key, of this wait, or (`pending`) every one still decidable, oldest first.

    For a page (`pending_approvals_page`): only those `visible_to` may see (`approval_audience_condition`), after the
    `approval_order` position `after`, at most `limit`; the parameters are as many whatever the number pending.
    """
    conditions: list[str] = []
    parameters: dict[str, Any] = {}
    if key is not None:
        conditions.append('a.id = :id')
        parameters['id'] = key
    if token is not None:
        conditions.append('a.token = :token')
        parameters['token'] = token
    if pending:
        conditions.append(_PENDING_APPROVAL)
    if (audience := approval_audience_condition(visible_to, _dialect(conn))) is not None:
        conditions.append(audience[0])
        parameters.update(audience[1])
    if after is not None:
        conditions.append('(a.created_at > :after_at OR (a.created_at = :after_at AND a.id > :after_id))')
        parameters.update(after_at=after[0], after_id=after[1])
    where = f' WHERE {" AND ".join(conditions)}' if conditions else ''
    query = (
        f'SELECT {_APPROVAL_COLUMNS} FROM {EVENT_APPROVALS_TABLE_NAME} AS a '
        f'LEFT JOIN {EVENT_WAITS_TABLE_NAME} AS w ON w.token = a.token{where} ORDER BY a.created_at, a.id'
    )
    if limit is not None:
        query += ' LIMIT :limit'
        parameters['limit'] = limit
    return [_decode_approval(row) for row in _execute(conn, query, parameters).fetchall()]


_PENDING_APPROVAL = "a.status = 'pending' AND w.status = 'pending'"
"""An approval still decidable: neither decided nor withdrawn, its wait still open."""


def count_pending_approvals(conn: Connection, visible_to: Person | None = None) -> int:
    """How many approvals are still decidable (that `visible_to` may see), counted without decoding them."""
    conditions = [_PENDING_APPROVAL]
    parameters: dict[str, Any] = {}
    if (audience := approval_audience_condition(visible_to, _dialect(conn))) is not None:
        conditions.append(audience[0])
        parameters.update(audience[1])
    query = (
        f'SELECT count(*) FROM {EVENT_APPROVALS_TABLE_NAME} AS a JOIN {EVENT_WAITS_TABLE_NAME} AS w '
        f'ON w.token = a.token WHERE {" AND ".join(conditions)}'
    )
    return int(_execute(conn, query, parameters).fetchone()[0])


_ADDRESSED = '{"audience": ['
"""How the `addressing` column of an approval addressed to somebody begins (`_json_or_null` of `addressing_json`,
whose first key is the audience when there is one)."""


def approval_audience_condition(visible_to: Person | None, dialect: str) -> tuple[str, dict[str, Any]] | None:
    """The SQL condition on the approvals `visible_to` may see, and its parameters; `None` when every one is theirs.

    The `addressing` column holds `{"audience": ["a", "b"], "context": {...}}` as `insert_approval` writes it
    (`json.dumps` without `ensure_ascii`, `", "` between names). An approval is theirs when the column does not start
    with the audience (anyone may decide it) or one of the list's elements is one of the person's names: that name,
    quoted, between `[` or `, ` and `,` or `]`. A `"` inside any JSON string is escaped, and the context holds no
    list, so no name matches elsewhere: the page and its count agree with `audience_includes` (still applied to the
    decoded rows). Two parameters a name (as many as the person's names and groups, never more with more waiting).
    """
    if visible_to is None or visible_to.sees_all:
        return None
    found, parameters = _names_found(visible_to, dialect, 'a.addressing', ensure_ascii=False, closed=True)
    parameters['addressed'] = _ADDRESSED
    unaddressed = f'(a.addressing IS NULL OR substr(a.addressing, 1, {len(_ADDRESSED)}) <> :addressed)'
    return '(' + ' OR '.join([unaddressed, *found]) + ')', parameters


def approval_changes_since(conn: Connection, since: float) -> list[tuple[str, ApprovalStatus, float]]:
    """The id, status and creation time of every approval changed at or after `since`, oldest first: the change
    feed of the inbox's events, as `changes_since` is the questions'.
    """
    query = (
        f'SELECT id, status, created_at FROM {EVENT_APPROVALS_TABLE_NAME} WHERE updated_at >= :since '
        'ORDER BY created_at, id'
    )
    rows = _execute(conn, query, {'since': since}).fetchall()
    return [(key, status, float(created_at)) for key, status, created_at in rows]


def _json_or_null(data: dict[str, Any]) -> str | None:
    return json.dumps(data, ensure_ascii=False) if data else None


def _decode_approval(row: Sequence[Any]) -> StoredApproval:
    (
        token,
        workflow_id,
        run_id,
        call_id,
        tool_name,
        args,
        parameters,
        addressing,
        created_at,
        status,
        decision,
        wait_open,
    ) = row
    approval = PendingApproval(
        token=token,
        tool_call_id=call_id,
        tool_name=tool_name,
        args=json.loads(args),
        parameters=None if parameters is None else json.loads(parameters),
        run_id=run_id,
        workflow_id=workflow_id,
        created_at=float(created_at),
        **PendingApproval.addressing_from_json(None if addressing is None else json.loads(addressing)),
    )
    decided = None if decision is None else ApprovalDecision.from_json(json.loads(decision))
    return StoredApproval(approval, cast(ApprovalStatus, status), decided, bool(wait_open))


def claim_approval(conn: Connection, approval: PendingApproval, decision: ApprovalDecision) -> bool:
    """Move a pending approval to decided, while its workflow still waits; False when it was not pending (whoever
    raced it) or its workflow waits no more. One conditional UPDATE, as `claim_answer`.
    """
    active, parameters = _active(conn, [approval.workflow_id])
    claimed = _execute(
        conn,
        f"UPDATE {EVENT_APPROVALS_TABLE_NAME} SET status = 'decided', decision = :decision, decided_by = :decided_by, "
        f"updated_at = :updated_at WHERE id = :id AND status = 'pending' AND workflow_id IN ({active})",
        parameters
        | {
            'id': approval.key,
            'decision': json.dumps(decision.to_json(), ensure_ascii=False),
            'decided_by': decision.decided_by,
            'updated_at': time.time(),
        },
    )
    return claimed.rowcount == 1


def withdraw_approvals(conn: Connection, token: str) -> int:
    """Withdraw the approvals of `token` still pending (its deadline passed); how many were."""
    withdrawn = _execute(
        conn,
        f"UPDATE {EVENT_APPROVALS_TABLE_NAME} SET status = 'withdrawn', updated_at = :updated_at "
        "WHERE token = :token AND status = 'pending'",
        {'token': token, 'updated_at': time.time()},
    )
    return withdrawn.rowcount


class UnreadableRowError(ValueError):
    """A question's row that cannot be read back as one: its questions, response or columns do not validate."""

    def __init__(self, request_id: str, audience: tuple[str, ...] | None, reason: str) -> None:
        super().__init__(f'question {printable(repr(request_id))} is stored damaged ({printable(reason)})')
        self.request_id = request_id
        """The row's key."""
        self.audience = audience
        """Whom it is addressed to, as far as its audience column says (nobody, when that is damaged too)."""


def decode_row(row: Sequence[Any], request: AskUserRequest | None = None) -> StoredRequest:
    """The decoded form of one row of `_REQUEST_COLUMNS`; given `request` (its questions, decoded before), not decoded
    again. `UnreadableRowError` when the row does not decode.
    """
    try:
        return _decode_row(row, request)
    except ValidationError as error:
        raise UnreadableRowError(
            str(row[0]), _row_audience(row[9]), '; '.join(format_validation_error(error))
        ) from None
    except (ValueError, TypeError) as error:
        reason = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
        raise UnreadableRowError(str(row[0]), _row_audience(row[9]), reason) from None


def _row_audience(text: object) -> tuple[str, ...] | None:
    """A damaged row's audience as far as it reads: `None` (everyone) only when the column is empty."""
    if text is None:
        return None
    try:
        return audience_from_json(_json_value(str(text)))
    except (ValueError, TypeError):
        return ()


def _decode_row(row: Sequence[Any], request: AskUserRequest | None) -> StoredRequest:
    (request_id, workflow_id, questions, status, response, created_at, answered_by, run_id, tool_call_id) = row[:9]
    audience, context = row[9:]  # who may answer and where it comes from, as JSON text
    decoded = decode_response(response) if response is not None else None
    if decoded is not None and decoded.answered_by is None and answered_by is not None:
        decoded = replace(decoded, answered_by=answered_by)  # written by a version that kept it in the column only
    if request is None:
        # Rows of earlier versions have neither: their id is the tool call id, and the request belongs to no run.
        request = decode_request(questions, tool_call_id or request_id, run_id=run_id or None)
        if audience is not None or context is not None:
            request = replace(
                request,
                audience=None if audience is None else audience_from_json(_json_value(audience)),
                context=None if context is None else context_from_json(_json_value(context)),
            )
    return StoredRequest(
        request=request,
        workflow_id=workflow_id,
        status=cast(Status, status),
        response=decoded,
        created_at=float(created_at),
        answered_by=answered_by if answered_by is not None else decoded.answered_by if decoded is not None else None,
    )


def _json_value(text: str) -> object:
    """The JSON value of a column written by this module; the text itself when it is not JSON (a damaged row).

    Never `None` for a damaged audience: `audience_from_json` reads anything but a list of names as "nobody".
    """
    try:
        return json.loads(text)
    except ValueError:
        return text


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
