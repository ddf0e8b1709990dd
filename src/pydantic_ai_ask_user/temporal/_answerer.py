"""`TemporalAnswerer`: a question that waits inside a Temporal workflow, answered by an Update (or a Signal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from temporalio.client import WorkflowHandle

from .._answers import AskUserRequest, AskUserResponse, check_response
from .._receipt import AnswerReceipt, receipt_to_json
from ._visibility import publish_receipt
from ._workflow import QUERY_NAME, UPDATE_NAME, QuestionAnswer, wait_in_workflow, workflow_instance

__all__ = ('TemporalAnswerer', 'answer_question', 'pending_questions')


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
        instance = workflow_instance('TemporalAnswerer')
        response = await wait_in_workflow(instance, request.key, request, timeout, listed=self.listed)
        assert response is None or isinstance(response, AskUserResponse)  # the key is a question's
        return response

    async def keep_receipt(self, request: AskUserRequest, receipt: AnswerReceipt, /) -> AnswerReceipt:
        """Keep the run's signed receipt of the answer to `request` in the workflow's history, where the history
        reads it (a `ReceiptKeeper`: `AskUser(receipt_key=...)` calls it, in workflow code); returns it.

        A memo setting (`RECEIPT_MEMO`), not an activity: it is an event of the history like the question's listing
        and the Update that answered it, written by the workflow itself, and a replay signs the same receipt (the
        time is the workflow's) and sets the same memo. With `listed=False` nothing is kept: nothing lists the
        question either.
        """
        if self.listed:
            workflow_instance('TemporalAnswerer')
            publish_receipt(request.key, receipt_to_json(receipt))
        return receipt


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
