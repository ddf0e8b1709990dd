"""Durable questions on DBOS: the wait survives restarts, and the answer may come from any process.

Needs the `dbos` extra: `pip install 'pydantic-ai-ask-user[dbos]'`.
"""

from ._answerer import DEFAULT_RECHECK_SECONDS, DBOSAnswerer
from ._config import DEFAULT_LOG_LEVEL, DEFAULT_POLLING_SECONDS, dbos_config
from ._db import DEFAULT_DATABASE_URL, TABLE_NAME, NotAQuestionDatabaseError, StoredRequest
from ._dbos_store import DEFAULT_EVENTS_POLL_SECONDS, DBOSQuestionStore
from ._events import (
    DEFAULT_CHUNK_SECONDS,
    TOKEN_PREFIX,
    DBOSEventWaiter,
    DBOSExternalEvents,
    NotAnEventTokenError,
    NoWaitError,
    fail_dbos_event,
    resolve_dbos_event,
)
from ._inbox import ask_through_store

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
