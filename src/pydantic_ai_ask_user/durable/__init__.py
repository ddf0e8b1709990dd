"""Durable questions on DBOS: the wait survives restarts, and the answer may come from any process.

Needs the `dbos` extra: `pip install 'pydantic-ai-ask-user[dbos]'`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _module_names
from ._answerer import DEFAULT_RECHECK_SECONDS, DBOSAnswerer
from ._config import DEFAULT_LOG_LEVEL, DEFAULT_POLLING_SECONDS, dbos_config
from ._db import DEFAULT_DATABASE_URL, TABLE_NAME, NotAQuestionDatabaseError, StoredRequest
from ._dbos_store import DEFAULT_EVENTS_POLL_SECONDS, DBOSQuestionStore
from ._inbox import TOKEN_PREFIX, ask_through_store

if TYPE_CHECKING:
    from ._events import (
        DEFAULT_CHUNK_SECONDS,
        DBOSEventWaiter,
        DBOSExternalEvents,
        NotAnEventTokenError,
        NoWaitError,
        fail_dbos_event,
        resolve_dbos_event,
    )

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
)

_EVENT_NAMES = frozenset(
    {
        'DEFAULT_CHUNK_SECONDS',
        'DBOSEventWaiter',
        'DBOSExternalEvents',
        'NotAnEventTokenError',
        'NoWaitError',
        'fail_dbos_event',
        'resolve_dbos_event',
    }
)
"""The names of `_events`, loaded on first use: it subclasses Pydantic AI's waiter, and `ask-user pending` and
`answer` open the store without paying for Pydantic AI."""


__getattr__ = _module_names.lazy_names(__name__, globals(), dict.fromkeys(_EVENT_NAMES, '_events'))
"""Load the external-event names on first use (PEP 562)."""


def __dir__() -> list[str]:
    """Every public name of the module, loaded or not."""
    return sorted({*globals(), *__all__})
