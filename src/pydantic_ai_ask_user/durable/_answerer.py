"""`DBOSAnswerer`: publishes each question durably and waits for its answer with `DBOS.recv`."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypeVar

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

    It is a `DurableAnswerer`: `AskUser(timeout=...)` hands it the timeout, and the deadline, counted
    from the first publication, survives restarts too.
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
        response = await self.ask_durably(request, timeout=None)
        assert response is not None  # only a timeout gives None
        return response

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        """Publish `request` and wait durably for its answer, at most `timeout` seconds from when it was first asked.

        The deadline is counted from the moment the question was first published, which the
        database records, so a recovered wait has only the time left. When it passes, the question
        is withdrawn in the same atomic update that an answer would claim it with: an answer
        recorded first is returned, however late it is read; an answer after that is refused with
        `WithdrawnError`. Returns `None` when the time ran out.
        """
        if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f'timeout must be a positive number of seconds or None, not {timeout!r}')
        if DBOS.workflow_id is not None and DBOS.step_id is None:
            return await self._wait_in_workflow(request, DBOS.workflow_id, timeout)
        return await self._wait_in_own_workflow(request, timeout)

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

    async def _wait_in_workflow(
        self, request: AskUserRequest, workflow_id: str, timeout: float | None
    ) -> AskUserResponse | None:
        # Steps, so a recovered workflow waits under the id the person saw (the tool call id, which its
        # recorded model response carries), with the deadline of the first publication, and replays
        # every decision below from recorded values, never from the clock of the replay.
        published = await self._step('publish', lambda: self._publish(request, workflow_id))
        if published.status == 'withdrawn':  # its caller gave up before this workflow started
            return AskUserResponse(cancelled=True)
        deadline = None if timeout is None else published.created_at + timeout
        now = published.now
        topic = message_topic(request.id)
        # No withdrawal on the way out: a plain cancellation of the task leaves the workflow PENDING, and
        # DBOS recovers it later, replaying these same steps, so a step recorded here would not be where
        # the replay looks for it. The question stays answerable for the recovered run; a workflow that
        # really ended (cancelled, failed, deleted) has its question withdrawn by the store.
        while True:
            wait = self.recheck_seconds if deadline is None else min(self.recheck_seconds, deadline - now)
            if wait > 0:  # decided from recorded values, so a replay calls the same steps
                if deadline is not None:
                    # But counted on the live clock: DBOS keeps the end of a recv it recorded, and one that a
                    # crash cut off before it was recorded must wait only for the time left, not start over.
                    wait = max(0.0, min(self.recheck_seconds, deadline - time.time()))
                message = await DBOS.recv_async(topic, timeout_seconds=wait)
                if message is not None:
                    return _response_from_message(message)
            checked = await self._step('check', lambda: self._check(request.id, deadline))
            if checked.outcome == 'answered':
                assert checked.response is not None
                return decode_response(checked.response)
            if checked.outcome == 'timed_out':
                return None
            now = checked.now

    def _publish(self, request: AskUserRequest, workflow_id: str) -> _Published:
        with self.engine().begin() as conn:
            insert_pending(conn, request, workflow_id)
            row = conn.execute(
                sa.select(requests_table.c.workflow_id, requests_table.c.status, requests_table.c.created_at).where(
                    requests_table.c.id == request.id
                )
            ).one()
        if row.workflow_id != workflow_id:
            raise ValueError(
                f'request id {request.id!r} is already waiting in workflow {row.workflow_id!r}: a tool call id '
                'must not be reused by another run (a model that numbers its tool calls from 1 in every run '
                'cannot share a durable question table)'
            )
        return _Published(status=row.status, created_at=float(row.created_at), now=time.time())

    def _check(self, request_id: str, deadline: float | None) -> _Checked:
        """Read the answer; past the deadline, withdraw the request unless an answer claimed it first."""
        with self.engine().begin() as conn:
            now = time.time()
            if deadline is not None and now >= deadline:
                conn.execute(
                    sa.update(requests_table)
                    .where(requests_table.c.id == request_id, requests_table.c.status == 'pending')
                    .values(status='withdrawn', updated_at=now)
                )
            row = conn.execute(
                sa.select(requests_table.c.status, requests_table.c.response).where(requests_table.c.id == request_id)
            ).one()
        if row.status == 'answered':
            return _Checked('answered', row.response, now)
        if row.status == 'withdrawn':
            if deadline is not None and now >= deadline:
                return _Checked('timed_out', None, now)
            return _Checked('answered', encode_response(AskUserResponse(cancelled=True)), now)
        return _Checked('pending', None, now)

    async def _wait_in_own_workflow(self, request: AskUserRequest, timeout: float | None) -> AskUserResponse | None:
        workflow_id = f'ask-user-{request.id}'
        try:
            # The workflow publishes the question itself, so nobody can answer before it exists.
            with SetWorkflowID(workflow_id):
                handle = await DBOS.start_workflow_async(
                    _wait_workflow,
                    self.database_url,
                    request.id,
                    encode_request(request),
                    self.recheck_seconds,
                    timeout,
                )
            result: str | None = await handle.get_result()
            return None if result is None else decode_response(result)
        except BaseException:
            with anyio.CancelScope(shield=True):
                if await self._in_thread(lambda: self._withdraw(request.id, workflow_id, request)):
                    # Wake the wait workflow so it ends now rather than at its next recheck. If it has
                    # not published yet, there is nothing to wake: it finds the withdrawal when it does.
                    with contextlib.suppress(Exception):
                        await DBOS.send_async(workflow_id, json.dumps({'withdrawn': True}), message_topic(request.id))
            raise

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


@dataclass(frozen=True)
class _Published:
    """What the publish step records: where the question stands, when it was first asked, and the time now."""

    status: str
    """The row's status after the publication: `pending`, or whatever an earlier attempt left."""

    created_at: float
    """When the question was first published; the deadline counts from it."""

    now: float
    """The time of this step, so the first wait is decided from a recorded value."""


@dataclass(frozen=True)
class _Checked:
    """What a check step records: the outcome, the answer's JSON when there is one, and the time of the check."""

    outcome: Literal['answered', 'timed_out', 'pending']
    """Answered (or declined), withdrawn at the deadline, or still waiting."""

    response: str | None
    """The response as JSON, when answered."""

    now: float
    """The time of the check, so the next wait is decided from a recorded value."""


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
async def _wait_workflow(
    database_url: str, request_id: str, questions: str, recheck_seconds: float, timeout: float | None = None
) -> str | None:
    """The wait of a `DBOSAnswerer` called outside any workflow; the response as JSON, or `None` on timeout."""
    answerer = _answerer_for(database_url, recheck_seconds)
    request = decode_request(questions, request_id)
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    response = await answerer._wait_in_workflow(request, workflow_id, timeout)  # pyright: ignore[reportPrivateUsage]
    return None if response is None else encode_response(response)
