"""AskUser questions and tool approvals of a waiting handler's wait, put where the web inbox and `ask-user` decide them.

With `AskUser(answerer=None)` and `HandleDeferredToolCalls`, a DBOS run defers its questions and waits for one
resolution of a `DBOSEventWaiter` token. `ask_through_store` is a waiting handler's `ask` that publishes
those questions as ordinary rows of `ask_user_requests` (so `DBOSQuestionStore`, the web inbox and
`ask-user answer` show, check and answer them) and ties each to the token. `DBOSQuestionStore.respond`
claims one question at a time, with the token's rows locked; the answer that completes the set sends
the resolution (`DeferredToolResults` with every answer, as `ask_user_result` makes it) in the same
transaction. When the wait times out first, the waiter withdraws the questions still open, under the
same lock, and the run goes on with the answers given in time and `TIMED_OUT` for the rest: an answer
is either used or refused, never accepted and dropped.

The wait's tool approvals are published beside its questions, as rows of the approvals table (`PendingApproval`:
the tool, the model's arguments, the tool's parameters JSON schema from the run's tool definitions), decided
through the same store (`DBOSQuestionStore.decide`); the item that completes the wait, question or approval,
sends every answer and decision. An approval nobody decided by the deadline is denied (`TIMED_OUT_DENIAL`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ForwardRef

import anyio.to_thread

from .._answers import AskUserRequest
from .._approvals import PendingApproval
from .._audience import AudienceSetting, ContextSetting
from .._escalation import Escalation, escalation_note
from .._module_names import LazyModule
from .._request_input import wait_items, wait_results
from ._approvals import StoredApproval, insert_approval, select_approvals, withdraw_approvals
from ._db import DEFAULT_DATABASE_URL
from ._encoding import StoredRequest
from ._handoffs import escalation_handoff_id, forward_item
from ._questions import insert_pending, withdraw_pending
from ._waits import (
    claim_wait,
    expire_wait,
    insert_event_request,
    lock_token,
    open_wait_row,
    record_wait_calls,
    token_requests,
)

__all__ = (
    'ask_through_store',
    'completed_results',
    'expire_token',
    'escalate_token',
    'open_wait',
    'settle_wait',
    'event_topic',
    'TOKEN_PREFIX',
    'token_workflow',
)

TOKEN_PREFIX = 'dbos1.'
"""How every token of a `DBOSEventWaiter` starts: the format, then a random part, then the workflow id."""

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import sqlalchemy as sa
    from pydantic_ai import DeferredToolRequests, RunContext

    from ._connection import Connection

    AskFunction = Callable[[RunContext[Any], DeferredToolRequests, str], Awaitable[None]]
    """The shape of a waiting handler's `ask` that hands the token on and returns `None`."""
else:
    # The same type, for `typing.get_type_hints`: references resolved in this module when the annotation is read,
    # through Pydantic AI's module imported only then (`ask-user` loads this module without Pydantic AI).
    _tools = LazyModule('pydantic_ai.tools')
    AskFunction = Callable[
        [
            ForwardRef('_tools.RunContext[Any]', module=__name__),
            ForwardRef('_tools.DeferredToolRequests', module=__name__),
            str,
        ],
        Awaitable[None],
    ]


def token_workflow(token: str) -> str | None:
    """The workflow id a `DBOSEventWaiter` token names, or `None` if it is not such a token."""
    if not token.startswith(TOKEN_PREFIX) or '.' not in token[len(TOKEN_PREFIX) :]:
        return None
    return token[len(TOKEN_PREFIX) :].split('.', 1)[1] or None


def event_topic(token: str) -> str:
    """The DBOS message topic the wait of `token` receives its resolution on."""
    return f'external_event:{token[len(TOKEN_PREFIX) :].split(".", 1)[0]}'


def ask_through_store(
    database_url: str = DEFAULT_DATABASE_URL,
    *,
    notes: bool = False,
    audience: AudienceSetting = None,
    context: ContextSetting = None,
) -> AskFunction:
    """A waiting handler's `ask` that puts the run's pending AskUser questions and tool approvals where the store
    decides them.

    `HandleDeferredToolCalls(ask_through_store(url))` (`RequestInput(ask_through_store(url))` before Pydantic AI
    2.78), after `DBOSExternalEvents(database_url=url)`, and `AskUser(answerer=None)`, on a DBOS-durable agent.
    Questions and tool approvals are decided this way (each approval with its tool's parameters JSON schema, which
    edited arguments are checked against); a wait that also holds other deferred calls (results from outside) is
    refused with a `UserError` (resolve such a wait with `resolve_dbos_event` or `ask-user resolve` instead). Each
    question is stored under its `AskUserRequest.key` (the run that deferred it and its tool call), so runs whose
    model repeats tool call ids do not share a row; publishing is idempotent, as an `ask` that DBOS may retry must be.

    Pass `notes=True` when the agent's `AskUser` has `notes=True`: the deferred calls do not say so, and the
    inbox and `ask-user answer` offer a note per answer only on questions published with it.

    The approvals are addressed and in context like the questions: by default each takes the audience and
    context of the wait's first question (so a run's approvals go to whom its questions go), or, in a wait
    without questions, the agent's name and the conversation only; `audience` and `context` (as `AskUser`'s:
    a value, or a function of the run) set them instead.
    """

    async def ask(ctx: RunContext[Any], requests: DeferredToolRequests, token: str) -> None:
        from pydantic_ai.exceptions import UserError

        workflow_id = token_workflow(token)
        if workflow_id is None:
            raise UserError('ask_through_store needs DBOSExternalEvents: the resume token names no DBOS workflow.')
        questions, approvals = wait_items(
            ctx,
            requests,
            token,
            owner='ask_through_store',
            otherwise='resolve such a wait with resolve_dbos_event or `ask-user resolve`, from your own ask function.',
            notes=notes,
            audience=audience,
            context=context,
            workflow_id=workflow_id,
        )
        await anyio.to_thread.run_sync(lambda: _publish(database_url, questions, approvals, workflow_id, token))

    return ask


def _transaction(database_url: str) -> AbstractContextManager[sa.Connection]:
    """A transaction on the shared SQLAlchemy engine (the run's side: DBOS has loaded SQLAlchemy already)."""
    # Here, not at the top: `_engine` imports SQLAlchemy, and `ask-user resolve` imports this module on a plain
    # SQLite file (`_end_wait`), where it must not load it.
    from ._engine import transaction

    return transaction(database_url)


def _publish(
    database_url: str, questions: list[AskUserRequest], approvals: list[PendingApproval], workflow_id: str, token: str
) -> None:
    with _transaction(database_url) as conn:
        for request in questions:
            insert_pending(conn, request, workflow_id)
            insert_event_request(conn, request.key, token)
        for approval in approvals:
            insert_approval(conn, approval)


def completed_results(conn: Connection, token: str, *, with_approvals: bool = True) -> str | None:
    """The resolution message for `token` once every one of its questions is answered and every one of its
    approvals decided, else `None`.

    The `DeferredToolResults` it carries has who answered each question (and decided each approval) in
    `answered_by`, when the answer said.
    """
    rows = token_requests(conn, token)
    # A database whose approvals table an earlier version's workers never made holds no approval.
    approvals = select_approvals(conn, token=token) if with_approvals else []
    if not rows and not approvals:
        return None
    if any(row.status != 'answered' or row.response is None for row in rows):
        return None
    if any(approval.decision is None for approval in approvals):
        return None
    return json.dumps({'payload': _results(rows, approvals)}, ensure_ascii=False)


def _results(rows: list[StoredRequest], approvals: Sequence[StoredApproval] = ()) -> dict[str, Any]:
    """The JSON form of the `DeferredToolResults` of a wait's stored questions and approvals (`wait_results`)."""
    return wait_results(
        ((row.request, row.response) for row in rows),
        ((stored.approval, stored.decision) for stored in approvals),
    )


def open_wait(database_url: str, token: str, workflow_id: str, *, calls: str | None = None) -> None:
    """Record the wait of `token` as open, with the calls it decides (`WaitCalls` JSON) when known; idempotent,
    as the step calling it may run again.
    """
    with _transaction(database_url) as conn:
        open_wait_row(conn, token, workflow_id)
        if calls is not None:
            record_wait_calls(conn, token, calls)


def settle_wait(database_url: str, token: str) -> None:
    """Mark the wait of `token` resolved by `ask` itself, so no later resolution is reported as taken."""
    with _transaction(database_url) as conn:
        claim_wait(conn, token)


def escalate_token(database_url: str, token: str, index: int, step: Escalation) -> None:
    """Forward every approval of the wait of `token` still pending by step `index` of its escalation policy, each
    once: an approval whose hand-off of that step is recorded already (the step run again after a crash) is left.
    """
    with _transaction(database_url) as conn:
        lock_token(conn, token)
        for stored in select_approvals(conn, token=token, pending=True):
            key = stored.approval.key
            forward_item(
                conn,
                'approval',
                key,
                step.to,
                escalation_note(step),
                None,
                replace=step.replace,
                handoff_id=escalation_handoff_id(key, index),
            )


def expire_token(database_url: str, token: str) -> dict[str, Any] | None:
    """At the wait's deadline: expire it, withdraw its open questions, and say what the run goes on with.

    Returns `{'resolved': True}` when a resolver claimed the wait first (its message is there to read),
    the resolution made of the questions published for it (every answer given in time, `TIMED_OUT`
    for every question still open, which is withdrawn: an answer from now on is refused with
    `WithdrawnError`), or `None` when it had no questions, so the wait times out as the waiting handler
    decides.
    """
    with _transaction(database_url) as conn:
        lock_token(conn, token)
        if not expire_wait(conn, token):
            return {'resolved': True}
        withdraw_pending(conn, token=token)
        withdraw_approvals(conn, token)
        rows = token_requests(conn, token)
        approvals = select_approvals(conn, token=token)
    if not rows and not approvals:
        return None
    return _results(rows, approvals)
