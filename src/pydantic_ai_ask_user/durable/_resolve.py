"""Ending a `DBOSEventWaiter` wait from any process: `resolve_dbos_event` and `fail_dbos_event`.

Apart from the waiter (`_events`), which runs inside DBOS workflows: resolving needs only the database
(`_end_wait`), so resolving loads neither DBOS nor the waiter.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ._end_wait import NotAWaitTokenError, WaitNotOpenError, end_wait
from ._sql import DEFAULT_DATABASE_URL

__all__ = ('NotAnEventTokenError', 'NoWaitError', 'resolve_dbos_event', 'fail_dbos_event')


class NotAnEventTokenError(UserError, ValueError):
    """The token is not one a `DBOSEventWaiter` handed out: it names no DBOS workflow."""


class NoWaitError(UserError):
    """No open wait has this token: it was resolved already, its deadline passed, or it is unknown to the database."""


def resolve_dbos_event(token: str, payload: object, *, database_url: str = DEFAULT_DATABASE_URL) -> None:
    """End the wait of `token` with `payload` (converted to its JSON form), from any process.

    For the waiting handler, `payload` is the `DeferredToolResults` deciding the pending calls. The first
    resolution of a token wins: it is claimed, and its message sent, in one transaction. Raises
    `NotAnEventTokenError` when the token is not one of `DBOSEventWaiter`'s, and `NoWaitError` when
    no open wait has it (resolved already, its deadline passed, or unknown); both are `UserError`s,
    and nothing was sent.
    """
    try:
        data = to_jsonable_python(payload)
    except PydanticSerializationError as error:
        raise UserError(f'The payload for an external event must be JSON-serializable: {error}') from error
    _send(token, {'payload': data}, database_url)


def fail_dbos_event(token: str, reason: str, *, database_url: str = DEFAULT_DATABASE_URL) -> None:
    """End the wait of `token` without a payload: the wait raises `ExternalEventError(reason)`.

    The waiting handler then denies the pending approvals and fails the pending calls with `reason`.
    """
    _send(token, {'error': reason}, database_url)


def _send(token: str, message: dict[str, Any], database_url: str) -> None:
    try:
        end_wait(token, message, database_url)
    except NotAWaitTokenError:
        raise NotAnEventTokenError('This is not a DBOSEventWaiter token: it names no DBOS workflow.') from None
    except WaitNotOpenError:
        raise NoWaitError(
            'No wait has this token: it was resolved already, its deadline passed, or it is unknown to this database.'
        ) from None
