"""Opening the database at a URL: the choice of the way to it, a plain SQLite file through the standard library
(`_sqlite`), anything else through SQLAlchemy (`_engine`, imported only then), and the URL as messages show it.

Light: `ask-user pending`, `answer` and `resolve` on a SQLite file come through here without loading SQLAlchemy.
"""

from __future__ import annotations

from .._text import printable
from ._connection import Database
from ._schema import NotAQuestionDatabaseError
from ._sqlite import SqliteDatabase, check_plain_sqlite_file, shown_sqlite_url, sqlite_file

__all__ = ('DEFAULT_DATABASE_URL', 'open_database', 'shown_database_url', 'check_sqlite_file')

DEFAULT_DATABASE_URL = 'sqlite:///ask_user.sqlite'
"""The embedded default: a SQLite file in the working directory, no server to run."""


def open_database(database_url: str) -> Database:
    """The database at `database_url`: a plain SQLite file (`sqlite:///FILE`) through the standard library's `sqlite3`,
    anything else (PostgreSQL; a SQLite URL with options) through SQLAlchemy, imported only then.

    Nothing is created or connected yet.
    """
    path = sqlite_file(database_url)
    if path is not None:
        return SqliteDatabase(database_url, path)
    # Here, not at the top: `_engine` imports SQLAlchemy, which a plain SQLite file never needs.
    from ._engine import EngineDatabase, create_engine

    return EngineDatabase(create_engine(database_url))


def shown_database_url(database_url: str) -> str:
    """`database_url` as messages may show it: the password hidden, undrawable characters replaced."""
    return shown_sqlite_url(database_url) or _shown_by_sqlalchemy(database_url)


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
    no question waits. Other URLs pass.
    """
    if check_plain_sqlite_file(database_url):
        return
    import sqlalchemy as sa  # a URL only SQLAlchemy reads (PostgreSQL, options)

    url = sa.make_url(database_url)
    if url.get_backend_name() != 'sqlite':
        return
    path = url.database or ''
    if path in ('', ':memory:') or path.startswith('file:'):
        raise NotAQuestionDatabaseError(f'{database_url} is not a SQLite file; no questions can wait there')
    check_plain_sqlite_file(f'sqlite:///{path}')
