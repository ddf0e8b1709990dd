"""A PostgreSQL database through psycopg alone: the DBOS package's SQL (`_connection`) without SQLAlchemy.

For a short-lived process (`ask-user pending`, `answer`, `resolve`): a `DBOSQuestionStore(pooled=False)` and the
waits `ask-user resolve` ends read and write through this, so they start without importing SQLAlchemy or reading the
catalog through its inspector (a round trip per column and index). A long-lived one (a web inbox, the workers) keeps
SQLAlchemy's engine (`_engine`), whose pool keeps its connections open between requests. Creating the tables is left
to SQLAlchemy (`_engine.ensure_table`), which defines them (`_tables`).

The statements are the same text either way: `:name` parameters become psycopg's `%(name)s`
(`_connection.psycopg_statement`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .._text import printable
from ._connection import has_index as index_there
from ._connection import has_table as table_there
from ._connection import run
from ._schema import (
    DBOS_TABLE,
    TABLE_NAME,
    not_a_question_database,
)
from ._upgrade import add_missing_columns, create_tables

if TYPE_CHECKING:
    import psycopg

__all__ = ('PsycopgDatabase', 'plain_postgres_url', 'shown_postgres_url')

_PLAIN = re.compile(
    r'(?P<driver>postgresql(?:\+psycopg)?)://'
    r'(?:(?P<user>[A-Za-z0-9_.~-]+)(?::(?P<password>[^@/?#\[\]]*))?@)?'
    r'(?P<host>[A-Za-z0-9_.-]*)(?::(?P<port>[1-9][0-9]{0,4}))?'
    r'(?:/(?P<database>[A-Za-z0-9_.-]+))?'
)
"""A PostgreSQL URL this module opens itself: a user, a password, a host, a port and a database, no options (`?`);
any other (options, an IPv6 host, a user name SQLAlchemy would quote) goes through SQLAlchemy, as before."""


def plain_postgres_url(database_url: str) -> str | None:
    """The libpq URI of a plain PostgreSQL URL (`postgresql://` or `postgresql+psycopg://`), as psycopg connects to it;
    `None` for any other URL.
    """
    found = _PLAIN.fullmatch(database_url)
    if found is None:
        return None
    return 'postgresql://' + database_url[len(found['driver']) + 3 :]


def shown_postgres_url(database_url: str) -> str | None:
    """A plain PostgreSQL URL as messages show it, its password hidden, as SQLAlchemy renders it
    (`render_as_string(hide_password=True)`); `None` for any other URL.
    """
    found = _PLAIN.fullmatch(database_url)
    if found is None:
        return None
    shown = found['driver'] + '://'
    if found['user'] is not None:
        shown += found['user'] + (':***' if found['password'] is not None else '') + '@'
    shown += found['host']
    if found['port'] is not None:
        shown += ':' + found['port']
    if found['database'] is not None:
        shown += '/' + found['database']
    return printable(shown, allow_newline=False)


class PsycopgDatabase:
    """The `_connection.Database` of a PostgreSQL server through psycopg: connections opened when first needed and
    kept for the next use (a process that reads a page, then its count, connects once), closed by `dispose`.
    """

    def __init__(self, database_url: str, conninfo: str) -> None:
        self.database_url = database_url
        """The URL, as messages show it."""
        self.conninfo = conninfo
        """What psycopg connects to."""
        self._idle: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()

    def _take(self) -> psycopg.Connection[Any]:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        import psycopg  # here, not at the top: the `dbos` extra's driver, which `_connection` names without importing

        return psycopg.connect(self.conninfo)

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        if conn.closed or conn.broken:
            return
        with self._lock:
            self._idle.append(conn)

    @contextmanager
    def connect(self) -> Generator[psycopg.Connection[Any]]:
        """A connection for reads; whatever it began is rolled back when it is left."""
        conn = self._take()
        try:
            yield conn
            conn.rollback()
        except BaseException:
            conn.close()
            raise
        self._give_back(conn)

    @contextmanager
    def begin(self) -> Generator[psycopg.Connection[Any]]:
        """A transaction: committed on leaving, rolled back on an error."""
        conn = self._take()
        try:
            yield conn
            conn.commit()
        except BaseException:
            conn.close()  # whatever it began is rolled back with it
            raise
        self._give_back(conn)

    def _exists(self, query: str, name: str) -> bool:
        with self.connect() as conn:
            return run(conn, query, {'name': name}).fetchone() is not None

    def has_table(self, name: str) -> bool:
        """Whether the table `name` is in a schema of the search path, as SQLAlchemy's inspector looks."""
        with self.connect() as conn:
            return table_there(conn, name)

    def table_exists(self) -> bool:
        """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
        if self.has_table(TABLE_NAME):
            return True
        if self._exists("SELECT 1 FROM pg_tables WHERE tablename = :name AND schemaname = 'dbos'", DBOS_TABLE):
            return False  # a DBOS database where no question was asked yet
        raise not_a_question_database(shown_postgres_url(self.database_url) or self.database_url)

    def ensure_table(self) -> None:
        """Create the tables if they are missing (through SQLAlchemy, loaded only for it)."""
        create_tables(self.database_url)

    def _columns(self) -> set[str]:
        query = (
            'SELECT column_name FROM information_schema.columns '
            'WHERE table_name = :name AND table_schema = ANY (current_schemas(false))'
        )
        with self.connect() as conn:
            return {row[0] for row in run(conn, query, {'name': TABLE_NAME}).fetchall()}

    def ensure_columns(self) -> None:
        """Add the columns, addressees, indexes and change log an earlier version did not make
        (`_upgrade.add_missing_columns`; `ADD COLUMN IF NOT EXISTS` lets a second process through); idempotent.
        """
        import psycopg

        add_missing_columns(self, self._columns, self.has_index, 'postgresql', psycopg.Error)

    def has_index(self, name: str) -> bool:
        """Whether the index `name` is in a schema of the search path."""
        with self.connect() as conn:
            return index_there(conn, name)

    def dispose(self) -> None:
        """Close its connections; it connects again if used again."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
