"""Durable questions on DBOS: the wait survives restarts, and the answer may come from any process.

Needs the `dbos` extra: `pip install 'pydantic-ai-ask-user[dbos]'`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _module_names

if TYPE_CHECKING:
    from ._answerer import DEFAULT_RECHECK_SECONDS, DBOSAnswerer
    from ._config import DEFAULT_LOG_LEVEL, DEFAULT_POLLING_SECONDS, dbos_config
    from ._db import DEFAULT_DATABASE_URL, check_sqlite_file, shown_database_url
    from ._encoding import StoredRequest, UnreadableRowError
    from ._end_wait import NotAWaitTokenError, WaitNotOpenError, end_wait, wait_tokens_starting_with
    from ._events import DEFAULT_CHUNK_SECONDS, DBOSEventWaiter, DBOSExternalEvents
    from ._inbox import TOKEN_PREFIX, ask_through_store
    from ._pending_rows import NeedsTheStore, PlainPendingReader
    from ._questions import on_unreadable_row
    from ._resolve import InvalidDecisionError, NotAnEventTokenError, NoWaitError, fail_dbos_event, resolve_dbos_event
    from ._schema import TABLE_NAME, NotAQuestionDatabaseError
    from ._store import DEFAULT_EVENTS_POLL_SECONDS, DBOSQuestionStore
    from ._wait_check import checked_for_wait

__all__ = (
    'DBOSAnswerer',
    'DBOSQuestionStore',
    'StoredRequest',
    'NotAQuestionDatabaseError',
    'dbos_config',
    'DBOSEventWaiter',
    'DBOSExternalEvents',
    'ask_through_store',
    'NotAnEventTokenError',
    'NoWaitError',
    'InvalidDecisionError',
    'resolve_dbos_event',
    'fail_dbos_event',
    'TOKEN_PREFIX',
    'DEFAULT_CHUNK_SECONDS',
    'DEFAULT_DATABASE_URL',
    'DEFAULT_POLLING_SECONDS',
    'DEFAULT_LOG_LEVEL',
    'DEFAULT_RECHECK_SECONDS',
    'DEFAULT_EVENTS_POLL_SECONDS',
    'TABLE_NAME',
    # Light: what `ask-user` reads and ends waits with, without DBOS, Pydantic AI or (on a SQLite file) SQLAlchemy.
    'wait_tokens_starting_with',
    'end_wait',
    'NotAWaitTokenError',
    'WaitNotOpenError',
    'checked_for_wait',
    'on_unreadable_row',
    'UnreadableRowError',
    'shown_database_url',
    'check_sqlite_file',
    'PlainPendingReader',
    'NeedsTheStore',
)

_DEFINED_IN = {
    'DBOSAnswerer': '_answerer',
    'DEFAULT_RECHECK_SECONDS': '_answerer',
    'dbos_config': '_config',
    'DEFAULT_LOG_LEVEL': '_config',
    'DEFAULT_POLLING_SECONDS': '_config',
    'DEFAULT_DATABASE_URL': '_db',
    'shown_database_url': '_db',
    'check_sqlite_file': '_db',
    'PlainPendingReader': '_pending_rows',
    'NeedsTheStore': '_pending_rows',
    'TABLE_NAME': '_schema',
    'NotAQuestionDatabaseError': '_schema',
    'StoredRequest': '_encoding',
    'UnreadableRowError': '_encoding',
    'on_unreadable_row': '_questions',
    'DBOSQuestionStore': '_store',
    'DEFAULT_EVENTS_POLL_SECONDS': '_store',
    'DEFAULT_CHUNK_SECONDS': '_events',
    'DBOSEventWaiter': '_events',
    'DBOSExternalEvents': '_events',
    'NotAnEventTokenError': '_resolve',
    'NoWaitError': '_resolve',
    'InvalidDecisionError': '_resolve',
    'fail_dbos_event': '_resolve',
    'resolve_dbos_event': '_resolve',
    'TOKEN_PREFIX': '_inbox',
    'ask_through_store': '_inbox',
    'end_wait': '_end_wait',
    'NotAWaitTokenError': '_end_wait',
    'WaitNotOpenError': '_end_wait',
    'wait_tokens_starting_with': '_end_wait',
    'checked_for_wait': '_wait_check',
}
"""Which private module defines each public name, loaded on first use: `ask-user pending`, `answer` and `resolve`
use the question table and SQL only, and must not pay for DBOS (`_answerer`, `_config`, `_events`) or Pydantic AI
(`_events`); nor, on a plain SQLite file, for SQLAlchemy (`_engine`): the light names below `TABLE_NAME` in
`__all__` are what the command line takes from here. `from pydantic_ai_ask_user.dbos import DBOSAnswerer` without
the `dbos` extra is the `ImportError` naming the missing library, as before."""


__getattr__ = _module_names.lazy_names(__name__, globals(), _DEFINED_IN)
"""Load each public name on first use (PEP 562)."""


def __dir__() -> list[str]:
    """Every public name of the module, loaded or not."""
    return sorted({*globals(), *__all__})
