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

from .._answers import LATEST_DEADLINE, AskUserRequest
from .._audience import Person, addressed_to, context_to_json
from .._question_store import EVERYTHING, NO_DEADLINE_ORDER, PendingFilter
from ._addressees import ADDRESSEES_TABLE_NAME, insert_addressees
from ._connection import dialect_of, execute, fetch_one, in_list, row_lock
from ._encoding import Identity, Status, StoredRequest, UnreadableRowError, decode_row, encode_request
from ._schema import (
    EVENT_APPROVALS_TABLE_NAME,
    EVENT_TABLE_NAME,
    EVENT_WAITS_TABLE_NAME,
    PENDING_ORDER,
    TABLE_NAME,
    after_position,
)
from ._workflows import active_workflows_query

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'report_unreadable',
    'insert_pending',
    'insert_encoded',
    'REQUEST_COLUMNS',
    'select_requests',
    'on_unreadable_row',
    'audience_condition',
    'names_found',
    'pending_page_statement',
    'select_pending_page',
    'count_pending_statement',
    'count_pending_rows',
    'columns_decide',
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


REQUEST_COLUMNS = (
    'id, workflow_id, questions, status, response, created_at, answered_by, run_id, tool_call_id, audience, context'
)
"""The columns a question is read back from, in the order `decode_row` takes them."""

_QUALIFIED_COLUMNS = ', '.join(f'q.{column.strip()}' for column in REQUEST_COLUMNS.split(','))
"""`REQUEST_COLUMNS` of the questions table as `q`."""


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
    found, parameters = names_found(visible_to, dialect, 'audience')
    return '(' + ' OR '.join(['audience IS NULL', *found]) + ')', parameters


def names_found(
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
    condition = audience_condition(visible_to, dialect_of(conn))
    return ([], {}) if condition is None else ([condition[0]], condition[1])


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


def _columns_searched(where: PendingFilter) -> tuple[list[str], dict[str, Any]]:
    """The conditions of `where`'s search that columns decide, and their parameters: the agent and the conversation
    (`agent_name`, `conversation_id`, each with its index), and a kind of `approval`, which no question is. The other
    search fields are matched on the decoded rows (`PendingFilter.takes_item`), as these are too.

    Not on a person's own ranges (`_person_page_statement`): SQLite would read the agent's every waiting question by
    its index, everybody's, for the few that are theirs, rather than their ranges of the unaddressed questions' and
    the addressees' indexes; their rows are matched on the decoded rows, as every search field once was.
    """
    conditions = _no_question(where)
    parameters: dict[str, Any] = {}
    for field, column in (('agent', 'agent_name'), ('conversation', 'conversation_id')):
        value = getattr(where, field)
        if value is not None:
            conditions.append(f'{column} = :search_{field}')
            parameters[f'search_{field}'] = value
    return conditions, parameters


def _no_question(where: PendingFilter) -> list[str]:
    """A condition no row meets when `where` takes only approvals (`kind='approval'`), else none."""
    return ['1 = 0'] if where.kind == 'approval' else []


def columns_decide(where: PendingFilter, visible_to: Person | None = None, *, addressees: bool = True) -> bool:
    """Whether the SQL decides all of `where` for `visible_to` (nothing left to match on the decoded rows: no title,
    addressee or free text, and no agent or conversation on a person's own ranges, `_columns_searched`): its pages then
    read only the rows they show, and its count is one SQL count. `addressees` as for `select_pending_page`.
    """
    if where.title is not None or where.addressee is not None or where.text is not None:
        return False
    return not _addressed_names(visible_to, addressees) or (where.agent is None and where.conversation is None)


def _pending_where(
    conn: Connection, where: PendingFilter, visible_to: Person | None
) -> tuple[list[str], dict[str, Any]]:
    conditions, parameters = _audience_where(conn, visible_to)
    ages, values = _ages(where, 'created_at')
    searched, found = _columns_searched(where)
    return ["status = 'pending'", *conditions, *ages, *searched], parameters | values | found


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
    found, parameters = names_found(visible_to, dialect_of(conn), 'q.audience')
    listed, values = in_list('name', names)
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
    later, values = after_position(PENDING_ORDER, after)
    conditions += _searched(conn, later, where)
    query = (
        f'SELECT {REQUEST_COLUMNS} FROM {TABLE_NAME} WHERE {" AND ".join(conditions)} '
        f'ORDER BY {PENDING_ORDER} LIMIT :limit'
    )
    return query, parameters | values | {'limit': limit}


def _searched(conn: Connection, later: list[str], where: PendingFilter) -> list[str]:
    """The cursor's condition (`later`, of `after_position`); on PostgreSQL, when `where` filters by agent (or
    conversation), compared from that column and `status` on: the same rows, since the filter's equalities fix both.

    PostgreSQL estimates a row comparison by its first column alone: from the pending order's `due_at` (the same for
    every question without a deadline), it would think the rest of the list nearly empty and read it through the
    pending order's index, every agent's rows, rather than through the filter's own index, which this one leads.
    SQLite seeks the filter's index by the pending order's comparison after the equalities, and not by this one.
    """
    if not later or dialect_of(conn) != 'postgresql':
        return later
    for field, column in (('agent', 'agent_name'), ('conversation', 'conversation_id')):
        if getattr(where, field) is not None:
            return [
                f"({column}, status, {PENDING_ORDER}) > (:search_{field}, 'pending', :after_due, :after_created, "
                ':after_id)'
            ]
    return later


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
    later, cursor = after_position(PENDING_ORDER, after)
    parameters |= values | cursor | {'limit': limit}
    everyone = ' AND '.join(["status = 'pending'", 'audience IS NULL', *_no_question(where), *ages, *later])
    branches = [f'SELECT {PENDING_ORDER} FROM {TABLE_NAME} WHERE {everyone} ORDER BY {PENDING_ORDER} LIMIT :limit']
    by_name = [*_no_question(where), *_ages(where, 'a.created_at')[0], *after_position(_ADDRESSEES_ORDER, after)[0]]
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
    return _visible(_decode_rows(execute(conn, statement, parameters).fetchall(), decoded), visible_to)


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
    everyone = ' AND '.join(["status = 'pending'", 'audience IS NULL', *_no_question(where), *ages])
    by_name = ' AND '.join([f'a.name IN {listed}', *_no_question(where), *_ages(where, 'a.created_at')[0]])
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
    return int(fetch_one(conn, statement, parameters)[0])


def prune_finished(
    conn: Connection, before: float, *, has_event_tables: bool, has_addressees: bool, has_approvals: bool = False
) -> int:
    """Delete the questions answered or withdrawn before `before` (their tie to a wait's token, and their addressees
    too), and with `has_approvals` the tool approvals decided or withdrawn before it; how many questions.

    Not those of a waiting handler's wait still open: its last answer reads every answer of its questions, and every
    decision of its approvals.
    """
    if has_approvals:
        execute(
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
    return claimed.rowcount == 1


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
    return withdrawn.rowcount
