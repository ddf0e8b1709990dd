"""The table where durable questions wait, kept in the DBOS system database next to the workflows."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any, Literal, cast

import sqlalchemy as sa
from sqlalchemy import event, exc
from sqlalchemy.dialects import postgresql, sqlite

from .._answers import AskUserRequest, AskUserResponse
from .._json import questions_to_json, response_from_json, response_to_json

__all__ = (
    'TABLE_NAME',
    'DEFAULT_DATABASE_URL',
    'Status',
    'StoredRequest',
    'create_engine',
    'ensure_table',
    'table_exists',
    'NotAQuestionDatabaseError',
    'check_sqlite_file',
    'insert_pending',
    'encode_request',
    'decode_request',
    'encode_response',
    'decode_response',
    'message_topic',
    'answer_message',
    'decode_row',
    'requests_table',
    'event_requests_table',
    'event_waits_table',
    'EVENT_WAITS_TABLE_NAME',
    'EVENT_TABLE_NAME',
)

TABLE_NAME = 'ask_user_requests'
"""The table holding one row per durable question: pending, answered or withdrawn."""

DEFAULT_DATABASE_URL = 'sqlite:///ask_user.sqlite'
"""The embedded default: a SQLite file in the working directory, no server to run."""

Status = Literal['pending', 'answered', 'withdrawn']
"""Where a question stands: waiting, answered (or declined) once, or given up by its run."""

_metadata = sa.MetaData()

requests_table = sa.Table(
    TABLE_NAME,
    _metadata,
    sa.Column('id', sa.String(200), primary_key=True),
    sa.Column('workflow_id', sa.String(500), nullable=False),
    sa.Column('questions', sa.Text(), nullable=False),
    sa.Column('status', sa.String(16), nullable=False, index=True),
    sa.Column('response', sa.Text(), nullable=True),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
)
"""One row per question; `status` moves from `pending` to `answered` or `withdrawn` once, atomically."""

EVENT_TABLE_NAME = 'ask_user_event_requests'
"""The table tying questions put to a person through `RequestInput` to the resume token of their run's wait."""

event_requests_table = sa.Table(
    EVENT_TABLE_NAME,
    _metadata,
    sa.Column('request_id', sa.String(200), primary_key=True),
    sa.Column('token', sa.String(500), nullable=False, index=True),
)
"""One row per question published by `ask_through_store`: its id and the `DBOSEventWaiter` token its answer resolves.

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


@dataclass(frozen=True)
class StoredRequest:
    """One row of the table, decoded."""

    request: AskUserRequest
    """The questions, under the durable request id."""

    workflow_id: str
    """The DBOS workflow that waits for the answer."""

    status: Status
    """Where the question stands."""

    response: AskUserResponse | None
    """The answer, once `status` is `answered`."""

    created_at: float
    """When the question was first published, in seconds since the epoch."""


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
    """Create the table if it is missing; safe when several processes start at once."""
    for attempt in range(3):
        try:
            _metadata.create_all(engine, checkfirst=True)
            return
        except exc.DatabaseError:
            # Another process created it between our check and our CREATE.
            if attempt == 2:
                raise
            time.sleep(0.1)


def insert_pending(
    conn: sa.Connection, request: AskUserRequest, workflow_id: str, *, status: Status = 'pending'
) -> None:
    """Publish `request` as pending (or `status`), unless a row with its id exists already (a replay)."""
    now = time.time()
    values = {
        'id': request.id,
        'workflow_id': workflow_id,
        'questions': encode_request(request),
        'status': status,
        'response': None,
        'created_at': now,
        'updated_at': now,
    }
    dialect = postgresql if conn.dialect.name == 'postgresql' else sqlite
    conn.execute(dialect.insert(requests_table).values(values).on_conflict_do_nothing(index_elements=['id']))


def decode_row(row: sa.Row[Any]) -> StoredRequest:
    """The decoded form of one table row."""
    mapping = row._mapping  # pyright: ignore[reportPrivateUsage]
    response = mapping['response']
    return StoredRequest(
        request=decode_request(mapping['questions'], mapping['id']),
        workflow_id=mapping['workflow_id'],
        status=cast(Status, mapping['status']),
        response=decode_response(response) if response is not None else None,
        created_at=float(mapping['created_at']),
    )


def encode_request(request: AskUserRequest) -> str:
    """The questions as the JSON arguments of an `ask_user_question` call."""
    return json.dumps({'questions': questions_to_json(request)}, ensure_ascii=False)


def decode_request(text: str, request_id: str) -> AskUserRequest:
    """The request stored as `text`, validated again as the tool would."""
    return AskUserRequest.from_tool_args(text, id=request_id)


def encode_response(response: AskUserResponse) -> str:
    """`response` as JSON, in the `AskUserResponse` shape."""
    return json.dumps(response_to_json(response), ensure_ascii=False)


def decode_response(text: str) -> AskUserResponse:
    """The response stored as `text`."""
    return response_from_json(json.loads(text))


def answer_message(response: AskUserResponse) -> str:
    """The DBOS message that carries `response` to the waiting workflow."""
    return json.dumps({'response': response_to_json(response)}, ensure_ascii=False)


def message_topic(request_id: str) -> str:
    """The DBOS message topic the waiting workflow receives its answer on."""
    return f'ask_user:{request_id}'
