"""A durable `ExternalEventWaiter` on Temporal, so `wait_for_external_event` and the waiting handler wait in workflows.

The waiting handler, `HandleDeferredToolCalls` (`RequestInput` before Pydantic AI 2.78), waits for tool approvals,
deferred questions and external results through `wait_for_external_event`. Before 2.78 Pydantic AI refuses that wait
inside Temporal runs; from 2.78 `TemporalDurability` has a waiter of its own, whose waits cannot be listed or checked
from outside the workflow (see `TemporalExternalEvents`). This one, for the agents `TemporalExternalEvents` is added
to:

- the token is minted in workflow code from `workflow.uuid4()`, which a replay draws again the same, and
  names the workflow, so any process with a Temporal client resolves it (`resolve_temporal_event`);
- `ask` runs in workflow code too, so Temporal replays it with the workflow: it must decide from its
  arguments alone (an automatic policy, or `None` to wait) and do no I/O. The person learns of the wait
  from the workflow itself, through the Query `pending_temporal_events`: nothing is published that a replay
  could publish twice, and nothing is lost if the worker dies before the wait is recorded;
- the wait is `workflow.wait_condition` with the timeout as a durable timer; the resolution arrives by an
  Update whose validator checks it against the wait (for the waiting handler, the exact calls pending), so a
  malformed or foreign resolution is refused to its sender and never written to the history. A Signal is
  accepted too, for clients that cannot send Updates; an unfit one is dropped.

Why `ask` does not run in an activity: an activity is registered by name on the worker before it starts,
and `ask` is a closure of the run (the waiting handler binds its context and pending calls), which no worker
could look up by name, and which a worker other than the one replaying the workflow would not hold.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import JsonValue
from pydantic_ai import RunContext
from pydantic_ai.exceptions import UserError
from pydantic_ai.external_events import ExternalEventError, ExternalEventWaiter
from pydantic_ai.tools import AgentDepsT, DeferredToolRequests, DeferredToolResults
from pydantic_core import PydanticSerializationError, to_jsonable_python
from temporalio import workflow
from temporalio.client import Client, WorkflowHandle

from .._answers import TOOL_NAME, AskUserRequest
from .._audience import AudienceSetting, ContextSetting
from .._escalation import Escalation, EscalationSetting, check_escalation
from .._external_events import (
    ExternalEventsCapability,
    approvals_addressing,
    take_calls_to_wait_for,
    take_tool_parameters,
)
from ._workflow import (
    EVENTS_QUERY_NAME,
    RESOLVE_UPDATE_NAME,
    EventResolution,
    WaitingEvent,
    wait_in_workflow,
    workflow_instance,
)

__all__ = (
    'TemporalEventWaiter',
    'TemporalExternalEvents',
    'NotATemporalTokenError',
    'resolve_temporal_event',
    'fail_temporal_event',
    'pending_temporal_events',
    'TOKEN_PREFIX',
)

TOKEN_PREFIX = 'temporal1.'
"""How every token of a `TemporalEventWaiter` starts: the format, then 32 hex digits, then the workflow id."""


LISTED_PATCH = 'ask_user.list_external_events'
"""The patch id (`workflow.patched`) under which an external event's wait is listed in the workflow's visibility."""


_approvals_addressed: ContextVar[dict[str, Any] | None] = ContextVar('ask_user_approvals_addressed', default=None)
"""Whom the approvals of the wait opening now are for and where they come from (`approvals_addressing`), noted by
`TemporalExternalEvents` just before the waiting handler opens it; taken by the wait, as the calls are."""


def _take_approvals_addressed() -> dict[str, Any]:
    addressed = _approvals_addressed.get()
    _approvals_addressed.set(None)
    return {} if addressed is None else {**addressed, 'addressed': True}


class NotATemporalTokenError(UserError, ValueError):
    """The token is not one a `TemporalEventWaiter` handed out: it names no Temporal workflow."""


@dataclass
class TemporalEventWaiter(ExternalEventWaiter):
    """Waits for external events durably inside a Temporal workflow that inherits `AskUserWorkflow`.

    Install it with `TemporalExternalEvents`; resolve its tokens with `resolve_temporal_event`.
    """

    listed: bool = True
    """Show each wait, with the calls it decides, to `TemporalQuestionStore.pending_events` (`ask-user pending
    --temporal`) through the search attribute `AskUserQuestions` and the workflow's memo, as `TemporalAnswerer`
    shows its questions; the namespace must have that search attribute. `False`: only the Query
    `pending_temporal_events` lists them, nothing to register."""

    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,
    ) -> JsonValue:
        """Mint a token, hand it to `ask`, and unless `ask` answered, wait in the workflow for its resolution."""
        instance = workflow_instance('TemporalEventWaiter')
        token = f'{TOKEN_PREFIX}{workflow.uuid4().hex}.{workflow.info().workflow_id}'
        # Held with the wait, so the Update refuses a decision that forgets a call or names another.
        requests = take_calls_to_wait_for()
        parameters = take_tool_parameters()
        addressed = _take_approvals_addressed()
        answer = await ask(token)
        if answer is not None:
            return answer
        seconds = None if timeout is None else timeout.total_seconds()
        # A workflow whose history opened this wait before waits were listed replays without listing it: the
        # listing is commands in the history, which a replay must issue exactly as the first run did.
        listed = self.listed and workflow.patched(LISTED_PATCH)
        waiting = WaitingEvent(token, name, requests, parameters, **addressed)
        resolution = await wait_in_workflow(instance, token, waiting, seconds, listed=listed)
        if resolution is None:
            raise ExternalEventError(f'No resolution arrived within {timeout}.')
        assert isinstance(resolution, EventResolution)  # the key is an event's token
        if resolution.error is not None:
            raise ExternalEventError(resolution.error)
        return resolution.payload


@dataclass
class TemporalExternalEvents(ExternalEventsCapability[AgentDepsT]):
    """Installs a `TemporalEventWaiter` for each run inside a Temporal workflow, so the waiting handler waits there.

    `Agent(..., capabilities=[TemporalDurability(), TemporalExternalEvents(), HandleDeferredToolCalls(ask)])`
    (`RequestInput(ask)` before Pydantic AI 2.78), run in a workflow that inherits `AskUserWorkflow`, and listed
    before the waiting handler: it notes the calls the wait decides just before the wait opens, and a run that lists
    it after a `HandleDeferredToolCalls` that waits fails at its start with a `UserError` naming the fix. Outside a
    workflow it does nothing, and waits happen in process.

    Pydantic AI 2.78's `TemporalDurability` has a waiter of its own (its handler runs in an activity, the wait is
    held in the workflow's memory, resolved by a Signal with `pydantic_ai.durable_exec.temporal.resolve_external_event`
    under the token `<workflow id>:<event key>`). Its waits cannot be listed or checked from outside the workflow:
    it keeps the pending calls only in the workflow's memory, with no Query, memo or search attribute, so
    `ask-user pending/resolve --temporal` and the inbox cannot show them, and this package does not try. Nor does it
    replace that waiter silently: adding `TemporalExternalEvents()` is the explicit choice of this waiter for that
    agent; without it, Pydantic AI's own is used and resolved with its `resolve_external_event`. This one gives each
    wait listed with the calls it decides (`ask-user pending --temporal`, the team inbox, `TemporalQuestionStore`);
    decisions sent by an Update whose validator refuses, to the sender, a decision that does not decide exactly the
    pending calls (upstream's Signal takes anything, and a wrong decision fails the run); answers to AskUser
    questions in the wait checked with `check_response`; and resolution with `ask-user resolve --temporal`.
    Upstream's can run its handler in an activity, and so do I/O; this one runs `ask` in workflow code, so `ask`
    must be deterministic (decide from its arguments alone, or return `None` to wait). An Update is processed by a
    worker: a decision is accepted only while one runs the workflow.
    """

    listed: bool = True
    """Show the waits to `TemporalQuestionStore` and `ask-user pending --temporal` (`TemporalEventWaiter.listed`):
    the namespace must have the search attribute `AskUserQuestions`."""

    audience: AudienceSetting = None
    """Whom the tool approvals are for, as `AskUser(audience=...)`: a name, several, or a function of the run that
    returns them (from `ctx.deps`, typically). `None`: whom the wait's first AskUser question is for, or anyone in a
    wait without one. The web inbox and `ask-user pending --for` show an approval only to them (and to whoever sees
    all). A function runs in workflow code, when the wait opens: it must decide from the run alone (no I/O), as
    `AskUser`'s functions do under Temporal."""

    context: ContextSetting = None
    """Where the tool approvals come from, as `AskUser(context=...)`: a `QuestionContext`, or a function of the run.
    With neither setting, the wait's first AskUser question's context, or the agent's name and the conversation in a
    wait without one."""

    escalate: EscalationSetting = None
    """The escalation policy of the tool approvals, as `AskUser(escalate=...)`: one `Escalation` or several (a
    `ValueError` here if they do not check). While a wait's approvals are undecided, each step forwards the wait (so
    all its approvals) `after` seconds after it opened, by a durable timer in the workflow."""

    _escalation: tuple[Escalation, ...] = field(default=(), init=False, repr=False, compare=False)
    """`escalate` checked."""

    def __post_init__(self) -> None:
        self._escalation = check_escalation(self.escalate, 'TemporalExternalEvents(escalate=...)')

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Note the calls still pending, and whom the wait's approvals are for, for the wait opening next."""
        await super().handle_deferred_tool_calls(ctx, requests=requests)
        if self.in_container():
            calls = [call for call in requests.calls if call.tool_name == TOOL_NAME]
            questions = [AskUserRequest.from_deferred(requests, call) for call in calls]
            addressing = approvals_addressing(ctx, questions, self.audience, self.context)
            if self._escalation:  # only then: a wait of an earlier version's workflow is listed as it was
                addressing['escalate'] = self._escalation
            _approvals_addressed.set(addressing)
        return None

    def in_container(self) -> bool:
        """Whether this runs in workflow code."""
        return workflow.in_workflow()

    def make_waiter(self) -> TemporalEventWaiter:
        """A `TemporalEventWaiter`."""
        return TemporalEventWaiter(listed=self.listed)


def token_workflow_id(token: str) -> str:
    """The id of the workflow a `TemporalEventWaiter` token names; `NotATemporalTokenError` if it is no such token."""
    rest = token[len(TOKEN_PREFIX) :] if token.startswith(TOKEN_PREFIX) else ''
    _, dot, workflow_id = rest.partition('.')
    if not dot or not workflow_id:
        raise NotATemporalTokenError('This is not a TemporalEventWaiter token: it names no Temporal workflow.')
    return workflow_id


async def resolve_temporal_event(client: Client, token: str, payload: object) -> None:
    """End the wait of `token` with `payload` (converted to its JSON form), from any process; returns once recorded.

    For the waiting handler, `payload` is the `DeferredToolResults` deciding exactly the pending calls. The workflow the
    token names checks it against the wait before accepting it: a payload that does not fit, or a token whose
    wait is over (resolved already, or its deadline passed), is refused (`WorkflowUpdateFailedError`) and not
    recorded. `NotATemporalTokenError` (a `UserError`) when the token is not one of `TemporalEventWaiter`'s.
    """
    try:
        data: JsonValue = to_jsonable_python(payload)
    except PydanticSerializationError as error:
        raise UserError(f'The payload for an external event must be JSON-serializable: {error}') from error
    await _send(client, EventResolution(token, payload=data))


async def fail_temporal_event(client: Client, token: str, reason: str) -> None:
    """End the wait of `token` without a payload: the wait raises `ExternalEventError(reason)`.

    The waiting handler then denies the pending approvals and fails the pending calls with `reason`.
    """
    await _send(client, EventResolution(token, error=reason))


async def _send(client: Client, resolution: EventResolution) -> None:
    handle: WorkflowHandle[Any, Any] = client.get_workflow_handle(token_workflow_id(resolution.token))
    await handle.execute_update(RESOLVE_UPDATE_NAME, resolution)  # pyright: ignore[reportUnknownMemberType]


async def pending_temporal_events(handle: WorkflowHandle[Any, Any]) -> list[WaitingEvent]:
    """The external events the workflow of `handle` waits for now (the waiting handler's approvals among them)."""
    return await handle.query(EVENTS_QUERY_NAME, result_type=list[WaitingEvent])
