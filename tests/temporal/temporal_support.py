"""Agents and workflows for the Temporal tests: AskUser under `TemporalDurability` and under `TemporalAgent`.

Module-level, as a Temporal worker needs them: the workflows run in Temporal's sandbox, which imports
this module again, and the worker registers the agents' activities by name.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import warnings
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import anyio
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext, Tool
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.durable_exec.temporal import PydanticAIWorkflow, TemporalAgent, TemporalDurability
from pydantic_ai.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio import workflow

from pydantic_ai_ask_user import AskUser, AskUserRequest, AskUserRequestedEvent, AskUserResponse, QuestionContext
from pydantic_ai_ask_user._deferred_handlers import REQUEST_INPUT
from pydantic_ai_ask_user.deferred import waiting_handler
from pydantic_ai_ask_user.store import Escalation
from pydantic_ai_ask_user.temporal import (
    AskUserPlugin,
    AskUserWorkflow,
    TemporalAnswerer,
    TemporalExternalEvents,
    passing_ask_user_through,
)

TASK_QUEUE = 'ask-user-tests'
"""The task queue every test worker polls."""

CALL_ID = 'call_0'
"""The tool call id the model uses in every run, as real providers and `FunctionModel` repeat theirs."""

QUESTIONS: dict[str, Any] = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database should the service use?',
            'options': [
                {'label': 'PostgreSQL', 'description': 'the one the team runs'},
                {'label': 'SQLite'},
            ],
            'recommended': 'PostgreSQL',
        },
        # No `recommended` here: a question without one must cross the engine as it was asked.
        {'header': 'Region', 'question': 'Where?', 'options': [{'label': 'EU'}, {'label': 'US'}]},
    ]
}
"""What the model asks: two questions, one with a recommended option."""

ANSWER_PREFIX = 'the person said: '
"""How the model's final text starts, followed by the tool result it got."""


def _answer_seen(messages: list[ModelMessage]) -> object:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returned = [part for part in last.parts if isinstance(part, ToolReturnPart)]
    return returned[0].content if returned else None


def _ask_then_report(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if (answer := _answer_seen(messages)) is not None:
        return ModelResponse(parts=[TextPart(ANSWER_PREFIX + json.dumps(answer, sort_keys=True))])
    return ModelResponse(parts=[ToolCallPart('ask_user_question', QUESTIONS, tool_call_id=CALL_ID)])


async def _ask_then_report_streamed(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    # With an event stream handler, Temporal's model activity streams the response.
    if (answer := _answer_seen(messages)) is not None:
        if hold := os.environ.get(HOLD_FILE_VARIABLE):
            write_at_once(hold, json.dumps(answer))
            await anyio.sleep_forever()
        yield ANSWER_PREFIX + json.dumps(answer, sort_keys=True)
    else:
        yield {0: DeltaToolCall('ask_user_question', json.dumps(QUESTIONS), tool_call_id=CALL_ID)}


def asking_model() -> FunctionModel:
    """A model that asks `QUESTIONS` as call `CALL_ID`, then reports the result it got."""
    return FunctionModel(_ask_then_report, stream_function=_ask_then_report_streamed)


EVENTS: list[AskUserRequestedEvent] = []
"""The `AskUserRequestedEvent`s the run's event stream handler received in this process (the worker runs here)."""

EVENTS_FILE_VARIABLE = 'ASK_USER_TEST_EVENTS_FILE'
"""Environment variable of a worker process: the file it appends the key of each `AskUserRequestedEvent` to."""

HOLD_FILE_VARIABLE = 'ASK_USER_TEST_HOLD_FILE'
"""Environment variable of a worker process: once the model has the answer (or the approved tool runs), it writes this
file and never returns, so the test can kill the worker after the answer was accepted but before the run finished."""

HOLD_ASK_VARIABLE = 'ASK_USER_TEST_HOLD_ASK_FILE'
"""Environment variable of a worker process started with `TEMPORAL_DEBUG=1` (no deadlock detector): the first time
the workflow is about to open a wait (a question, an approval), it writes this file and freezes the worker in the
middle of that workflow task, so the test can kill it while the wait is being published."""


def write_at_once(path: str, text: str) -> None:
    """Write `text` to the file `path` so that whoever sees the file sees all of it (the tests kill the writer then)."""
    Path(f'{path}.part').write_text(text)
    os.replace(f'{path}.part', path)


def hold_once_in_workflow(text: str) -> None:
    """In a worker started with `HOLD_ASK_VARIABLE`: write `text` to that file, once, and block the worker forever."""
    with workflow.unsafe.sandbox_unrestricted():
        path = os.environ.get(HOLD_ASK_VARIABLE)
        if path and not os.path.exists(path):
            write_at_once(path, text)
            threading.Event().wait()  # TEMPORAL_DEBUG runs the workflow task on the worker's only loop: all of it stops


async def record_events(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
    """The run's event stream handler: keeps every `AskUserRequestedEvent` it is given."""
    async for event in events:
        if isinstance(event, AskUserRequestedEvent):
            EVENTS.append(event)
            if path := os.environ.get(EVENTS_FILE_VARIABLE):
                with open(path, 'a') as file:
                    file.write(event.request.key + '\n')


def _ask_user() -> AskUser[Any]:
    return AskUser(answerer=None, recommended_options=True, notes=True)


durable_agent = Agent(
    asking_model(),
    name='durable_asker',
    output_type=[str, DeferredToolRequests],
    capabilities=[TemporalDurability(event_stream_handler=record_events), _ask_user()],
)
"""AskUser under the `TemporalDurability` capability."""

with warnings.catch_warnings():
    warnings.simplefilter('ignore')  # TemporalAgent is deprecated; users still run it
    wrapped_agent = TemporalAgent(
        Agent(
            asking_model(),
            name='wrapped_asker',
            output_type=[str, DeferredToolRequests],
            capabilities=[_ask_user()],
        ),
        event_stream_handler=record_events,
    )
"""AskUser under the (deprecated) `TemporalAgent` wrapper."""


async def _never_asked(request: AskUserRequest) -> AskUserResponse:
    raise AssertionError('a live answerer is refused under Temporal before it is called')  # pragma: no cover


live_agent = Agent(
    asking_model(),
    name='live_asker',
    capabilities=[TemporalDurability(), AskUser(answerer=_never_asked)],
)
"""AskUser with an ordinary live answerer under `TemporalDurability`: refused at run start."""


@dataclass
class Turn:
    """One run's input: the prompt, or the history and the answers a paused run resumes with."""

    prompt: str | None = None
    history: list[ModelMessage] = field(default_factory=list[ModelMessage])
    answers: DeferredToolResults | None = None
    owner: str = 'nobody'
    """Whose run it is (the run's deps): the owned agents address their questions and approvals to them."""


@dataclass
class Outcome:
    """One run's output: what it ended with, and its messages to resume from."""

    output: str | DeferredToolRequests
    messages: list[ModelMessage]


@workflow.defn
class DurableAskWorkflow(PydanticAIWorkflow):
    """Runs `durable_agent` once."""

    __pydantic_ai_agents__ = (durable_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await durable_agent.run(
            turn.prompt, message_history=turn.history or None, deferred_tool_results=turn.answers
        )
        return Outcome(result.output, result.all_messages())


@workflow.defn
class WrappedAskWorkflow(PydanticAIWorkflow):
    """Runs `wrapped_agent` once."""

    __pydantic_ai_agents__ = (wrapped_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await wrapped_agent.run(
            turn.prompt, message_history=turn.history or None, deferred_tool_results=turn.answers
        )
        return Outcome(result.output, result.all_messages())


@workflow.defn
class LiveAskWorkflow(PydanticAIWorkflow):
    """Runs `live_agent` once."""

    __pydantic_ai_agents__ = (live_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await live_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


WAIT_TIMEOUT = 3.0
"""`AskUser(timeout=...)` of `timed_agent`, in seconds: a durable timer in the workflow."""


def _fast_recovery(**options: Any) -> TemporalDurability[Any]:
    return TemporalDurability(
        # A worker killed with -9 stops heartbeating: its activities are retried elsewhere within seconds, not 60.
        activity_config={'start_to_close_timeout': timedelta(seconds=600), 'heartbeat_timeout': timedelta(seconds=2)},
        **options,
    )


@dataclass(frozen=True)
class HoldingTemporalAnswerer(TemporalAnswerer):
    """`TemporalAnswerer`, which a worker started with `HOLD_ASK_VARIABLE` freezes in once, before the wait opens."""

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        hold_once_in_workflow(request.key)
        return await super().ask_durably(request, timeout=timeout)


RECEIPT_KEY = b'the key the runs sign receipts with'
"""`answering_agent`'s `AskUser(receipt_key=...)`: an answer that names who gave it gets a receipt, kept in the history."""

answering_agent = Agent(
    asking_model(),
    name='answering_asker',
    capabilities=[
        _fast_recovery(event_stream_handler=record_events),
        AskUser(answerer=HoldingTemporalAnswerer(), recommended_options=True, notes=True, receipt_key=RECEIPT_KEY),
    ],
)
"""AskUser waiting in the workflow with `TemporalAnswerer`, answered by Update or Signal; with receipts."""

timed_agent = Agent(
    asking_model(),
    name='timed_asker',
    capabilities=[
        TemporalDurability(),
        AskUser(answerer=TemporalAnswerer(), timeout=WAIT_TIMEOUT, recommended_options=True, notes=True),
    ],
)
"""As `answering_agent`, with a deadline."""

unprepared_agent = Agent(
    asking_model(),
    name='unprepared_asker',
    capabilities=[TemporalDurability(), AskUser(answerer=TemporalAnswerer(), recommended_options=True)],
)
"""`TemporalAnswerer` in a workflow that does not inherit `AskUserWorkflow`."""


with warnings.catch_warnings():
    warnings.simplefilter('ignore')  # TemporalAgent is deprecated; users still run it
    wrapped_answering_agent = TemporalAgent(
        Agent(
            asking_model(),
            name='wrapped_answering_asker',
            capabilities=[AskUser(answerer=TemporalAnswerer(), recommended_options=True, notes=True)],
        ),
        event_stream_handler=record_events,
    )
"""`TemporalAnswerer` under the (deprecated) `TemporalAgent` wrapper."""


@workflow.defn
class WrappedAnsweredAskWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `wrapped_answering_agent` once; the question waits in this workflow."""

    __pydantic_ai_agents__ = (wrapped_answering_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await wrapped_answering_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class AnsweredAskWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `answering_agent` once; the question waits in this workflow."""

    __pydantic_ai_agents__ = (answering_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await answering_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class TimedAskWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `timed_agent` once."""

    __pydantic_ai_agents__ = (timed_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await timed_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class UnpreparedAskWorkflow(PydanticAIWorkflow):
    """Runs `unprepared_agent` once, without `AskUserWorkflow`."""

    __pydantic_ai_agents__ = (unprepared_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await unprepared_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


DEPLOYS_FILE_VARIABLE = 'ASK_USER_TEST_DEPLOYS_FILE'
"""Environment variable of a worker process: the file the `deploy` tool appends each target it deployed to."""

DEPLOYED: list[str] = []
"""The targets `deploy` deployed to in this process (the worker runs here)."""

DEPLOY_ARGS = {'target': 'production'}
"""What the model asks to deploy, as call `CALL_ID`."""

TOOL_SAID = 'deploy said: '
"""How the approving model's final text starts, followed by what the `deploy` call returned (or its denial)."""


async def deploy(target: str) -> str:
    """Deploy the service to `target` (a tool that needs approval)."""
    if hold := os.environ.get(HOLD_FILE_VARIABLE):
        write_at_once(hold, target)
        await anyio.sleep_forever()
    DEPLOYED.append(target)
    if path := os.environ.get(DEPLOYS_FILE_VARIABLE):
        with open(path, 'a') as file:
            file.write(target + '\n')
    return f'deployed to {target}'


def _deploy_then_report(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if (said := _answer_seen(messages)) is not None:
        return ModelResponse(parts=[TextPart(TOOL_SAID + str(said))])
    return ModelResponse(parts=[ToolCallPart('deploy', DEPLOY_ARGS, tool_call_id=CALL_ID)])


async def wait_for_a_person(ctx: RunContext[Any], requests: DeferredToolRequests, token: str) -> None:
    """`RequestInput`'s `ask`: answers nothing, so the wait opens and a person resolves it by Update."""
    hold_once_in_workflow(token)


async def approve_every_call(ctx: RunContext[Any], requests: DeferredToolRequests, token: str) -> DeferredToolResults:
    """`RequestInput`'s `ask` as an automatic policy: decides in place, from its arguments alone."""
    return DeferredToolResults(approvals={call.tool_call_id: True for call in requests.approvals})


APPROVAL_TIMEOUT = timedelta(seconds=3)
"""The waiting handler's `timeout` of `timed_approval_agent`: a durable timer in the workflow."""


def _approving_agent(
    name: str, *capabilities: Any, timeout: timedelta | None = None, ask: Any = wait_for_a_person
) -> Agent[None, str]:
    return Agent(
        FunctionModel(_deploy_then_report),
        name=name,
        tools=[Tool(deploy, requires_approval=True)],
        capabilities=[*capabilities, TemporalExternalEvents(), waiting_handler(ask, timeout=timeout)],
    )


approval_agent = _approving_agent('approval_asker', _fast_recovery())
"""A `deploy` call waiting in the workflow for approval (`RequestInput` with `TemporalExternalEvents`)."""

timed_approval_agent = _approving_agent('timed_approval_asker', TemporalDurability(), timeout=APPROVAL_TIMEOUT)
"""As `approval_agent`, with a deadline."""

with warnings.catch_warnings():
    warnings.simplefilter('ignore')  # TemporalAgent is deprecated; users still run it
    wrapped_approval_agent = TemporalAgent(_approving_agent('wrapped_approval_asker'))
"""`approval_agent`'s approval under the (deprecated) `TemporalAgent` wrapper."""

policy_approval_agent = _approving_agent('policy_approval_asker', TemporalDurability(), ask=approve_every_call)
"""As `approval_agent`, with an `ask` that approves in place: no wait opens."""

unprepared_approval_agent = _approving_agent('unprepared_approval_asker', TemporalDurability())
"""`TemporalExternalEvents` in a workflow that does not inherit `AskUserWorkflow`."""


deferred_waiting_agent = Agent(
    asking_model(),
    name='deferred_waiting_asker',
    capabilities=[
        TemporalDurability(),
        TemporalExternalEvents(),
        AskUser(answerer=None, recommended_options=True),
        waiting_handler(wait_for_a_person),
    ],
)
"""A deferred AskUser question that `RequestInput` waits for in the workflow, beside any approvals."""


@workflow.defn
class DeferredWaitingWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `deferred_waiting_agent` once; its question waits in this workflow as a `RequestInput` call."""

    __pydantic_ai_agents__ = (deferred_waiting_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await deferred_waiting_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class ApprovalWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `approval_agent` once; the approval waits in this workflow."""

    __pydantic_ai_agents__ = (approval_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await approval_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class TimedApprovalWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `timed_approval_agent` once."""

    __pydantic_ai_agents__ = (timed_approval_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await timed_approval_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class PolicyApprovalWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `policy_approval_agent` once."""

    __pydantic_ai_agents__ = (policy_approval_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await policy_approval_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class WrappedApprovalWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `wrapped_approval_agent` once."""

    __pydantic_ai_agents__ = (wrapped_approval_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await wrapped_approval_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class UnpreparedApprovalWorkflow(PydanticAIWorkflow):
    """Runs `unprepared_approval_agent` once, without `AskUserWorkflow`."""

    __pydantic_ai_agents__ = (unprepared_approval_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await unprepared_approval_agent.run(turn.prompt)
        return Outcome(result.output, result.all_messages())


def _ordered_agent(spelling: str, handler_first: bool) -> Agent[None, str]:
    """`approval_agent` with its waiting handler spelled `spelling` (`'handle'`: `HandleDeferredToolCalls`,
    `'request-input'`: `RequestInput`, whatever this Pydantic AI makes of them) and listed before or after
    `TemporalExternalEvents`."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # `RequestInput` is deprecated on 2.78; users still write it
        handler: Any = (
            HandleDeferredToolCalls(wait_for_a_person)
            if spelling == 'handle'
            else cast(Any, REQUEST_INPUT)(wait_for_a_person)
        )
    events = TemporalExternalEvents[None]()
    return Agent(
        FunctionModel(_deploy_then_report),
        name=f'ordered_{spelling.replace("-", "_")}_{"handler_first" if handler_first else "events_first"}',
        tools=[Tool(deploy, requires_approval=True)],
        capabilities=[TemporalDurability(), *([handler, events] if handler_first else [events, handler])],
    )


ORDERED_AGENTS = {
    f'{spelling} {order}': _ordered_agent(spelling, order == 'handler-first')
    for spelling in ('handle', 'request-input')
    for order in ('events-first', 'handler-first')
}
"""`approval_agent` in both spellings of its waiting handler, in both orders, by `'SPELLING ORDER'`."""


@workflow.defn
class OrderedApprovalWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs the agent of `ORDERED_AGENTS` its prompt names, once."""

    __pydantic_ai_agents__ = tuple(ORDERED_AGENTS.values())

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await ORDERED_AGENTS[turn.prompt].run('Deploy the service')
        return Outcome(result.output, result.all_messages())


QUESTION_CALL_ID = 'call_1'
"""The tool call id of the question an owned release asks beside its deploy call (`ASK_TOO` in the prompt)."""

ASK_TOO = 'and ask'
"""In the prompt of an owned release: the model asks `QUESTIONS` (as `QUESTION_CALL_ID`) beside its deploy call."""


def _owner(ctx: RunContext[str]) -> str:
    return ctx.deps


def _release_context(ctx: RunContext[str]) -> QuestionContext:
    return QuestionContext(title=f'Release for {ctx.deps}')


def _release_then_report(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Deploy (call `CALL_ID`), asking `QUESTIONS` too when the prompt says `ASK_TOO`; then every result, by call."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returned = {part.tool_call_id: part.content for part in last.parts if isinstance(part, ToolReturnPart)}
    if returned:
        return ModelResponse(parts=[TextPart(TOOL_SAID + json.dumps(returned, sort_keys=True))])
    prompts = [part.content for part in last.parts if isinstance(part, UserPromptPart)]
    calls = [ToolCallPart('deploy', DEPLOY_ARGS, tool_call_id=CALL_ID)]
    if any(isinstance(prompt, str) and ASK_TOO in prompt for prompt in prompts):
        calls.append(ToolCallPart('ask_user_question', QUESTIONS, tool_call_id=QUESTION_CALL_ID))
    return ModelResponse(parts=calls)


owned_release_agent = Agent(
    FunctionModel(_release_then_report),
    name='release_asker',
    deps_type=str,
    tools=[Tool(deploy, requires_approval=True)],
    capabilities=[
        TemporalDurability(),
        TemporalExternalEvents(audience=_owner, context=_release_context),
        AskUser(answerer=None, audience=_owner, context=_release_context, recommended_options=True),
        waiting_handler(wait_for_a_person),
    ],
)
"""A release of its owner's (deps): a deploy call waiting for approval, with a deferred question too (`ASK_TOO`), both
addressed to the owner by `TemporalExternalEvents(audience=...)` and `AskUser(audience=...)`."""

owned_asking_agent = Agent(
    asking_model(),
    name='owned_asker',
    deps_type=str,
    capabilities=[
        TemporalDurability(),
        AskUser(
            answerer=TemporalAnswerer(), audience=_owner, context=_release_context, recommended_options=True, notes=True
        ),
    ],
)
"""`QUESTIONS` as call `CALL_ID`, waiting in the workflow (`TemporalAnswerer`), addressed to the run's owner."""


@workflow.defn
class OwnedReleaseWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `owned_release_agent` once for `Turn.owner`."""

    __pydantic_ai_agents__ = (owned_release_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await owned_release_agent.run(turn.prompt, deps=turn.owner)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class OwnedAskWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `owned_asking_agent` once for `Turn.owner`."""

    __pydantic_ai_agents__ = (owned_asking_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await owned_asking_agent.run(turn.prompt, deps=turn.owner)
        return Outcome(result.output, result.all_messages())


ESCALATE_AFTER = 3.0
"""When the questions and approvals of the escalating workflows escalate (to `team:oncall`), in seconds."""

ESCALATION = Escalation(after=ESCALATE_AFTER, to='team:oncall', note='the owner is away')
"""The escalation policy of `escalating_agent`'s question and `escalating_release_agent`'s approval."""

escalating_agent = Agent(
    asking_model(),
    name='escalating_asker',
    deps_type=str,
    capabilities=[
        _fast_recovery(),
        AskUser(
            answerer=TemporalAnswerer(), audience=_owner, escalate=ESCALATION, recommended_options=True, notes=True
        ),
    ],
)
"""`owned_asking_agent` whose question escalates to `team:oncall` when unanswered `ESCALATE_AFTER` seconds."""

escalating_release_agent = Agent(
    FunctionModel(_release_then_report),
    name='escalating_release_asker',
    deps_type=str,
    tools=[Tool(deploy, requires_approval=True)],
    capabilities=[
        TemporalDurability(),
        TemporalExternalEvents(audience=_owner, escalate=ESCALATION),
        waiting_handler(wait_for_a_person),
    ],
)
"""A deploy call of its owner's waiting for approval, which escalates as `escalating_agent`'s question does."""


@workflow.defn
class EscalatingAskWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `escalating_agent` once for `Turn.owner`."""

    __pydantic_ai_agents__ = (escalating_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await escalating_agent.run(turn.prompt, deps=turn.owner)
        return Outcome(result.output, result.all_messages())


@workflow.defn
class EscalatingReleaseWorkflow(AskUserWorkflow, PydanticAIWorkflow):
    """Runs `escalating_release_agent` once for `Turn.owner`."""

    __pydantic_ai_agents__ = (escalating_release_agent,)

    @workflow.run
    async def run(self, turn: Turn) -> Outcome:
        result = await escalating_release_agent.run(turn.prompt, deps=turn.owner)
        return Outcome(result.output, result.all_messages())


ALL_WORKFLOWS = (
    OrderedApprovalWorkflow,
    DurableAskWorkflow,
    WrappedAskWorkflow,
    LiveAskWorkflow,
    AnsweredAskWorkflow,
    WrappedAnsweredAskWorkflow,
    TimedAskWorkflow,
    UnpreparedAskWorkflow,
    ApprovalWorkflow,
    TimedApprovalWorkflow,
    WrappedApprovalWorkflow,
    UnpreparedApprovalWorkflow,
    DeferredWaitingWorkflow,
    PolicyApprovalWorkflow,
    OwnedReleaseWorkflow,
    OwnedAskWorkflow,
    EscalatingAskWorkflow,
    EscalatingReleaseWorkflow,
)
"""Every workflow a test worker runs."""


_VALIDATED: set[tuple[object, ...]] = set()
"""The workflows the sandbox validated in this process, each with the restrictions it was validated under."""


@functools.cache
def _validating_once() -> type[Any]:
    """Temporal's `SandboxedWorkflowRunner`, validating each workflow class once per process rather than per worker.

    A worker validates every workflow it is given when it starts: it imports the workflow's module afresh in the
    sandbox, about 0.1 s of CPU each, 2 s for `ALL_WORKFLOWS`, and the tests start a worker per test. The same class
    validated again under the same restrictions gives the same answer; every run of a workflow still runs in a
    sandbox of its own, as it does without this.
    """
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

    class ValidatingOnce(SandboxedWorkflowRunner):
        def prepare_workflow(self, defn: Any) -> None:
            key = (defn.cls, self.runner_class, repr(self.restrictions))
            if key not in _VALIDATED:
                super().prepare_workflow(defn)
                _VALIDATED.add(key)

    return ValidatingOnce


def warm_worker_start() -> None:
    """Compute once what every test worker's start computes the same again: its build id and the validation of
    `ALL_WORKFLOWS` under the sandbox restrictions of the Pydantic AI plugin and `AskUserPlugin`.

    `temporal_worker.py` calls it as it is imported, which the fork server (`tests/forked.py`) does once per test
    process: each worker forked from it inherits both and starts about 4 s of CPU sooner. The build id is the
    SDK's own memoized hash of the loaded code (a worker computes it the same way when it is not given one); the
    runner is the one the plugins make of `patient_worker`'s, in the worker's order (the client's `PydanticAIPlugin`,
    then the worker's `AskUserPlugin`), so a forked worker finds its workflows in `_VALIDATED` under the very
    restrictions it would validate them with.
    """
    import asyncio

    from pydantic_ai.durable_exec.temporal import _workflow_runner  # pyright: ignore[reportPrivateUsage]
    from temporalio.worker import _worker  # pyright: ignore[reportPrivateUsage]
    from temporalio.workflow import _Definition  # pyright: ignore[reportPrivateUsage]

    _worker.load_default_build_id()
    runner = passing_ask_user_through(_workflow_runner(_validating_once()()))

    async def validate() -> None:  # a workflow instance, even one made to validate, sets itself on a running loop
        for each in ALL_WORKFLOWS:
            runner.prepare_workflow(_Definition.must_from_class(each))

    asyncio.run(validate())
    assert len(_VALIDATED) >= len(ALL_WORKFLOWS), 'the plugin no longer returns the runner it was given, replaced'


def patient_worker(client: Any, **options: Any) -> Any:
    """A `temporalio.worker.Worker(client, **options)`, with `AskUserPlugin` unless `plugins` are given, whose workflow
    tasks may take a minute, not 2 s, to yield.

    Temporal fails a workflow task that does not yield within 2 s as a "potential deadlock". On a loaded machine the
    first task of a run takes longer than that for no fault of the code (the sandbox imports the workflow's modules
    afresh and Pydantic AI builds its payload type adapters in it), and a worker whose task was declared deadlocked
    may never shut down: its eviction is retried forever, catching every exception, pytest-timeout's included, so
    `async with Worker(...)` at the end of a test held its xdist worker (and CI) until it was killed. The bound is
    private to the SDK; the assertion makes a new SDK that moved it fail here, loudly, instead of back at 2 s.
    """
    from temporalio.worker import Worker

    options.setdefault('workflow_runner', _validating_once()())
    # This package passed through the sandbox, as the docs' worker has it: not imported again for every run.
    options.setdefault('plugins', [AskUserPlugin()])
    worker = Worker(client, **options)
    workflows = worker._workflow_worker
    assert workflows is not None, 'a worker without workflows'
    # None under TEMPORAL_DEBUG=1, which turns the detector off.
    assert workflows._deadlock_timeout_seconds in (2, None), 'the SDK moved its deadlock bound: find it again'
    if workflows._deadlock_timeout_seconds is not None:
        workflows._deadlock_timeout_seconds = 60
    return worker
