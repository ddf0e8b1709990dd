"""Ending a `DBOSEventWaiter` wait from any process with nothing but the database: the claim of the wait and the
DBOS message that ends it, in one transaction (`send_message`: DBOS's own SQL interface); and finding the open waits
whose tokens begin with what a person typed.

Below `resolve_dbos_event` and `fail_dbos_event` (`_resolve`), which raise Pydantic AI's `UserError`s;
`ask-user resolve` calls this directly, so it loads neither Pydantic AI, DBOS nor SQLAlchemy (on a SQLite file, or a
plain PostgreSQL URL: `_db.open_database`, unpooled, as each call opens the database once and lets it go).
"""

from __future__ import annotations

import json
from typing import Any

from ._db import open_database
from ._inbox import event_topic, token_workflow
from ._schema import EVENT_WAITS_TABLE_NAME
from ._waits import claim_wait, open_wait_tokens
from ._workflows import send_message

__all__ = ('NotAWaitTokenError', 'WaitNotOpenError', 'end_wait', 'wait_tokens_starting_with')


class NotAWaitTokenError(ValueError):
    """The token is not one a `DBOSEventWaiter` handed out: it names no DBOS workflow.

    Raised by `end_wait`; `resolve_dbos_event` raises `NotAnEventTokenError` instead, a Pydantic AI `UserError`, which
    this is not, so that `end_wait` loads no Pydantic AI.
    """


class WaitNotOpenError(Exception):
    """No open wait has this token: it was resolved already, its deadline passed, or it is unknown to the database.

    Raised by `end_wait`; `resolve_dbos_event` raises `NoWaitError` instead, a Pydantic AI `UserError`.
    """


def end_wait(token: str, message: dict[str, Any], database_url: str) -> None:
    """Claim the open wait of `token` and send it `message` (`{"payload": ...}` or `{"error": ...}`), together.

    `NotAWaitTokenError` when the token names no workflow, `WaitNotOpenError` when no open wait has it; nothing is
    sent then. A database without the waits table is not given one (a typo in the URL): no wait is open there.
    """
    workflow_id = token_workflow(token)
    if workflow_id is None:
        raise NotAWaitTokenError(token)
    database = open_database(database_url, pooled=False)
    try:
        if not database.has_table(EVENT_WAITS_TABLE_NAME):
            raise WaitNotOpenError(token)
        with database.begin() as conn:
            # The claim and the message commit together: a resolution is used, or refused here.
            if not claim_wait(conn, token):
                raise WaitNotOpenError(token)
            send_message(conn, workflow_id, json.dumps(message, ensure_ascii=False), event_topic(token), token)
    finally:
        database.dispose()


def wait_tokens_starting_with(database_url: str, prefix: str) -> list[str]:
    """The tokens of the waits open in the database at `database_url` that begin with `prefix` (every open one for
    `''`), oldest first; `[]` when the database has no waits table (none was ever opened there, or a typo in the URL).

    Nothing is created: a database without the table is not given one. On a plain SQLite file this loads neither
    SQLAlchemy, DBOS nor Pydantic AI.
    """
    database = open_database(database_url, pooled=False)
    try:
        if not database.has_table(EVENT_WAITS_TABLE_NAME):
            return []
        with database.connect() as conn:
            tokens = open_wait_tokens(conn)
    finally:
        database.dispose()
    return [token for token in tokens if token.startswith(prefix)]
