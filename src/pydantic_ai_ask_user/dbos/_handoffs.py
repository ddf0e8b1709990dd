"""Hand-offs: forwarding a pending question or approval to other people, and the record of each.

One row per hand-off in a table of its own (`HANDOFFS_TABLE_NAME`), made as SQL text on either way to the database
(like the addressees): created with the tables for a new database and at start-up for an earlier version's
(`ensure_handoffs`), and, should neither have run, by the forward itself. A forward changes the item's audience (the
questions table's `audience` column and its addressee rows, or the approvals table's `addressing`), writes its row
here, and logs a change (so that open inboxes hear of it), all in one transaction.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from .._audience import MAX_NAME_LENGTH, audience_from_json, check_audience
from .._escalation import Handoff
from .._question_store import AlreadyAnsweredError, UnknownRequestError, WithdrawnError
from ._addressees import ADDRESSEES_TABLE_NAME, insert_addressees
from ._changes import CHANGES_TABLE_NAME
from ._connection import Database, dialect_of, execute, has_table, in_list, json_value
from ._schema import EVENT_APPROVALS_TABLE_NAME, TABLE_NAME

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'HANDOFFS_TABLE_NAME',
    'handoffs_statements',
    'ensure_handoffs',
    'forward_item',
    'select_handoffs',
    'escalation_handoff_id',
)

_log = logging.getLogger('pydantic_ai_ask_user.dbos')
"""The DBOS package's logger, which its warnings go to."""

HANDOFFS_TABLE_NAME = 'ask_user_handoffs'
"""The table holding one row per hand-off of a question or an approval: who, when, from whom, to whom, the note."""

_HANDOFFS_INDEX = 'ix_ask_user_handoffs_item'
"""The index of `HANDOFFS_TABLE_NAME` by item, in order: what reading an item's hand-offs takes."""


def handoffs_statements() -> tuple[str, str]:
    """The `CREATE TABLE` and `CREATE INDEX` of the hand-offs (both `IF NOT EXISTS`; the same on both databases)."""
    return (
        f'CREATE TABLE IF NOT EXISTS {HANDOFFS_TABLE_NAME} (id VARCHAR(40) PRIMARY KEY, item VARCHAR(16) NOT NULL, '
        f'item_key VARCHAR(200) NOT NULL, at FLOAT NOT NULL, by_name VARCHAR({MAX_NAME_LENGTH}), '
        'from_audience TEXT, to_audience TEXT NOT NULL, note TEXT NOT NULL)',
        f'CREATE INDEX IF NOT EXISTS {_HANDOFFS_INDEX} ON {HANDOFFS_TABLE_NAME} (item_key, at)',
    )


def ensure_handoffs(database: Database, errors: type[Exception] | tuple[type[Exception], ...]) -> bool:
    """Make the hand-offs table where it is missing (idempotent); whether it is there now. A database user who may
    not create it gets a warning: the store works on, and the first forward tries again.
    """
    if database.has_table(HANDOFFS_TABLE_NAME):
        return True
    try:
        with database.begin() as conn:
            for statement in handoffs_statements():
                execute(conn, statement)
    except errors as error:
        if database.has_table(HANDOFFS_TABLE_NAME):
            return True
        reason = str(getattr(error, 'orig', None) or error)
        _log.warning(
            'the questions table has no %s table and this database user cannot create it (%s); forwarding a question '
            'fails until a database user who may create tables opens it once',
            HANDOFFS_TABLE_NAME,
            reason.splitlines()[0] if reason else reason,
        )
        return False
    return True


def _audience_text(audience: tuple[str, ...] | None) -> str | None:
    return None if audience is None else json.dumps(list(audience), ensure_ascii=True)


def _after(before: tuple[str, ...] | None, names: tuple[str, ...], *, replace: bool) -> tuple[str, ...] | None:
    if replace:
        return names
    if before is None:
        return None  # anyone may answer it already
    return check_audience([*before, *names])


def forward_item(
    conn: Connection,
    item: Literal['question', 'approval'],
    key: str,
    names: tuple[str, ...],
    note: str,
    by: str | None,
    *,
    replace: bool,
    handoff_id: str | None = None,
) -> Handoff | None:
    """Hand the pending `item` `key` on to `names` (checked), in the transaction of `conn`: its audience, its
    addressee rows, the hand-off's row, and a change of the log. The store errors when it is not pending.

    `handoff_id` names the hand-off's row (a new random one when `None`): one already there (an escalation step run
    again) changes nothing, and `None` is returned.
    """
    if not has_table(conn, HANDOFFS_TABLE_NAME):  # a database that no start-up brought up to date
        for statement in handoffs_statements():
            execute(conn, statement)
    if handoff_id is not None:
        query = f'SELECT 1 FROM {HANDOFFS_TABLE_NAME} WHERE id = :id'
        if execute(conn, query, {'id': handoff_id}).fetchone() is not None:
            return None
    lock = ' FOR UPDATE' if dialect_of(conn) == 'postgresql' else ''
    if item == 'question':
        row = execute(
            conn, f'SELECT status, audience, due_at, created_at FROM {TABLE_NAME} WHERE id = :id{lock}', {'id': key}
        ).fetchone()
    else:
        row = execute(
            conn, f'SELECT status, addressing FROM {EVENT_APPROVALS_TABLE_NAME} WHERE id = :id{lock}', {'id': key}
        ).fetchone()
    if row is None:
        raise UnknownRequestError(key)
    status = str(row[0])
    addressing: dict[str, Any] = {}
    if item == 'question':
        before = None if row[1] is None else audience_from_json(json_value(str(row[1])))
    else:
        kept = json_value(str(row[1])) if row[1] is not None else None
        if isinstance(kept, dict):
            addressing = cast('dict[str, Any]', kept)
        before = audience_from_json(addressing.get('audience'))
    if status in ('answered', 'decided'):
        raise AlreadyAnsweredError(key).for_audience(before)
    if status != 'pending':
        raise WithdrawnError(key).for_audience(before)
    after = _after(before, names, replace=replace)
    now = time.time()
    if item == 'question':
        execute(
            conn,
            f'UPDATE {TABLE_NAME} SET audience = :audience WHERE id = :id',
            {
                'audience': _audience_text(after),
                'id': key,
            },
        )
        execute(conn, f'DELETE FROM {ADDRESSEES_TABLE_NAME} WHERE request_id = :id', {'id': key})
        if after is not None:
            insert_addressees(conn, [(key, after, float(row[2]), float(row[3]))])
    else:
        addressing = {name: value for name, value in addressing.items() if name != 'audience'}
        if after is not None:
            addressing = {'audience': list(after), **addressing}  # the audience first, as `addressing_json` writes it
        execute(
            conn,
            f'UPDATE {EVENT_APPROVALS_TABLE_NAME} SET addressing = :addressing WHERE id = :id',
            {
                'addressing': json.dumps(addressing, ensure_ascii=False) if addressing else None,
                'id': key,
            },
        )
    handoff = Handoff(now, by, before, after if after is not None else names, note)
    execute(
        conn,
        f'INSERT INTO {HANDOFFS_TABLE_NAME} (id, item, item_key, at, by_name, from_audience, to_audience, note) '
        'VALUES (:id, :item, :key, :at, :by, :before, :after, :note)',
        {
            'id': handoff_id or secrets.token_hex(16),
            'item': item,
            'key': key,
            'at': now,
            'by': by,
            'before': _audience_text(before),
            'after': _audience_text(handoff.to_audience),
            'note': note,
        },
    )
    if has_table(conn, CHANGES_TABLE_NAME):
        # Status stays pending, so no trigger fires: logged here, it reaches every open inbox as the item requested
        # again, addressed anew.
        execute(
            conn,
            f'INSERT INTO {CHANGES_TABLE_NAME} (item, item_key, status, changed_at) '
            "VALUES (:item, :key, 'pending', :at)",
            {'item': item, 'key': key, 'at': now},
        )
    return handoff


def escalation_handoff_id(key: str, index: int) -> str:
    """The id of the hand-off row of step `index` of the escalation of item `key`: the same each time it is applied."""
    return f'e{index}-{key}'[:40]


def select_handoffs(conn: Connection, keys: Sequence[str]) -> dict[str, tuple[Handoff, ...]]:
    """The hand-offs of these items (questions' and approvals' keys alike), each item's the oldest first; none for
    an item without any, and for all of them on a database without the table.
    """
    if not keys:
        return {}
    if not has_table(conn, HANDOFFS_TABLE_NAME):
        return {}
    found: dict[str, list[Handoff]] = {}
    for start in range(0, len(keys), 500):
        listed, parameters = in_list('key', list(keys[start : start + 500]))
        rows = execute(
            conn,
            f'SELECT item_key, at, by_name, from_audience, to_audience, note FROM {HANDOFFS_TABLE_NAME} '
            f'WHERE item_key IN {listed} ORDER BY at, id',
            parameters,
        ).fetchall()
        for key, at, by, before, after, note in rows:
            to = audience_from_json(json_value(str(after))) or ()
            from_ = None if before is None else audience_from_json(json_value(str(before)))
            found.setdefault(str(key), []).append(Handoff(float(at), by, from_, to, str(note)))
    return {key: tuple(each) for key, each in found.items()}
