"""DBOS's own tables, read and written without DBOS: which workflows can still receive a message (`workflow_status`),
and sending one a message (`notifications`, through DBOS's SQL interface), in the caller's transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._connection import dialect_of, execute, in_list
from ._schema import DBOS_TABLE

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ('ACTIVE_WORKFLOW_STATUSES', 'active_workflows_query', 'active_workflows', 'send_message')

ACTIVE_WORKFLOW_STATUSES = ('PENDING', 'ENQUEUED', 'DELAYED')
"""DBOS workflow statuses under which a question can still be answered; any other means nobody waits."""


def active_workflows_query(conn: Connection, workflow_ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The query of those of these DBOS workflows that can still receive an answer, and its parameters."""
    listed, parameters = in_list('workflow', workflow_ids)
    statuses, values = in_list('status', ACTIVE_WORKFLOW_STATUSES)
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
    query, parameters = active_workflows_query(conn, workflow_ids)
    return {row[0] for row in execute(conn, query, parameters).fetchall()}


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
    if dialect_of(conn) == 'postgresql':
        statement = 'SELECT dbos.send_message(:workflow_id, CAST(:message AS json), :topic, :message_id)'
    else:
        statement = (
            'INSERT INTO notifications (destination_uuid, topic, message, message_uuid, serialization) '
            f"VALUES (:workflow_id, :topic, :message, :message_id, '{_PORTABLE_JSON}') "
            'ON CONFLICT (message_uuid) DO NOTHING'
        )
    execute(conn, statement, values)


def _workflows_table(conn: Connection) -> str:
    """DBOS's `workflow_status` table: in schema `dbos` on PostgreSQL, in the file on SQLite."""
    return f'dbos.{DBOS_TABLE}' if dialect_of(conn) == 'postgresql' else DBOS_TABLE
