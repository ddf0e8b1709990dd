"""Bringing an earlier version's questions table up to date, on a database opened without SQLAlchemy's engine: the
standard library's `sqlite3` (`_sqlite`) or psycopg (`_postgres`). One routine for both, over the `Database` they
share; `_engine` does the same through SQLAlchemy for a long-lived process.

Creating the tables themselves is left to SQLAlchemy, whose metadata (`_tables`) defines them: `create_tables` loads
it only then, so reading and answering never import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from ._addressees import ensure_addressees
from ._changes import ensure_change_log
from ._connection import Database, execute
from ._handoffs import ensure_handoffs
from ._history_index import ensure_history_index
from ._schema import (
    ADDED_COLUMNS,
    EVENT_APPROVALS_TABLE_NAME,
    add_column_statement,
    backfill_statement,
    index_statements,
    missing_column_error,
    warn_missing_index,
)

__all__ = ('add_missing_columns', 'create_tables')


def create_tables(database_url: str) -> None:
    """Create the tables if they are missing, through a SQLAlchemy engine made for it and disposed of after."""
    # Here, not at the top: `_engine` imports SQLAlchemy, which reading and answering never needs.
    from ._engine import create_engine, ensure_table

    engine = create_engine(database_url)
    try:
        ensure_table(engine)
    finally:
        engine.dispose()


def add_missing_columns(
    database: Database,
    columns: Callable[[], set[str]],
    has_index: Callable[[str], bool],
    dialect: Literal['sqlite', 'postgresql'],
    error: type[Exception],
) -> None:
    """Add to an existing questions table the columns an earlier version did not create (`columns` reads those it
    has), then the addressees, the indexes, the change log, the hand-offs and the history's index; idempotent. A
    process that loses the race for a column (SQLite has no `ADD COLUMN IF NOT EXISTS`) sees it there and goes on; a
    database user who may not make the addressees, an index, the change log, the hand-offs or the history's index
    gets a warning (`error` is the driver's error class).
    """
    present = columns()
    if not present:
        return  # no questions table
    for name, kind in ADDED_COLUMNS:
        if name in present:
            continue
        statement = add_column_statement(name, kind, dialect)
        try:
            with database.begin() as conn:
                execute(conn, statement)
                if (backfill := backfill_statement(name, dialect)) is not None:
                    execute(conn, backfill)
        except error as failed:
            if name in columns():
                continue
            raise missing_column_error(name, statement, str(failed)) from None
    ensure_addressees(database, error, required=False)
    _add_missing_indexes(database, has_index, error)
    ensure_change_log(database, error)
    ensure_handoffs(database, error)
    ensure_history_index(database, error)


def _add_missing_indexes(database: Database, has_index: Callable[[str], bool], error: type[Exception]) -> None:
    """Create the questions table's indexes an earlier version did not make (`IF NOT EXISTS`); a database user who
    may not (a read-only file) gets a warning naming the statement, and the store works on, slower.
    """
    for name, _, statement in index_statements(approvals=database.has_table(EVENT_APPROVALS_TABLE_NAME)):
        if has_index(name):
            continue  # a read, so a store that may not write (ask-user pending) takes no write lock for it
        try:
            with database.begin() as conn:
                execute(conn, statement)
        except error as failed:
            if not has_index(name):
                warn_missing_index(name, statement, str(failed))
