"""The questions table's statements: publishing a question, reading it back (by key, a page in the inbox's order, a
count, the rows a change touched), answering and withdrawing it, and pruning the finished ones.

A damaged row is left out of a listing and reported once (`on_unreadable_row`), not raised.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._answers import AskUserRequest
from .._audience import Person, addressed_to, context_to_json
from .._history import FinishedRecord, question_outcome
from .._question_limits import LATEST_DEADLINE
from .._question_store import EVERYTHING, NO_DEADLINE_ORDER, PendingFilter
from ._addressees import ADDRESSEES_TABLE_NAME, insert_addressees
from ._connection import execute, fetch_one, in_list, json_value, row_lock
from ._encoding import Identity, Status, StoredRequest, UnreadableRowError, decode_row, encode_request
from ._history_index import history_complete, history_entry, history_present, insert_entries, prune_history_index
from ._pending_statements import REQUEST_COLUMNS, audience_where, count_pending_statement, pending_page_statement
from ._schema import (
    EVENT_APPROVALS_TABLE_NAME,
    EVENT_TABLE_NAME,
    EVENT_WAITS_TABLE_NAME,
    TABLE_NAME,
)
from ._workflows import active_workflows_query

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'report_unreadable',
    'FINISHED_QUESTION_COLUMNS',
    'finished_question_record',
    'index_finished_questions',
    'insert_pending',
    'insert_encoded',
    'select_requests',
    'on_unreadable_row',
    'select_pending_page',
    'count_pending_rows',
    'prune_finished',
    'publication',
    'status_and_response',
    'request_status',
    'changes_since',
    'claim_answer',
    'keep_receipt',
    'withdraw_pending',
)

_log = logging.getLogger('pydantic_ai_ask_user.dbos')
"""The DBOS package's logger, which its warnings go to."""


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
        # The context's agent and conversation again, each in a column of its own that the search's filters read.
        'agent_name': None if identity.context is None else identity.context.agent_name,
        'conversation_id': None if identity.context is None else identity.context.conversation_id,
    }
    inserted = execute(
        conn,
        f'INSERT INTO {TABLE_NAME} (id, workflow_id, questions, status, response, created_at, updated_at, run_id, '
        'tool_call_id, audience, context, due_at, agent_name, conversation_id) VALUES (:id, :workflow_id, :questions, '
        ':status, NULL, :created_at, :updated_at, :run_id, :tool_call_id, :audience, :context, :due_at, :agent_name, '
        ':conversation_id) ON CONFLICT (id) DO NOTHING',
        values,
    )
    if inserted.rowcount != 1:
        return  # a replay's: the row was there
    if identity.audience:
        # Its names, in the same transaction, for a person's own page, and for their history where it is read from
        # the addressees (a question recorded withdrawn at once has them too, or no person would find it there).
        insert_addressees(conn, [(identity.key, identity.audience, due_at, now)])
    if status != 'pending':
        index_finished_questions(conn, '(:id)', {'id': identity.key})


def _due_at(questions_json: str) -> float:
    """The `due_at` of a row: the deadline `encode_request` wrote into its questions, or `NO_DEADLINE_ORDER`."""
    try:
        deadline = json.loads(questions_json).get('deadline')
    except (ValueError, AttributeError):
        return NO_DEADLINE_ORDER
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 <= deadline <= LATEST_DEADLINE:
        return float(deadline)
    return NO_DEADLINE_ORDER


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
    conditions, parameters = audience_where(conn, visible_to)
    if status is not None:
        conditions.append('status = :status')
        parameters['status'] = status
    if request_id is not None:
        conditions.append('id = :id')
        parameters['id'] = request_id
    if request_ids is not None:
        if not request_ids:
            return []
        listed, values = in_list('id', request_ids)
        conditions.append(f'id IN {listed}')
        parameters |= values
    where = f' WHERE {" AND ".join(conditions)}' if conditions else ''
    query = f'SELECT {REQUEST_COLUMNS} FROM {TABLE_NAME}{where} ORDER BY created_at, id'
    rows = execute(conn, query, parameters).fetchall()
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
            report_unreadable(error)
            continue
        stored.append(one)
        if decoded is not None:
            decoded[row[0]] = one.request
    return stored


FINISHED_QUESTION_COLUMNS = f'{REQUEST_COLUMNS}, receipt, updated_at'
"""The columns a finished question is read back from (`finished_question_record`): those `decode_row` takes, then its
receipt and when it finished."""


def finished_question_record(
    row: Sequence[Any], decoded: MutableMapping[str, AskUserRequest] | None
) -> FinishedRecord | None:
    """A finished question's row (`REQUEST_COLUMNS`, `receipt` and `updated_at`) as a history record; `None` when
    damaged. A receipt column that is not JSON is kept as its text: it shows, and does not verify.
    """
    try:
        stored = decode_row(row[:-2], None if decoded is None else decoded.get(row[0]))
    except UnreadableRowError as error:
        report_unreadable(error)
        return None
    if decoded is not None:
        decoded[stored.key] = stored.request
    response = stored.response if stored.status == 'answered' else None
    return FinishedRecord(
        kind='question',
        key=stored.key,
        outcome=question_outcome(response),
        by=None if response is None else stored.answered_by,
        asked_at=stored.created_at,
        finished_at=float(row[-1]),
        request=stored.request,
        response=response,
        workflow_id=stored.workflow_id,
        receipt=None if row[-2] is None else json_value(str(row[-2])),
    )


def index_finished_questions(conn: Connection, ids: str, parameters: dict[str, Any]) -> None:
    """Write the history's entries (`_history_index`) of the finished questions among `ids` (`(...)` after `IN`, with
    its `parameters`), as they finished, in the transaction that finished them; nothing where its tables are missing.
    A damaged row has no entry, as it has no place in any history. Once the index is complete, their addressee rows
    are deleted: nothing reads them any more.
    """
    complete = history_complete(conn)  # made last, with the tables there: one read of the catalogue, as a rule
    if not complete and not history_present(conn):
        return
    rows = execute(
        conn,
        f"SELECT {FINISHED_QUESTION_COLUMNS} FROM {TABLE_NAME} WHERE id IN {ids} AND status <> 'pending'",
        parameters,
    ).fetchall()
    records = [record for row in rows if (record := finished_question_record(row, None)) is not None]
    insert_entries(conn, [history_entry(record) for record in records])
    if rows and complete:
        # The history reads the index from now on: their addressee rows, which a person's waiting list would read
        # through (and join to each finished question), are done with.
        finished, values = in_list('finished', [str(row[0]) for row in rows])
        execute(conn, f'DELETE FROM {ADDRESSEES_TABLE_NAME} WHERE request_id IN {finished}', values)


_REPORTED_LIMIT = 1024
"""How many damaged rows a process remembers having logged, so that each is logged once, not on every listing."""

_reported: dict[str, None] = {}
"""The keys of the damaged rows this process logged, oldest first (at most `_REPORTED_LIMIT`)."""


def report_unreadable(error: UnreadableRowError) -> None:
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
    return _visible(_decode_rows(execute(conn, statement, parameters).fetchall(), decoded), visible_to)


def count_pending_rows(
    conn: Connection, where: PendingFilter = EVERYTHING, visible_to: Person | None = None, *, addressees: bool = True
) -> int:
    """How many rows are pending (that pass `where`, and that `visible_to` may see), without reading their questions.

    `addressees`: whether the database has them (`has_addressees`), which a person's count then reads.
    """
    statement, parameters = count_pending_statement(conn, where, visible_to, addressees=addressees)
    return int(fetch_one(conn, statement, parameters)[0])


def prune_finished(
    conn: Connection, before: float, *, has_event_tables: bool, has_addressees: bool, has_approvals: bool = False
) -> int:
    """Delete the questions answered or withdrawn before `before` (their tie to a wait's token, and their addressees
    too), and with `has_approvals` the tool approvals decided or withdrawn before it; how many questions.

    Not those of a waiting handler's wait still open: its last answer reads every answer of its questions, and every
    decision of its approvals.
    """
    history = history_present(conn)
    if has_approvals:
        approvals = (
            f"{EVENT_APPROVALS_TABLE_NAME} WHERE status <> 'pending' AND updated_at < :before AND token "
            f"NOT IN (SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE status = 'pending')"
        )
        if history:
            prune_history_index(conn, 'approval', f'SELECT id FROM {approvals}', {'before': before})
        execute(conn, f'DELETE FROM {approvals}', {'before': before})
    finished = "status <> 'pending' AND updated_at < :before"
    if has_event_tables:
        still_read = (
            f'SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token IN '
            f"(SELECT token FROM {EVENT_WAITS_TABLE_NAME} WHERE status = 'pending')"
        )
        finished += f' AND id NOT IN ({still_read})'
    if history:
        prune_history_index(conn, 'question', f'SELECT id FROM {TABLE_NAME} WHERE {finished}', {'before': before})
    tables = [EVENT_TABLE_NAME] if has_event_tables else []
    if has_addressees:
        tables.append(ADDRESSEES_TABLE_NAME)
    for table in tables:
        execute(
            conn,
            f'DELETE FROM {table} WHERE request_id IN (SELECT id FROM {TABLE_NAME} WHERE {finished})',
            {'before': before},
        )
    return execute(conn, f'DELETE FROM {TABLE_NAME} WHERE {finished}', {'before': before}).rowcount


def publication(conn: Connection, request_id: str) -> tuple[str, Status, float, str]:
    """The workflow id, status, creation time and questions (as `encode_request` wrote them) of a published request."""
    query = f'SELECT workflow_id, status, created_at, questions FROM {TABLE_NAME} WHERE id = :id'
    workflow_id, status, created_at, questions = fetch_one(conn, query, {'id': request_id})
    return workflow_id, status, float(created_at), questions


def status_and_response(conn: Connection, request_id: str) -> tuple[Status, str | None]:
    """The status and response (JSON, or `None`) of a published request."""
    status, response = fetch_one(conn, f'SELECT status, response FROM {TABLE_NAME} WHERE id = :id', {'id': request_id})
    return status, response


def request_status(conn: Connection, request_id: str) -> Status | None:
    """Where the request stands, or `None` when there is no such row."""
    found = execute(conn, f'SELECT status FROM {TABLE_NAME} WHERE id = :id', {'id': request_id}).fetchone()
    return None if found is None else cast(Status, found[0])


def changes_since(conn: Connection, since: float) -> list[tuple[str, Status, float]]:
    """The id, status and creation time of every row changed at or after `since`, oldest first.

    Without the questions and the response, so a poll decodes nothing for rows it already knows.
    """
    query = f'SELECT id, status, created_at FROM {TABLE_NAME} WHERE updated_at >= :since ORDER BY created_at, id'
    rows = execute(conn, query, {'since': since}).fetchall()
    return [(request_id, status, float(created_at)) for request_id, status, created_at in rows]


def keep_receipt(conn: Connection, request_id: str, receipt_json: str) -> str | None:
    """Keep `receipt_json` (a signed receipt, `receipt_to_json`'s JSON) with the answered question `request_id`, unless
    it has one already; the receipt kept (the first), or `None` when the question is not answered here.

    Neither the status nor `updated_at` changes: the history's order and the change log stay as the answer left them.
    """
    execute(
        conn,
        f"UPDATE {TABLE_NAME} SET receipt = :receipt WHERE id = :id AND status = 'answered' AND receipt IS NULL",
        {'id': request_id, 'receipt': receipt_json},
    )
    row = execute(
        conn, f"SELECT receipt FROM {TABLE_NAME} WHERE id = :id AND status = 'answered'", {'id': request_id}
    ).fetchone()
    return None if row is None else row[0]


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
        active, values = active_workflows_query(conn, [workflow_id])
        waiting = f' AND workflow_id IN ({active}{row_lock(conn, "SHARE")})'
        parameters |= values
    claimed = execute(
        conn,
        f"UPDATE {TABLE_NAME} SET status = 'answered', response = :response, answered_by = :answered_by, "
        f"updated_at = :updated_at WHERE id = :id AND status = 'pending'{waiting}",
        parameters,
    )
    if claimed.rowcount != 1:
        return False
    index_finished_questions(conn, '(:id)', {'id': request_id})
    return True


def withdraw_pending(conn: Connection, request_ids: Sequence[str] = (), *, token: str | None = None) -> int:
    """Withdraw those of these requests (or of the questions of `token`) still pending; how many were.

    The one way a question is given up: by its run's deadline, by a run that ended, or by a cancelled caller.
    """
    if token is not None:
        ids, parameters = f'(SELECT request_id FROM {EVENT_TABLE_NAME} WHERE token = :token)', {'token': token}
    elif request_ids:
        ids, parameters = in_list('id', request_ids)
    else:
        return 0
    withdrawn = execute(
        conn,
        f"UPDATE {TABLE_NAME} SET status = 'withdrawn', updated_at = :updated_at "
        f"WHERE id IN {ids} AND status = 'pending'",
        parameters | {'updated_at': time.time()},
    )
    if withdrawn.rowcount:
        index_finished_questions(conn, ids, parameters)
    return withdrawn.rowcount
