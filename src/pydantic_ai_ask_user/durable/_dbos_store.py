"""`DBOSQuestionStore`: every question waiting in the database, answered from any process."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import sqlalchemy as sa
from dbos import DBOSClient

from .._answers import AskUserRequest, AskUserResponse, check_response
from .._question_store import AlreadyAnsweredError, StoreEvent, UnknownRequestError, WithdrawnError
from ._db import (
    DEFAULT_DATABASE_URL,
    EVENT_TABLE_NAME,
    StoredRequest,
    answer_message,
    check_sqlite_file,
    create_engine,
    decode_row,
    ensure_table,
    message_topic,
    requests_table,
    table_exists,
)
from ._inbox import claim_wait, completed_results, event_topic, lock_event_token

__all__ = ('DBOSQuestionStore', 'DEFAULT_EVENTS_POLL_SECONDS')

DEFAULT_EVENTS_POLL_SECONDS = 0.25
"""How often `events()` reads the table for questions that started waiting, were answered or withdrawn."""

_T = TypeVar('_T')


@dataclass
class DBOSQuestionStore:
    """The answering side of `DBOSAnswerer`: a `QuestionStore` over every workflow sharing the database.

    Use it from any process (a web server, the command line, another machine); it needs no DBOS
    launch, only the database. An answer is checked with `check_response`, recorded, and sent to
    the waiting workflow in one transaction, so a request is answered once, however many processes
    try at the same time.
    """

    database_url: str = DEFAULT_DATABASE_URL
    """The DBOS system database the workers use: `sqlite:///FILE` or `postgresql://...`."""

    _: KW_ONLY

    events_poll_seconds: float = DEFAULT_EVENTS_POLL_SECONDS
    """How often `events()` looks for changes."""

    create_table: bool = True
    """Create the questions table on first use when the database has none, as `DBOSAnswerer` does.

    `False` writes no schema: on a DBOS database where no question was asked yet the store sees no
    questions, and a SQLite file that does not exist, or a database with neither the questions table nor
    DBOS's tables, raises `NotAQuestionDatabaseError` on first use. `ask-user pending` and `ask-user answer`
    open their store so, since a typo in `--db` must not create a database.
    """

    _engine: sa.Engine | None = field(default=None, init=False, repr=False, compare=False)
    _client: DBOSClient | None = field(default=None, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    _has_table: bool = field(default=False, init=False, repr=False, compare=False)
    _has_event_table: bool = field(default=False, init=False, repr=False, compare=False)

    async def __aenter__(self) -> DBOSQuestionStore:
        await self._in_thread(self._connect)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the database connections; the store reconnects if used again."""
        with self._lock:
            if self._client is not None:
                self._client.destroy()
                self._client = None
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    def _connect(self) -> tuple[sa.Engine, DBOSClient]:
        with self._lock:
            if self._engine is None or self._client is None:
                if not self.create_table:
                    check_sqlite_file(self.database_url)
                engine = create_engine(self.database_url)
                try:
                    if self.create_table:
                        ensure_table(engine)
                        self._has_table = True
                    else:
                        self._has_table = table_exists(engine)
                    # Questions asked through `RequestInput` resolve their run's token; older databases have none.
                    self._has_event_table = sa.inspect(engine).has_table(EVENT_TABLE_NAME)
                except BaseException:
                    engine.dispose()
                    raise
                self._engine = engine
                self._client = DBOSClient(system_database_engine=engine, lazy=True)
            return self._engine, self._client

    async def _in_thread(self, function: Callable[[], _T]) -> _T:
        return await anyio.to_thread.run_sync(function)

    async def pending(self) -> Sequence[AskUserRequest]:
        """Every request waiting for an answer, across all workflows, oldest first."""
        return [stored.request for stored in await self.pending_records()]

    async def pending_records(self) -> Sequence[StoredRequest]:
        """Every waiting request with its workflow id and the time it was asked, oldest first.

        A request whose workflow has ended without it (cancelled, failed, deleted) is withdrawn here
        rather than shown: nobody is waiting for its answer any more.
        """
        return await self._in_thread(lambda: self._still_waiting(self._select(requests_table.c.status == 'pending')))

    def _still_waiting(self, records: list[StoredRequest]) -> list[StoredRequest]:
        ended = self._ended_workflows({record.workflow_id for record in records})
        if ended:
            self._withdraw([record.request.id for record in records if record.workflow_id in ended])
        return [record for record in records if record.workflow_id not in ended]

    def _ended_workflows(self, workflow_ids: set[str]) -> set[str]:
        if not workflow_ids:
            return set()
        _, client = self._connect()
        found = client.list_workflows(workflow_ids=sorted(workflow_ids), load_input=False, load_output=False)
        active = {workflow.workflow_id for workflow in found if workflow.status in _ACTIVE_WORKFLOW_STATUSES}
        return workflow_ids - active

    def _withdraw(self, request_ids: list[str]) -> None:
        engine, _ = self._connect()
        with engine.begin() as conn:
            conn.execute(
                sa.update(requests_table)
                .where(requests_table.c.id.in_(request_ids), requests_table.c.status == 'pending')
                .values(status='withdrawn', updated_at=time.time())
            )

    def _select(self, condition: Any) -> list[StoredRequest]:
        engine, _ = self._connect()
        if not self._has_table:
            # A DBOS database where no question was asked yet, opened without creating the table.
            if not table_exists(engine):
                return []
            self._has_table = True
        with engine.connect() as conn:
            rows = conn.execute(
                sa.select(requests_table).where(condition).order_by(requests_table.c.created_at, requests_table.c.id)
            ).all()
        return [decode_row(row) for row in rows]

    async def record(self, request_id: str) -> StoredRequest:
        """The request with this id in whatever state it is; `UnknownRequestError` if there is none."""
        found = await self._in_thread(lambda: self._select(requests_table.c.id == request_id))
        if not found:
            raise UnknownRequestError(request_id)
        return found[0]

    async def get(self, request_id: str) -> AskUserRequest:
        """The pending request with this id.

        Raises `UnknownRequestError`, `AlreadyAnsweredError` or `WithdrawnError` when it is not pending.
        """
        stored = await self.record(request_id)
        _raise_unless_pending(stored)
        return stored.request

    async def respond(self, request_id: str, response: AskUserResponse) -> None:
        """Answer (or decline) a pending request, once, and wake the workflow waiting for it.

        Raises `ValueError` if `check_response` rejects the response (nothing is recorded then), and
        the errors of `get` when the request is not pending, including when another process answered
        it a moment before.
        """
        await self._in_thread(lambda: self._respond(request_id, response))

    def _respond(self, request_id: str, response: AskUserResponse) -> None:
        engine, client = self._connect()
        found = self._select(requests_table.c.id == request_id)
        if not found:
            raise UnknownRequestError(request_id)
        stored = found[0]
        _raise_unless_pending(stored)
        check_response(stored.request, response)
        # Checked before the transaction, which must not wait for a second pooled connection.
        if self._ended_workflows({stored.workflow_id}):
            self._withdraw([request_id])
            raise WithdrawnError(request_id)
        message = answer_message(response)
        with engine.begin() as conn:
            # Questions of one `RequestInput` wait are claimed one at a time (their token's rows locked first),
            # so exactly one answer sees the set complete and resolves the token.
            token = self._event_token(conn, request_id)
            # The claim: only one UPDATE can move the row out of `pending`, whatever races it.
            claimed = conn.execute(
                sa.update(requests_table)
                .where(requests_table.c.id == request_id, requests_table.c.status == 'pending')
                .values(status='answered', response=_response_json(message), updated_at=time.time())
            )
            if claimed.rowcount != 1:
                latest = conn.execute(sa.select(requests_table).where(requests_table.c.id == request_id)).first()
                assert latest is not None
                _raise_unless_pending(decode_row(latest))
            # In the same transaction: the answer is recorded and sent together, or not at all.
            if token is None:
                client.send_in_transaction(conn, stored.workflow_id, message, message_topic(request_id), request_id)
            elif (results := completed_results(conn, token)) is not None:
                # The last of the questions of a `RequestInput` wait: resolve its token with all their answers,
                # claiming the wait in this transaction; if it was resolved or expired first, nothing is taken.
                if not claim_wait(conn, token):
                    raise WithdrawnError(request_id)
                client.send_in_transaction(conn, stored.workflow_id, results, event_topic(token), token)

    def _event_token(self, conn: sa.Connection, request_id: str) -> str | None:
        if not self._has_event_table:
            return None
        return lock_event_token(conn, request_id)

    async def events(self) -> AsyncIterator[StoreEvent]:
        """Events from now on, found by reading the table every `events_poll_seconds`."""
        known = {stored.request.id: stored for stored in await self.pending_records()}
        started = since = time.time() - 1.0
        while True:
            await anyio.sleep(self.events_poll_seconds)
            now = time.time()
            changed = await self._in_thread(partial(self._select, requests_table.c.updated_at >= since))
            since = now - 1.0  # overlap, as another machine's clock or a slow commit may lag
            for stored in changed:
                request_id = stored.request.id
                before = known.get(request_id)
                if before is None and (stored.status == 'pending' or stored.created_at >= started):
                    # Asked since we started, perhaps answered between two polls: it was requested first.
                    yield StoreEvent('requested', request_id, stored.request)
                    before = stored if stored.status == 'pending' else replace(stored, status='pending')
                if stored.status != 'pending' and before is not None and before.status == 'pending':
                    yield StoreEvent(stored.status, request_id)
                known[request_id] = stored
            cutoff = now - 60.0
            for request_id in [key for key, value in known.items() if value.status != 'pending']:
                if known[request_id].created_at < cutoff:
                    del known[request_id]


_ACTIVE_WORKFLOW_STATUSES = frozenset({'PENDING', 'ENQUEUED', 'DELAYED'})
"""DBOS workflow statuses under which a question can still be answered; any other means nobody waits."""


def _response_json(message: str) -> str:
    import json

    return json.dumps(json.loads(message)['response'], ensure_ascii=False)


def _raise_unless_pending(stored: StoredRequest) -> None:
    if stored.status == 'answered':
        raise AlreadyAnsweredError(stored.request.id)
    if stored.status == 'withdrawn':
        raise WithdrawnError(stored.request.id)
