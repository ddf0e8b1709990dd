"""Opening the database at a URL: the choice of the way to it, a plain SQLite file through the standard library
(`_sqlite`), a plain PostgreSQL URL through psycopg alone when no pool is wanted (`_postgres`), anything else through
SQLAlchemy (`_engine`, imported only then), and the URL as messages show it.

Light: `ask-user pending`, `answer` and `resolve` on a SQLite file, or on a PostgreSQL server, come through here
without loading SQLAlchemy.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from .._text import printable
from ._connection import Database
from ._postgres import PsycopgDatabase, plain_postgres_url, shown_postgres_url
from ._schema import NotAQuestionDatabaseError
from ._sqlite import SqliteDatabase, check_plain_sqlite_file, shown_sqlite_url, sqlite_file

__all__ = ('DEFAULT_DATABASE_URL', 'open_database', 'shown_database_url', 'check_sqlite_file')

DEFAULT_DATABASE_URL = 'sqlite:///ask_user.sqlite'
"""The embedded default: a SQLite file in the working directory, no server to run."""


def open_database(database_url: str, *, pooled: bool = True) -> Database:
    """The database at `database_url`: a plain SQLite file (`sqlite:///FILE`) through the standard library's `sqlite3`;
    unless `pooled`, a plain PostgreSQL URL (`postgresql://USER:PASSWORD@HOST:PORT/DB`, no options) through psycopg
    alone; anything else (PostgreSQL in a long-lived process, a URL with options) through SQLAlchemy, imported then.

    Nothing is created or connected yet.
    """
    path = sqlite_file(database_url)
    if path is not None:
        return SqliteDatabase(database_url, path)
    if not pooled and (conninfo := plain_postgres_url(database_url)) is not None:
        return PsycopgDatabase(database_url, conninfo)
    # Here, not at the top: `_engine` imports SQLAlchemy, which a plain SQLite file never needs.
    from ._engine import EngineDatabase, create_engine

    return EngineDatabase(create_engine(database_url))


def shown_database_url(database_url: str) -> str:
    """`database_url` as messages may show it: the password hidden, undrawable characters replaced."""
    return (
        shown_sqlite_url(database_url)
        or shown_postgres_url(database_url)
        or _shown_sqlite_file_url(database_url)
        or _shown_by_sqlalchemy(database_url)
    )


_SIMPLE_QUERY = re.compile(r'[A-Za-z0-9_.-]+=[A-Za-z0-9_.-]*(?:&[A-Za-z0-9_.-]+=[A-Za-z0-9_.-]*)*')
"""Options SQLAlchemy renders back as they are written, but in the order of their names."""


def _shown_sqlite_file_url(database_url: str) -> str | None:
    """A SQLite file's URL with a driver or simple options as SQLAlchemy renders it (its path decoded, its options in
    order of their names), without importing it; `None` for any other URL.
    """
    found = _SQLITE_FILE_URL.fullmatch(database_url)
    if found is None:
        return None
    head, _, query = database_url.partition('?')
    if query and not _SIMPLE_QUERY.fullmatch(query):
        return None
    options = query.split('&') if query else []
    if len({option.partition('=')[0] for option in options}) != len(options):
        return None  # a name given twice: SQLAlchemy's rendering of it is its own
    shown = head[: head.index('://') + 4] + unquote(found['path'])
    if options:
        shown += '?' + '&'.join(sorted(options, key=lambda option: option.partition('=')[0]))
    return printable(shown, allow_newline=False)


def _shown_by_sqlalchemy(database_url: str) -> str:
    import sqlalchemy as sa  # only for a URL that is not a plain SQLite file: `ask-user` on one never loads it

    try:
        shown = sa.make_url(database_url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: nothing in it is known not to be a secret
        shown = 'the database URL given'
    return printable(shown, allow_newline=False)


def check_sqlite_file(database_url: str) -> None:
    """Raise `NotAQuestionDatabaseError` when `database_url` names a SQLite file that does not exist (or none).

    Opening a missing file would create it, empty: `sqlite:///typo.sqlite` would look like a database where
    no question waits. Other URLs pass. Read as SQLAlchemy reads it, without importing it for the URLs of files
    (`sqlite:///FILE`, with a driver or options) and of PostgreSQL: a missing file is said before any heavy import.
    """
    if check_plain_sqlite_file(database_url):
        return
    found = _SQLITE_FILE_URL.fullmatch(database_url)
    if found is not None:
        path = unquote(found['path'])
    elif _OTHER_URL.match(database_url):
        return
    else:
        import sqlalchemy as sa  # a URL only SQLAlchemy reads (a host in a SQLite URL, an unknown scheme)

        url = sa.make_url(database_url)
        if url.get_backend_name() != 'sqlite':
            return
        path = url.database or ''
    if path in ('', ':memory:') or path.startswith('file:'):
        raise NotAQuestionDatabaseError(f'{database_url} is not a SQLite file; no questions can wait there')
    check_plain_sqlite_file(f'sqlite:///{path}')


_SQLITE_FILE_URL = re.compile(r'sqlite(?:\+[A-Za-z0-9_]+)?:///(?P<path>[^?]*)(?:\?.*)?', re.DOTALL)
"""A SQLite URL with no host, perhaps a driver and options: its database is the path, as SQLAlchemy reads it."""

_OTHER_URL = re.compile(r'postgresql(?:\+[A-Za-z0-9_]+)?://')
"""A URL of PostgreSQL, which names no file."""
