"""A durable `ExternalEventWaiter` on DBOS, so `wait_for_external_event` and the waiting handler wait in DBOS runs.

Pydantic AI refuses `wait_for_external_event` (and so the waiting handler, `HandleDeferredToolCalls`: tool
approvals, questions, external results answered mid-run) inside DBOS runs, since it has no DBOS waiter. This is one:

- the token is minted in a DBOS step of its own, then `ask` runs inside another step that records
  what it returned, so a replay neither mints a second token nor calls `ask` again, and an `ask`
  retried after a crash gets the same token;
- the wait is a `DBOS.recv` on a topic named by the token, which DBOS records, with its timeout, so
  a recovered wait resumes with the time left;
- the token names the workflow, so any process that reaches the DBOS system database resolves it
  with `resolve_dbos_event` (or `fail_dbos_event`); each wait has a row that the first resolution
  claims, in the transaction that sends it, or the deadline expires: a resolution is used or refused.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, cast

import anyio.to_thread
from dbos import DBOS
from pydantic import JsonValue
from pydantic_ai.exceptions import UserError
from pydantic_ai.external_events import ExternalEventError, ExternalEventWaiter
from pydantic_ai.tools import AgentDepsT

from .._escalation import Escalation, EscalationSetting, check_escalation
from .._external_events import ExternalEventsCapability, take_calls_to_wait_for
from .._wait_calls import WaitCalls
from ._db import DEFAULT_DATABASE_URL
from ._inbox import TOKEN_PREFIX, escalate_token, event_topic, expire_token, open_wait, settle_wait

__all__ = ('DBOSEventWaiter', 'DBOSExternalEvents', 'DEFAULT_CHUNK_SECONDS')

DEFAULT_CHUNK_SECONDS = 86_400.0
"""How long one `DBOS.recv` waits when the wait has no timeout; the wait goes on in chunks of this."""


@dataclass
class DBOSEventWaiter(ExternalEventWaiter):
    """Waits for external events durably inside a DBOS workflow; install it with `DBOSExternalEvents`.

    Resolve its tokens from any process with `resolve_dbos_event(token, payload, database_url=...)`.
    """

    chunk_seconds: float = DEFAULT_CHUNK_SECONDS
    """How long one `DBOS.recv` waits when the wait has no timeout."""

    database_url: str = DEFAULT_DATABASE_URL
    """The DBOS system database (as given to `dbos_config`), where each wait records whether it is still open.

    A resolver claims the open wait in the transaction that sends its message, and the deadline expires
    it the same way, so a resolution is either used or refused, never reported as taken and dropped.
    Questions `ask_through_store` published for the wait are withdrawn at the deadline, and the run goes
    on with the answers given in time and `TIMED_OUT` for the rest.
    """

    escalate: tuple[Escalation, ...] = ()
    """The escalation policy of the approvals of each wait (`DBOSExternalEvents(escalate=...)`): while the wait is
    open, each step forwards its approvals still pending `after` seconds after it opened, in a step of the workflow."""

    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,
    ) -> JsonValue:
        """Record a token, then what `ask` made of it, each in a step; unless `ask` answered, wait for the token."""
        workflow_id = DBOS.workflow_id
        if workflow_id is None or DBOS.step_id is not None:
            raise UserError(
                'DBOSEventWaiter waits only in the body of a DBOS workflow (not in a step): run the agent inside '
                'a @DBOS.workflow function.'
            )

        async def mint() -> dict[str, Any]:
            token = f'{TOKEN_PREFIX}{secrets.token_urlsafe(18)}.{workflow_id}'
            now = time.time()
            return {'token': token, 'deadline': None if timeout is None else now + timeout.total_seconds(), 'at': now}

        # The token in a step of its own, before `ask`: if the worker dies after `ask` ran but before DBOS
        # recorded it, the retried `ask` gets the same token, so whatever it published still resolves this wait.
        minted = await DBOS.run_step_async({'name': f'external_event.{name}.token'}, mint)
        token = str(minted['token'])

        database_url = self.database_url
        # Recorded with the wait, so `ask-user resolve` refuses a decision that forgets a call or names another.
        # Taken, not read: a later wait of the run (not the waiting handler's) must not be held to these calls.
        pending = take_calls_to_wait_for()
        calls = None if pending is None else WaitCalls.of(pending).to_json()

        async def ask_once() -> dict[str, Any]:
            await anyio.to_thread.run_sync(lambda: open_wait(database_url, token, workflow_id, calls=calls))
            answer = await ask(token)
            if answer is not None:  # answered in place: the wait is over, and no resolver may claim it now
                await anyio.to_thread.run_sync(lambda: settle_wait(database_url, token))
            return {'answer': answer}

        recorded = await DBOS.run_step_async({'name': f'external_event.{name}.ask'}, ask_once)
        if recorded['answer'] is not None:
            return recorded['answer']
        topic = event_topic(token)
        deadline: float | None = minted['deadline']
        message = await self._escalating(name, token, minted.get('at'), deadline)
        if message is not None:
            pass
        elif deadline is None:
            while message is None:
                message = await DBOS.recv_async(topic, timeout_seconds=self.chunk_seconds)
        else:
            # Decided from recorded values, so a replay takes the same path; DBOS records the recv's own deadline.
            # The time left on the live clock: DBOS keeps the end of a recv it recorded, and one a crash cut off
            # before it was recorded must wait only for what is left of the deadline, not start over.
            message = await DBOS.recv_async(topic, timeout_seconds=max(deadline - time.time(), 0.0))
            if message is None:

                async def expire() -> dict[str, Any] | None:
                    return await anyio.to_thread.run_sync(lambda: expire_token(database_url, token))

                expired = await DBOS.run_step_async({'name': f'external_event.{name}.expire'}, expire)
                if expired is not None and expired.get('resolved'):
                    # A resolver claimed the wait just before the deadline: its message is there.
                    message = await DBOS.recv_async(topic, timeout_seconds=0)
                elif expired is not None:
                    return cast(JsonValue, expired)
            if message is None:
                raise ExternalEventError(f'No resolution arrived within {timeout}.')
        data = json.loads(message)
        if 'error' in data:
            raise ExternalEventError(str(data['error']))
        return data['payload']

    async def _escalating(self, name: str, token: str, opened: float | None, deadline: float | None) -> str | None:
        """Wait for the resolution of `token` until each escalation step falls due, and apply it in a step of its own
        (`escalate_token`, whose hand-offs have fixed ids: run again after a crash, it changes nothing); the message,
        if one came first. Steps at or after the deadline never fall due; a wait minted before escalation (no time
        recorded) has none.

        The waits are `DBOS.recv`s, which DBOS records with their ends: a worker killed before a step falls due
        recovers the workflow at its next launch and applies the step then, late but once.
        """
        if opened is None or not self.escalate:
            return None
        database_url = self.database_url
        topic = event_topic(token)
        for index, step in enumerate(self.escalate):
            due = opened + step.after
            if deadline is not None and due >= deadline:
                break
            message: str | None = await DBOS.recv_async(topic, timeout_seconds=max(due - time.time(), 0.0))
            if message is not None:
                return message

            async def escalate(index: int = index, step: Escalation = step) -> None:
                await anyio.to_thread.run_sync(lambda: escalate_token(database_url, token, index, step))

            await DBOS.run_step_async({'name': f'external_event.{name}.escalate'}, escalate)
        return None


@dataclass
class DBOSExternalEvents(ExternalEventsCapability[AgentDepsT]):
    """Installs a `DBOSEventWaiter` for each run inside a DBOS workflow, so the waiting handler waits durably there.

    `Agent(..., capabilities=[DBOSDurability(), DBOSExternalEvents(), HandleDeferredToolCalls(ask)])`
    (`RequestInput(ask)` before Pydantic AI 2.78), listed before the waiting handler: it notes the calls the wait
    decides just before the wait opens, and a run that lists it after a `HandleDeferredToolCalls` that waits fails
    at its start with a `UserError` naming the fix. Outside a workflow it does nothing, and waits happen in process
    as usual.
    """

    waiter: DBOSEventWaiter | None = None
    """The waiter to install; a `DBOSEventWaiter(database_url=database_url)` when `None`."""

    database_url: str = DEFAULT_DATABASE_URL
    """The DBOS system database (as given to `dbos_config`); the waiter records its waits there."""

    def in_container(self) -> bool:
        """Whether this runs in the body of a DBOS workflow (not in a step)."""
        return DBOS.workflow_id is not None and DBOS.step_id is None

    escalate: EscalationSetting = None
    """The escalation policy of the tool approvals, as `AskUser(escalate=...)`: one `Escalation` or several (a
    `ValueError` here if they do not check). Each step forwards the approvals of a wait still pending `after` seconds
    after it opened (`DBOSEventWaiter.escalate`)."""

    _escalation: tuple[Escalation, ...] = field(default=(), init=False, repr=False, compare=False)
    """`escalate` checked."""

    def __post_init__(self) -> None:
        self._escalation = check_escalation(self.escalate, 'DBOSExternalEvents(escalate=...)')

    def make_waiter(self) -> DBOSEventWaiter:
        """`waiter`, or a `DBOSEventWaiter` on `database_url`; with the escalation policy, when there is one."""
        waiter = self.waiter or DBOSEventWaiter(database_url=self.database_url)
        return replace(waiter, escalate=self._escalation) if self._escalation else waiter
