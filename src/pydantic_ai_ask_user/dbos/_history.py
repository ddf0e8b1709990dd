"""The history's statements: the finished questions and approvals, newest first, a page at a time, and their count.

Finished rows are those whose `status` is no longer `pending` (`_schema.FINISHED`); when they finished is their
`updated_at`, which nothing changes afterwards. Each table is read in the history's order, `(updated_at, id)`
descending, as a range of a partial index that holds only finished rows (`_schema.INDEXES`, `APPROVAL_INDEXES`), read
backwards; the two tables' pages are merged by the store (`DBOSQuestionStore.history_page`).

A person's history reads the history's index (`_history_index`) once it is complete (`history_index_ready`, which
back-fills it once; `person_history_page`). Until then, or where it cannot be made, a person's questions are, as in
the pending list, the unaddressed ones (their own index), the ones addressed to one of their names (through the
addressees, which are kept until the question is pruned), and, in the history only, those they answered
(`answered_by`, its own index): each a branch of at most `limit` rows, merged. A person's approvals are read in
order with the approvals' audience condition (there are no addressees of approvals): a person who may see few of
many finished approvals has more rows read before the page is full.

A filter by agent or conversation is a condition on the questions' own columns (`_searched`): everyone's is a range of
that column's index of the finished rows (`ix_ask_user_requests_finished_agent`, `..._finished_conversation`), and a
person's narrows their branches. The approvals' agent is inside their `addressing`, matched on the decoded rows.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from .._answers import AskUserRequest
from .._audience import Person
from .._history import (
    ALL_FINISHED,
    FinishedRecord,
    HistoryFilter,
    encode_history_position,
    visible_in_history,
)
from .._question_store import PendingPage
from ._addressees import ADDRESSEES_TABLE_NAME, has_addressees
from ._approvals import FINISHED_APPROVAL_COLUMNS, finished_approval_record
from ._connection import dialect_of, execute, fetch_one, in_list
from ._handoffs import select_handoffs
from ._history_index import (
    backfill_position,
    columns_decide,
    complete_statement,
    count_history_statement,
    count_newest_statement,
    finished_conditions,
    history_complete,
    history_entry,
    history_present,
    history_statement,
    insert_entries,
    save_backfill_position,
)
from ._pending_statements import approval_audience_condition, audience_condition, names_found
from ._questions import FINISHED_QUESTION_COLUMNS, finished_question_record
from ._schema import EVENT_APPROVALS_TABLE_NAME, FINISHED, TABLE_NAME

if TYPE_CHECKING:
    from ._connection import Connection, Database

__all__ = (
    'backfill_history_index',
    'columns_decide_history',
    'indexed_history_page',
    'INDEXED_COUNT_ROWS',
    'history_index_state',
    'finished_questions_statement',
    'count_finished_statement',
    'finished_approvals_statement',
    'select_finished_questions',
    'count_finished_questions',
    'select_finished_approvals',
    'count_finished_approvals',
)

_ORDER = 'updated_at DESC, id DESC'
"""The history's order of one table's rows: the latest finished first, then by key (descending, as the cursor)."""

_Before = tuple[float, str] | None
"""The `history_order` position a page continues after (rows sorting before it in `_ORDER`), or `None` for the first."""


def _conditions(where: HistoryFilter, before: _Before, prefix: str = '') -> tuple[list[str], dict[str, Any]]:
    """The conditions of `where`'s times and of the cursor on rows (of the table aliased `prefix`), and parameters."""
    return finished_conditions(where, before, finished=f'{prefix}updated_at', key=f'{prefix}id')


def _searched(
    conn: Connection, where: HistoryFilter, prefix: str = '', *, own: bool = False
) -> tuple[list[str], dict[str, Any]]:
    """The conditions of `where`'s search that the questions' columns decide (the agent and the conversation: each a
    column written with the row, `agent_name` and `conversation_id`), on rows of the table aliased `prefix`, and their
    parameters. The decoded rows are matched again (`HistoryFilter.takes`), as for every other search field.

    `own`: on a person's ranges (`_question_branches`), where SQLite is told not to read the column's index (its `+`),
    which holds everybody's finished questions of that agent, rather than the person's few of the branch's own index.
    """
    conditions: list[str] = []
    parameters: dict[str, Any] = {}
    plus = '+' if own and dialect_of(conn) == 'sqlite' else ''
    for field, column in (('agent', 'agent_name'), ('conversation', 'conversation_id')):
        value = getattr(where, field)
        if value is not None:
            conditions.append(f'{plus}{prefix}{column} = :search_{field}')
            parameters[f'search_{field}'] = value
    return conditions, parameters


def columns_decide_history(where: HistoryFilter) -> bool:
    """Whether the questions' SQL decides all of `where`'s search (no title, addressee or free text): their page then
    takes every row it reads, and their total is one SQL count.
    """
    return where.title is None and where.addressee is None and where.text is None


def _question_branches(
    conn: Connection, visible_to: Person | None, addressees: bool
) -> tuple[list[tuple[str, str]], dict[str, Any]] | None:
    """For a person's history of questions: each branch as `(FROM ... WHERE ...)` over the questions as `q` (without
    the conditions of times and cursor) and its alias prefix, and their parameters; `None` for the administrator, or
    where the addressees are missing (then the audience condition is read over the finished index instead).
    """
    if visible_to is None or visible_to.sees_all or not addressees:
        return None
    parameters: dict[str, Any] = {}
    branches = [(f'{TABLE_NAME} WHERE {FINISHED} AND audience IS NULL', '')]
    if visible_to.name is not None:
        branches.append((f'{TABLE_NAME} WHERE {FINISHED} AND answered_by IS NOT NULL AND answered_by = :by', ''))
        parameters['by'] = visible_to.name
    found, values = names_found(visible_to, dialect_of(conn), 'q.audience')
    parameters |= values
    for index, name in enumerate(sorted(visible_to.names)):
        parameters[f'name_{index}'] = name
        # `CROSS JOIN`: SQLite reads the name's addressee rows first, then each one's question by its key.
        branches.append(
            (
                f'{ADDRESSEES_TABLE_NAME} AS a CROSS JOIN {TABLE_NAME} AS q WHERE q.id = a.request_id AND '
                f"a.name = :name_{index} AND q.status <> 'pending' AND ({' OR '.join(found)})",
                'q.',
            )
        )
    return branches, parameters


def _plain_conditions(conn: Connection, visible_to: Person | None) -> tuple[list[str], dict[str, Any]]:
    """The conditions on finished questions of a history read over the finished index alone: every one for the
    administrator; for a person (where the addressees are missing), their audience's or their own answers.
    """
    condition = audience_condition(visible_to, dialect_of(conn))
    if condition is None or visible_to is None:
        return [FINISHED], {}
    text, parameters = condition
    if visible_to.name is not None:
        text = f'({text} OR answered_by = :by)'
        parameters = parameters | {'by': visible_to.name}
    return [FINISHED, text], parameters


def finished_questions_statement(
    conn: Connection,
    *,
    before: _Before,
    limit: int,
    where: HistoryFilter = ALL_FINISHED,
    visible_to: Person | None = None,
    addressees: bool = True,
) -> tuple[str, dict[str, Any]]:
    """The statement of `select_finished_questions` and its parameters: for everyone, a range of the finished index;
    for a person, the first `limit` of a range per branch (`_question_branches`), merged, each row once.
    """
    columns = FINISHED_QUESTION_COLUMNS
    branches = _question_branches(conn, visible_to, addressees)
    if branches is None:
        conditions, parameters = _plain_conditions(conn, visible_to)
        times, values = _conditions(where, before)
        searched, found = _searched(conn, where, own=visible_to is not None and not visible_to.sees_all)
        query = (
            f'SELECT {columns} FROM {TABLE_NAME} WHERE {" AND ".join([*conditions, *searched, *times])} '
            f'ORDER BY {_ORDER} LIMIT :limit'
        )
        parameters |= values | found
    else:
        selects: list[str] = []
        parameters = dict(branches[1])
        for index, (rows, prefix) in enumerate(branches[0]):
            times, values = _conditions(where, before, prefix)
            searched, found = _searched(conn, where, prefix, own=True)
            parameters |= values | found
            selects.append(
                f'SELECT * FROM (SELECT {prefix}updated_at AS updated_at, {prefix}id AS id FROM {rows}'
                f'{"".join(" AND " + each for each in [*searched, *times])} '
                f'ORDER BY {prefix}updated_at DESC, {prefix}id DESC LIMIT :limit) AS b{index}'
            )
        qualified = ', '.join(f'q.{column.strip()}' for column in columns.split(','))
        query = (
            f'SELECT {qualified} FROM ({" UNION ".join(selects)}) AS page JOIN {TABLE_NAME} AS q ON q.id = page.id '
            'ORDER BY page.updated_at DESC, page.id DESC LIMIT :limit'
        )
    return query, parameters | {'limit': limit}


def select_finished_questions(
    conn: Connection,
    *,
    before: _Before,
    limit: int,
    where: HistoryFilter = ALL_FINISHED,
    visible_to: Person | None = None,
    addressees: bool = True,
    decoded: MutableMapping[str, AskUserRequest] | None = None,
) -> tuple[list[FinishedRecord], _Before]:
    """At most `limit` finished questions after `before`, the newest first, decoded; only those `visible_to` may see
    (`visible_in_history`, applied again to the decoded rows). A damaged row is left out (and reported once).

    With them, where the rows read end when `limit` were read (more may follow, even if some were left out), else
    `None`: the table has no more.

    `addressees`: whether the database has them (`has_addressees`), which a person's history then reads.
    """
    statement, parameters = finished_questions_statement(
        conn, before=before, limit=limit, where=where, visible_to=visible_to, addressees=addressees
    )
    rows = execute(conn, statement, parameters).fetchall()
    records = [record for row in rows if (record := finished_question_record(row, decoded)) is not None]
    last = (float(rows[-1][-1]), str(rows[-1][0])) if rows and len(rows) == limit else None
    return [record for record in records if visible_in_history(record, visible_to)], last


def count_finished_questions(
    conn: Connection, where: HistoryFilter = ALL_FINISHED, visible_to: Person | None = None, *, addressees: bool = True
) -> int:
    """How many finished questions `where` takes and `visible_to` may see, each once, without decoding them."""
    statement, parameters = count_finished_statement(conn, where, visible_to, addressees=addressees)
    return int(fetch_one(conn, statement, parameters)[0])


def count_finished_statement(
    conn: Connection, where: HistoryFilter = ALL_FINISHED, visible_to: Person | None = None, *, addressees: bool = True
) -> tuple[str, dict[str, Any]]:
    """The statement of `count_finished_questions` and its parameters: the finished index, or a person's branches."""
    branches = _question_branches(conn, visible_to, addressees)
    times, values = _conditions(where, None)
    if branches is None:
        conditions, parameters = _plain_conditions(conn, visible_to)
        searched, found = _searched(conn, where, own=visible_to is not None and not visible_to.sees_all)
        query = f'SELECT count(*) FROM {TABLE_NAME} WHERE {" AND ".join([*conditions, *searched, *times])}'
        return query, parameters | values | found
    selects: list[str] = []
    found: dict[str, Any] = {}
    for rows, prefix in branches[0]:
        own_times = _conditions(where, None, prefix)[0]
        searched, found = _searched(conn, where, prefix, own=True)
        selects.append(
            f'SELECT {prefix}id AS id FROM {rows}{"".join(" AND " + each for each in [*searched, *own_times])}'
        )
    query = f'SELECT count(*) FROM ({" UNION ".join(selects)}) AS finished'
    return query, branches[1] | values | found


def _approval_conditions(conn: Connection, visible_to: Person | None) -> tuple[list[str], dict[str, Any]]:
    """The conditions on finished approvals that `visible_to` may see: their audience's, or decided by them."""
    conditions = ["a.status <> 'pending'"]
    condition = approval_audience_condition(visible_to, dialect_of(conn))
    if condition is None or visible_to is None:
        return conditions, {}
    text, parameters = condition
    if visible_to.name is not None:
        text = f'({text} OR a.decided_by = :by)'
        parameters = parameters | {'by': visible_to.name}
    return [*conditions, text], parameters


def finished_approvals_statement(
    conn: Connection,
    *,
    before: _Before,
    limit: int,
    where: HistoryFilter = ALL_FINISHED,
    visible_to: Person | None = None,
) -> tuple[str, dict[str, Any]]:
    """The statement of `select_finished_approvals` and its parameters: a range of the approvals' finished index."""
    conditions, parameters = _approval_conditions(conn, visible_to)
    times, values = _conditions(where, before, 'a.')
    query = (
        f'SELECT {FINISHED_APPROVAL_COLUMNS} FROM {EVENT_APPROVALS_TABLE_NAME} AS a '
        f'WHERE {" AND ".join([*conditions, *times])} ORDER BY a.updated_at DESC, a.id DESC LIMIT :limit'
    )
    return query, parameters | values | {'limit': limit}


def select_finished_approvals(
    conn: Connection,
    *,
    before: _Before,
    limit: int,
    where: HistoryFilter = ALL_FINISHED,
    visible_to: Person | None = None,
) -> tuple[list[FinishedRecord], _Before]:
    """At most `limit` decided or withdrawn approvals after `before`, the newest first; only those `visible_to` may
    see (applied again to the decoded rows); with where the rows read end, as `select_finished_questions`.
    """
    statement, parameters = finished_approvals_statement(
        conn, before=before, limit=limit, where=where, visible_to=visible_to
    )
    records: list[FinishedRecord] = []
    rows = execute(conn, statement, parameters).fetchall()
    for row in rows:
        record = finished_approval_record(row)
        if visible_in_history(record, visible_to):
            records.append(record)
    last = (float(rows[-1][-1]), str(rows[-1][-3])) if rows and len(rows) == limit else None
    return records, last


def count_finished_approvals(
    conn: Connection, where: HistoryFilter = ALL_FINISHED, visible_to: Person | None = None
) -> int:
    """How many decided or withdrawn approvals `where` takes and `visible_to` may see."""
    conditions, parameters = _approval_conditions(conn, visible_to)
    times, values = _conditions(where, None, 'a.')
    query = f'SELECT count(*) FROM {EVENT_APPROVALS_TABLE_NAME} AS a WHERE {" AND ".join([*conditions, *times])}'
    return int(fetch_one(conn, query, parameters | values)[0])


_BACKFILL_BATCH = 500
"""How many finished rows the back-fill reads, decodes and writes the entries of in one transaction."""


def backfill_history_index(database: Database, *, approvals: bool, stop: Callable[[], bool] | None = None) -> int:
    """Write the history index's entries of every finished question (and, with `approvals`, approval), oldest first,
    then `HISTORY_COMPLETE_INDEX`, which says it is done; how many items it read.

    A batch at a time: read and decoded outside any transaction, then its entries and how far it got
    (`save_backfill_position`) written in one short one, so that writers (answers, decisions) wait for a batch at
    most, and a back-fill that stops (its process ended or was killed, or `stop` said so between two batches) goes on
    from there the next time. Entries written meanwhile by the writers are kept: an entry written twice is written
    once.
    """
    read = 0
    sources: list[tuple[str, str, str, str]] = [('question', TABLE_NAME, FINISHED_QUESTION_COLUMNS, FINISHED)]
    if approvals:
        sources.append(
            ('approval', f'{EVENT_APPROVALS_TABLE_NAME} AS a', FINISHED_APPROVAL_COLUMNS, "a.status <> 'pending'")
        )
    for source, table, columns, finished in sources:
        prefix = 'a.' if source == 'approval' else ''
        with database.connect() as conn:
            after = backfill_position(conn, source)
        while True:
            if stop is not None and stop():
                return read
            parameters: dict[str, Any] = {'limit': _BACKFILL_BATCH}
            condition = finished
            if after is not None:
                condition += f' AND ({prefix}updated_at, {prefix}id) > (:after_at, :after_id)'
                parameters |= {'after_at': after[0], 'after_id': after[1]}
            with database.connect() as conn:
                rows = execute(
                    conn,
                    f'SELECT {columns} FROM {table} WHERE {condition} '
                    f'ORDER BY {prefix}updated_at, {prefix}id LIMIT :limit',
                    parameters,
                ).fetchall()
            if not rows:
                break
            read += len(rows)
            records = [
                record
                for row in rows
                if (record := finished_question_record(row, None) if not prefix else finished_approval_record(row))
                is not None
            ]
            last = rows[-1]
            after = (float(last[-1]), str(last[0] if not prefix else last[-3]))
            with database.begin() as conn:
                insert_entries(conn, [history_entry(record) for record in records])
                save_backfill_position(conn, source, after)
    with database.begin() as conn:
        # The history reads the index from now on: the finished questions' addressee rows, which a person's waiting
        # list would read through, are done with (deleted with the index made, so that a history read from the
        # addressees until then finds them all).
        if has_addressees(conn):
            execute(
                conn,
                f'DELETE FROM {ADDRESSEES_TABLE_NAME} WHERE request_id IN '
                f'(SELECT id FROM {TABLE_NAME} WHERE {FINISHED})',
            )
        execute(conn, complete_statement())
    return read


INDEXED_COUNT_ROWS = 20_000
"""How many of the newest entries everyone's count reads at most for a search read from each entry (a title, an
addressee, free text): beyond, the total is the matches among them, marked not exact (`total_exact`). A person's
count, and everyone's by the kind, the times, the agent or the conversation, are exact."""


_Entry = tuple[float, str, str]
"""An entry of the history's index as a page reads it: when the item finished, its key and its kind."""


def _person_entries(
    conn: Connection, person: Person, where: HistoryFilter, before: _Before, limit: int
) -> tuple[list[_Entry], int, bool]:
    """The first `limit` + 1 of `person`'s entries that `where` takes after `before`, and how many there are (exact).
    Every one is read, once: a person's history is some thousands of entries, and a page and a count would each read
    them all (`DISTINCT`, then the order).
    """
    statement, parameters = history_statement(conn, person, where, None, None)
    rows = [(float(at), str(key), str(kind)) for at, key, kind in execute(conn, statement, parameters).fetchall()]
    following = [row for row in rows if before is None or row[:2] < before]
    return following[: limit + 1], len(rows), True


def _everyones_entries(
    conn: Connection, where: HistoryFilter, before: _Before, limit: int
) -> tuple[list[_Entry], int, bool]:
    """The first `limit` + 1 of every entry that `where` takes after `before`, and how many there are: exactly where
    the index's columns decide it (`columns_decide`), else among the newest `INDEXED_COUNT_ROWS` (then not exact).
    """
    statement, parameters = history_statement(conn, None, where, before, limit + 1)
    entries = [(float(at), str(key), str(kind)) for at, key, kind in execute(conn, statement, parameters).fetchall()]
    if columns_decide(where):
        statement, parameters = count_history_statement(conn, None, where)
        return entries, int(fetch_one(conn, statement, parameters)[0]), True
    statement, parameters = count_newest_statement(conn, where, INDEXED_COUNT_ROWS)
    read, matched = fetch_one(conn, statement, parameters)
    return entries, int(matched), int(read) < INDEXED_COUNT_ROWS


def indexed_history_page(
    conn: Connection,
    person: Person | None,
    where: HistoryFilter,
    before: _Before,
    limit: int,
    *,
    decoded: MutableMapping[str, AskUserRequest] | None = None,
) -> PendingPage[FinishedRecord]:
    """A history page through the history's index (`_history_index`, complete): for `person`, their entries that
    `where` takes (its search in SQL too); for everyone (`None`), every entry it takes. The first `limit` + 1, newest
    first; those items read by key, with their hand-offs; the total one count of the same entries, exact but for
    everyone's search read from each entry (at most `INDEXED_COUNT_ROWS` read).
    """
    if person is not None:
        entries, total, exact = _person_entries(conn, person, where, before, limit)
    else:
        entries, total, exact = _everyones_entries(conn, where, before, limit)
    shown = entries[:limit]
    records: dict[tuple[str, str], FinishedRecord] = {}
    if questions := [key for _, key, kind in shown if kind == 'question']:
        ids, values = in_list('id', questions)
        query = f'SELECT {FINISHED_QUESTION_COLUMNS} FROM {TABLE_NAME} WHERE id IN {ids}'
        for row in execute(conn, query, values).fetchall():
            if (record := finished_question_record(row, decoded)) is not None:
                records['question', record.key] = record
    if approvals := [key for _, key, kind in shown if kind == 'approval']:
        ids, values = in_list('id', approvals)
        query = f'SELECT {FINISHED_APPROVAL_COLUMNS} FROM {EVENT_APPROVALS_TABLE_NAME} AS a WHERE a.id IN {ids}'
        for row in execute(conn, query, values).fetchall():
            record = finished_approval_record(row)
            records['approval', record.key] = record
    handoffs = select_handoffs(conn, [key for _, key, _ in shown])
    page = [
        replace(record, handoffs=handoffs[key]) if key in handoffs else record
        for _, key, kind in shown
        # Pruned since the entries were read, or damaged: left out. Shown only to whom the item shows itself.
        if (record := records.get((kind, key))) is not None and visible_in_history(record, person)
    ]
    next_cursor = encode_history_position(entries[limit - 1][:2]) if len(entries) > limit else None
    return PendingPage(page, next_cursor, total, total_exact=exact)


def history_index_state(database: Database) -> Literal['missing', 'incomplete', 'complete']:
    """Whether the history's index is there (`ensure_history_index` made it, unless it could not), and complete (the
    back-fill done: a person's history may read it).
    """
    with database.connect() as conn:
        if not history_present(conn):
            return 'missing'
        return 'complete' if history_complete(conn) else 'incomplete'
