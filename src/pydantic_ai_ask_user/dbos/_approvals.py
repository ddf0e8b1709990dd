"""The approvals table's statements: the tool calls a waiting handler's wait needs approved, published with its
questions (`ask_through_store`), each decided by a person once, and what they decode to.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from .._approvals import ApprovalDecision, PendingApproval
from .._audience import Person
from .._history import FinishedRecord, approval_outcome
from ._connection import dialect_of, execute
from ._history_index import history_entry, history_present, insert_entries
from ._pending_statements import PENDING_APPROVAL, approval_audience_condition, count_pending_approvals_statement
from ._schema import EVENT_APPROVALS_TABLE_NAME, EVENT_WAITS_TABLE_NAME
from ._workflows import active_workflows_query

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'decode_approval',
    'FINISHED_APPROVAL_COLUMNS',
    'finished_approval_record',
    'index_finished_approvals',
    'ApprovalStatus',
    'StoredApproval',
    'insert_approval',
    'select_approvals',
    'count_pending_approvals',
    'approval_changes_since',
    'claim_approval',
    'withdraw_approvals',
)

ApprovalStatus = Literal['pending', 'decided', 'withdrawn']
"""Where an approval stands: waiting, decided once, or given up by its run (its wait's deadline passed)."""


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
    execute(
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
"""The columns an approval is read back from, with whether its wait is open, in the order `decode_approval` takes."""


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
        conditions.append(PENDING_APPROVAL)
    if (audience := approval_audience_condition(visible_to, dialect_of(conn))) is not None:
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
    return [decode_approval(row) for row in execute(conn, query, parameters).fetchall()]


def count_pending_approvals(conn: Connection, visible_to: Person | None = None) -> int:
    """How many approvals are still decidable (that `visible_to` may see), counted without decoding them."""
    statement, parameters = count_pending_approvals_statement(conn, visible_to)
    return int(execute(conn, statement, parameters).fetchone()[0])


def approval_changes_since(conn: Connection, since: float) -> list[tuple[str, ApprovalStatus, float]]:
    """The id, status and creation time of every approval changed at or after `since`, oldest first: the change
    feed of the inbox's events, as `changes_since` is the questions'.
    """
    query = (
        f'SELECT id, status, created_at FROM {EVENT_APPROVALS_TABLE_NAME} WHERE updated_at >= :since '
        'ORDER BY created_at, id'
    )
    rows = execute(conn, query, {'since': since}).fetchall()
    return [(key, status, float(created_at)) for key, status, created_at in rows]


def _json_or_null(data: dict[str, Any]) -> str | None:
    return json.dumps(data, ensure_ascii=False) if data else None


def decode_approval(row: Sequence[Any]) -> StoredApproval:
    """One row of the approval columns (`_APPROVAL_COLUMNS`, whether its wait is open last) decoded."""
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


FINISHED_APPROVAL_COLUMNS = (
    'a.token, a.workflow_id, a.run_id, a.tool_call_id, a.tool_name, a.args, a.parameters, a.addressing, a.created_at, '
    'a.status, a.decision, 0, a.id, a.decided_by, a.updated_at'
)
"""The columns a finished approval is read back from: those `decode_approval` takes (its wait is over), then its
key, who decided it and when it finished."""


def finished_approval_record(row: Sequence[Any]) -> FinishedRecord:
    """A finished approval's row (`FINISHED_APPROVAL_COLUMNS`) as a history record."""
    stored = decode_approval(row[:-3])
    decision = stored.decision if stored.status == 'decided' else None
    return FinishedRecord(
        kind='approval',
        key=stored.key,
        outcome=approval_outcome(decision),
        by=None if decision is None else row[-2],
        asked_at=stored.approval.created_at,
        finished_at=float(row[-1]),
        approval=stored.approval,
        decision=decision,
        workflow_id=stored.approval.workflow_id,
    )


def index_finished_approvals(conn: Connection, condition: str, parameters: dict[str, Any]) -> None:
    """Write the history's entries (`_history_index`) of the finished approvals `condition` (on the table as `a`)
    names, as they finished, in the transaction that finished them; nothing where its tables are missing.
    """
    if not history_present(conn):
        return
    rows = execute(
        conn,
        f'SELECT {FINISHED_APPROVAL_COLUMNS} FROM {EVENT_APPROVALS_TABLE_NAME} AS a WHERE {condition} '
        "AND a.status <> 'pending'",
        parameters,
    ).fetchall()
    insert_entries(conn, [history_entry(finished_approval_record(row)) for row in rows])


def claim_approval(conn: Connection, approval: PendingApproval, decision: ApprovalDecision) -> bool:
    """Move a pending approval to decided, while its workflow still waits; False when it was not pending (whoever
    raced it) or its workflow waits no more. One conditional UPDATE, as `claim_answer`.
    """
    active, parameters = active_workflows_query(conn, [approval.workflow_id])
    claimed = execute(
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
    if claimed.rowcount != 1:
        return False
    index_finished_approvals(conn, 'a.id = :id', {'id': approval.key})
    return True


def withdraw_approvals(conn: Connection, token: str) -> int:
    """Withdraw the approvals of `token` still pending (its deadline passed); how many were."""
    withdrawn = execute(
        conn,
        f"UPDATE {EVENT_APPROVALS_TABLE_NAME} SET status = 'withdrawn', updated_at = :updated_at "
        "WHERE token = :token AND status = 'pending'",
        {'token': token, 'updated_at': time.time()},
    )
    if withdrawn.rowcount:
        index_finished_approvals(conn, 'a.token = :token', {'token': token})
    return withdrawn.rowcount
