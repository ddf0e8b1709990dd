"""A SQLite file through the standard library's `sqlite3`: the DBOS package's SQL (`_connection`) without SQLAlchemy.

`DBOSQuestionStore` on a SQLite file reads and writes through this, so `ask-user pending`, `answer` and `resolve`
start in tenths of a second. Connections behave as `_engine.create_engine` sets SQLAlchemy's up, as DBOS does: a
30 s busy timeout, and writers that take the database lock when they begin (`BEGIN IMMEDIATE`, issued by
`sqlite3` before the first write of a transaction), so two answers cannot interleave. Creating the tables is
left to SQLAlchemy (`_engine.ensure_table`), which defines them (`_tables`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from urllib.parse import unquote

from .._text import printable
from ._connection import BUSY_TIMEOUT_SECONDS
from ._connection import has_index as index_there
from ._connection import has_table as table_there
from ._schema import (
    DBOS_TABLE,
    TABLE_NAME,
    NotAQuestionDatabaseError,
    not_a_question_database,
)
from ._upgrade import add_missing_columns, create_tables

__all__ = ('SqliteDatabase', 'sqlite_file', 'check_plain_sqlite_file', 'shown_sqlite_url')

_PLAIN = 'sqlite:///'
"""How a URL naming a SQLite file, and nothing more, begins."""


def sqlite_file(database_url: str) -> str | None:
    """The file a plain `sqlite:///FILE` URL names (percent-escapes decoded, as SQLAlchemy reads it); `None` for
    any other URL (PostgreSQL, a driver name, options after `?`, memory, a `file:` URI), which SQLAlchemy opens.
    """
    if not database_url.startswith(_PLAIN) or '?' in database_url:
        return None
    path = unquote(database_url[len(_PLAIN) :])
    if path in ('', ':memory:') or path.startswith('file:'):
        return None
    return path


def shown_sqlite_url(database_url: str) -> str | None:
    """A plain SQLite URL as messages show it (it holds no password), as SQLAlchemy renders it; `None` for others."""
    path = sqlite_file(database_url)
    return None if path is None else printable(_PLAIN + path, allow_newline=False)


def check_plain_sqlite_file(database_url: str) -> bool:
    """Raise `NotAQuestionDatabaseError` when the plain SQLite URL `database_url` names a file that does not exist:
    opening it would create it, empty, and `sqlite:///typo.sqlite` would look like a database where no question
    waits. False for a URL this cannot tell about (`_db.check_sqlite_file` does), True when the file is there.
    """
    path = sqlite_file(database_url)
    if path is None:
        return False
    if not os.path.isfile(path):
        raise NotAQuestionDatabaseError(f'there is no SQLite database at {os.path.abspath(path)}')
    return True


class SqliteDatabase:
    """The `_connection.Database` of a SQLite file, through `sqlite3`: a connection per use (opening one costs tens of
    microseconds), so any thread may use it.
    """

    def __init__(self, database_url: str, path: str) -> None:
        self.database_url = database_url
        """The URL, as messages show it."""
        self.path = path
        """The file."""

    def _open(self) -> sqlite3.Connection:
        # As `_engine.create_engine`: IMMEDIATE, so a writer takes the lock when it begins, and the busy timeout.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level='IMMEDIATE')
        conn.execute(f'PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}')
        return conn

    @contextmanager
    def connect(self) -> Generator[sqlite3.Connection]:
        """A connection for reads; whatever it began is rolled back when it is left."""
        conn = self._open()
        try:
            yield conn
            conn.rollback()
        finally:
            conn.close()

    @contextmanager
    def begin(self) -> Generator[sqlite3.Connection]:
        """A transaction: committed on leaving, rolled back on an error (its first write begins it, IMMEDIATE)."""
        conn = self._open()
        try:
            yield conn
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.close()

    def has_table(self, name: str) -> bool:
        """Whether the table `name` is in the file."""
        with self.connect() as conn:
            return table_there(conn, name)

    def table_exists(self) -> bool:
        """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
        if self.has_table(TABLE_NAME):
            return True
        if self.has_table(DBOS_TABLE):
            return False  # a DBOS database where no question was asked yet
        raise not_a_question_database(shown_sqlite_url(self.database_url) or self.database_url)

    def ensure_table(self) -> None:
        """Create the tables if they are missing (through SQLAlchemy, loaded only for it)."""
        create_tables(self.database_url)

    def _columns(self) -> set[str]:
        with self.connect() as conn:
            return {row[1] for row in conn.execute(f'PRAGMA table_info({TABLE_NAME})').fetchall()}

    def ensure_columns(self) -> None:
        """Add the columns, addressees, indexes and change log an earlier version did not make
        (`_upgrade.add_missing_columns`: a read-only file gets a warning); idempotent.
        """
        add_missing_columns(self, self._columns, self.has_index, 'sqlite', sqlite3.Error)

    def has_index(self, name: str) -> bool:
        """Whether the index `name` is in the file."""
        with self.connect() as conn:
            return index_there(conn, name)

    def dispose(self) -> None:
        """Nothing to release: each use opens its own connection and closes it when it is left."""
