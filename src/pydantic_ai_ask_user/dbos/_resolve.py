"""Ending a `DBOSEventWaiter` wait from any process: `resolve_dbos_event` and `fail_dbos_event`.

Apart from the waiter (`_events`), which runs inside DBOS workflows: resolving needs only the database
(`_end_wait`), so resolving loads neither DBOS nor the waiter.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._decision import read_decision
from ._db import DEFAULT_DATABASE_URL
from ._end_wait import NotAWaitTokenError, WaitNotOpenError, end_wait
from ._inbox import token_workflow
from ._wait_check import checked_against, what_the_wait_holds

__all__ = (
    'NotAnEventTokenError',
    'NoWaitError',
    'InvalidDecisionError',
    'resolve_dbos_event',
    'fail_dbos_event',
)


class NotAnEventTokenError(UserError, ValueError):
    """The token is not one a `DBOSEventWaiter` handed out: it names no DBOS workflow."""


class InvalidDecisionError(UserError, ValueError):
    """The decision does not fit the wait: it is not a `DeferredToolResults`, it does not decide exactly the calls the
    wait recorded, or an answer in it is no answer to its question. Nothing was sent; the run still waits.
    """


class NoWaitError(UserError):
    """No open wait has this token: it was resolved already, its deadline passed, or it is unknown to the database."""


def resolve_dbos_event(token: str, payload: object, *, database_url: str = DEFAULT_DATABASE_URL) -> None:
    """End the wait of `token` with `payload` (converted to its JSON form), from any process.

    For a waiting handler's wait, `payload` is the `DeferredToolResults` deciding the pending calls, checked first as
    `ask-user resolve` checks it (`checked_for_wait`): `InvalidDecisionError` when it does not decide exactly the
    calls the wait recorded or an answer in it does not fit its question, and nothing is sent. The first
    resolution of a token wins: it is claimed, and its message sent, in one transaction. Raises
    `NotAnEventTokenError` when the token is not one of `DBOSEventWaiter`'s, and `NoWaitError` when
    no open wait has it (resolved already, its deadline passed, or unknown); both are `UserError`s,
    and nothing was sent.
    """
    try:
        data = to_jsonable_python(payload)
    except PydanticSerializationError as error:
        raise UserError(f'The payload for an external event must be JSON-serializable: {error}') from error
    if token_workflow(token) is None:  # before the database is opened for the check: a typo names none
        raise _not_a_token()
    _send(token, {'payload': _checked_payload(token, data, database_url)}, database_url)


def fail_dbos_event(token: str, reason: str, *, database_url: str = DEFAULT_DATABASE_URL) -> None:
    """End the wait of `token` without a payload: the wait raises `ExternalEventError(reason)`.

    The waiting handler then denies the pending approvals and fails the pending calls with `reason`.
    """
    _send(token, {'error': reason}, database_url)


def _send(token: str, message: dict[str, Any], database_url: str) -> None:
    try:
        end_wait(token, message, database_url)
    except NotAWaitTokenError:
        raise _not_a_token() from None
    except WaitNotOpenError:
        raise NoWaitError(
            'No wait has this token: it was resolved already, its deadline passed, or it is unknown to this database.'
        ) from None


def _checked_payload(token: str, data: Any, database_url: str) -> Any:
    """`data` checked as the decision of the wait of `token` when that wait decides calls (its waiting handler
    recorded them, or `ask_through_store` published its questions), in the JSON form it is sent in; else as it is.
    """
    recorded, stored = what_the_wait_holds(database_url, token)
    if recorded is None and not stored:
        return data  # a wait of `wait_for_external_event` of your own: its payload is yours
    try:
        decision = read_decision(json.dumps(data))
    except ValueError as error:
        raise InvalidDecisionError(f'The payload is not a DeferredToolResults: {error}') from None
    try:
        return to_jsonable_python(checked_against(decision, recorded, stored))
    except ValueError as error:
        raise InvalidDecisionError(f'The decision does not fit the wait: {error}') from None


def _not_a_token() -> NotAnEventTokenError:
    return NotAnEventTokenError('This is not a DBOSEventWaiter token: it names no DBOS workflow.')
