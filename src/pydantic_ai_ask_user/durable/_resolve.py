"""Ending a `DBOSEventWaiter` wait from any process: `resolve_dbos_event` and `fail_dbos_event`.

Apart from the waiter (`_events`), which runs inside DBOS workflows: resolving needs only the database
(`_end_wait`), so resolving loads neither DBOS nor the waiter.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._decision import Decision, read_decision
from .._wait_calls import WaitCalls, checked_decision
from ._end_wait import NotAWaitTokenError, WaitNotOpenError, end_wait
from ._sql import (
    DEFAULT_DATABASE_URL,
    EVENT_CALLS_TABLE_NAME,
    EVENT_TABLE_NAME,
    Database,
    StoredRequest,
    open_database,
    pending_wait_calls,
    token_requests,
)

__all__ = (
    'NotAnEventTokenError',
    'NoWaitError',
    'InvalidDecisionError',
    'resolve_dbos_event',
    'fail_dbos_event',
    'checked_for_wait',
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
        raise NotAnEventTokenError('This is not a DBOSEventWaiter token: it names no DBOS workflow.') from None
    except WaitNotOpenError:
        raise NoWaitError(
            'No wait has this token: it was resolved already, its deadline passed, or it is unknown to this database.'
        ) from None


def _checked_payload(token: str, data: Any, database_url: str) -> Any:
    """`data` checked as the decision of the wait of `token` when that wait decides calls (its waiting handler
    recorded them, or `ask_through_store` published its questions), in the JSON form it is sent in; else as it is.
    """
    database = open_database(database_url)
    try:
        recorded = _recorded_calls(database, token)
        asks = bool(_stored_questions(database, token))
    finally:
        database.dispose()
    if recorded is None and not asks:
        return data  # a wait of `wait_for_external_event` of your own: its payload is yours
    try:
        decision = read_decision(json.dumps(data))
    except ValueError as error:
        raise InvalidDecisionError(f'The payload is not a DeferredToolResults: {error}') from None
    try:
        return to_jsonable_python(checked_for_wait(decision, database_url, token))
    except ValueError as error:
        raise InvalidDecisionError(f'The decision does not fit the wait: {error}') from None


def checked_for_wait(results: Decision, database_url: str, token: str) -> Decision:
    """`results` checked against the open wait of `token` (`checked_decision`): the calls `DBOSEventWaiter` recorded
    with it, and its AskUser questions, of the question table (`ask_through_store`) or recorded with the wait. Only
    this wait's questions are looked at (by their tool call ids, which tell apart the calls of one run): another
    run's question with the same id is none of this decision's. `ValueError` naming what does not fit.
    """
    database = open_database(database_url)
    try:
        recorded = _recorded_calls(database, token)
        stored = _stored_questions(database, token) if results.calls else []
    finally:
        database.dispose()
    questions = {record.request.id: record.request for record in stored if record.request.id in results.calls}
    return checked_decision(results, recorded, questions)


def _recorded_calls(database: Database, token: str) -> WaitCalls | None:
    """The calls the open wait of `token` decides, as `DBOSEventWaiter` recorded them; `None` when it recorded none
    or is not open (then ending the wait says why).
    """
    if not database.has_table(EVENT_CALLS_TABLE_NAME):
        return None
    with database.connect() as conn:
        text = pending_wait_calls(conn, token)
    return None if text is None else WaitCalls.from_json(text)


def _stored_questions(database: Database, token: str) -> list[StoredRequest]:
    """The AskUser questions `ask_through_store` published for the wait of `token`."""
    if not database.has_table(EVENT_TABLE_NAME):
        return []
    database.ensure_columns()
    with database.connect() as conn:
        return list(token_requests(conn, token))
