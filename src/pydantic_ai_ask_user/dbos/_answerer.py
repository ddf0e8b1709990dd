"""`DBOSAnswerer`: publishes each question durably and waits for its answer with `DBOS.recv`."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import partial
from typing import Literal, TypeVar

import anyio
import anyio.to_thread
import sqlalchemy as sa
from dbos import DBOS, SetWorkflowID
from dbos import error as dbos_errors

from .._answers import AskUserRequest, AskUserResponse, QuestionWithdrawn, check_same_questions
from .._audience import audience_from_json, context_from_json, context_to_json
from .._escalation import Escalation, escalation_note
from .._question_limits import LATEST_DEADLINE
from .._question_store import StoreError
from .._receipt import AnswerReceipt, receipt_from_json, receipt_to_json
from ._db import DEFAULT_DATABASE_URL
from ._encoding import (
    WITHDRAWN_MESSAGE,
    Identity,
    answer_message,
    decode_message,
    decode_request,
    encode_request,
    escalation_of,
    message_topic,
)
from ._engine import create_engine, ensure_table
from ._handoffs import escalation_handoff_id, forward_item
from ._questions import (
    insert_encoded,
    keep_receipt,
    publication,
    select_requests,
    status_and_response,
    withdraw_pending,
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

    A question is stored, waited on and answered under its `AskUserRequest.key` (its run and its tool
    call), so another run whose model repeats the tool call id (`call_0` in every run) asks its own
    question, while a replay or recovery of the same run waits for the same one. A key found stored with
    other questions is refused with `DifferentQuestionsError`, never answered with what is stored. A wait
    that ends without anyone answering (withdrawn by its caller, or its workflow cancelled and resumed)
    raises `QuestionWithdrawn`, so the model is told so, never that the person declined.

    It is a `DurableAnswerer`: `AskUser(timeout=...)` hands it the timeout, and the deadline, counted
    from the first publication, survives restarts too. So does `AskUser(escalate=...)`: the wait forwards the
    question at each step's time, counted the same way, in a step of its own, once.
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
        `WithdrawnError`. Returns `None` when the time ran out; raises `QuestionWithdrawn` when the
        question was withdrawn before anyone answered, and `DifferentQuestionsError` when its key is
        stored already with other questions.

        The row keeps the request's `notes` and `deadline` (when `timeout` is given and the request has none,
        the deadline is `timeout` from now), so the inbox and `ask-user answer` offer notes and show the time
        left. The response returned has `answered_by` as whoever answered recorded it.
        """
        if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f'timeout must be a positive number of seconds or None, not {timeout!r}')
        if timeout is not None and request.deadline is None:
            # Shown to the person only; the wait itself counts from the row's first publication.
            request = replace(request, deadline=min(time.time() + timeout, LATEST_DEADLINE))
        if DBOS.workflow_id is not None and DBOS.step_id is None:
            identity = Identity.of(request)
            message = await self._wait_in_workflow(identity, encode_request(request), DBOS.workflow_id, timeout)
        else:
            message = await self._wait_in_own_workflow(request, timeout)
        # The request was encoded once, above; the answer is decoded once, here (`QuestionWithdrawn` if withdrawn).
        return None if message is None else decode_message(message)

    async def keep_receipt(self, request: AskUserRequest, receipt: AnswerReceipt, /) -> AnswerReceipt:
        """Keep the run's signed receipt of the answer to `request` in the question's row (its `receipt` column),
        where the history reads it (a `ReceiptKeeper`: `AskUser(receipt_key=...)` calls it); returns the one kept.

        In a workflow, a step of its own: a recovered workflow replays the step's recorded result and writes nothing,
        and a step run again after a crash finds the first receipt there (only an empty column is written), so a
        question keeps one receipt, the first, and the replay's event carries that one too, not the one it signed
        again at another time.
        """
        receipt_json = json.dumps(receipt_to_json(receipt), ensure_ascii=False)

        def keep() -> str | None:
            with self.engine().begin() as conn:
                return keep_receipt(conn, request.key, receipt_json)

        if DBOS.workflow_id is not None and DBOS.step_id is None:
            kept = await self._step('keep_receipt', keep)
        else:
            kept = await self._in_thread(keep)
        if kept is None or kept == receipt_json:
            return receipt
        try:
            return receipt_from_json(json.loads(kept))
        except ValueError:  # changed in the database since: the history shows it not verifying
            return receipt

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
        self, identity: Identity, questions_json: str, workflow_id: str, timeout: float | None
    ) -> str | None:
        """Publish the request (encoded by `encode_request`) and wait: the answer's message, or `None` on timeout."""
        # Steps, so a recovered workflow waits under the key the person saw, with the deadline of the first
        # publication, and replays every decision below from recorded values, never from the clock of the replay.
        published = await self._step('publish', lambda: self._publish(identity, questions_json, workflow_id))
        # The key the question was published under, as recorded: a replay whose request has another id (a model
        # that sent none gets a new one each time) still waits for the question the person sees. Records of
        # versions before keys have none: their question was published under its tool call id.
        key = published.key or identity.tool_call_id
        if published.stored_questions is not None:
            # The key was stored already (a publication whose record a crash lost, or a run id given twice):
            # its answer is this question's only if it asks the same.
            asked = decode_request(questions_json, identity.tool_call_id, run_id=identity.run_id)
            stored = decode_request(published.stored_questions, identity.tool_call_id, run_id=identity.run_id)
            check_same_questions(asked, stored)
        if published.status == 'withdrawn':  # its caller gave up before this workflow started
            return WITHDRAWN_MESSAGE
        deadline = None if timeout is None else published.created_at + timeout
        now = published.now
        topic = message_topic(key)
        # Escalation, decided here in the workflow rather than by a sweeper of the store: each step's time is the
        # first publication's (recorded) plus its `after`, the wait below ends at the next one, and the forward is a
        # step of its own, recorded once. A worker killed before a step falls due recovers this workflow at its next
        # launch and applies the step then, late but once; one killed inside the step (the forward committed, the
        # step not recorded) runs it again, and the hand-off's fixed id makes that a no-op. Steps at or after the
        # deadline never fall due: the question is withdrawn first.
        escalations = [
            (published.created_at + step.after, step)
            for step in escalation_of(questions_json)
            if deadline is None or published.created_at + step.after < deadline
        ]
        escalated = 0
        # No withdrawal on the way out: a plain cancellation of the task leaves the workflow PENDING, and
        # DBOS recovers it later, replaying these same steps, so a step recorded here would not be where
        # the replay looks for it. The question stays answerable for the recovered run; a workflow that
        # really ended (cancelled, failed, deleted) has its question withdrawn by the store.
        while True:
            while escalated < len(escalations) and now >= escalations[escalated][0]:
                index, step = escalated, escalations[escalated][1]
                now = await self._step('escalate', partial(self._escalate, key, index, step))
                escalated += 1
            ends = [deadline, escalations[escalated][0] if escalated < len(escalations) else None]
            ending = min((end for end in ends if end is not None), default=None)
            wait = self.recheck_seconds if ending is None else min(self.recheck_seconds, ending - now)
            if wait > 0:  # decided from recorded values, so a replay calls the same steps
                if ending is not None:
                    # But counted on the live clock: DBOS keeps the end of a recv it recorded, and one that a
                    # crash cut off before it was recorded must wait only for the time left, not start over.
                    wait = max(0.0, min(self.recheck_seconds, ending - time.time()))
                # Only the store sends answers, and only after claiming the request; a withdrawal (by an
                # own-workflow caller, or by the store when the workflow had ended) sends `WITHDRAWN_MESSAGE`.
                message: str | None = await DBOS.recv_async(topic, timeout_seconds=wait)
                if message is not None:
                    return message
            checked = await self._step('check', lambda: self._check(key, deadline))
            if checked.outcome == 'answered':
                assert checked.response is not None
                return answer_message(checked.response)
            if checked.outcome == 'withdrawn':
                return WITHDRAWN_MESSAGE
            if checked.outcome == 'timed_out':
                return None
            now = checked.now

    def _publish(self, identity: Identity, questions_json: str, workflow_id: str) -> _Published:
        with self.engine().begin() as conn:
            insert_encoded(conn, identity, questions_json, workflow_id)
            published_in, status, created_at, stored_questions = publication(conn, identity.key)
        if published_in != workflow_id:
            raise ValueError(
                f'question {identity.key!r} (tool call {identity.tool_call_id!r} of run {identity.run_id!r}) belongs '
                f'to workflow {published_in!r}, not to this one: two runs were given the same run id'
            )
        return _Published(
            status=status,
            created_at=created_at,
            now=time.time(),
            key=identity.key,
            stored_questions=None if stored_questions == questions_json else stored_questions,
        )

    def _escalate(self, key: str, index: int, step: Escalation) -> float:
        """Forward the question `key` by step `index` of its escalation policy, once: nothing if that hand-off is
        recorded already (a step run again after a crash) or the question no longer waits. The time after it.
        """
        # Answered or withdrawn meanwhile: nothing to forward, and the check that follows finds out which.
        with self.engine().begin() as conn, contextlib.suppress(StoreError):
            forward_item(
                conn,
                'question',
                key,
                step.to,
                escalation_note(step),
                None,
                replace=step.replace,
                handoff_id=escalation_handoff_id(key, index),
            )
        return time.time()

    def _check(self, key: str, deadline: float | None) -> _Checked:
        """Read the answer; past the deadline, withdraw the request unless an answer claimed it first."""
        with self.engine().begin() as conn:
            now = time.time()
            if deadline is not None and now >= deadline:
                withdraw_pending(conn, [key])
            status, response = status_and_response(conn, key)
        if status == 'answered':
            return _Checked('answered', response, now)
        if status == 'withdrawn':
            return _Checked('timed_out' if deadline is not None and now >= deadline else 'withdrawn', None, now)
        return _Checked('pending', None, now)

    async def _wait_in_own_workflow(self, request: AskUserRequest, timeout: float | None) -> str | None:
        identity = Identity.of(request)
        # Named by the key: a second run repeating the tool call id has a workflow of its own, and the same
        # request asked again (same key) re-attaches to its workflow, which has the answer, if it asks the same.
        workflow_id = f'ask-user-{identity.key}'
        questions_json = encode_request(request)
        await self._in_thread(lambda: self._check_stored(request))
        try:
            # The workflow publishes the question itself, so nobody can answer before it exists.
            with SetWorkflowID(workflow_id):
                handle = await DBOS.start_workflow_async(
                    _wait_workflow,
                    self.database_url,
                    identity.key,
                    questions_json,
                    self.recheck_seconds,
                    timeout,
                    identity.tool_call_id,
                    identity.run_id,
                    None if identity.audience is None else list(identity.audience),
                    None if identity.context is None else context_to_json(identity.context),
                )
            message = await handle.get_result()
        except dbos_errors.DBOSAwaitedWorkflowCancelledError:
            # Its wait workflow was cancelled (`DBOS.cancel_workflow`): nobody answered, and nobody will.
            await self._in_thread(lambda: self._withdraw(identity, workflow_id, questions_json))
            raise QuestionWithdrawn('the wait workflow of the question was cancelled') from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                if await self._in_thread(lambda: self._withdraw(identity, workflow_id, questions_json)):
                    # Wake the wait workflow so it ends now rather than at its next recheck. If it has
                    # not published yet, there is nothing to wake: it finds the withdrawal when it does.
                    with contextlib.suppress(Exception):
                        await DBOS.send_async(workflow_id, WITHDRAWN_MESSAGE, message_topic(identity.key))
            raise
        # A workflow started a moment earlier under this key by another caller may have published other questions.
        await self._in_thread(lambda: self._check_stored(request))
        return message

    def _check_stored(self, request: AskUserRequest) -> None:
        """Refuse (`DifferentQuestionsError`) to join a question stored under `request.key` that asks otherwise."""
        with self.engine().connect() as conn:
            found = select_requests(conn, request_id=request.key)
        if found:
            check_same_questions(request, found[0].request)

    def _withdraw(self, identity: Identity, workflow_id: str, questions_json: str) -> bool:
        """Mark the request withdrawn if it is pending; True if it was.

        A request not published yet is recorded as withdrawn, so its workflow ends as soon as it tries to
        publish it.
        """
        with self.engine().begin() as conn:
            if withdraw_pending(conn, [identity.key]) == 1:
                return True
            insert_encoded(conn, identity, questions_json, workflow_id, status='withdrawn')
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

    key: str | None = None
    """The key the question was published under; `None` in the records of versions before keys (the tool call id)."""

    stored_questions: str | None = None
    """The questions stored under the key, when they are not the ones this step published (it found the row)."""


@dataclass(frozen=True)
class _Checked:
    """What a check step records: the outcome, the answer's JSON when there is one, and the time of the check."""

    outcome: Literal['answered', 'withdrawn', 'timed_out', 'pending']
    """Answered (or declined), withdrawn by its caller, withdrawn at the deadline, or still waiting."""

    response: str | None
    """The response as JSON, when answered."""

    now: float
    """The time of the check, so the next wait is decided from a recorded value."""


_answerers: dict[tuple[str, float], DBOSAnswerer] = {}
_answerers_lock = threading.Lock()


def _answerer_for(database_url: str, recheck_seconds: float) -> DBOSAnswerer:
    with _answerers_lock:
        key = (database_url, recheck_seconds)
        if key not in _answerers:
            _answerers[key] = DBOSAnswerer(database_url, recheck_seconds=recheck_seconds)
        return _answerers[key]


@DBOS.workflow(name='pydantic_ai_ask_user.dbos.wait')
async def _wait_workflow(
    database_url: str,
    key: str,
    questions: str,
    recheck_seconds: float,
    timeout: float | None = None,
    tool_call_id: str | None = None,
    run_id: str | None = None,
    audience: list[str] | None = None,
    context: dict[str, str] | None = None,
) -> str | None:
    """The wait of a `DBOSAnswerer` called outside any workflow: the answer's message, or `None` on timeout.

    `questions` is the request as `encode_request` wrote it, published as is: its caller validated it. `key` is the
    request's key; `tool_call_id` and `run_id` are new arguments, which waits started by earlier versions (whose key
    was the tool call id) do not have; `audience` and `context` (as JSON values) newer still.
    """
    answerer = _answerer_for(database_url, recheck_seconds)
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    identity = Identity(
        key=key,
        tool_call_id=key if tool_call_id is None else tool_call_id,
        run_id=run_id,
        audience=audience_from_json(audience),
        context=context_from_json(context),
    )
    return await answerer._wait_in_workflow(identity, questions, workflow_id, timeout)  # pyright: ignore[reportPrivateUsage]
