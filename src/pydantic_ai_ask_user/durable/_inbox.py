"""AskUser questions of a `RequestInput` wait, put in the question table so the web inbox and `ask-user` answer them.

With `AskUser(answerer=None)` and `RequestInput`, a DBOS run defers its questions and waits for one
resolution of a `DBOSEventWaiter` token. `ask_through_store` is a `RequestInput` `ask` that publishes
those questions as ordinary rows of `ask_user_requests` (so `DBOSQuestionStore`, the web inbox and
`ask-user answer` show, check and answer them) and ties each to the token. `DBOSQuestionStore.respond`
claims one question at a time, with the token's rows locked; the answer that completes the set sends
the resolution (`DeferredToolResults` with every answer, as `ask_user_result` makes it) in the same
transaction. When the wait times out first, the waiter withdraws the questions still open, under the
same lock, and the run goes on with the answers given in time and `TIMED_OUT` for the rest: an answer
is either used or refused, never accepted and dropped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
import sqlalchemy as sa
from pydantic_ai import DeferredToolRequests, RunContext
from pydantic_ai.exceptions import UserError
from sqlalchemy.dialects import postgresql, sqlite

from .._answers import TIMED_OUT, TOOL_NAME, AskUserRequest, ask_user_result
from ._db import (
    DEFAULT_DATABASE_URL,
    create_engine,
    decode_row,
    ensure_table,
    event_requests_table,
    event_waits_table,
    insert_pending,
    requests_table,
)

__all__ = (
    'ask_through_store',
    'lock_event_token',
    'completed_results',
    'expire_token',
    'open_wait',
    'claim_wait',
    'settle_wait',
    'event_topic',
    'TOKEN_PREFIX',
    'token_workflow',
)

TOKEN_PREFIX = 'dbos1.'
"""How every token of a `DBOSEventWaiter` starts: the format, then a random part, then the workflow id."""

AskFunction = Callable[[RunContext[Any], DeferredToolRequests, str], Awaitable[None]]
"""The shape of a `RequestInput` `ask` that hands the token on and returns `None`."""


def token_workflow(token: str) -> str | None:
    """The workflow id a `DBOSEventWaiter` token names, or `None` if it is not such a token."""
    if not token.startswith(TOKEN_PREFIX) or '.' not in token[len(TOKEN_PREFIX) :]:
        return None
    return token[len(TOKEN_PREFIX) :].split('.', 1)[1] or None


def event_topic(token: str) -> str:
    """The DBOS message topic the wait of `token` receives its resolution on."""
    return f'external_event:{token[len(TOKEN_PREFIX) :].split(".", 1)[0]}'


def ask_through_store(database_url: str = DEFAULT_DATABASE_URL) -> AskFunction:
    """A `RequestInput` `ask` that puts the run's pending AskUser questions where the store answers them.

    `RequestInput(ask=ask_through_store(url))`, with `DBOSExternalEvents(database_url=url)` and
    `AskUser(answerer=None)`, on a DBOS-durable agent. Only questions can be answered this way: a wait
    that also holds tool approvals or other deferred calls is refused with a `UserError` (resolve such
    a wait with `resolve_dbos_event` or `ask-user resolve` instead). Publishing is idempotent (keyed
    on the tool call ids), as an `ask` that DBOS may retry must be.
    """

    async def ask(ctx: RunContext[Any], requests: DeferredToolRequests, token: str) -> None:
        workflow_id = token_workflow(token)
        if workflow_id is None:
            raise UserError('ask_through_store needs DBOSExternalEvents: the resume token names no DBOS workflow.')
        others = [call.tool_name for call in requests.approvals] + [
            call.tool_name for call in requests.calls if call.tool_name != TOOL_NAME
        ]
        if others:
            raise UserError(
                f'ask_through_store answers AskUser questions only, but this wait also needs {", ".join(others)}: '
                'resolve such a wait with resolve_dbos_event or `ask-user resolve`, from your own ask function.'
            )
        questions = [AskUserRequest.from_tool_call(call) for call in requests.calls]
        await anyio.to_thread.run_sync(lambda: _publish(database_url, questions, workflow_id, token))

    return ask


def _publish(database_url: str, questions: list[AskUserRequest], workflow_id: str, token: str) -> None:
    engine = create_engine(database_url)
    try:
        ensure_table(engine)
        with engine.begin() as conn:
            dialect = postgresql if conn.dialect.name == 'postgresql' else sqlite
            for request in questions:
                insert_pending(conn, request, workflow_id)
                conn.execute(
                    dialect.insert(event_requests_table)
                    .values(request_id=request.id, token=token)
                    .on_conflict_do_nothing(index_elements=['request_id'])
                )
    finally:
        engine.dispose()


def lock_event_token(conn: sa.Connection, request_id: str) -> str | None:
    """The token `request_id` was published under, with every row of that token locked; `None` for a plain question."""
    token = conn.execute(
        sa.select(event_requests_table.c.token).where(event_requests_table.c.request_id == request_id)
    ).scalar_one_or_none()
    if token is not None:
        _lock(conn, token)
    return token


def _lock(conn: sa.Connection, token: str) -> None:
    # On PostgreSQL, answers to sibling questions wait here for one another; SQLite's writers are serial anyway.
    conn.execute(
        sa.select(event_requests_table.c.request_id)
        .where(event_requests_table.c.token == token)
        .order_by(event_requests_table.c.request_id)
        .with_for_update()
    ).all()


def _siblings(conn: sa.Connection, token: str) -> list[sa.Row[Any]]:
    ids = sa.select(event_requests_table.c.request_id).where(event_requests_table.c.token == token)
    return list(conn.execute(sa.select(requests_table).where(requests_table.c.id.in_(ids))).all())


def completed_results(conn: sa.Connection, token: str) -> str | None:
    """The resolution message for `token` once every one of its questions is answered, else `None`."""
    rows = [decode_row(row) for row in _siblings(conn, token)]
    if not rows or any(row.status != 'answered' or row.response is None for row in rows):
        return None
    calls = {row.request.id: ask_user_result(row.request, row.response) for row in rows if row.response is not None}
    return json.dumps({'payload': {'calls': calls}}, ensure_ascii=False)


def open_wait(database_url: str, token: str, workflow_id: str) -> None:
    """Record the wait of `token` as open; idempotent, as the step calling it may run again."""
    engine = create_engine(database_url)
    try:
        ensure_table(engine)
        with engine.begin() as conn:
            dialect = postgresql if conn.dialect.name == 'postgresql' else sqlite
            values = {'token': token, 'workflow_id': workflow_id, 'status': 'pending', 'updated_at': time.time()}
            conn.execute(
                dialect.insert(event_waits_table).values(values).on_conflict_do_nothing(index_elements=['token'])
            )
    finally:
        engine.dispose()


def settle_wait(database_url: str, token: str) -> None:
    """Mark the wait of `token` resolved by `ask` itself, so no later resolution is reported as taken."""
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            claim_wait(conn, token)
    finally:
        engine.dispose()


def claim_wait(conn: sa.Connection, token: str) -> bool:
    """Move the wait of `token` from open to resolved; False if it is unknown, resolved already, or expired."""
    claimed = conn.execute(
        sa.update(event_waits_table)
        .where(event_waits_table.c.token == token, event_waits_table.c.status == 'pending')
        .values(status='resolved', updated_at=time.time())
    )
    return claimed.rowcount == 1


def expire_token(database_url: str, token: str) -> dict[str, Any] | None:
    """At the wait's deadline: expire it, withdraw its open questions, and say what the run goes on with.

    Returns `{'resolved': True}` when a resolver claimed the wait first (its message is there to read),
    the resolution made of the questions published for it (every answer given in time, `TIMED_OUT`
    for every question still open, which is withdrawn: an answer from now on is refused with
    `WithdrawnError`), or `None` when it had no questions, so the wait times out as `RequestInput`
    decides.
    """
    engine = create_engine(database_url)
    try:
        ensure_table(engine)
        with engine.begin() as conn:
            _lock(conn, token)
            expired = conn.execute(
                sa.update(event_waits_table)
                .where(event_waits_table.c.token == token, event_waits_table.c.status == 'pending')
                .values(status='expired', updated_at=time.time())
            )
            if expired.rowcount != 1:
                return {'resolved': True}
            ids = sa.select(event_requests_table.c.request_id).where(event_requests_table.c.token == token)
            conn.execute(
                sa.update(requests_table)
                .where(requests_table.c.id.in_(ids), requests_table.c.status == 'pending')
                .values(status='withdrawn', updated_at=time.time())
            )
            rows = [decode_row(row) for row in _siblings(conn, token)]
    finally:
        engine.dispose()
    if not rows:
        return None
    calls: dict[str, Any] = {
        row.request.id: ask_user_result(row.request, row.response) if row.response is not None else TIMED_OUT
        for row in rows
    }
    return {'calls': calls}
