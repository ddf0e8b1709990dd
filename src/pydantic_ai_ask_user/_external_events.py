"""What the durable external-event waiters share: the capability that installs one, and the calls it waits for.

Pydantic AI hands an `ExternalEventWaiter` only a name, `ask` and a timeout. A waiter that checks a
resolution against the calls a waiting handler waits for (`DBOSEventWaiter`, `TemporalEventWaiter`) gets them
from its capability, which notes them in `handle_deferred_tool_calls` just before the handler
(`HandleDeferredToolCalls` with a handler that takes a resume token, or `RequestInput` before Pydantic AI 2.78)
opens the wait. So the capability must come before that handler in the run's chain: it orders itself so, and
refuses at run start, naming the fix, a run where it does not (see `ExternalEventsCapability.wrap_run`). Nothing
here imports an engine.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering, HandleDeferredToolCalls
from pydantic_ai.exceptions import UserError
from pydantic_ai.external_events import ExternalEventWaiter, external_event_scope
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import AgentDepsT, DeferredToolRequests, DeferredToolResults

from ._deferred_handlers import HANDLERS_TAKE_TOKENS, REQUEST_INPUT, takes_token, waits_for_people

if TYPE_CHECKING:
    from ._answers import AskUserRequest
    from ._audience import AudienceSetting, ContextSetting

__all__ = (
    'ExternalEventsCapability',
    'check_handler_order',
    'take_calls_to_wait_for',
    'take_tool_parameters',
    'approvals_addressing',
)

_calls_to_wait_for: ContextVar[DeferredToolRequests | None] = ContextVar('ask_user_calls_to_wait_for', default=None)
"""The calls the waiting handler is about to wait for in this run, noted by an `ExternalEventsCapability` before."""


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
    """The calls the wait opening now decides, if a waiting handler opens it; taken: no later wait is held to them."""
    pending = _calls_to_wait_for.get()
    _calls_to_wait_for.set(None)
    return pending


class ExternalEventsCapability(AbstractCapability[AgentDepsT], ABC):
    """Installs an engine's `ExternalEventWaiter` for each run inside its durable container; notes the calls waited for.

    Innermost, just outside the waiting handler: the deferred calls it sees are the ones the handler waits for,
    and its waiter is installed inside the durability capability's refusal, so it is the one used. It wraps
    `RequestInput` wherever listed; a `HandleDeferredToolCalls` cannot be wrapped by type (one whose handler
    answers in place must stay outside it), so one that waits must be listed after it, and a run where it is not
    is refused at its start.
    """

    @abstractmethod
    def in_container(self) -> bool:
        """Whether the code runs in the engine's durable container (its workflow body), where the waiter waits."""

    @abstractmethod
    def make_waiter(self) -> ExternalEventWaiter:
        """The waiter to install for one run."""

    def get_ordering(self) -> CapabilityOrdering:
        """Innermost, just outside `RequestInput` (when this Pydantic AI still has it)."""
        return CapabilityOrdering(position='innermost', wraps=[] if REQUEST_INPUT is None else [REQUEST_INPUT])

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Resolve nothing: note the calls still pending, which the wait the waiting handler opens next holds."""
        if self.in_container():
            _calls_to_wait_for.set(requests)
            tools = ctx.tools
            names = {call.tool_name for call in requests.approvals} & tools.keys()
            _tool_parameters.set({name: dict(tools[name].parameters_json_schema) for name in sorted(names)})
        return None

    # `handler` is Pydantic AI's `WrapRunHandler` spelled out: that alias is a string, which `typing.get_type_hints`
    # would read in this module, where its names are not.
    async def wrap_run(
        self, ctx: RunContext[AgentDepsT], *, handler: Callable[[], Awaitable[AgentRunResult[Any]]]
    ) -> AgentRunResult[Any]:
        """Run the agent with the waiter installed when inside the engine's container; as it is elsewhere.

        In the container, first a `UserError` naming the fix when the run's chain would lose the check on a
        decision: a waiting handler that opens its wait before this capability has noted the calls.
        """
        if not self.in_container():
            return await handler()
        check_handler_order(self, ctx.root_capability)
        with external_event_scope(self.make_waiter()):
            return await handler()


def check_handler_order(capability: ExternalEventsCapability[Any], root: AbstractCapability[Any] | None) -> None:
    """Refuse a chain in which a waiting handler comes before `capability`, or one this Pydantic AI cannot run.

    Pydantic AI calls `handle_deferred_tool_calls` outermost first, and a waiting handler opens its wait inside
    its own call: one listed before `capability` would wait before the calls are noted, and the wait would take
    any decision (the run then fails on one that leaves a call out) and be missing from the lists that show it.
    """
    if root is None:
        return
    leaves: list[AbstractCapability[Any]] = []
    root.apply(leaves.append)
    name = type(capability).__name__
    for leaf in leaves:
        if isinstance(leaf, ExternalEventsCapability):
            return
        if isinstance(leaf, HandleDeferredToolCalls) and not HANDLERS_TAKE_TOKENS and takes_token(leaf.handler):
            raise UserError(
                f'`HandleDeferredToolCalls` hands a resume token to its handler only from Pydantic AI 2.78, and this '
                f'is an older one: use `RequestInput(ask)` here, or upgrade pydantic-ai-slim (with `{name}()` '
                f'listed before it).'
            )
        if waits_for_people(leaf):
            raise UserError(
                f'`{type(leaf).__name__}(...)`, which waits for a decision, comes before `{name}()` among the '
                f"agent's capabilities, so its wait would open before `{name}` notes the calls it decides, and "
                f'no decision could be checked: list `{name}()` before it.'
            )
