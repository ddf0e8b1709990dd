"""`dbos_config`: a DBOS configuration suited to durable questions."""

from __future__ import annotations

import sqlalchemy as sa
from dbos import DBOSConfig

from ._db import DEFAULT_DATABASE_URL

__all__ = ('dbos_config', 'DEFAULT_POLLING_SECONDS', 'DEFAULT_LOG_LEVEL')

DEFAULT_POLLING_SECONDS = 0.05
"""How often a worker on SQLite polls for answers sent by another process (DBOS's own default is 1 s).

PostgreSQL needs no polling: DBOS is woken by LISTEN/NOTIFY.
"""

DEFAULT_LOG_LEVEL = 'WARNING'
"""DBOS's log level in a worker: warnings and errors only (DBOS's own default, INFO, logs every schema migration)."""

_LOG_LEVELS = ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')


def dbos_config(
    database_url: str = DEFAULT_DATABASE_URL,
    *,
    name: str,
    application_version: str,
    polling_seconds: float = DEFAULT_POLLING_SECONDS,
    log_level: str = DEFAULT_LOG_LEVEL,
) -> DBOSConfig:
    """The `DBOSConfig` for workers whose questions wait in `database_url`.

    `application_version` is required: DBOS recovers only the workflows of the version that started
    them, and by default it derives the version from the source code, so a restarted worker with any
    change would leave its waiting questions behind. Bump it deliberately when the workflow changes.
    `polling_seconds` is how quickly a SQLite worker notices an answer sent from another process.
    `log_level` is DBOS's (`'WARNING'` by default, so a worker's output is not filled with DBOS's
    start-up and migration lines; `'INFO'` brings them back).
    """
    if not polling_seconds > 0:
        raise ValueError(f'polling_seconds must be positive, not {polling_seconds!r}')
    if log_level.upper() not in _LOG_LEVELS:
        raise ValueError(f'log_level must be one of {", ".join(_LOG_LEVELS)}, not {log_level!r}')
    sa.make_url(database_url)  # a malformed URL fails here, in the caller's words
    return DBOSConfig(
        name=name,
        system_database_url=database_url,
        application_version=application_version,
        notification_listener_polling_interval_sec=polling_seconds,
        log_level=log_level.upper(),
    )
