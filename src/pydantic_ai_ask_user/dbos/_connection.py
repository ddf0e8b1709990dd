"""What every statement of the DBOS package runs on: the `Connection` and `Database` types, and running one statement
of SQL text on any way to a database.

Every statement of `_schema`, `_addressees`, `_questions`, `_waits`, `_approvals`, `_workflows` and `_changes` runs
unchanged through SQLAlchemy (`sa.text`, on PostgreSQL and SQLite: the DBOS workers, `DBOSAnswerer`, the waiter),
through the standard library's `sqlite3` (`DBOSQuestionStore` on a SQLite file, so `ask-user pending`, `answer` and
`resolve` start without SQLAlchemy) and through psycopg alone (`_postgres`: those commands on PostgreSQL). Parameters
are named (`:name`), which all take (`_postgres` spells them as psycopg reads them); the few differences between the
dialects are chosen by the connection's dialect (`dialect_of`). None of these modules imports SQLAlchemy or DBOS, nor
opens a database: `_db.open_database` picks the way to one, `_sqlite`, `_postgres` and `_engine` are the three ways.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, LiteralString, Protocol, cast

if TYPE_CHECKING:
    import psycopg
    import sqlalchemy as sa

    Connection = sqlite3.Connection | sa.Connection | psycopg.Connection[Any]
    """A connection the statements run on: the standard library's, SQLAlchemy's (any dialect), or psycopg's."""

__all__ = (
    'BUSY_TIMEOUT_SECONDS',
    'Database',
    'Rows',
    'dialect_of',
    'has_table',
    'has_index',
    'execute',
    'in_list',
    'row_lock',
    'fetch_one',
    'psycopg_statement',
    'run',
    'json_value',
)

BUSY_TIMEOUT_SECONDS = 30
"""How long a statement on SQLite waits for another process's lock before it fails, on either way to the file
(`_sqlite.SqliteDatabase`, `_engine.create_engine`), as DBOS sets it."""


class Database(Protocol):
    """A database the durable package reads and writes: SQLAlchemy's engine (`_engine.EngineDatabase`), or a SQLite file
    through the standard library (`_sqlite.SqliteDatabase`). `_db.open_database` picks one for a URL.
    """

    def connect(self) -> AbstractContextManager[Connection]:
        """A connection for reads; whatever it began is rolled back when it is left."""
        ...

    def begin(self) -> AbstractContextManager[Connection]:
        """A transaction: committed on leaving, rolled back on an error."""
        ...

    def has_table(self, name: str) -> bool:
        """Whether the table `name` is in the database (older databases lack the event tables)."""
        ...

    def table_exists(self) -> bool:
        """Whether the questions table is there; `NotAQuestionDatabaseError` when DBOS's tables are not either."""
        ...

    def ensure_table(self) -> None:
        """Create the tables if they are missing, and the columns later versions added."""
        ...

    def ensure_columns(self) -> None:
        """Add to an existing questions table the columns an earlier version did not create; idempotent."""
        ...

    def dispose(self) -> None:
        """Close its connections; it connects again if used again."""
        ...


def dialect_of(conn: Connection) -> str:
    """The dialect `conn` speaks: `sqlite` (either driver) or `postgresql` (either)."""
    if isinstance(conn, sqlite3.Connection):
        return 'sqlite'
    dialect = getattr(conn, 'dialect', None)  # SQLAlchemy's; psycopg's connection has none, and speaks PostgreSQL
    return 'postgresql' if dialect is None else cast(str, dialect.name)


def has_table(conn: Connection, name: str) -> bool:
    """Whether the table `name` is there: in the file, or in a schema of PostgreSQL's search path (which checks the
    right to create before `IF NOT EXISTS`, so a reader asks first).
    """
    if dialect_of(conn) == 'postgresql':
        query = 'SELECT 1 FROM pg_tables WHERE tablename = :name AND schemaname = ANY (current_schemas(false))'
    else:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"
    return execute(conn, query, {'name': name}).fetchone() is not None


def has_index(conn: Connection, name: str) -> bool:
    """Whether the index `name` is there, as `has_table` looks."""
    if dialect_of(conn) == 'postgresql':
        query = 'SELECT 1 FROM pg_indexes WHERE indexname = :name AND schemaname = ANY (current_schemas(false))'
    else:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = :name"
    return execute(conn, query, {'name': name}).fetchone() is not None


class Rows(Protocol):
    """What a statement returns, through either driver: its rows, and how many it changed."""

    @property
    def rowcount(self) -> int:
        """How many rows the statement changed."""
        ...

    def fetchone(self) -> Any:
        """The next row, or `None`."""
        ...

    def fetchall(self) -> Sequence[Any]:
        """The rows left."""
        ...


def execute(conn: Connection, statement: str, parameters: dict[str, Any] | None = None) -> Rows:
    """Run `statement` (named parameters, `:name`) on either kind of connection."""
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(statement, parameters or {})
    if getattr(conn, 'dialect', None) is None:  # psycopg's, opened by `_postgres`
        return run(cast('psycopg.Connection[Any]', conn), statement, parameters)
    import sqlalchemy as sa

    return cast(Rows, cast('sa.Connection', conn).execute(sa.text(statement), parameters or {}))


def in_list(name: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """`(:name_0, :name_1, ...)` and its parameters, for `IN` with a list (neither driver expands one); not empty."""
    parameters = {f'{name}_{index}': value for index, value in enumerate(values)}
    return '(' + ', '.join(f':{key}' for key in parameters) + ')', parameters


def row_lock(conn: Connection, kind: Literal['UPDATE', 'SHARE']) -> str:
    """A row lock on PostgreSQL; SQLite's writers take the database lock when they begin, which orders them anyway."""
    return f' FOR {kind}' if dialect_of(conn) == 'postgresql' else ''


def fetch_one(conn: Connection, query: str, parameters: dict[str, Any]) -> Any:
    """The first row `query` reads; `LookupError` when there is none."""
    row = execute(conn, query, parameters).fetchone()
    if row is None:
        raise LookupError(f'no row for {parameters}')
    return row


_TOKENS = re.compile(r"'(?:[^']|'')*'|\$\$.*?\$\$|::|:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|%", re.DOTALL)
"""What `psycopg_statement` rewrites or keeps: a string literal, a dollar-quoted body, a cast, a parameter, a `%`."""


def psycopg_statement(statement: str) -> str:
    """`statement` with its `:name` parameters as psycopg's `%(name)s`, and every `%` (in `LIKE '%...%'` too: psycopg
    reads them all) doubled; casts (`::jsonb`) and what is quoted (`'...'`, `$$...$$`) keep their colons.
    """

    def replace(found: re.Match[str]) -> str:
        text = found[0]
        if found['name'] is not None:
            return f'%({found["name"]})s'
        return text.replace('%', '%%')

    return _TOKENS.sub(replace, statement)


def run(conn: psycopg.Connection[Any], statement: str, parameters: dict[str, Any] | None = None) -> psycopg.Cursor[Any]:
    """Run `statement` (named parameters, `:name`) on a psycopg connection; one without parameters as it is written
    (psycopg reads `%` only when parameters are given).
    """
    # The package's own SQL text (`_schema`, `_questions`, ...), its values all parameters: psycopg's `LiteralString`.
    if not parameters:
        return conn.execute(cast('LiteralString', statement))
    return conn.execute(cast('LiteralString', psycopg_statement(statement)), parameters)


def json_value(text: str) -> object:
    """The JSON value of a column written by the DBOS package; the text itself when it is not JSON (a damaged row).

    Never `None` for a damaged audience: `audience_from_json` reads anything but a list of names as "nobody".
    """
    try:
        return json.loads(text)
    except ValueError:
        return text
