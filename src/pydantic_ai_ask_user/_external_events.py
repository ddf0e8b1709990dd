"""What the durable external-event waiters share: the capability that installs one, and the calls it waits for.

Pydantic AI hands an `ExternalEventWaiter` only a name, `ask` and a timeout. A waiter that checks a
resolution against the calls `RequestInput` waits for (`DBOSEventWaiter`, `TemporalEventWaiter`) gets them
from its capability, which notes them in `handle_deferred_tool_calls` just before `RequestInput` opens
the wait. Nothing here imports an engine.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering, RequestInput, WrapRunHandler
from pydantic_ai.external_events import ExternalEventWaiter, external_event_scope
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import AgentDepsT, DeferredToolRequests, DeferredToolResults

if TYPE_CHECKING:
    from ._answers import AskUserRequest
    from ._audience import AudienceSetting, ContextSetting

__all__ = ('ExternalEventsCapability', 'take_calls_to_wait_for', 'take_tool_parameters', 'approvals_addressing')

_calls_to_wait_for: ContextVar[DeferredToolRequests | None] = ContextVar('ask_user_calls_to_wait_for', default=None)
"""The calls `RequestInput` is about to wait for in this run, noted by an `ExternalEventsCapability` just before."""


_tool_parameters: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar('ask_user_tool_parameters', default=None)
"""The parameters JSON schema of each tool whose call awaits approval in the wait opening now, by tool name."""


def take_tool_parameters() -> dict[str, dict[str, Any]] | None:
    """The parameters JSON schemas of the tools whose calls the wait opening now holds for approval, by tool name
    (from the run's tool definitions), so edited arguments can be checked against them; taken, as the calls are.
    """
    parameters = _tool_parameters.get()
    _tool_parameters.set(None)
    return parameters


def approvals_addressing(
    ctx: RunContext[Any], questions: Sequence[AskUserRequest], audience: AudienceSetting, context: ContextSetting
) -> dict[str, Any]:
    """Whom a wait's approvals are for and where they come from, as `{'audience': ..., 'context': ...}`.

    As set (`audience` and `context`, as `AskUser`'s: a value, or a function of the run), else as the wait's first
    question's (`questions`), else, in a wait without questions, for anyone, with the agent's name and the
    conversation only. `UserError` when a setting gives no audience or no `QuestionContext`, as `AskUser`'s does.
    """
    from ._capability import AskUser

    if audience is None and context is None and questions:
        return {'audience': questions[0].audience, 'context': questions[0].context}
    # Resolved as `AskUser` resolves its own settings (a function called on the run, the agent and conversation).
    setting = AskUser[Any](answerer=None, audience=audience, context=context)
    return {'audience': setting._audience(ctx), 'context': setting._context(ctx)}  # pyright: ignore[reportPrivateUsage]


def take_calls_to_wait_for() -> DeferredToolRequests | None:
    """The calls the wait opening now decides, if `RequestInput` opens it; taken: a later wait is not held to them."""
    pending = _calls_to_wait_for.get()
    _calls_to_wait_for.set(None)
    return pending


class ExternalEventsCapability(AbstractCapability[AgentDepsT], ABC):
    """Installs an engine's `ExternalEventWaiter` for each run inside its durable container; notes the calls waited for.

    Innermost, just outside `RequestInput`: the deferred calls it sees are the ones `RequestInput` waits for,
    and its waiter is installed inside the durability capability's refusal, so it is the one used.
    """

    @abstractmethod
    def in_container(self) -> bool:
        """Whether the code runs in the engine's durable container (its workflow body), where the waiter waits."""

    @abstractmethod
    def make_waiter(self) -> ExternalEventWaiter:
        """The waiter to install for one run."""

    def get_ordering(self) -> CapabilityOrdering:
        """Innermost, just outside `RequestInput`."""
        return CapabilityOrdering(position='innermost', wraps=[RequestInput])

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Resolve nothing: note the calls still pending, which the wait `RequestInput` opens next holds."""
        if self.in_container():
            _calls_to_wait_for.set(requests)
            tools = ctx.tools
            names = {call.tool_name for call in requests.approvals} & tools.keys()
            _tool_parameters.set({name: dict(tools[name].parameters_json_schema) for name in sorted(names)})
        return None

    async def wrap_run(self, ctx: RunContext[AgentDepsT], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        """Run the agent with the waiter installed when inside the engine's container; as it is elsewhere."""
        if not self.in_container():
            return await handler()
        with external_event_scope(self.make_waiter()):
            return await handler()
