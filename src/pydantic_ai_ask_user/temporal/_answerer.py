"""`TemporalAnswerer`: a question that waits inside a Temporal workflow, answered by an Update (or a Signal)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic_ai.exceptions import UserError
from temporalio import workflow
from temporalio.client import WorkflowHandle
from temporalio.exceptions import ApplicationError

from .._answers import AskUserRequest, AskUserResponse, check_response
from .._text import printable
from ._visibility import publish_waits

__all__ = (
    'TemporalAnswerer',
    'AskUserWorkflow',
    'QuestionAnswer',
    'answer_question',
    'pending_questions',
    'UPDATE_NAME',
    'SIGNAL_NAME',
    'QUERY_NAME',
)

UPDATE_NAME = 'ask_user.answer'
"""The Update that answers a waiting question: refused to its sender, and not recorded, unless it fits the question."""

SIGNAL_NAME = 'ask_user.answer_by_signal'
"""The Signal that answers a waiting question, for clients that cannot send Updates: an unfit one is dropped."""

QUERY_NAME = 'ask_user.pending'
"""The Query that lists the questions the workflow waits for, as `AskUserRequest`s."""


@dataclass(frozen=True)
class QuestionAnswer:
    """What a client sends to answer one waiting question: the question's `key` and the person's response."""

    key: str
    """`AskUserRequest.key` of the question answered: its run and its tool call."""

    response: AskUserResponse
    """What the person answered; checked against the exact question with `check_response` before it is recorded."""


@dataclass
class _Waits:
    """The questions one workflow waits for and the answers recorded for them; rebuilt the same way on every replay."""

    pending: dict[str, AskUserRequest] = field(default_factory=dict[str, AskUserRequest])
    """The questions waiting now, by key."""

    answers: dict[str, AskUserResponse] = field(default_factory=dict[str, AskUserResponse])
    """The responses accepted, by key."""

    def check(self, answer: QuestionAnswer) -> None:
        """Raise `ValueError` unless `answer` answers a question waiting here, and fits it."""
        request = self.pending.get(answer.key)
        if request is None or answer.key in self.answers:
            raise ValueError(f'no question with key {printable(answer.key)!r} waits for an answer in this workflow')
        check_response(request, answer.response)


_WAITS_ATTRIBUTE = '_ask_user_waits'
"""The attribute of the workflow instance that holds its `_Waits`."""


def _waits(instance: object) -> _Waits:
    waits = getattr(instance, _WAITS_ATTRIBUTE, None)
    if waits is None:
        waits = _Waits()
        setattr(instance, _WAITS_ATTRIBUTE, waits)
    return waits


class AskUserWorkflow:
    """Base class of a workflow whose agent asks with `TemporalAnswerer`: the Update, Signal and Query it answers by.

    ```python {test="skip"}
    @workflow.defn
    class Deploy(AskUserWorkflow, PydanticAIWorkflow):
        ...
    ```
    """

    @workflow.update(name=UPDATE_NAME)
    def answer_question(self, answer: QuestionAnswer) -> None:
        """Record the answer to a waiting question; the validator has checked it against the question."""
        waits = _waits(self)
        try:
            # Checked again: another answer to the same question may have been recorded since this one was validated.
            waits.check(answer)
        except ValueError as error:
            raise ApplicationError(str(error), type='ValueError', non_retryable=True) from None
        waits.answers[answer.key] = answer.response

    @answer_question.validator
    def _refuse_an_answer_that_does_not_fit(self, answer: QuestionAnswer) -> None:
        # A rejected Update is never written to the workflow's history: the sender gets the error, the run nothing.
        _waits(self).check(answer)

    @workflow.signal(name=SIGNAL_NAME)
    def answer_question_by_signal(self, answer: QuestionAnswer) -> None:
        """Record the answer to a waiting question if it fits; a Signal cannot be refused, so a misfit is dropped."""
        waits = _waits(self)
        try:
            waits.check(answer)
        except ValueError as error:
            workflow.logger.warning('ask_user: a signalled answer was dropped: %s', error)
            return
        waits.answers[answer.key] = answer.response

    @workflow.query(name=QUERY_NAME)
    def pending_questions(self) -> list[AskUserRequest]:
        """The questions this workflow waits for now."""
        return list(_waits(self).pending.values())


@dataclass(frozen=True)
class TemporalAnswerer:
    """An answerer that waits inside the Temporal workflow that runs the agent, durably, for `AskUser` under Temporal.

    The workflow must inherit `AskUserWorkflow`. A question waits in the workflow's state until a client answers it
    with `answer_question` (an Update, checked against the question before it is accepted) or the Signal; the
    Query `pending_questions` lists what waits. `AskUser(timeout=...)` is a durable timer. If the worker dies, the
    workflow replays on another one to the same wait, without asking again or repeating the model call.
    """

    durable_engine: ClassVar[str] = 'Temporal'
    """The engine this answerer waits in: `AskUser` accepts it under Temporal, where it refuses other answerers."""

    listed: bool = True
    """Show the waiting questions to `TemporalQuestionStore` (`ask-user pending --temporal`, the web inbox) through
    the search attribute `AskUserQuestions` and the workflow's memo (see `_visibility`); the namespace must have
    that search attribute. `False`: only `pending_questions` and `answer_question` see them, nothing to register."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Wait for the answer to `request` without a deadline."""
        response = await self.ask_durably(request, timeout=None)
        assert response is not None  # no deadline, so the wait ends with an answer
        return response

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        """Wait in the workflow for the answer to `request`; `None` if `timeout` (a durable timer) ran out first."""
        if not workflow.in_workflow():
            raise UserError(
                'TemporalAnswerer waits inside a Temporal workflow, and this agent runs outside one. Run the agent '
                'in a workflow (with TemporalDurability), or use another answerer here.'
            )
        instance: Any = workflow.instance()
        if not isinstance(instance, AskUserWorkflow):
            name = type(instance).__name__
            raise UserError(
                f'TemporalAnswerer needs the workflow to inherit AskUserWorkflow, which receives the answers, but '
                f'{name} does not: declare it as class {name}(AskUserWorkflow, ...).'
            )
        waits = _waits(instance)
        key = request.key
        waits.pending[key] = request
        if self.listed:
            publish_waits(waits.pending)
        try:
            await workflow.wait_condition(lambda: key in waits.answers, timeout=timeout)
        except TimeoutError:
            return None
        finally:
            # No longer waiting: a late answer is refused to its sender, never accepted and dropped.
            waits.pending.pop(key, None)
            if self.listed:
                publish_waits(waits.pending, ('answered' if key in waits.answers else 'withdrawn', key))
        return waits.answers[key]


async def answer_question(handle: WorkflowHandle[Any, Any], request: AskUserRequest, response: AskUserResponse) -> None:
    """Answer `request`, waiting in the workflow of `handle`, with `response`, by Update; returns once it is recorded.

    `response` is checked here first (`ValueError`), and again by the workflow against the question it waits for:
    an answer that does not fit, or to a question not waiting there, is refused (`WorkflowUpdateFailedError`) and
    not recorded.
    """
    check_response(request, response)
    await handle.execute_update(UPDATE_NAME, QuestionAnswer(key=request.key, response=response))  # pyright: ignore[reportUnknownMemberType]


async def pending_questions(handle: WorkflowHandle[Any, Any]) -> list[AskUserRequest]:
    """The questions the workflow of `handle` waits for now."""
    return await handle.query(QUERY_NAME, result_type=list[AskUserRequest])
