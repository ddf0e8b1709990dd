"""The statements that read what waits: a page of questions in the inbox's order (everyone's, or a person's through
the addressees), its count, the conditions on whom a row is for and what a search takes, and the approvals' count.

Built from plain values alone (a `PendingFilter`, a `Person`, a cursor's position), with nothing of the question
models: `_questions` runs them for `DBOSQuestionStore`, and `ask-user pending` on a SQLite file runs the same ones
with the standard library alone (`_cli.pending_rows`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._question_store import EVERYTHING, PendingFilter
from ._addressees import ADDRESSEES_TABLE_NAME
from ._connection import dialect_of, in_list
from ._schema import EVENT_APPROVALS_TABLE_NAME, EVENT_WAITS_TABLE_NAME, PENDING_ORDER, TABLE_NAME, after_position

if TYPE_CHECKING:
    from .._audience import Person
    from ._connection import Connection

__all__ = (
    'REQUEST_COLUMNS',
    'audience_condition',
    'names_found',
    'audience_where',
    'columns_decide',
    'pending_page_statement',
    'count_pending_statement',
    'PENDING_APPROVAL',
    'approval_audience_condition',
    'count_pending_approvals_statement',
)


REQUEST_COLUMNS = (
    'id, workflow_id, questions, status, response, created_at, answered_by, run_id, tool_call_id, audience, context'
)
"""The columns a question is read back from, in the order `decode_row` takes them."""

_QUALIFIED_COLUMNS = ', '.join(f'q.{column.strip()}' for column in REQUEST_COLUMNS.split(','))
"""`REQUEST_COLUMNS` of the questions table as `q`."""


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


def audience_where(conn: Connection, visible_to: Person | None) -> tuple[list[str], dict[str, Any]]:
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

    A person's own ranges (`_person_page_statement`) take the same conditions through `_own_columns_searched`.
    """
    conditions = _no_question(where)
    parameters: dict[str, Any] = {}
    for field, column in (('agent', 'agent_name'), ('conversation', 'conversation_id')):
        value = getattr(where, field)
        if value is not None:
            conditions.append(f'{column} = :search_{field}')
            parameters[f'search_{field}'] = value
    return conditions, parameters


def _own_columns_searched(conn: Connection, where: PendingFilter, prefix: str = '') -> list[str]:
    """`_columns_searched`'s conditions of the agent and the conversation on the questions a person's names reach
    through the addressees (the table aliased `prefix`), with the same parameters. On SQLite each column is read as an
    expression (`+`), so that SQLite keeps to the person's ranges of the addressees' index, each question looked up by
    its key, rather than the column's own index, which holds everybody's waiting questions of that agent.
    """
    plus = '+' if dialect_of(conn) == 'sqlite' else ''
    return [
        f'{plus}{prefix}{column} = :search_{field}'
        for field, column in (('agent', 'agent_name'), ('conversation', 'conversation_id'))
        if getattr(where, field) is not None
    ]


def _no_question(where: PendingFilter) -> list[str]:
    """A condition no row meets when `where` takes only approvals (`kind='approval'`), else none."""
    return ['1 = 0'] if where.kind == 'approval' else []


def columns_decide(where: PendingFilter) -> bool:
    """Whether the SQL decides all of `where`, for everyone and for a person alike (nothing left to match on the
    decoded rows: no title, addressee or free text; the agent and the conversation are columns, `_columns_searched`):
    its pages then read only the rows they show, and its count is one SQL count.
    """
    return where.title is None and where.addressee is None and where.text is None


def _pending_where(
    conn: Connection, where: PendingFilter, visible_to: Person | None
) -> tuple[list[str], dict[str, Any]]:
    conditions, parameters = audience_where(conn, visible_to)
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
    parameters |= values | cursor | _columns_searched(where)[1] | {'limit': limit}
    searched = _columns_searched(where)[0]  # a range of `ix_ask_user_requests_unaddressed_agent` (or conversation)
    everyone = ' AND '.join(["status = 'pending'", 'audience IS NULL', *_no_question(where), *searched, *ages, *later])
    branches = [f'SELECT {PENDING_ORDER} FROM {TABLE_NAME} WHERE {everyone} ORDER BY {PENDING_ORDER} LIMIT :limit']
    by_name = [
        *_no_question(where),
        *_own_columns_searched(conn, where, 'q.'),
        *_ages(where, 'a.created_at')[0],
        *after_position(_ADDRESSEES_ORDER, after)[0],
    ]
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
    searched = _columns_searched(where)[0]  # a range of `ix_ask_user_requests_unaddressed_agent` (or conversation)
    everyone = ' AND '.join(["status = 'pending'", 'audience IS NULL', *_no_question(where), *searched, *ages])
    by_name = ' AND '.join(
        [
            f'a.name IN {listed}',
            *_no_question(where),
            *_own_columns_searched(conn, where, 'q.'),
            *_ages(where, 'a.created_at')[0],
        ]
    )
    query = (
        f'SELECT (SELECT count(*) FROM {TABLE_NAME} WHERE {everyone}) '
        f'+ (SELECT count(DISTINCT a.request_id) FROM {rows} AND {by_name})'
    )
    return query, parameters | values | _columns_searched(where)[1]


PENDING_APPROVAL = "a.status = 'pending' AND w.status = 'pending'"
"""An approval still decidable: neither decided nor withdrawn, its wait still open."""


def count_pending_approvals_statement(conn: Connection, visible_to: Person | None = None) -> tuple[str, dict[str, Any]]:
    """The statement that counts the approvals still decidable (that `visible_to` may see), and its parameters."""
    conditions = [PENDING_APPROVAL]
    parameters: dict[str, Any] = {}
    if (audience := approval_audience_condition(visible_to, dialect_of(conn))) is not None:
        conditions.append(audience[0])
        parameters.update(audience[1])
    query = (
        f'SELECT count(*) FROM {EVENT_APPROVALS_TABLE_NAME} AS a JOIN {EVENT_WAITS_TABLE_NAME} AS w '
        f'ON w.token = a.token WHERE {" AND ".join(conditions)}'
    )
    return query, parameters


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
    found, parameters = names_found(visible_to, dialect, 'a.addressing', ensure_ascii=False, closed=True)
    parameters['addressed'] = _ADDRESSED
    unaddressed = f'(a.addressing IS NULL OR substr(a.addressing, 1, {len(_ADDRESSED)}) <> :addressed)'
    return '(' + ' OR '.join([unaddressed, *found]) + ')', parameters
