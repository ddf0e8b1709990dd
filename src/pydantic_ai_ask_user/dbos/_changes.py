"""The change log the inbox's events are read from: one row per question or approval that started waiting or ended.

Why a log, and why written by triggers:

- The events used to be found by `updated_at >= since`, a wall-clock window (the last second). A row is stamped when
  it is written, not when it commits: one committed more than a second after its stamp was never seen, and an open
  inbox missed the question until it was reloaded. The log orders changes by an autoincrement id instead.
- Database triggers write it, in the transaction of the change itself: every writer (this version's, an earlier
  one's, a hand-written `UPDATE`) is logged, and a change and its log row commit together or not at all.
- On SQLite one writer holds the lock from its first write to its commit, so ids commit in order: a poll that saw
  id N will never see a smaller one later. On PostgreSQL a sequence hands out ids when rows are written, so a
  transaction holding id 9 may commit after one holding id 10. The reader (`Position`, `_store._Feed`) therefore
  remembers every id it skipped (a gap below the highest it saw) and reads those ids again at each poll until they
  appear or are older than `DEFAULT_GAP_SECONDS`, by then taken for a rolled-back transaction (a sequence never
  hands an id out twice). A question in a transaction held open longer than that is the one change it can miss.
- Pruned with the finished questions' pruning, past `CHANGES_RETENTION_SECONDS` (a page resuming from a position
  older than that starts from now; the inbox page reloads its list whenever its stream reconnects anyway).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._connection import Database, dialect_of, execute, has_table, in_list
from ._schema import EVENT_APPROVALS_TABLE_NAME, TABLE_NAME

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'CHANGES_TABLE_NAME',
    'CHANGES_RETENTION_SECONDS',
    'DEFAULT_GAP_SECONDS',
    'Change',
    'Position',
    'ensure_change_log',
    'has_change_log',
    'change_log_made',
    'changes_after',
    'changes_with_ids',
    'last_change_ids',
    'first_change_id',
    'prune_changes',
)

_log = logging.getLogger('pydantic_ai_ask_user.dbos')

CHANGES_TABLE_NAME = 'ask_user_changes'
"""One row per change of a question's or an approval's status, ordered by its autoincrement `id`."""

CHANGES_RETENTION_SECONDS = 3600.0
"""How long the log keeps a change: how far back a reconnecting stream can resume (`Last-Event-ID`)."""

DEFAULT_GAP_SECONDS = 60.0
"""How long a skipped id (a gap below the highest seen) is read again before it is taken for a rolled-back write."""

_TRIGGERS: tuple[tuple[str, str, str], ...] = (
    ('ask_user_changes_requests_insert', TABLE_NAME, 'question'),
    ('ask_user_changes_requests_update', TABLE_NAME, 'question'),
    ('ask_user_changes_approvals_insert', EVENT_APPROVALS_TABLE_NAME, 'approval'),
    ('ask_user_changes_approvals_update', EVENT_APPROVALS_TABLE_NAME, 'approval'),
)
"""Each trigger's name, the table it watches and the kind of item it logs (the last is checked first: made last)."""

_CHANGED_AT_INDEX = 'ix_ask_user_changes_changed_at'


@dataclass(frozen=True)
class Change:
    """One row of the log: its id, and the item that changed (question or approval), its key and its new status."""

    id: int
    item: str
    key: str
    status: str


def _table_statement(dialect: str) -> str:
    id_column = 'id BIGSERIAL PRIMARY KEY' if dialect == 'postgresql' else 'id INTEGER PRIMARY KEY AUTOINCREMENT'
    changed_at = 'DOUBLE PRECISION' if dialect == 'postgresql' else 'FLOAT'
    return (
        f'CREATE TABLE IF NOT EXISTS {CHANGES_TABLE_NAME} ({id_column}, item VARCHAR(16) NOT NULL, '
        f'item_key VARCHAR(200) NOT NULL, status VARCHAR(16) NOT NULL, changed_at {changed_at} NOT NULL)'
    )


def _trigger_statements(dialect: str, name: str, table: str, item: str) -> list[str]:
    update = name.endswith('_update')
    if dialect == 'postgresql':
        when = ' WHEN (OLD.status IS DISTINCT FROM NEW.status)' if update else ''
        event = 'UPDATE OF status' if update else 'INSERT'
        return [
            f'CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when} '
            f"EXECUTE FUNCTION ask_user_log_change('{item}')"
        ]
    when = ' WHEN NEW.status IS NOT OLD.status' if update else ''
    event = 'UPDATE OF status' if update else 'INSERT'
    return [
        f'CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {table}{when} BEGIN '
        f'INSERT INTO {CHANGES_TABLE_NAME} (item, item_key, status, changed_at) '
        f"VALUES ('{item}', NEW.id, NEW.status, NEW.updated_at); END"
    ]


_PG_FUNCTION = (
    'CREATE OR REPLACE FUNCTION ask_user_log_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN '
    f'INSERT INTO {CHANGES_TABLE_NAME} (item, item_key, status, changed_at) '
    'VALUES (TG_ARGV[0], NEW.id, NEW.status, NEW.updated_at); RETURN NULL; END $$'
)


def _has_trigger(conn: Connection, name: str) -> bool:
    if dialect_of(conn) == 'postgresql':
        query = 'SELECT 1 FROM pg_trigger WHERE tgname = :name'
    else:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = :name"
    return execute(conn, query, {'name': name}).fetchone() is not None


def has_change_log(conn: Connection) -> bool:
    """Whether the log and the triggers of the questions table are there (the approvals' come with their table)."""
    return has_table(conn, CHANGES_TABLE_NAME) and _has_trigger(conn, _TRIGGERS[1][0])


def change_log_made(conn: Connection) -> bool:
    """Whether the log and every trigger of the tables there are made: `ensure_change_log` has nothing to do."""
    return has_table(conn, CHANGES_TABLE_NAME) and not _missing_triggers(conn)


def _missing_triggers(conn: Connection) -> list[tuple[str, str, str]]:
    return [t for t in _TRIGGERS if has_table(conn, t[1]) and not _has_trigger(conn, t[0])]


def ensure_change_log(database: Database, errors: type[Exception] | tuple[type[Exception], ...]) -> bool:
    """Make the log and its triggers where missing (idempotent; a process losing a race sees them made and goes on);
    whether the questions table's are there now. A database user who may not make them gets a warning, and the
    store's events fall back to reading the questions by time (`dbos._store`), with its one-second window.
    """
    with database.connect() as conn:
        if change_log_made(conn):
            return has_change_log(conn)
    try:
        with database.begin() as conn:
            dialect = dialect_of(conn)
            execute(conn, _table_statement(dialect))
            execute(conn, f'CREATE INDEX IF NOT EXISTS {_CHANGED_AT_INDEX} ON {CHANGES_TABLE_NAME} (changed_at)')
            if dialect == 'postgresql':
                execute(conn, _PG_FUNCTION)
            for name, table, item in _missing_triggers(conn):
                for statement in _trigger_statements(dialect, name, table, item):
                    execute(conn, statement)
    except errors as error:
        with database.connect() as conn:
            if has_change_log(conn) and not _missing_triggers(conn):
                return True  # another process made them meanwhile
        reason = str(getattr(error, 'orig', None) or error)
        _log.warning(
            'the questions table has no change log (%s) and this database user cannot make it (%s); live inboxes read '
            'changes by time and may miss a question whose write commits late, until a database user who may '
            'create tables and triggers opens it once',
            CHANGES_TABLE_NAME,
            reason.splitlines()[0] if reason else reason,
        )
        with database.connect() as conn:
            return has_change_log(conn)
    return True


def changes_after(conn: Connection, after: int, limit: int) -> list[Change]:
    """The changes with an id above `after`, in id order, at most `limit`."""
    rows = execute(
        conn,
        f'SELECT id, item, item_key, status FROM {CHANGES_TABLE_NAME} WHERE id > :after ORDER BY id LIMIT {int(limit)}',
        {'after': after},
    ).fetchall()
    return [Change(int(i), str(item), str(key), str(status)) for i, item, key, status in rows]


def changes_with_ids(conn: Connection, ids: Sequence[int]) -> list[Change]:
    """The changes of these ids that are there now (a gap filled by a late commit), in id order."""
    if not ids:
        return []
    listed, parameters = in_list('change', list(ids))
    rows = execute(
        conn,
        f'SELECT id, item, item_key, status FROM {CHANGES_TABLE_NAME} WHERE id IN {listed} ORDER BY id',
        parameters,
    ).fetchall()
    return [Change(int(i), str(item), str(key), str(status)) for i, item, key, status in rows]


def last_change_ids(conn: Connection, count: int) -> list[int]:
    """The ids of the last `count` changes, ascending: where a feed begins (the skipped ones among them are gaps)."""
    rows = execute(conn, f'SELECT id FROM {CHANGES_TABLE_NAME} ORDER BY id DESC LIMIT {int(count)}', None).fetchall()
    return sorted(int(row[0]) for row in rows)


def first_change_id(conn: Connection) -> int | None:
    """The smallest id still in the log (older ones were pruned), or `None` for an empty log."""
    found = execute(conn, f'SELECT min(id) FROM {CHANGES_TABLE_NAME}', None).fetchone()
    return None if found is None or found[0] is None else int(found[0])


def prune_changes(conn: Connection, before: float) -> None:
    """Delete the changes made before `before`, but the last one: a log is empty only when new, so a feed that
    finds it empty begins at id 0 and misses no first change, however late it commits.
    """
    execute(
        conn,
        f'DELETE FROM {CHANGES_TABLE_NAME} WHERE changed_at < :before '
        f'AND id < (SELECT max(id) FROM {CHANGES_TABLE_NAME})',
        {'before': before},
    )


_MAX_POSITION_LENGTH = 4096
_POSITION = re.compile(r'[0-9]{1,18}(\.[0-9]{1,18}(-[0-9]{1,18})?(,[0-9]{1,18}(-[0-9]{1,18})?)*)?')


@dataclass
class Position:
    """Where a reader of the log stands: every id up to `floor` is taken (seen, or given up as rolled back), and so
    are the ids in `above`; any other id above `floor` is still to come.

    Written `FLOOR` or `FLOOR.A-B,C` (runs of `above`): the `id:` of each server-sent event, which a reconnecting
    page sends back as `Last-Event-ID`. `above` is empty but for a commit that is late (a gap), so it stays short.
    """

    floor: int = 0
    above: set[int] = field(default_factory=set[int])

    def has(self, change_id: int) -> bool:
        """Whether this change was taken already."""
        return change_id <= self.floor or change_id in self.above

    def add(self, change_id: int) -> None:
        """Take one change."""
        if change_id > self.floor:
            self.above.add(change_id)
            self._settle()

    def raise_floor(self, floor: int) -> None:
        """Take every change up to `floor` (the feed has passed it: everything below it was delivered or given up)."""
        if floor > self.floor:
            self.floor = floor
            self.above = {each for each in self.above if each > floor}
            self._settle()

    @property
    def high(self) -> int:
        """The highest id taken."""
        return max(self.above, default=self.floor)

    def copy(self) -> Position:
        return Position(self.floor, set(self.above))

    def _settle(self) -> None:
        while self.floor + 1 in self.above:
            self.floor += 1
            self.above.discard(self.floor)

    def encode(self) -> str:
        """The position as text (see the class)."""
        if not self.above:
            return str(self.floor)
        runs: list[str] = []
        ordered = sorted(self.above)
        start = previous = ordered[0]
        for each in [*ordered[1:], None]:
            if each is not None and each == previous + 1:
                previous = each
                continue
            runs.append(str(start) if start == previous else f'{start}-{previous}')
            if each is not None:
                start = previous = each
        return f'{self.floor}.{",".join(runs)}'

    @classmethod
    def decode(cls, text: str) -> Position | None:
        """A position `encode` wrote, or `None` for anything else (never an error: it comes from a client)."""
        text = text.strip()
        if len(text) > _MAX_POSITION_LENGTH or not _POSITION.fullmatch(text):
            return None
        floor_text, _, rest = text.partition('.')
        above: set[int] = set()
        for run in rest.split(',') if rest else []:
            start, _, end = run.partition('-')
            first, last = int(start), int(end or start)
            if last < first or last - first > 10_000 or len(above) > 10_000:
                return None
            above.update(range(first, last + 1))
        position = cls(int(floor_text), {each for each in above if each > int(floor_text)})
        position._settle()
        return position
