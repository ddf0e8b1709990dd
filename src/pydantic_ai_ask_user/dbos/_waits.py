"""The event waits' statements: a `DBOSEventWaiter` wait's row (open, then resolved or expired once), the questions
published under its token and the calls it decides, and the locks that order whoever answers them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from ._connection import execute, row_lock
from ._encoding import StoredRequest, decode_row
from ._pending_statements import REQUEST_COLUMNS
from ._schema import EVENT_CALLS_TABLE_NAME, EVENT_TABLE_NAME, EVENT_WAITS_TABLE_NAME, TABLE_NAME

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
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
)


def insert_event_request(conn: Connection, request_id: str, token: str) -> None:
    """Tie the question whose key is `request_id` to the wait of `token`; idempotent."""
    execute(
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
    found = execute(conn, query, {'request_id': request_id}).fetchone()
    if found is None:
        return None
    lock_token(conn, found[0])
    return found[0]


def lock_token(conn: Connection, token: str) -> None:
    """Lock the wait of `token` and its question rows, in a fixed order."""
    # The wait's own row first: it orders the deciders of a wait that holds approvals and no question.
    wait = f'SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE token = :token{row_lock(conn, "UPDATE")}'
    execute(conn, wait, {'token': token}).fetchall()
    # On PostgreSQL, answers to sibling questions wait here for one another; SQLite's writers are serial anyway.
    query = (
        f'SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token = :token ORDER BY request_id{row_lock(conn, "UPDATE")}'
    )
    execute(conn, query, {'token': token}).fetchall()


def token_requests(conn: Connection, token: str) -> list[StoredRequest]:
    """The decoded questions published for the wait of `token`."""
    query = (
        f'SELECT {REQUEST_COLUMNS} FROM {TABLE_NAME} '
        f'WHERE id IN (SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token = :token)'
    )
    return [decode_row(row) for row in execute(conn, query, {'token': token}).fetchall()]


def open_wait_row(conn: Connection, token: str, workflow_id: str) -> None:
    """Record the wait of `token` as open; idempotent."""
    execute(
        conn,
        f'INSERT INTO {EVENT_WAITS_TABLE_NAME} (token, workflow_id, status, updated_at) '
        "VALUES (:token, :workflow_id, 'pending', :updated_at) ON CONFLICT (token) DO NOTHING",
        {'token': token, 'workflow_id': workflow_id, 'updated_at': time.time()},
    )


def _move_wait(conn: Connection, token: str, status: Literal['resolved', 'expired']) -> bool:
    moved = execute(
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
    return [row[0] for row in execute(conn, query).fetchall()]


def record_wait_calls(conn: Connection, token: str, calls: str) -> None:
    """Record the pending calls (JSON) the wait of `token` decides; idempotent, as the step calling it may run again."""
    execute(
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
    found = execute(conn, query, {'token': token}).fetchone()
    return None if found is None else found[0]
