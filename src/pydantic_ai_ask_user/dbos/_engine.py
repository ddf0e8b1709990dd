"""The DBOS package's way to a database through SQLAlchemy: the engine of the DBOS side (workers, `DBOSAnswerer`,
the waiter) and of every database that is not a plain SQLite file, and the creation of the tables (`_tables`) and of
what later versions added to them.

Imported only where SQLAlchemy is loaded anyway, or about to be: `ask-user` on a plain SQLite file goes through
`_sqlite` instead (`_db.open_database` chooses).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event, exc

from ._addressees import ensure_addressees
from ._changes import ensure_change_log
from ._connection import BUSY_TIMEOUT_SECONDS
from ._handoffs import ensure_handoffs
from ._history_index import ensure_history_index
from ._schema import (
    ADDED_COLUMNS,
    DBOS_TABLE,
    EVENT_APPROVALS_TABLE_NAME,
    TABLE_NAME,
    add_column_statement,
    backfill_statement,
    index_statements,
    missing_column_error,
    not_a_question_database,
    warn_missing_index,
)
from ._tables import metadata

__all__ = (
    'create_engine',
    'EngineDatabase',
    'table_exists',
    'ensure_table',
    'ensure_columns',
    'ensure_indexes',
    'shared_engine',
    'transaction',
    'has_table',
)


def create_engine(database_url: str) -> sa.Engine:
    """An engine on the DBOS system database at `database_url` (`sqlite:///file` or `postgresql://...`)."""
    url = sa.make_url(database_url)
    if url.get_backend_name() == 'sqlite':
        engine = sa.create_engine(url, connect_args={'timeout': BUSY_TIMEOUT_SECONDS})

        @event.listens_for(engine, 'connect')
        def _immediate(dbapi_connection: Any, _record: Any) -> None:  # pyright: ignore[reportUnusedFunction]
            # As DBOS does: writers take the lock when they begin, so two answers cannot interleave.
            # `_sqlite.SqliteDatabase` opens its connections the same way.
            dbapi_connection.isolation_level = 'IMMEDIATE'
            dbapi_connection.execute(f'PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}')

        return engine
    if url.get_backend_name() == 'postgresql':
        return sa.create_engine(url.set(drivername='postgresql+psycopg'), pool_pre_ping=True, pool_size=5)
    raise ValueError(f'unsupported database URL {url.render_as_string()!r}: use sqlite:///FILE or postgresql://...')


def table_exists(engine: sa.Engine) -> bool:
    """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
    inspector = sa.inspect(engine)
    if inspector.has_table(TABLE_NAME):
        return True
    schema = 'dbos' if engine.dialect.name == 'postgresql' else None
    if inspector.has_table(DBOS_TABLE, schema=schema):
        return False  # a DBOS database where no question was asked yet
    raise not_a_question_database(engine.url.render_as_string())


def ensure_table(engine: sa.Engine) -> None:
    """Create the tables if they are missing, and the columns later versions added; safe when several processes
    start at once.
    """
    for attempt in range(3):
        try:
            metadata.create_all(engine, checkfirst=True)
            break
        except exc.DatabaseError:
            # Another process created it between our check and our CREATE.
            if attempt == 2:
                raise
            time.sleep(0.1)
    ensure_columns(engine, creating=True)


def ensure_columns(engine: sa.Engine, *, creating: bool = False) -> None:
    """Add to an existing questions table the columns an earlier version did not create, and the addressees
    (`_addressees.ensure_addressees`); idempotent.

    Safe when several processes start at once: PostgreSQL's `ADD COLUMN IF NOT EXISTS` lets the second one
    through; on SQLite, which has no such clause, a process that loses the race sees the column there and goes on.
    Old workers keep working on the new table: they do not name the new columns, which are nullable. `creating`
    (`ensure_table`): a database user who may not create the addressees gets the database's error, not a warning.
    """
    if not sa.inspect(engine).has_table(TABLE_NAME):
        return
    for name, kind in ADDED_COLUMNS:
        if _has_column(engine, name):
            continue
        statement = add_column_statement(name, kind, engine.dialect.name)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(statement))
                if (backfill := backfill_statement(name, engine.dialect.name)) is not None:
                    conn.execute(sa.text(backfill))
        except exc.DBAPIError as error:
            # Another process added it between our look and our ALTER ("duplicate column name"): go on.
            if _has_column(engine, name):
                continue
            raise missing_column_error(name, statement, str(error.orig)) from None
    ensure_addressees(EngineDatabase(engine), exc.DBAPIError, required=creating)
    ensure_indexes(engine)
    ensure_change_log(EngineDatabase(engine), exc.DBAPIError)
    ensure_handoffs(EngineDatabase(engine), exc.DBAPIError)
    ensure_history_index(EngineDatabase(engine), exc.DBAPIError)


def ensure_indexes(engine: sa.Engine) -> None:
    """Create the questions table's indexes (and the approvals table's) where an earlier version made the table
    without them; idempotent.

    `CREATE INDEX IF NOT EXISTS` on both databases, so processes starting together do not collide. A database user who
    may not create them (not the table's owner) gets a warning naming the statement, and the store works on, slower.
    """
    approvals = sa.inspect(engine).has_table(EVENT_APPROVALS_TABLE_NAME)
    for name, table, statement in index_statements(approvals=approvals):
        if _has_index(engine, table, name):
            continue  # a read: a database user who may not write indexes is not warned at every start
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(statement))
        except exc.DBAPIError as error:
            if not _has_index(engine, table, name):
                warn_missing_index(name, statement, str(error.orig))


def _has_index(engine: sa.Engine, table: str, name: str) -> bool:
    return any(found['name'] == name for found in sa.inspect(engine).get_indexes(table))


def _has_column(engine: sa.Engine, name: str) -> bool:
    # A fresh inspector each time: one caches what it read, and the column may have appeared since.
    return any(column['name'] == name for column in sa.inspect(engine).get_columns(TABLE_NAME))


_engines: dict[str, sa.Engine] = {}
"""The engine of each database URL this process uses (`shared_engine`)."""

_engines_lock = threading.Lock()
"""Held while `shared_engine` looks up or makes an engine, so each URL gets one."""


def shared_engine(database_url: str) -> sa.Engine:
    """One engine per database URL for this process, its tables created on first use.

    For the short transactions of `ask_through_store`, `DBOSEventWaiter` and `resolve_dbos_event`, which
    would otherwise connect (and create the tables) anew every time.
    """
    with _engines_lock:
        engine = _engines.get(database_url)
        if engine is None:
            engine = create_engine(database_url)
            try:
                ensure_table(engine)
            except BaseException:
                engine.dispose()
                raise
            _engines[database_url] = engine
        return engine


@contextmanager
def transaction(database_url: str) -> Generator[sa.Connection]:
    """A transaction on the shared engine of `database_url`: committed on leaving, rolled back on an error."""
    with shared_engine(database_url).begin() as conn:
        yield conn


def has_table(engine: sa.Engine, name: str) -> bool:
    """Whether the table `name` is in the database (older databases lack the event tables)."""
    return sa.inspect(engine).has_table(name)


class EngineDatabase:
    """The `_connection.Database` of a SQLAlchemy engine: PostgreSQL, or a SQLite URL with options."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        """The engine, which this owns (`dispose` disposes of it)."""

    def connect(self) -> Any:
        """A connection for reads; rolled back when it is left."""
        return self.engine.connect()

    def begin(self) -> Any:
        """A transaction: committed on leaving, rolled back on an error."""
        return self.engine.begin()

    def has_table(self, name: str) -> bool:
        """Whether the table `name` is in the database."""
        return has_table(self.engine, name)

    def table_exists(self) -> bool:
        """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
        return table_exists(self.engine)

    def ensure_table(self) -> None:
        """Create the tables if they are missing, and the columns later versions added."""
        ensure_table(self.engine)

    def ensure_columns(self) -> None:
        """Add the columns an earlier version did not create."""
        ensure_columns(self.engine)

    def dispose(self) -> None:
        """Close the engine's connections; it reconnects if used again."""
        self.engine.dispose()
