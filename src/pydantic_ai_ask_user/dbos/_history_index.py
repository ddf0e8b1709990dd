"""The history's index: who may see each finished question and approval, and what its search reads, in two tables.

A person's history read from the items' own tables costs their whole history, not a page: a person's finished
approvals have no addressee rows (their audience is inside `addressing`), their finished questions come through the
addressees in the waiting list's order, and a search (title, addressee, free text) is matched on decoded rows. At a
million finished items that was 150 to 2,500 ms a page (`docs/benchmarks.md`). This index makes each of them a read
of the person's own entries:

- `HISTORY_TABLE_NAME`: one row per finished item (its kind and key, when it finished, and what a search reads: the
  agent, the conversation, the title folded, and the free text folded, `_search.item_text`);
- `HISTORY_VIEWERS_TABLE_NAME`: one row per item and name that sees it (`viewer_names`): `*` for an item addressed to
  nobody in particular, `to:` and each name of its audience, and `by:` and who answered or decided it (where the
  audience does not name them already); keyed in the history's order, so a person's entries are one range per name of
  theirs, and each holding what a search reads again, so that a person's history reads their rows alone.

A person's page is then their entries (some thousands at most) that the search takes, read once, sorted: its total is
how many, exactly, whatever the search, and the first `limit` after the cursor are read from the items' tables.
Everyone's search reads `HISTORY_TABLE_NAME` by the index of the history's order, or of the agent or conversation.

Written in the transaction that finishes the item (`_questions.index_finished_questions`,
`_approvals.index_finished_approvals`), from the row as it finished; the same entry written twice (a race of two
finishing statements, a back-fill beside a writer) is written once (`ON CONFLICT DO NOTHING`). Pruned with the items.
The tables are made at start-up like the hand-offs (`ensure_history_index`, SQL text, both databases); the items that
finished before are written by the first store that reads a person's history (`_history.backfill_history_index`),
whose last statement makes `HISTORY_COMPLETE_INDEX`: until it is there, the history is read from the items' tables,
as before. Where nothing had finished when the tables were made (a new database), they are complete at once. An
item finished by a worker of an earlier version, which writes no entries, is in the administrator's history but in
no person's: upgrade the workers with the inbox.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._search import item_text
from ._connection import Database, dialect_of, execute, fetch_one, has_index
from ._schema import EVENT_APPROVALS_TABLE_NAME, TABLE_NAME

if TYPE_CHECKING:
    # Names only: the start-up that makes the tables (`_upgrade`, on the way of `ask-user pending` too) loads no model.
    from .._audience import Person
    from .._history import FinishedRecord, HistoryFilter
    from ._connection import Connection

__all__ = (
    'HISTORY_TABLE_NAME',
    'HISTORY_VIEWERS_TABLE_NAME',
    'HISTORY_COMPLETE_INDEX',
    'BACKFILL_TABLE_NAME',
    'history_index_statements',
    'complete_statement',
    'backfill_position',
    'save_backfill_position',
    'ensure_history_index',
    'history_present',
    'history_complete',
    'HistoryEntry',
    'history_entry',
    'viewer_names',
    'insert_entries',
    'finished_conditions',
    'history_statement',
    'count_history_statement',
    'count_newest_statement',
    'columns_decide',
    'prune_history_index',
)

_log = logging.getLogger('pydantic_ai_ask_user.dbos')
"""The DBOS package's logger, which its warnings go to."""

HISTORY_TABLE_NAME = 'ask_user_history'
"""The table holding one row per finished question or approval: its kind, key, when it finished, and its search's
columns."""

HISTORY_VIEWERS_TABLE_NAME = 'ask_user_history_viewers'
"""The table holding one row per finished item and name that sees it, keyed in the history's order by name."""

HISTORY_COMPLETE_INDEX = 'ix_ask_user_history_finished'
"""The index of `HISTORY_TABLE_NAME` in the history's order (what everyone's searched history and pruning read),
made by the back-fill's last statement: its presence says every item finished before the tables were made has its
entries."""

_VIEWERS_FINISHED_INDEX = 'ix_ask_user_history_viewers_finished'
"""The index of `HISTORY_VIEWERS_TABLE_NAME` by when each item finished: what pruning reads."""

BACKFILL_TABLE_NAME = 'ask_user_history_backfill'
"""The table holding how far the back-fill got in each of the items' tables (`source`: `question` or `approval`), so
that one stopped (the process ended, killed) goes on from there."""

_ANYONE = '*'
"""The viewer of an item addressed to nobody in particular: every person sees it."""

_TO = 'to:'
"""Before a name of an item's audience: a person with that name or group sees it."""

_BY = 'by:'
"""Before the name of who answered or decided it: that person sees it (`visible_in_history`)."""

_ENTRIES_PER_STATEMENT = 100
"""How many items one `INSERT` of each table writes: SQLite allows 32,766 parameters a statement; an item takes 7, and
one more a viewer row (which repeats the item's)."""


def history_index_statements(dialect: str) -> tuple[str, ...]:
    """The `CREATE TABLE`s and the indexes made with them (all `IF NOT EXISTS`), in `dialect` (`sqlite` or
    `postgresql`): the same but that SQLite keeps each table in its primary key's order (`WITHOUT ROWID`), so that a
    lookup or a range of the key reads the rows themselves, not an index and then the rows.
    """
    clustered = ' WITHOUT ROWID' if dialect == 'sqlite' else ''
    return (
        f'CREATE TABLE IF NOT EXISTS {HISTORY_TABLE_NAME} (kind VARCHAR(16) NOT NULL, item_id TEXT NOT NULL, '
        'finished_at FLOAT NOT NULL, agent TEXT, conversation TEXT, title TEXT, body TEXT NOT NULL, '
        f'PRIMARY KEY (kind, item_id)){clustered}',
        f'CREATE TABLE IF NOT EXISTS {HISTORY_VIEWERS_TABLE_NAME} (viewer TEXT NOT NULL, finished_at FLOAT NOT NULL, '
        'item_id TEXT NOT NULL, kind VARCHAR(16) NOT NULL, agent TEXT, conversation TEXT, title TEXT, '
        f'body TEXT NOT NULL, PRIMARY KEY (viewer, finished_at, item_id, kind)){clustered}',
        f'CREATE TABLE IF NOT EXISTS {BACKFILL_TABLE_NAME} (source VARCHAR(16) PRIMARY KEY, after_at FLOAT NOT NULL, '
        'after_id TEXT NOT NULL)',
        f'CREATE INDEX IF NOT EXISTS {_VIEWERS_FINISHED_INDEX} ON {HISTORY_VIEWERS_TABLE_NAME} (finished_at)',
        *(
            f'CREATE INDEX IF NOT EXISTS ix_ask_user_history_{column} ON {HISTORY_TABLE_NAME} '
            f'({column}, finished_at, item_id, kind)'
            for column in ('agent', 'conversation')
        ),
    )


def complete_statement() -> str:
    """The back-fill's last statement: `HISTORY_COMPLETE_INDEX`."""
    return f'CREATE INDEX IF NOT EXISTS {HISTORY_COMPLETE_INDEX} ON {HISTORY_TABLE_NAME} (finished_at, item_id, kind)'


def ensure_history_index(database: Database, errors: type[Exception] | tuple[type[Exception], ...]) -> bool:
    """Make the history's tables where they are missing (idempotent); whether they are there now. A database user who
    may not create them gets a warning: the store works on, and reads the history from the items' tables.
    """
    if database.has_table(HISTORY_TABLE_NAME) and database.has_table(HISTORY_VIEWERS_TABLE_NAME):
        return True
    approvals = database.has_table(EVENT_APPROVALS_TABLE_NAME)
    try:
        with database.begin() as conn:
            for statement in history_index_statements(dialect_of(conn)):
                execute(conn, statement)
            if not _anything_finished(conn, approvals=approvals):
                execute(conn, complete_statement())  # nothing to back-fill: complete from the start
    except errors as error:
        if database.has_table(HISTORY_TABLE_NAME) and database.has_table(HISTORY_VIEWERS_TABLE_NAME):
            return True
        reason = str(getattr(error, 'orig', None) or error)
        _log.warning(
            "the questions table has no %s table and this database user cannot create it (%s); a person's history "
            'is read from the questions and approvals themselves, slower, until a database user who may create '
            'tables opens it once',
            HISTORY_TABLE_NAME,
            reason.splitlines()[0] if reason else reason,
        )
        return False
    return True


def _anything_finished(conn: Connection, *, approvals: bool) -> bool:
    """Whether the questions table (or, with `approvals`, the approvals table) holds a finished item: one the
    back-fill would write an entry of.
    """
    tables = [TABLE_NAME, *([EVENT_APPROVALS_TABLE_NAME] if approvals else [])]
    return any(
        execute(conn, f"SELECT 1 FROM {table} WHERE status <> 'pending' LIMIT 1").fetchone() is not None
        for table in tables
    )


def backfill_position(conn: Connection, source: str) -> tuple[float, str] | None:
    """How far the back-fill got in `source`'s table (`question`, `approval`): the last row it wrote the entry of, in
    the order it reads them (`updated_at`, `id`); `None` where it has not begun.
    """
    row = execute(
        conn, f'SELECT after_at, after_id FROM {BACKFILL_TABLE_NAME} WHERE source = :source', {'source': source}
    ).fetchone()
    return None if row is None else (float(row[0]), str(row[1]))


def save_backfill_position(conn: Connection, source: str, after: tuple[float, str]) -> None:
    """Say the back-fill got as far as `after` in `source`'s table, in the transaction that wrote those entries."""
    execute(
        conn,
        f'INSERT INTO {BACKFILL_TABLE_NAME} (source, after_at, after_id) VALUES (:source, :after_at, :after_id) '
        'ON CONFLICT (source) DO UPDATE SET after_at = excluded.after_at, after_id = excluded.after_id',
        {'source': source, 'after_at': after[0], 'after_id': after[1]},
    )


def history_present(conn: Connection) -> bool:
    """Whether the history's tables are there to write to (one read of the catalogue)."""
    if dialect_of(conn) == 'postgresql':
        query = 'SELECT to_regclass(:first) IS NOT NULL AND to_regclass(:second) IS NOT NULL'
    else:
        query = "SELECT count(*) = 2 FROM sqlite_master WHERE type = 'table' AND name IN (:first, :second)"
    return bool(fetch_one(conn, query, {'first': HISTORY_TABLE_NAME, 'second': HISTORY_VIEWERS_TABLE_NAME})[0])


def history_complete(conn: Connection) -> bool:
    """Whether the back-fill is done (`HISTORY_COMPLETE_INDEX` is there): a person's history may then read the index."""
    return has_index(conn, HISTORY_COMPLETE_INDEX)


@dataclass(frozen=True)
class HistoryEntry:
    """What the index holds of one finished item."""

    kind: str
    """`question` or `approval`."""

    key: str
    """The item's key (`FinishedRecord.key`)."""

    finished_at: float
    """When it finished: the history's order."""

    agent: str | None
    """Its context's agent (`QuestionContext.agent_name`), which `?agent=` matches exactly."""

    conversation: str | None
    """Its context's conversation (`QuestionContext.conversation_id`), which `?conversation=` matches exactly."""

    title: str | None
    """Its context's title, folded (`str.casefold`), which `?title=` looks in."""

    body: str
    """The text free-text search looks in, folded (`_search.item_text`)."""

    viewers: tuple[str, ...]
    """Who sees it (`viewer_names`)."""


def viewer_names(audience: Sequence[str] | None, by: str | None) -> tuple[str, ...]:
    """The viewer rows of an item addressed to `audience` (`None`: anyone) and answered or decided `by`: exactly those
    whose persons `visible_in_history` lets see it.
    """
    viewers = [_ANYONE] if audience is None else [_TO + name for name in dict.fromkeys(audience)]
    if by is not None and audience is not None and by not in audience:
        # Who answered sees it as its addressee already (and an item for anyone, everyone sees): no second row.
        viewers.append(_BY + by)
    return tuple(viewers)


def _person_viewers(person: Person) -> list[str]:
    """The viewer rows a person's entries are under: anyone's, each of their names', and their own answers'."""
    viewers = [_ANYONE, *(_TO + name for name in sorted(person.names))]
    if person.name is not None:
        viewers.append(_BY + person.name)
    return viewers


def history_entry(record: FinishedRecord) -> HistoryEntry:
    """The index's entry of a finished item, from its record as the history reads it."""
    context = record.context
    item = record.request if record.request is not None else record.approval
    return HistoryEntry(
        kind=record.kind,
        key=record.key,
        finished_at=record.finished_at,
        agent=None if context is None else context.agent_name,
        conversation=None if context is None else context.conversation_id,
        title=None if context is None or context.title is None else context.title.casefold(),
        body=item_text(item),
        viewers=viewer_names(record.audience, record.by),
    )


def insert_entries(conn: Connection, entries: Sequence[HistoryEntry]) -> None:
    """Write these entries and their viewers, but those there (the same item finished once, written twice)."""
    for start in range(0, len(entries), _ENTRIES_PER_STATEMENT):
        batch = entries[start : start + _ENTRIES_PER_STATEMENT]
        items: dict[str, Any] = {}
        viewers: dict[str, Any] = {}
        for index, entry in enumerate(batch):
            items |= {
                f'k{index}': entry.kind,
                f'i{index}': entry.key,
                f'f{index}': entry.finished_at,
                f'a{index}': entry.agent,
                f'c{index}': entry.conversation,
                f't{index}': entry.title,
                f'b{index}': entry.body,
            }
            for number, viewer in enumerate(entry.viewers):
                viewers[f'v{index}_{number}'] = viewer
        values = ', '.join(
            f'(:k{index}, :i{index}, :f{index}, :a{index}, :c{index}, :t{index}, :b{index})'
            for index in range(len(batch))
        )
        execute(
            conn,
            f'INSERT INTO {HISTORY_TABLE_NAME} (kind, item_id, finished_at, agent, conversation, title, body) '
            f'VALUES {values} ON CONFLICT DO NOTHING',
            items,
        )
        if viewers:
            # Each viewer row holds what a search reads too, so that a person's history reads their rows alone.
            rows = ', '.join(
                f'(:v{index}_{number}, :f{index}, :i{index}, :k{index}, :a{index}, :c{index}, :t{index}, :b{index})'
                for index, entry in enumerate(batch)
                for number in range(len(entry.viewers))
            )
            execute(
                conn,
                f'INSERT INTO {HISTORY_VIEWERS_TABLE_NAME} (viewer, finished_at, item_id, kind, agent, conversation, '
                f'title, body) VALUES {rows} ON CONFLICT DO NOTHING',
                viewers | items,
            )


def finished_conditions(
    where: HistoryFilter, before: tuple[float, str] | None, *, finished: str, key: str
) -> tuple[list[str], dict[str, Any]]:
    """The conditions of `where`'s times and of the cursor `before` on rows whose `finished` column says when they
    finished and whose `key` column is their key (the history's order), and their parameters: the items' tables'
    (`updated_at`, `id`) and the index's (`finished_at`, `item_id`) alike.
    """
    conditions: list[str] = []
    parameters: dict[str, Any] = {}
    if where.finished_before is not None:
        conditions.append(f'{finished} < :finished_before')
        parameters['finished_before'] = where.finished_before
    if where.finished_after is not None:
        conditions.append(f'{finished} >= :finished_after')
        parameters['finished_after'] = where.finished_after
    if before is not None:
        # A row value, which both databases seek by in an index of the two columns.
        conditions.append(f'({finished}, {key}) < (:before_at, :before_id)')
        parameters |= {'before_at': before[0], 'before_id': before[1]}
    return conditions, parameters


def _conditions(
    conn: Connection, person: Person | None, where: HistoryFilter, before: tuple[float, str] | None
) -> tuple[list[str], list[str], dict[str, Any]]:
    """The conditions on the entries of the history `person` (`None`: everyone) asks for: those of the range (the
    person's names, the kind, the times, the cursor: on the viewers as `v`, or on the entries as `h` for everyone),
    those of the search (on the entries as `h`), and their parameters.
    """
    find = 'strpos' if dialect_of(conn) == 'postgresql' else 'instr'
    at = 'h' if person is None else 'v'  # the table the order, the kind and the times are read from
    parameters: dict[str, Any] = {}
    ranged: list[str] = []
    if person is not None:
        viewers = _person_viewers(person)
        parameters |= {f'viewer_{index}': viewer for index, viewer in enumerate(viewers)}
        ranged.append(f'v.viewer IN ({", ".join(f":viewer_{index}" for index in range(len(viewers)))})')
    if where.kind is not None:
        ranged.append(f'{at}.kind = :kind')
        parameters['kind'] = where.kind
    times, values = finished_conditions(where, before, finished=f'{at}.finished_at', key=f'{at}.item_id')
    ranged += times
    parameters |= values
    searched: list[str] = []
    for column in ('agent', 'conversation'):  # exactly, as `search_takes` matches them
        if (value := getattr(where, column)) is not None:
            searched.append(f'{at}.{column} = :{column}')
            parameters[column] = value
    if where.title is not None:
        # Exact characters of the folded texts (`instr`, `strpos`): neither database folds as Python does.
        searched.append(f'{at}.title IS NOT NULL AND {find}({at}.title, :title) > 0')
        parameters['title'] = where.title.casefold()
    if where.text is not None:
        searched.append(f'{find}({at}.body, :text) > 0')
        parameters['text'] = where.text.casefold()
    if where.addressee is not None:
        # Addressed to that name: the item has a `to:` viewer row of it (its key, in the history's order, found).
        searched.append(
            f'EXISTS (SELECT 1 FROM {HISTORY_VIEWERS_TABLE_NAME} AS x WHERE x.viewer = :addressee AND '
            f'x.finished_at = {at}.finished_at AND x.item_id = {at}.item_id AND x.kind = {at}.kind)'
        )
        parameters['addressee'] = _TO + where.addressee
    return ranged, searched, parameters


def _where(conditions: list[str]) -> str:
    return f' WHERE {" AND ".join(conditions)}' if conditions else ''


def _entries_query(
    conn: Connection, person: Person | None, where: HistoryFilter, before: tuple[float, str] | None
) -> tuple[str, dict[str, Any]]:
    """`SELECT finished_at, item_id, kind` of the entries that `where` takes, after `before`, each once: for `person`,
    those they see (one range of the viewers' key per name of theirs, whose rows hold what the search reads); for
    everyone (`None`), every entry, by the index of the history's order or of the search's column.
    """
    ranged, searched, parameters = _conditions(conn, person, where, before)
    if person is None:
        return (
            f'SELECT h.finished_at, h.item_id, h.kind FROM {HISTORY_TABLE_NAME} AS h{_where(ranged + searched)}',
            parameters,
        )
    query = f'SELECT DISTINCT v.finished_at, v.item_id, v.kind FROM {HISTORY_VIEWERS_TABLE_NAME} AS v'
    return query + _where(ranged + searched), parameters


def history_statement(
    conn: Connection,
    person: Person | None,
    where: HistoryFilter,
    before: tuple[float, str] | None,
    limit: int | None,
) -> tuple[str, dict[str, Any]]:
    """The statement of the first `limit` entries (`finished_at`, `item_id`, `kind`; every one for `None`) of the
    history `person` (`None`: everyone) asks for, newest first, and its parameters.
    """
    entries, parameters = _entries_query(conn, person, where, before)
    order = 'finished_at DESC, item_id DESC, kind DESC'
    if person is None:  # one table: in the order of its index of the history's order (or the search's column's)
        query = f'{entries} ORDER BY {", ".join(f"h.{column}" for column in order.split(", "))}'
    else:
        query = f'SELECT finished_at, item_id, kind FROM ({entries}) AS e ORDER BY {order}'
    if limit is None:
        return query, parameters
    return f'{query} LIMIT :limit', parameters | {'limit': limit}


def count_history_statement(
    conn: Connection, person: Person | None, where: HistoryFilter
) -> tuple[str, dict[str, Any]]:
    """The statement of how many entries of the history `person` (`None`: everyone) asks for `where` takes, exactly,
    each once, and its parameters.
    """
    entries, parameters = _entries_query(conn, person, where, None)
    return f'SELECT count(*) FROM ({entries}) AS e', parameters


def count_newest_statement(conn: Connection, where: HistoryFilter, rows: int) -> tuple[str, dict[str, Any]]:
    """The statement of everyone's count for a search read from each entry (`columns_decide` false), over the newest
    `rows` entries of the range (the kind, the times) at most, and its parameters: it reads how many entries that was,
    then how many of them the search takes. Fewer than `rows` read: the count is exact.
    """
    ranged, searched, parameters = _conditions(conn, None, where, None)
    newest = (
        f'SELECT h.finished_at, h.item_id, h.kind, h.agent, h.conversation, h.title, h.body FROM {HISTORY_TABLE_NAME} '
        f'AS h{_where(ranged)} ORDER BY h.finished_at DESC, h.item_id DESC, h.kind DESC LIMIT :rows'
    )
    taken = ' AND '.join(searched) if searched else '1 = 1'
    query = f'SELECT count(*), coalesce(sum(CASE WHEN {taken} THEN 1 ELSE 0 END), 0) FROM ({newest}) AS h'
    return query, parameters | {'rows': rows}


def columns_decide(where: HistoryFilter) -> bool:
    """Whether everyone's entries that `where` takes are a range of one index, counted exactly at an index's cost:
    no title, addressee or free text, which are read from each entry (the kind, the times, the agent and the
    conversation are columns of `HISTORY_TABLE_NAME`'s indexes).
    """
    return where.title is None and where.addressee is None and where.text is None


def prune_history_index(conn: Connection, kind: str, finished: str, parameters: dict[str, Any]) -> None:
    """Delete the entries of the items of `kind` that `finished` (a `SELECT` of their keys, of items finished before
    `:before`) names, and their viewers, before the items themselves are deleted: each a range of its table's index
    by when the items finished.
    """
    for table in (HISTORY_VIEWERS_TABLE_NAME, HISTORY_TABLE_NAME):
        execute(
            conn,
            f'DELETE FROM {table} WHERE finished_at < :before AND kind = :history_kind AND item_id IN ({finished})',
            parameters | {'history_kind': kind},
        )
