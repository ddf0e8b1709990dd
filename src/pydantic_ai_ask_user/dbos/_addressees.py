"""The addressees: one row per name each pending addressed question was published to, the index of a person's own
list. Their table (made as SQL text, on either way to the database), its filling from the questions an earlier version
published without it, and its rows written with each question (`_questions.insert_encoded`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from .._audience import MAX_NAME_LENGTH, check_audience
from ._connection import Database, execute, has_index, json_value
from ._schema import PENDING_ORDER, TABLE_NAME, after_position

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'ADDRESSEES_TABLE_NAME',
    'ADDRESSEES_ORDER_INDEX',
    'addressees_statements',
    'has_addressees',
    'ensure_addressees',
    'insert_addressees',
)

_log = logging.getLogger('pydantic_ai_ask_user.dbos')
"""The DBOS package's logger, which its warnings go to."""

ADDRESSEES_TABLE_NAME = 'ask_user_addressees'
"""The table holding one row per name each addressed question was published to (pending) with: the index of a
person's own list, which finds their questions without reading everybody's audience.

The questions table's `audience` column stays what decides: a person's page and count take a question through this
table only if its audience (the JSON text) names them too, so a row here never widens who sees a question.
"""

ADDRESSEES_ORDER_INDEX = 'ix_ask_user_addressees_order'
"""The index of `ADDRESSEES_TABLE_NAME` a person's page reads: each name's questions in the inbox's order. Made last,
after the rows of an earlier version's questions were copied in, so its presence says the table is complete."""

_ADDRESSEES_COLUMNS = 'request_id, name, due_at, created_at'
"""The columns of an addressee row: the question's key, a name, and the question's place in the inbox's order (its
`due_at` and `created_at`, which never change once it is published), so that a name's questions are read in order."""


def addressees_statements() -> tuple[str, str]:
    """The `CREATE TABLE` and the `CREATE INDEX` of the addressees (both `IF NOT EXISTS`; the same on both databases).

    Not declared to SQLAlchemy: `ensure_addressees` makes it, through either way to the database, and fills it from
    the questions an earlier version published before it makes the index (so `create_all` must not make it empty).
    """
    return (
        f'CREATE TABLE IF NOT EXISTS {ADDRESSEES_TABLE_NAME} (request_id VARCHAR(200) NOT NULL, '
        f'name VARCHAR({MAX_NAME_LENGTH}) NOT NULL, due_at FLOAT NOT NULL, created_at FLOAT NOT NULL, '
        'PRIMARY KEY (request_id, name))',
        f'CREATE INDEX IF NOT EXISTS {ADDRESSEES_ORDER_INDEX} ON {ADDRESSEES_TABLE_NAME} '
        '(name, due_at, created_at, request_id)',
    )


def has_addressees(conn: Connection) -> bool:
    """Whether the addressees are there and complete (`ADDRESSEES_ORDER_INDEX`, made last, is): what a person's own
    page and count read; without them they read every pending question's audience, as earlier versions did.
    """
    return has_index(conn, ADDRESSEES_ORDER_INDEX)


def ensure_addressees(
    database: Database, errors: type[Exception] | tuple[type[Exception], ...], *, required: bool
) -> bool:
    """Make the addressees of a questions table that has none (a new table, or an earlier version's), with a row for
    each name of each pending addressed question already there; whether they are there now. Idempotent.

    The table, its rows, then its index: a start that crashed, or that raced another, leaves no index, and the next one
    does the rest (each row is written unless it is there). `errors` are the exceptions of `database`'s driver; when
    the database user may not create a table, a `required` caller (one that publishes questions, which need the table)
    gets the database's error, any other (a reader: `ask-user pending`, an inbox) a warning, and reads on as before.
    """
    with database.connect() as conn:
        if has_addressees(conn):
            return True
    table, index = addressees_statements()
    try:
        with database.begin() as conn:
            execute(conn, table)
            _copy_addressees(conn)
            execute(conn, index)
    except errors as error:
        with database.connect() as conn:
            if has_addressees(conn):
                return True  # another process made them meanwhile
        if required:
            raise
        reason = str(getattr(error, 'orig', None) or error)
        _log.warning(
            "the questions table has no %s table and this database user cannot create it (%s); a person's own list "
            'reads the audience of every pending question until a database user who may create tables opens it once',
            ADDRESSEES_TABLE_NAME,
            reason.splitlines()[0] if reason else reason,
        )
        return False
    return True


_COPY_BATCH = 500
"""How many questions `_copy_addressees` reads at a time."""


def _copy_addressees(conn: Connection) -> None:
    """Write the addressee rows of every pending addressed question (an earlier version published them without),
    reading them a batch at a time in the inbox's order (a range of its index each, never a sort).
    """
    after: tuple[float, float, str] | None = None
    while True:
        later, parameters = after_position(PENDING_ORDER, after)
        conditions = ' AND '.join(["status = 'pending'", 'audience IS NOT NULL', *later])
        rows = execute(
            conn,
            f'SELECT id, audience, due_at, created_at FROM {TABLE_NAME} WHERE {conditions} '
            f'ORDER BY {PENDING_ORDER} LIMIT {_COPY_BATCH}',
            parameters,
        ).fetchall()
        insert_addressees(
            conn, [(key, _names_of(audience), due_at, created_at) for key, audience, due_at, created_at in rows]
        )
        if len(rows) < _COPY_BATCH:
            return
        key, _, due_at, created_at = rows[-1]
        after = (due_at, created_at, key)


def _names_of(audience: str) -> tuple[str, ...]:
    """The names a stored audience (JSON text) addresses; none for a damaged one, which no person's page shows."""
    data = json_value(audience)
    if not isinstance(data, list):
        return ()
    try:
        return check_audience(cast(list[object], data)) or ()
    except (TypeError, ValueError):
        return ()


_ADDRESSEE_ROWS_PER_STATEMENT = 500
"""The most addressee rows one `INSERT` writes: its parameters are bounded, however many questions are copied."""


def insert_addressees(conn: Connection, questions: Sequence[tuple[str, Sequence[str], float, float]]) -> None:
    """Write the addressee rows of these questions (each its key, names, `due_at` and `created_at`), but those there."""
    rows = [(key, name, due_at, created_at) for key, names, due_at, created_at in questions for name in names]
    for start in range(0, len(rows), _ADDRESSEE_ROWS_PER_STATEMENT):
        batch = rows[start : start + _ADDRESSEE_ROWS_PER_STATEMENT]
        parameters: dict[str, Any] = {}
        for index, (key, name, due_at, created_at) in enumerate(batch):
            parameters |= {
                f'r{index}': key,
                f'n{index}': name,
                f'd{index}': float(due_at),
                f'c{index}': float(created_at),
            }
        values = ', '.join(f'(:r{index}, :n{index}, :d{index}, :c{index})' for index in range(len(batch)))
        execute(
            conn,
            f'INSERT INTO {ADDRESSEES_TABLE_NAME} ({_ADDRESSEES_COLUMNS}) VALUES {values} '
            'ON CONFLICT (request_id, name) DO NOTHING',
            parameters,
        )
