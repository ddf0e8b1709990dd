"""`DBOSAnswerer`: publishes each question durably and waits for its answer with `DBOS.recv`."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import sqlalchemy as sa
from dbos import DBOS, SetWorkflowID

from .._answers import AskUserRequest, AskUserResponse
from .._json import response_from_json
from ._db import (
    DEFAULT_DATABASE_URL,
    create_engine,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    ensure_table,
    insert_pending,
    message_topic,
    requests_table,
)

__all__ = ('DBOSAnswerer', 'DEFAULT_RECHECK_SECONDS')

DEFAULT_RECHECK_SECONDS = 300.0
"""How long one `DBOS.recv` waits before the table is read again, as a safety net; answers wake it at once."""

_T = TypeVar('_T')


@dataclass
class DBOSAnswerer:
    """An answerer whose questions wait in the database and survive restarts, for agents run under DBOS.

    Give the agent `DBOSDurability()` and `AskUser(answerer=DBOSAnswerer(url))`, and run it inside a
    `@DBOS.workflow`. Each question is published as a row of the `ask_user_requests` table in the DBOS
    system database, and the workflow waits for its answer with `DBOS.recv`. If the worker dies, the
    workflow is recovered at the next `DBOS.launch()` and waits for the same question again, without
    repeating the model call that asked it. Any process that shares the database answers with
    `DBOSQuestionStore` (the web inbox, `ask-user answer`, a worker on another machine).

    Called outside a workflow, it starts a small DBOS workflow of its own for the wait, so the
    question still survives in the database, but the caller's own run does not.
    """

    database_url: str = DEFAULT_DATABASE_URL
    """The DBOS system database: `sqlite:///FILE` (the embedded default) or `postgresql://...`.

    Must be the `system_database_url` DBOS was configured with, since the answer travels as a DBOS message.
    """

    _: KW_ONLY

    recheck_seconds: float = DEFAULT_RECHECK_SECONDS
    """How long one `DBOS.recv` waits before the table is read again; answers wake the wait at once anyway."""

    _engine: sa.Engine | None = field(default=None, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (self.recheck_seconds > 0 and math.isfinite(self.recheck_seconds)):
            raise ValueError(f'DBOSAnswerer(recheck_seconds=...) must be a positive number, not {self.recheck_seconds}')

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Publish `request`, wait durably for its answer, and return it."""
        if DBOS.workflow_id is not None and DBOS.step_id is None:
            return await self._wait_in_workflow(request, DBOS.workflow_id)
        return await self._wait_in_own_workflow(request)

    def engine(self) -> sa.Engine:
        """The engine on `database_url`, created (with the table) on first use."""
        with self._lock:
            if self._engine is None:
                engine = create_engine(self.database_url)
                ensure_table(engine)
                self._engine = engine
            return self._engine

    def close(self) -> None:
        """Release the database connections; the answerer reconnects if used again."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    async def _in_thread(self, function: Callable[[], _T]) -> _T:
        return await anyio.to_thread.run_sync(function)

    async def _step(self, name: str, function: Callable[[], _T]) -> _T:
        async def run() -> _T:
            return await self._in_thread(function)

        return await DBOS.run_step_async({'name': f'ask_user.{name}'}, run)

    async def _wait_in_workflow(self, request: AskUserRequest, workflow_id: str) -> AskUserResponse:
        def publish() -> tuple[str, str]:
            with self.engine().begin() as conn:
                insert_pending(conn, request, workflow_id)
                status = conn.execute(
                    sa.select(requests_table.c.status).where(requests_table.c.id == request.id)
                ).scalar_one()
            return request.id, status

        # A step, so a recovered workflow waits under the id the person saw, not a fresh one.
        request_id, status = await self._step('publish', publish)
        if status == 'withdrawn':  # its caller gave up before this workflow started
            return AskUserResponse(cancelled=True)
        topic = message_topic(request_id)
        try:
            while True:
                message = await DBOS.recv_async(topic, timeout_seconds=self.recheck_seconds)
                if message is not None:
                    return _response_from_message(message)
                stored = await self._step('check', lambda: self._read_answer(request_id))
                if stored is not None:
                    return decode_response(stored)
        except BaseException:
            # Timed out or cancelled while waiting: no answer may be taken from now on.
            # The original error matters more than a failed withdrawal, so that one is not raised.
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._step('withdraw', lambda: self._withdraw(request_id))
            raise

    async def _wait_in_own_workflow(self, request: AskUserRequest) -> AskUserResponse:
        workflow_id = f'ask-user-{request.id}'
        try:
            # The workflow publishes the question itself, so nobody can answer before it exists.
            with SetWorkflowID(workflow_id):
                handle = await DBOS.start_workflow_async(
                    _wait_workflow, self.database_url, request.id, encode_request(request), self.recheck_seconds
                )
            result: str = await handle.get_result()
            return decode_response(result)
        except BaseException:
            with anyio.CancelScope(shield=True):
                if await self._in_thread(lambda: self._withdraw(request.id, workflow_id, request)):
                    # Wake the wait workflow so it ends now rather than at its next recheck. If it has
                    # not published yet, there is nothing to wake: it finds the withdrawal when it does.
                    with contextlib.suppress(Exception):
                        await DBOS.send_async(workflow_id, json.dumps({'withdrawn': True}), message_topic(request.id))
            raise

    def _read_answer(self, request_id: str) -> str | None:
        with self.engine().connect() as conn:
            row = conn.execute(
                sa.select(requests_table.c.status, requests_table.c.response).where(requests_table.c.id == request_id)
            ).first()
        if row is None or row.status == 'pending':
            return None
        if row.status == 'withdrawn':
            return encode_response(AskUserResponse(cancelled=True))
        return row.response

    def _withdraw(self, request_id: str, workflow_id: str | None = None, request: AskUserRequest | None = None) -> bool:
        """Mark the request withdrawn if it is pending; True if it was.

        Given `request`, a request not published yet is recorded as withdrawn, so its workflow ends
        as soon as it tries to publish it.
        """
        with self.engine().begin() as conn:
            result = conn.execute(
                sa.update(requests_table)
                .where(requests_table.c.id == request_id, requests_table.c.status == 'pending')
                .values(status='withdrawn', updated_at=time.time())
            )
            if result.rowcount == 1:
                return True
            if request is not None and workflow_id is not None:
                insert_pending(conn, request, workflow_id, status='withdrawn')
            return False


def _response_from_message(message: Any) -> AskUserResponse:
    # Only the store sends answers, and only after claiming the request; "withdrawn" ends an own-workflow wait.
    data = json.loads(message)
    if data.get('withdrawn'):
        return AskUserResponse(cancelled=True)
    return response_from_json(data['response'])


_answerers: dict[tuple[str, float], DBOSAnswerer] = {}
_answerers_lock = threading.Lock()


def _answerer_for(database_url: str, recheck_seconds: float) -> DBOSAnswerer:
    with _answerers_lock:
        key = (database_url, recheck_seconds)
        if key not in _answerers:
            _answerers[key] = DBOSAnswerer(database_url, recheck_seconds=recheck_seconds)
        return _answerers[key]


@DBOS.workflow(name='pydantic_ai_ask_user.durable.wait')
async def _wait_workflow(database_url: str, request_id: str, questions: str, recheck_seconds: float) -> str:
    """The wait of a `DBOSAnswerer` called outside any workflow; returns the response as JSON."""
    answerer = _answerer_for(database_url, recheck_seconds)
    request = decode_request(questions, request_id)
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    return encode_response(await answerer._wait_in_workflow(request, workflow_id))  # pyright: ignore[reportPrivateUsage]
