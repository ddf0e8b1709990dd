"""`AskUser`: the capability that gives the model its one tool, `ask_user_question`."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias
from uuid import uuid4

import anyio
from pydantic_ai import CallDeferred, FunctionToolset, RunContext
from pydantic_ai.agent import AbstractAgent, AgentRunResult
from pydantic_ai.capabilities import AbstractCapability, WrapperCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models import ModelRequestContext, ModelRequestParameters
from pydantic_ai.tools import AgentDepsT, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import PydanticSerializationError, to_json

from ._answers import (
    ADDRESSING_METADATA_KEY,
    DECLINED,
    RUN_ID_METADATA_KEY,
    RUN_STEP_METADATA_KEY,
    TIMED_OUT,
    TOOL_NAME,
    WITHDRAWN,
    Answerer,
    AnswerResult,
    AskUserRequest,
    AskUserResponse,
    QuestionWithdrawn,
    ask_user_result,
    check_tool_result,
    durable_answerer,
)
from ._asking import wait_for_answer
from ._audience import AudienceSetting, ContextSetting, QuestionContext, addressing_json, check_audience
from ._durable import (
    ask_in_dbos_step,
    durable_engine,
    is_suspension,
    note_run_engine,
    refusal_message,
    temporal_workflow_time,
)
from ._escalation import Escalation, EscalationSetting, check_escalation
from ._events import AskUserAnsweredEvent, AskUserRequestedEvent
from ._fast_questions import ArgumentsValidator
from ._observe import AskObservation
from ._questions import Question, Questions, RecommendingQuestions
from ._receipt import AnswerReceipt, receipt_keeper
from ._signing import check_key
from ._text import printable

__all__ = (
    'AskUser',
    'AskUserTimeoutError',
    'OnTimeout',
    'TimeoutMessage',
    'INSTRUCTIONS',
    'TOOL_DESCRIPTION',
    'TOOLSET_ID',
)

MAX_TIMEOUT = 10 * 366 * 24 * 3600
"""The longest `AskUser(timeout=...)`, ten years: a deadline must be a date the front ends can show.

A wait without a limit is `timeout=None`, not a huge number.
"""

TOOLSET_ID = 'ask_user'
"""The id of the `ask_user_question` toolset when the capability has none: durable engines name steps after it.

Only the toolset's: the capability itself declares no default id (see `AskUser.id`).
"""

TOOL_METADATA: Mapping[str, Any] = {'temporal': False, 'prefect': False}
"""The metadata of `ask_user_question`: under Temporal and Prefect, the tool runs in workflow or flow code, not in
an activity or a task.

Deferred, it does no I/O (it emits `AskUserRequestedEvent` and defers), and emitting works only in workflow code,
where the event reaches the run's event stream handler; a `TemporalAnswerer` waits there on a durable timer and
an Update. Any other live answerer is refused under Temporal before the tool can run. An activity would also
send the validated questions through a JSON round trip their schema is not made for. Under Prefect, only flow
code may suspend the flow run, which is how `PrefectAnswerer` waits; a task may not.
"""

INSTRUCTIONS = (
    f'You can put multiple-choice questions to the user with the `{TOOL_NAME}` tool. '
    'Use it when the task is ambiguous in a way that changes what you would do and the answer is not in '
    'the conversation, the workspace or the tools you have; do not ask what you can find out yourself. '
    'Offer concrete options the user can pick from rather than open questions, and put related questions '
    'into one call instead of asking them one after another. '
    'If the user declines or does not answer in time, make a reasonable choice yourself and say which.'
)
"""The one static instruction `AskUser` adds; it never changes, so it keeps the prompt cache warm."""

TOOL_DESCRIPTION = (
    'Ask the user 1 to 10 multiple-choice questions and wait for the answers. Each question has a short '
    'unique header (at most 25 characters), the question text, 2 to 6 options with unique labels and an '
    'optional description, and multi_select when more than one option may be picked. The result maps each '
    'header to the list of labels picked, or to a one-item list holding the answer the user typed instead.'
)
"""What the model reads about `ask_user_question`."""

TIMEOUT_DECLINES = ' If the user does not answer in time, the result is the same as when they decline.'
"""Added to the description with `on_timeout='decline'`, which changes what the model gets back at the deadline."""

NOTES_DESCRIPTION = (
    ' The user may add a note to any answer; such an answer is an object {"answer": [...], "note": "..."} '
    'instead of the list, and the note qualifies the answer: follow it.'
)
"""Added to the description with `AskUser(notes=True)`, which changes the shape of an answer that has a note."""

RECOMMENDED_DESCRIPTION = (
    ' A question may set recommended to the label of the one option you recommend; the user is shown it '
    'and still chooses.'
)
"""Added to the description with `AskUser(recommended_options=True)`, which adds `recommended` to the schema."""

TIMEOUT_MESSAGE = (
    ' If the user does not answer in time, the result is a message from the application saying what to do instead.'
)
"""Added to the description with `on_timeout=TimeoutMessage(...)`."""


@dataclass(frozen=True)
class TimeoutMessage:
    """`AskUser(on_timeout=TimeoutMessage(text))`: at the deadline, the model gets `text` as the tool result."""

    text: str
    """What the model reads instead of `TIMED_OUT`: written by the application, so it can say what to do."""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f'TimeoutMessage(text) must be a non-empty string, not {self.text!r}.')


PlainResult: TypeAlias = dict[str, list[str]] | str
"""The result type of the tool without `notes`: the specified one, as a model that reads return schemas sees it."""

OnTimeout: TypeAlias = Literal['tell', 'decline', 'fail'] | TimeoutMessage
"""What `AskUser` does when its timeout runs out: see `AskUser.on_timeout`."""

_ON_TIMEOUT_CHOICES = "'tell' (the default), 'decline', 'fail' or TimeoutMessage('your own text')"
"""The choices of `on_timeout`, as the error for a wrong one names them."""


class AskUserTimeoutError(TimeoutError):
    """The person did not answer in time, and `AskUser(on_timeout='fail')` ends the run with this error."""

    def __init__(self, request: AskUserRequest, timeout: float) -> None:
        self.request = request
        """The request nobody answered; `request.id` is the tool call id."""
        self.timeout = timeout
        """The `AskUser(timeout=...)` that ran out, in seconds."""
        headers = ', '.join(repr(printable(question.header)) for question in request.questions)
        super().__init__(
            f'Nobody answered the question(s) {headers} within the {timeout:g} s of AskUser(timeout=...), '
            "and AskUser(on_timeout='fail') ends the run."
        )

    def __reduce__(self) -> tuple[type[AskUserTimeoutError], tuple[AskUserRequest, float]]:
        # Built again from its fields, so it survives pickling: a durable engine records a run's error that way.
        return type(self), (self.request, self.timeout)


@dataclass
class AskUser(AbstractCapability[AgentDepsT]):
    """Lets the model ask the user multiple-choice questions mid-run.

    The capability owns the question schema and validation; the answerer owns the person. Whatever it
    is, a terminal menu, a web form or a scripted function in a test, the run waits for it inside the
    tool call and the model gets back the picked labels. There is no default answerer: a capability that
    reads stdin cannot be used on a server.
    """

    answerer: Answerer | None
    """Presents each `AskUserRequest` to the user and returns their `AskUserResponse`.

    `None` defers every call instead: the run ends with `DeferredToolRequests`, and the answer comes
    back in `DeferredToolResults`, from this process or another (see `ask_user_result`).
    """

    _: KW_ONLY

    timeout: float | None = None
    """Seconds to wait for the answerer, or `None` to wait as long as it takes.

    When it runs out, the answerer is cancelled, `AskUserAnsweredEvent` fires with `timed_out=True`,
    and `on_timeout` says what follows (by default the model is told `TIMED_OUT`). An answerer that
    already had the answer when it was cancelled may still return it, and that answer is used: an
    answer a person was told was taken is never dropped. A `DurableAnswerer` is given the timeout
    instead, and keeps the deadline across restarts.
    Not allowed with `answerer=None`, where nothing waits.
    """

    on_timeout: OnTimeout = 'tell'
    """What happens when `timeout` runs out (the answered event says `timed_out=True` in every case).

    - `'tell'` (the default): the model gets `TIMED_OUT`, telling it to make and state a choice itself.
    - `'decline'`: the model gets `DECLINED`, as if the person had declined.
    - `'fail'`: the run fails with `AskUserTimeoutError`.
    - `TimeoutMessage(text)`: the model gets `text`, the application's own words.

    `'decline'` and `TimeoutMessage` add a sentence to the tool description saying what a timeout
    returns, since they change the result the model reads; `'tell'` and `'fail'` leave the tool as it is.
    Anything but `'tell'` needs a `timeout`.
    """

    max_retries: int | None = None
    """How many invalid calls in a row the model may make before the run fails; `None` uses the agent's `retries`."""

    notes: bool = False
    """Let the person add a note to any answer ("PostgreSQL, but only after tonight's backup").

    Sets `AskUserRequest.notes`, so front ends offer a note; an answer with one reaches the model as
    `{"answer": [...], "note": "..."}`, and the tool description says so. Off by default: the tool is then
    exactly as specified.
    """

    recommended_options: bool = False
    """Let the model mark one option per question as recommended (`Question.recommended`).

    Adds the optional `recommended` field to the tool's schema and a sentence to its description; front
    ends show the recommendation and put the cursor on it, and the person still picks. Off by default: the
    field is not in the schema, and a call that sets it gets a validation retry.
    """

    id: str | None = None
    """The capability's id within a run (Pydantic AI's `AbstractCapability.id`); `None` (the default) declares none.

    No default on purpose: Pydantic AI merges capabilities that share an id (a run's replaces the agent's), which
    would turn a second `AskUser`, a second answerer, into a silent replacement; without one, every second `AskUser`
    is refused. Durable engines still get stable names: the toolset's id is `TOOLSET_ID` (`'ask_user'`) unless you
    give this one, and the tool definition sent to the model does not carry the name Pydantic AI makes up for a
    capability without an id in every run, which a resumed Prefect flow run would otherwise not find its recorded
    model response by.
    """

    audience: AudienceSetting = None
    """Who may answer the questions: a name, several (any of them may answer), or a function of the run returning them.

    A function is called once per question with the `RunContext` (typically `lambda ctx: ctx.deps.user_id`, or a
    team: `f'team:{ctx.deps.team}'`). Names are matched against the `Person` a front end knows (the web inbox's
    `authorize` hook or a login link's name): a question addressed to someone else is, to them, one that does
    not exist. `None` (the default, or what the function returns) leaves the question unaddressed: anyone who may
    open the inbox sees it. An empty collection is an error (nobody could answer), never "everyone".
    Recorded as `AskUserRequest.audience` in every store, event and webhook.
    """

    context: ContextSetting = None
    """Where the questions come from, shown beside them: a `QuestionContext` or a function of the run returning one.

    Its title, summary and link are the application's; the agent's name and the conversation id are filled from
    the run when it leaves them unset. Recorded as `AskUserRequest.context`.
    """

    escalate: EscalationSetting = None
    """What happens while a question waits unanswered: one `Escalation` or several, the earliest first; `None`: none.

    `AskUser(escalate=Escalation(after=timedelta(minutes=30), to='team:oncall'))`: when the question still waits
    30 minutes after it was asked, its store forwards it to `team:oncall` (added to whom it is addressed; with
    `replace=True`, instead of them), with a note saying it escalated. The run is not touched: it still gets one
    answer, from whoever answers. Kept with the question (`AskUserRequest.escalate`); the timer is the store's: a
    task in the in-process hub, the durable wait itself on DBOS and Temporal, so it survives restarts. Not in the
    tool's schema. Needs an answerer; a step later than `timeout` is refused (it could never happen).
    """

    receipt_key: bytes | str | None = field(default=None, repr=False)
    """A key (16 bytes or more) to sign a receipt of every answer that says who gave it, or `None`.

    With it, `AskUserAnsweredEvent.receipt` is a `sign_receipt` receipt over the request, the response,
    `response.answered_by` and the time, for an audit log; `verify_receipt` checks it later with the same
    key. A response without `answered_by` (the answerer cannot tell who answered) gets no receipt.
    An answerer that keeps receipts (`ReceiptKeeper`: `WebAnswerer`, `DBOSAnswerer`, `TemporalAnswerer`) is handed
    it before the model gets the answer, and keeps it with the finished question: the history shows it, verified
    where the viewer has the key. One that cannot keep it fails the call.
    """

    _escalation: tuple[Escalation, ...] = field(default=(), init=False, repr=False, compare=False)
    """`escalate` checked, as each request carries it."""

    _asked: dict[str, dict[str, _AskedCall]] = field(
        default_factory=dict[str, dict[str, '_AskedCall']], init=False, repr=False, compare=False
    )
    """The calls the tool asked in each run (by run id, then tool call id) since the run's last model request.

    Their questions were validated by the tool, and their results checked as they were made: the check of their
    results before the next model request reads them here instead of validating the calls again. Only a call the
    tool put to its answerer in this run is here, so a result from outside the run (a deferred call's, a UI's resume,
    a durable store's) is still checked in full. Emptied for a run at each model request and when the run ends.
    """

    def __post_init__(self) -> None:
        if self.answerer is not None and not callable(self.answerer):
            raise UserError(
                f'AskUser(answerer=...) must be an async callable taking an AskUserRequest, '
                f'not {type(self.answerer).__name__}; pass None to defer the calls instead.'
            )
        if self.timeout is not None:
            if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise UserError(f'AskUser(timeout=...) must be a number of seconds, not {self.timeout!r}.')
            if not (0 < self.timeout <= MAX_TIMEOUT and math.isfinite(self.timeout)):
                raise UserError(
                    f'AskUser(timeout=...) must be a positive number of seconds up to {MAX_TIMEOUT:g} (ten years), '
                    f'not {self.timeout!r}; leave it as None to wait without a limit.'
                )
            if self.answerer is None:
                raise UserError(
                    'AskUser(timeout=...) needs an answerer: with answerer=None the call is deferred and nothing '
                    'waits here. Bound the wait wherever the deferred call is answered instead.'
                )
        if not isinstance(self.on_timeout, TimeoutMessage) and self.on_timeout not in ('tell', 'decline', 'fail'):
            raise UserError(f'AskUser(on_timeout=...) must be {_ON_TIMEOUT_CHOICES}, not {self.on_timeout!r}.')
        if self.on_timeout != 'tell' and self.answerer is None:
            raise UserError(
                f'AskUser(on_timeout={self.on_timeout!r}) needs an answerer: with answerer=None the call is deferred '
                'and nothing waits here. Bound the wait wherever the deferred call is answered instead.'
            )
        if self.on_timeout != 'tell' and self.timeout is None:
            raise UserError(
                f'AskUser(on_timeout={self.on_timeout!r}) needs a timeout: without AskUser(timeout=...) the wait '
                'never runs out, so there is nothing for on_timeout to do.'
            )
        if self.max_retries is not None and self.max_retries < 0:
            raise UserError(f'AskUser(max_retries=...) must be 0 or more, not {self.max_retries!r}.')
        for name in ('notes', 'recommended_options'):
            if not isinstance(getattr(self, name), bool):
                raise UserError(f'AskUser({name}=...) must be True or False, not {getattr(self, name)!r}.')
        if not callable(self.audience):
            try:
                check_audience(self.audience)
            except (TypeError, ValueError) as error:
                raise UserError(f'AskUser(audience=...): {error}') from None
        if not callable(self.context) and not isinstance(self.context, (QuestionContext, type(None))):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(
                f'AskUser(context=...) must be a QuestionContext or a function of the run returning one, '
                f'not {type(self.context).__name__}'
            )
        steps = check_escalation(self.escalate, 'AskUser(escalate=...)')
        if steps and self.answerer is None:
            raise ValueError(
                'AskUser(escalate=...) needs an answerer: with answerer=None the call is deferred and nothing waits '
                'here to escalate. Escalate wherever the deferred call is answered instead.'
            )
        if steps and self.timeout is not None and steps[-1].after >= self.timeout:
            raise ValueError(
                f'AskUser(escalate=...): a step after {steps[-1].after:g} s never happens, since the question is '
                f'withdrawn at its timeout ({self.timeout:g} s)'
            )
        self._escalation = steps
        if self.receipt_key is not None:
            try:
                check_key(self.receipt_key)
            except (TypeError, ValueError) as error:
                raise UserError(f'AskUser(receipt_key=...): {error}') from None

    @classmethod
    def from_spec(cls, *args: Any, **kwargs: Any) -> AbstractCapability[Any]:
        """Refuse: an answerer is a live object that a spec cannot name."""
        raise UserError(
            'AskUser cannot be built from an agent spec: its answerer is a live object (a function or a UI) '
            'that a spec cannot name. Leave AskUser out of the spec and pass it in code: '
            'Agent.from_spec(spec, capabilities=[AskUser(answerer=...)]).'
        )

    @classmethod
    def combine(cls, capabilities: Sequence[AbstractCapability[AgentDepsT]]) -> AbstractCapability[AgentDepsT]:
        """Refuse: two `AskUser` with one id are two answerers, not one setting said twice."""
        raise UserError(_conflict_message(len(capabilities)))

    def for_agent(self, agent: AbstractAgent[AgentDepsT, Any]) -> AbstractCapability[AgentDepsT]:
        """Reject a second `AskUser`: on the agent as soon as it is built, and one for a run beside the agent's."""
        _reject_second(agent.root_capability, self)
        return self

    async def before_run(self, ctx: RunContext[AgentDepsT]) -> None:
        """Reject a second `AskUser` added for one run, and a live wait a durable engine could not record."""
        count = len(_ask_users(ctx.capabilities.values()))
        if count > 1:
            raise UserError(_conflict_message(count))
        note_run_engine(ctx.capabilities.values())  # for a durable answerer, which is handed the request only
        self._check_engine(ctx)

    async def wrap_run(
        self, ctx: RunContext[AgentDepsT], *, handler: Callable[[], Awaitable[AgentRunResult[Any]]]
    ) -> AgentRunResult[Any]:
        """Run, then forget the requests this run's tool made (`_asked`), however the run ends."""
        try:
            return await handler()
        finally:
            if ctx.run_id is not None:
                self._asked.pop(ctx.run_id, None)

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Refuse to send the model a result for a question that is not an answer to it.

        A deferred question's result comes from outside the run, in the `DeferredToolResults` a host passes
        (built by hand, or by a UI bridge from what a client sent): whatever reaches the model as a question's
        result is checked here as `AskUser` checks an answerer's response, so free text, a foreign answer, an
        approval's denial or a failure never reaches the model as the person's answer.
        """
        asked = self._asked.pop(ctx.run_id, {}) if ctx.run_id is not None else {}
        _check_question_results(request_context.messages, self.notes, self._outcome_messages(), asked)
        if self.id is None:
            request_context.model_request_parameters = _without_run_local_owner(
                request_context.model_request_parameters, TOOLSET_ID
            )
        return request_context

    def _outcome_messages(self) -> tuple[str, ...]:
        """The application's own outcome sentences the model may get besides the library's."""
        return (self.on_timeout.text,) if isinstance(self.on_timeout, TimeoutMessage) else ()

    def _check_engine(self, ctx: RunContext[Any]) -> str | None:
        engine = durable_engine(ctx.capabilities.values())
        # A durable answerer made for this engine (`TemporalAnswerer`) waits in the engine's own way.
        if (
            engine not in (None, 'DBOS')
            and self.answerer is not None
            and getattr(durable_answerer(self.answerer), 'durable_engine', None) != engine
        ):
            raise UserError(refusal_message(engine))
        return engine

    def get_instructions(self) -> str:
        """Static, cache-stable guidance on when to ask."""
        return INSTRUCTIONS

    def get_toolset(self) -> AbstractToolset[AgentDepsT]:
        """The `ask_user_question` tool, bound to this capability's answerer."""
        capability = self

        async def ask_user_question(ctx: RunContext[Any], questions: tuple[Question, ...]) -> AnswerResult:
            # One id everywhere: the tool call's, stable across retries, replays, deferral and recovery.
            # (Pydantic AI gives every tool call an id; the random default is only a safety net.)
            return await capability._ask(ctx, questions)

        # The options choose the schema and the result type the model is shown: with every option off, exactly
        # the specified ones (the return type is in the description of a model that reads return schemas).
        ask_user_question.__annotations__ = {
            'ctx': RunContext[Any],
            'questions': RecommendingQuestions if self.recommended_options else Questions,
            'return': AnswerResult if self.notes else PlainResult,
        }
        toolset: _QuestionToolset[AgentDepsT] = _QuestionToolset(max_retries=self.max_retries, id=self.id or TOOLSET_ID)
        toolset.add_function(
            ask_user_question, name=TOOL_NAME, description=self._description(), metadata=dict(TOOL_METADATA)
        )
        toolset.arguments = ArgumentsValidator(
            toolset.tools[TOOL_NAME].function_schema.validator, recommending=self.recommended_options
        )
        return toolset

    def _description(self) -> str:
        description = TOOL_DESCRIPTION
        if self.on_timeout == 'decline':
            description += TIMEOUT_DECLINES
        elif isinstance(self.on_timeout, TimeoutMessage):
            description += TIMEOUT_MESSAGE
        if self.notes:
            description += NOTES_DESCRIPTION
        if self.recommended_options:
            description += RECOMMENDED_DESCRIPTION
        return description

    async def _ask(self, ctx: RunContext[Any], questions: tuple[Question, ...]) -> AnswerResult:
        deadline = None if self.timeout is None else (temporal_workflow_time() or time.time()) + self.timeout
        # The tool's validator checked `questions` already: the request trusts them (one check per call).
        # A tool call id is unique only within its run: the request is identified by both (`request.key`).
        # `ctx.run_id` is the durable engine's replay-stable one inside a workflow, so a replay asks the same question.
        request = AskUserRequest._trusted(  # pyright: ignore[reportPrivateUsage]
            questions,
            ctx.tool_call_id or uuid4().hex,
            notes=self.notes,
            deadline=deadline,
            run_id=ctx.run_id,
            run_step=ctx.run_step if ctx.run_id is not None else None,
            audience=self._audience(ctx),
            context=self._context(ctx),
            escalate=self._escalation,
        )
        if ctx.tool_call_approved:
            # A host resumed the call with an approval (`ToolApproved`, `approvals={id: True}`): a question is
            # answered, not approved, and deferring it again would end the run with nothing said.
            raise UserError(
                f'The {TOOL_NAME} call {printable(request.id)!r} was resumed with an approval, but a question is '
                'answered, not approved: pass its answer in DeferredToolResults.calls, made with '
                'deferred_answer(request, response) or ask_user_result(request, response).'
            )
        answerer = self.answerer
        asked = _AskedCall(request)
        if answerer is not None and request.run_id is not None:
            # Its result comes back in this run: the check before the next model request takes the questions from here.
            self._asked.setdefault(request.run_id, {})[request.id] = asked
        await ctx.emit(AskUserRequestedEvent(request=request, deadline=deadline))
        observation = AskObservation(ctx, request, self.timeout)
        if answerer is None:
            observation.finish('deferred')
            # A question, not an external job: hosts and UI adapters tell them apart by `kind`. The run that
            # resumes is a new run; the metadata keeps the question the one this run published.
            metadata: dict[str, Any] = (
                {RUN_ID_METADATA_KEY: ctx.run_id, RUN_STEP_METADATA_KEY: ctx.run_step} if ctx.run_id is not None else {}
            )
            if addressing := addressing_json(request):
                metadata[ADDRESSING_METADATA_KEY] = addressing
            raise CallDeferred(metadata or None, kind='question')
        observation.restart_clock()

        def answered(response: AskUserResponse = _WITHDRAWN, **flags: Any) -> AskUserAnsweredEvent:
            return AskUserAnsweredEvent(request_id=request.id, run_id=request.run_id, response=response, **flags)

        try:
            response, timed_out = await self._wait(ctx, answerer, request)
        except QuestionWithdrawn:
            # The wait ended without anyone answering (an engine cancelled it, the store withdrew it): the model is
            # told so, in words that never say the person declined.
            observation.finish('withdrawn')
            await ctx.emit(answered(withdrawn=True))
            return asked.returning(WITHDRAWN)
        except Exception:
            observation.finish('failed')
            await ctx.emit(answered(failed=True))
            raise
        except BaseException as error:
            if is_suspension(error):
                # The engine stopped the run to wait (`PrefectAnswerer` suspended the flow run): the question is handed
                # out, not withdrawn, and the resumed run gets its answer from this same call.
                observation.finish('deferred')
                raise
            observation.finish('withdrawn')
            # Cancelled (or aborted by a durable engine) while waiting: release the listeners all the same.
            # The error that ended the wait is the one to raise, not one of an engine refusing steps once cancelled.
            with anyio.CancelScope(shield=True), contextlib.suppress(BaseException):
                await ctx.emit(answered(withdrawn=True))
            raise
        if timed_out:
            observation.finish('timed_out')
            await ctx.emit(answered(timed_out=True))
            return asked.returning(self._timed_out(request))
        if not isinstance(response, AskUserResponse):  # pyright: ignore[reportUnnecessaryIsInstance]
            observation.finish('failed')
            await ctx.emit(answered(failed=True))
            raise ValueError(f'the answerer returned {type(response).__name__}, not an AskUserResponse')
        try:
            receipt = self._receipt(request, response)
            if receipt is not None and (keeper := receipt_keeper(answerer)) is not None:
                # Kept with the finished question, so the history shows it; the first kept stays (see `ReceiptKeeper`).
                receipt = await keeper.keep_receipt(request, receipt)
        except Exception:
            observation.finish('failed', response)
            await ctx.emit(answered(response))
            raise
        await ctx.emit(answered(response, receipt=receipt))
        try:
            result = ask_user_result(request, response)
        except ValueError:
            observation.finish('failed', response)
            raise
        observation.finish('declined' if response.cancelled else 'answered', response)
        return asked.returning(result)

    def _audience(self, ctx: RunContext[Any]) -> tuple[str, ...] | None:
        """Who this call's questions are for, from `audience`; `UserError` naming the problem when it is no audience."""
        audience = self.audience
        try:
            return check_audience(audience(ctx) if callable(audience) else audience)
        except (TypeError, ValueError) as error:
            raise UserError(f'AskUser(audience=...) gave no audience for this question: {error}') from None

    def _context(self, ctx: RunContext[Any]) -> QuestionContext | None:
        """Where this call comes from: `context` (called on the run if a function), with the agent and conversation."""
        setting = self.context
        given = setting(ctx) if callable(setting) else setting
        if given is not None and not isinstance(given, QuestionContext):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f'AskUser(context=...) returned {type(given).__name__}, not a QuestionContext or None')
        agent_name = getattr(ctx.agent, 'name', None) if ctx.agent is not None else None
        filled = replace(
            given or QuestionContext(),
            agent_name=(given.agent_name if given is not None and given.agent_name else None)
            or _line_or_none(agent_name),
            conversation_id=(given.conversation_id if given is not None and given.conversation_id else None)
            or _line_or_none(ctx.conversation_id),
        )
        return None if filled.empty else filled

    def _receipt(self, request: AskUserRequest, response: AskUserResponse) -> AnswerReceipt | None:
        """The receipt of `response` signed with `receipt_key` when it names who answered; `ValueError` on a misfit."""
        if self.receipt_key is None or response.answered_by is None:
            return None
        from ._receipt import sign_receipt

        # In a Temporal workflow, the workflow's time: workflow code may not read the clock (this package is passed
        # through the sandbox, which no longer refuses it), and a replay signs the same time again.
        workflow_time = temporal_workflow_time()
        at = None if workflow_time is None else datetime.fromtimestamp(workflow_time, UTC)
        return sign_receipt(request, response, key=self.receipt_key, at=at)

    def _timed_out(self, request: AskUserRequest) -> str:
        """What the model gets when the timeout ran out, by `on_timeout`; raises for `'fail'`."""
        policy = self.on_timeout
        if isinstance(policy, TimeoutMessage):
            return policy.text
        if policy == 'decline':
            return DECLINED
        if policy == 'fail':
            assert self.timeout is not None  # checked at construction: 'fail' needs a timeout
            raise AskUserTimeoutError(request, self.timeout)
        return TIMED_OUT

    async def _wait(
        self, ctx: RunContext[Any], answerer: Answerer, request: AskUserRequest
    ) -> tuple[AskUserResponse | None, bool]:
        """What the answerer returned, and whether the timeout ran out before it returned anything."""
        if (durable := durable_answerer(answerer)) is not None:
            # It records its own wait and owns the deadline; cancelling it could drop an answer it recorded.
            response = await durable.ask_durably(request, timeout=self.timeout)
            return response, response is None
        if self._check_engine(ctx) == 'DBOS':
            return await ask_in_dbos_step(answerer, request, self.timeout)
        # An answerer cancelled at the deadline may still return the answer it already had: that one counts.
        return await wait_for_answer(answerer, request, self.timeout)


def _line_or_none(value: object) -> str | None:
    """`value` when it can be a one-line context field (an agent name, a conversation id), else `None`."""
    if not isinstance(value, str) or not value:
        return None
    try:
        QuestionContext(agent_name=value)
    except ValueError:
        return None
    return value


@dataclass
class _AskedCall:
    """A call the tool asked in a run: its request, and the result the tool returned for it."""

    request: AskUserRequest
    """The request the tool made, from the questions its validator checked."""

    result_json: bytes | None = None
    """The result the tool returned (made by `ask_user_result` from a checked response, or an outcome sentence) as
    JSON, or `None` until it returns: a copy, so a hook that changes the result in place does not change it too."""

    def returning(self, result: AnswerResult) -> AnswerResult:
        """Keep `result` as the tool's own, and return it."""
        self.result_json = _json_or_none(result)
        return result

    def made(self, content: object) -> bool:
        """Whether `content` is, as JSON, exactly the result the tool returned."""
        return self.result_json is not None and _json_or_none(content) == self.result_json


def _json_or_none(value: object) -> bytes | None:
    try:
        return to_json(value)
    except (PydanticSerializationError, ValueError, TypeError):
        return None


_WITHDRAWN = AskUserResponse(cancelled=True)
"""The response the answered event carries when no real response came back."""


def _check_question_results(
    messages: Sequence[ModelMessage],
    notes: bool,
    outcome_messages: tuple[str, ...],
    asked: Mapping[str, _AskedCall] | None = None,
) -> None:
    """Raise `UserError` when the newest request carries a result of a question call that does not answer it.

    `asked` holds the calls the tool asked in this run since the previous model request, by tool call id: their
    questions were validated once, by the tool, and a result of one of those calls is checked against its request,
    or found to be the very result the tool made and checked. The call of any other result is validated again here
    (`AskUserRequest.from_tool_call`), since it comes from outside.
    """
    if len(messages) < 2 or not isinstance(request := messages[-1], ModelRequest):
        return
    returns = [part for part in request.parts if isinstance(part, ToolReturnPart) and part.tool_name == TOOL_NAME]
    if not returns:
        return
    # The call a result answers is the nearest one before it with its id: providers repeat ids across turns.
    calls: dict[str, ToolCallPart] = {}
    for message in messages[-2::-1]:
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    calls.setdefault(part.tool_call_id, part)
    for returned in returns:
        call = calls.get(returned.tool_call_id)
        if call is None or returned.outcome in ('retried', 'interrupted', 'failed'):
            # A retry asks the model to call again (our own validation's, or a host's `ModelRetry`), an interrupted
            # call was cut off, and a failure (`ToolFailed`: a durable wait that ended with no decision) tells the
            # model the tool failed: none of them stands for what the person answered.
            continue
        asked_here = asked.get(returned.tool_call_id) if asked else None
        if asked_here is not None:
            if returned.outcome == 'success' and asked_here.made(returned.content):
                continue  # the tool's own result, unchanged: checked when the tool made it
            request = asked_here.request
        else:
            try:
                request = AskUserRequest.from_tool_call(call, notes=notes)
            except ValueError:
                continue  # the call was invalid: its part is the validation retry the model gets, not an answer
        problem: str | None = None
        if returned.outcome != 'success':
            # A denial (`ToolDenied`, an approval's "no" with its reason) would reach the model as the question's
            # outcome in someone's words: a question is answered or declined, never denied.
            problem = f'it is a tool result marked {returned.outcome!r}; a question is answered or declined'
        else:
            try:
                check_tool_result(request, returned.content, messages=outcome_messages)
            except ValueError as error:
                problem = str(error)
        if problem is not None:
            raise UserError(
                f'The result of the {TOOL_NAME} call {printable(call.tool_call_id)!r} does not answer its questions: '
                f'{problem}. Build it with deferred_answer(request, response) or ask_user_result(request, response), '
                'which check the response against the questions asked.'
            )


def _conflict_message(count: int) -> str:
    return (
        f'This agent has {count} AskUser capabilities, and an agent can have only one: each brings its own '
        f'answerer and its own {TOOL_NAME!r} tool, so two are a conflict, not the same setting given twice. '
        'Keep one AskUser, and put whatever else should see the questions behind its answerer, '
        'or watch them with AskUserRequestedEvent and AskUserAnsweredEvent.'
    )


def _ask_users(capabilities: Iterable[AbstractCapability[Any]]) -> list[AskUser[Any]]:
    """The `AskUser` among `capabilities`, seen through wrappers (`prefix_tools()`: a second answerer all the same)."""
    found: list[AskUser[Any]] = []
    for capability in capabilities:
        while isinstance(capability, WrapperCapability):
            capability = capability.wrapped
        if isinstance(capability, AskUser):
            found.append(capability)
    return found


def _reject_second(root: AbstractCapability[Any], binding: AskUser[Any]) -> None:
    """Raise the conflict when `root` (the agent's capabilities) and `binding` hold more than one `AskUser`.

    `binding` is the one being bound: one of the agent's own at construction, or one passed for a run, which is
    bound to the agent at run start and is a second `AskUser` whenever the agent has one, whatever the ids.
    """
    registered: list[AbstractCapability[Any]] = []
    root.apply(registered.append)
    found = _ask_users(registered)
    count = len(found) + (0 if any(capability is binding for capability in found) else 1)
    if count > 1:
        raise UserError(_conflict_message(count))


def _without_run_local_owner(parameters: ModelRequestParameters, toolset_id: str) -> ModelRequestParameters:
    """`parameters` with no capability named on the tool definitions of the toolset `toolset_id`.

    Pydantic AI names a capability without an id anew in every run (`'<ask_user:5f3a2c>'`) and stamps that name on
    the definitions of its tools. A durable engine hashes the definitions into the key that replays a model request
    (Prefect's task cache key), so with that name a resumed flow run would miss the recorded response and call the
    model again. The name means nothing outside the run, and what the model is sent is the same without it.
    """

    def ours(tool: ToolDefinition) -> bool:
        return tool.toolset_id == toolset_id and tool.capability_id is not None

    if not any(map(ours, parameters.function_tools)):
        return parameters
    tools = [replace(tool, capability_id=None) if ours(tool) else tool for tool in parameters.function_tools]
    return replace(parameters, function_tools=tools)


class _QuestionToolset(FunctionToolset[AgentDepsT]):
    """The toolset of `ask_user_question`: its arguments validated by the fast path first (`ArgumentsValidator`)."""

    arguments: ArgumentsValidator | None = None
    """The validator the tool is listed with; `None` until `AskUser.get_toolset` adds the tool."""

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The tool, with `arguments` as its `args_validator` in place of the exact validator of its signature."""
        tools = await super().get_tools(ctx)
        tool = tools.get(TOOL_NAME)
        if tool is not None and self.arguments is not None:
            tools[TOOL_NAME] = replace(tool, args_validator=self.arguments)
        return tools
