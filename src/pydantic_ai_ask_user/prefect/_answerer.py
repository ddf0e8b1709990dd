"""`PrefectAnswerer`: a question that suspends the Prefect flow run, answered by resuming it with the answer.

How it stays correct across a crash, and why the model is not called again:

- The question suspends the flow run (`suspend_flow_run`): the run's state, `Suspended`, is on the Prefect
  server, and the process that ran it exits. Nothing waits in memory, so killing any process loses nothing.
- Resuming it with the answer (`resume_flow_run(run_id, run_input=...)`) stores the answer and reschedules the
  run in one server transaction: one answer is accepted, a second one finds the run no longer suspended.
- The rescheduled run runs the flow again from its start. Under `PrefectDurability` (or `PrefectAgent`) every
  model request is a Prefect task whose result is persisted and keyed by its inputs and the flow run: the first
  request is served from that result, so the model is not called again and the tool call keeps the id it had,
  random or not. The run id is the flow run's too, so the question has the same `AskUserRequest.key`.
- The same `suspend_flow_run` call, under a key made from that question key, now finds its suspension resumed
  and returns the stored answer, which is checked against the exact question (`check_response`) before it is
  used. One that does not fit is logged and the question suspends the run again, under the next key: stored
  answers are read back in the same order on every run of the flow, so a later run takes the same decisions.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any, ClassVar, cast
from uuid import UUID

import httpx
from prefect.context import FlowRunContext, TaskRunContext
from prefect.flow_runs import aresume_flow_run, asuspend_flow_run
from prefect.input import RunInput
from prefect.input.actions import acreate_flow_run_input, aread_flow_run_input
from pydantic import ValidationError
from pydantic_ai.exceptions import UserError

from .._answers import AskUserRequest, AskUserResponse, check_response, with_addressing
from .._audience import addressing_json
from .._durable import noted_run_engine
from .._json import ResponseJSON, response_from_json, response_to_json
from .._plain_questions import questions_to_json
from .._text import printable

__all__ = ('PrefectAnswerer', 'AskUserInput', 'answer_question', 'pending_questions', 'KEY_PREFIX')

logger = logging.getLogger('pydantic_ai_ask_user.prefect')

KEY_PREFIX = 'ask-user'
"""What the pause keys and flow run input keys of `PrefectAnswerer` start with (Prefect allows only `[A-Za-z0-9-]`)."""

_MAX_ATTEMPTS = 100
"""How many answers that do not fit one question may come in before the run fails instead of asking again."""


class AskUserInput(RunInput):
    """The run input that answers a question waiting in a suspended flow run: its key and the person's response.

    Prefect checks `resume_flow_run(run_id, run_input=...)` against this model's JSON schema before it resumes
    the run; the run checks the response against the exact question (`check_response`) before it uses it.
    """

    key: str
    """`AskUserRequest.key` of the question answered."""

    response: ResponseJSON
    """The person's response, in the JSON shape of `response_to_json`."""


@dataclass(frozen=True)
class PrefectAnswerer:
    """An answerer that suspends the Prefect flow run that runs the agent until the question is answered.

    Use it with `PrefectDurability` (or `PrefectAgent`), in a flow run of a deployment (`flow.serve()`, a
    worker): a suspended run exits its process and is run again when resumed, which only a deployment can do.
    Answer from any process with a client of the same Prefect server: `pending_questions(run_id)` lists what the
    run waits for, `answer_question(run_id, request, response)` checks the response against the question and
    resumes the run with it. On resume, the model calls made before the question are served from their
    persisted task results, so they are not made again.
    """

    durable_engine: ClassVar[str] = 'Prefect'
    """The engine this answerer waits in: `AskUser` accepts it under Prefect, where it refuses other answerers."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Suspend the flow run until `request` is answered; no deadline."""
        response = await self.ask_durably(request, timeout=None)
        assert response is not None  # no deadline, so the wait ends with an answer
        return response

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        """Suspend the flow run for `request` and, once it is resumed with an answer that fits, return it."""
        flow_run_id = _check_flow_run(request, timeout)
        await _publish(flow_run_id, request)
        for attempt in range(_MAX_ATTEMPTS):
            try:
                answer = await asuspend_flow_run(wait_for_input=AskUserInput, key=_pause_key(request.key, attempt))
            except ValidationError as error:
                # Prefect checked the run input against the schema, but a stored input can still fail the model.
                logger.warning('ask_user: an answer to %s did not load: %s', request.key, _one_line(str(error)))
                continue
            try:
                if answer.key != request.key:
                    raise ValueError(f'it answers question {printable(answer.key)!r}, not {request.key!r}')
                response = response_from_json(answer.response.model_dump(exclude_unset=True))
                check_response(request, response)
            except ValueError as error:
                # Already stored by Prefect, so it cannot be refused to its sender; it is not used, and the
                # question waits again. `answer_question` checks first, so only a raw resume gets here.
                logger.warning('ask_user: an answer to %s was not used: %s', request.key, _one_line(str(error)))
                continue
            return response
        raise UserError(
            f'The question {request.key} got {_MAX_ATTEMPTS} answers that do not fit it; the run stops asking. '
            'Answer with pydantic_ai_ask_user.prefect.answer_question, which checks the answer before it is sent.'
        )


def _check_flow_run(request: AskUserRequest, timeout: float | None) -> UUID:
    """The id of the flow run `request` may suspend; `UserError` saying why when it may not."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise UserError(
            'PrefectAnswerer suspends the Prefect flow run that runs the agent, and this agent runs outside one. '
            'Run the agent in a flow (with PrefectDurability), or use another answerer here.'
        )
    if TaskRunContext.get() is not None:
        raise UserError(
            'PrefectAnswerer must suspend the flow run from flow code, but ask_user_question runs inside a Prefect '
            "task here. Keep the tool's metadata {'prefect': False}, which AskUser sets."
        )
    flow_run_id = context.flow_run.id
    # Under `PrefectDurability` the run's id stays the same when the resumed flow run runs the agent again: derived
    # from the flow run's (before Pydantic AI 2.78, and with `PrefectAgent`), or a cached task's result (from 2.78).
    # Without it, the id is random: after the resume the question would be another one, asked again.
    from_flow_run = request.run_id is not None and request.run_id.startswith(f'{flow_run_id}:')
    if not from_flow_run and noted_run_engine() != 'Prefect':
        raise UserError(
            'PrefectAnswerer needs the agent to run with PrefectDurability (or as a PrefectAgent): then its model '
            'requests are Prefect tasks whose results are replayed when the flow run resumes, and its run id is '
            "the flow run's, so the question resumed is the question asked. This run's id is not the flow run's."
        )
    if timeout is not None:
        raise UserError(
            'PrefectAnswerer cannot apply AskUser(timeout=...): a suspended flow run runs no code until it is '
            'resumed, so nothing can act at the deadline (Prefect would fail the run, not tell the model). Leave '
            'the timeout out, and bound the wait where the question is answered.'
        )
    return flow_run_id


def _pause_key(request_key: str, attempt: int) -> str:
    """The pause key of the `attempt`-th suspension for one question: the same on every run of the flow."""
    return f'{KEY_PREFIX}-{_digest(request_key)}-{attempt}'


def _question_key(request_key: str) -> str:
    """The flow run input key the question is published under, for `pending_questions`."""
    return f'{KEY_PREFIX}-{_digest(request_key)}-question'


def _digest(request_key: str) -> str:
    # Under PrefectDurability the key is 32 hex digits already; hashed anyway so any key makes a valid Prefect key.
    return hashlib.sha256(request_key.encode()).hexdigest()[:32]


def _one_line(text: str) -> str:
    return printable(' '.join(text.split()), allow_newline=False)[:500]


async def _publish(flow_run_id: UUID, request: AskUserRequest) -> None:
    """Store the question with the flow run, once, so any process can read what it waits for."""
    value = {
        'id': request.id,
        'run_id': request.run_id,
        'run_step': request.run_step,
        'notes': request.notes,
        'questions': questions_to_json(request),
        **addressing_json(request),
    }
    try:
        await acreate_flow_run_input(key=_question_key(request.key), value=value, flow_run_id=flow_run_id)
    except httpx.HTTPStatusError as error:
        if error.response.status_code != 409:
            raise
        # Published by an earlier run of this flow run, before it was suspended: the same question.


async def pending_questions(flow_run_id: UUID | str) -> list[AskUserRequest]:
    """The question the flow run `flow_run_id` is suspended on now: one request, or none.

    Read from the Prefect server the client is configured for (`PREFECT_API_URL`), in any process.
    """
    from prefect import get_client

    run_id = UUID(str(flow_run_id))
    async with get_client() as client:
        flow_run = await client.read_flow_run(run_id)
    state = flow_run.state
    if state is None or not state.is_paused():
        return []
    pause_key = str(state.state_details.pause_key or '')
    if not pause_key.startswith(f'{KEY_PREFIX}-'):
        return []  # suspended by something else
    digest = pause_key.removeprefix(f'{KEY_PREFIX}-').rpartition('-')[0]
    stored = await aread_flow_run_input(f'{KEY_PREFIX}-{digest}-question', flow_run_id=run_id)
    if stored is None:
        return []
    return [_request_from_stored(stored)]


def _request_from_stored(stored: Any) -> AskUserRequest:
    """The request the flow run published; validated again like a tool call, since anyone may write run inputs."""
    if isinstance(stored, str):
        stored = json.loads(stored)
    if not isinstance(stored, dict):
        raise ValueError('the stored question is not a JSON object')
    data = cast(dict[str, Any], stored)
    run_id, run_step, notes = data.get('run_id'), data.get('run_step'), data.get('notes', False)
    request = AskUserRequest.from_tool_args(
        {'questions': data.get('questions')},
        id=str(data.get('id')),
        notes=notes if isinstance(notes, bool) else False,
        run_id=run_id if isinstance(run_id, str) else None,
        run_step=run_step if isinstance(run_step, int) and not isinstance(run_step, bool) else None,
    )
    return with_addressing(request, data)


async def answer_question(flow_run_id: UUID | str, request: AskUserRequest, response: AskUserResponse) -> None:
    """Answer `request`, waiting in the suspended flow run `flow_run_id`, with `response`, and resume the run.

    `response` is checked against the question the run waits for (`check_response`) before anything is sent:
    `ValueError` if it does not fit, or if the run does not wait for `request` (another run's question, one
    answered already). Prefect stores the answer and resumes the run in one step, so of two answers sent at
    once one resumes the run and the other is refused (`ValueError`); the run checks the answer again before
    it uses it.
    """
    check_response(request, response)
    waiting = {pending.key: pending for pending in await pending_questions(flow_run_id)}
    asked = waiting.get(request.key)
    if asked is None:
        raise ValueError(f'flow run {printable(str(flow_run_id))} does not wait for question {request.key!r}')
    check_response(asked, response)
    from prefect.exceptions import NotPausedError

    try:
        await aresume_flow_run(
            UUID(str(flow_run_id)), run_input={'key': request.key, 'response': response_to_json(response)}
        )
    except NotPausedError:
        raise ValueError(
            f'question {request.key!r} was answered already: the flow run is no longer suspended'
        ) from None
    except RuntimeError as error:
        raise ValueError(f'Prefect refused the answer to question {request.key!r}: {_one_line(str(error))}') from None
