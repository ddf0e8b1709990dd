"""`PersonaAnswerer`: a simulated user, a model playing a persona, for evaluations of agents that ask."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.exceptions import UserError
from pydantic_ai.models import KnownModelName, Model

from .._answers import AskUserAnswer, AskUserRequest, AskUserResponse, check_answered_by, check_response
from .._plain_questions import questions_to_json
from .._text import printable

__all__ = ('PersonaAnswerer', 'PERSONA_INSTRUCTIONS', 'PERSONA_NOTES_INSTRUCTIONS', 'PERSONA_RECOMMENDED_INSTRUCTIONS')

PERSONA_INSTRUCTIONS = (
    'You are role-playing a person using an application whose AI assistant has stopped to ask you '
    'multiple-choice questions. Answer every question as this person would: {persona}\n\n'
    'For each question, by its header, pick the label of one option exactly as written (several only '
    'when multi_select is true), or, when no option fits this person, write a short custom_answer in '
    'their own words instead of picking. If this person would refuse to answer at all, set declined to '
    'true and give no answers.'
)
"""The instructions the persona's model gets; `{persona}` is replaced by the persona."""

PERSONA_NOTES_INSTRUCTIONS = (
    'You may add a short note to any answer, in the words of this person, when they would want to say more '
    'than the pick: a condition, a reason, a warning. Leave note out otherwise.'
)
"""Added to the instructions for a request that takes notes (`AskUser(notes=True)`)."""

PERSONA_RECOMMENDED_INSTRUCTIONS = (
    "A question's recommended field names the option the assistant recommends: weigh it as this person "
    'would, and pick what they would pick.'
)
"""Added to the instructions for a request in which a question recommends an option."""


class _PersonaAnswer(BaseModel):
    model_config = ConfigDict(extra='forbid')

    header: str = Field(description='The header of the question this answers, exactly as asked.')
    selected: list[str] = Field(
        default_factory=list[str], description='The labels picked, exactly as written (one unless multi_select).'
    )
    custom_answer: str | None = Field(
        default=None, description='Your own words instead of an option; then selected is empty.'
    )


class _PersonaReply(BaseModel):
    """The persona's answers to every question, or a refusal to answer."""

    model_config = ConfigDict(extra='forbid')

    answers: list[_PersonaAnswer] = Field(
        default_factory=list[_PersonaAnswer], description='One answer per question; empty when declined.'
    )
    declined: bool = Field(default=False, description='True when you refuse to answer at all.')


class _NotedPersonaAnswer(_PersonaAnswer):
    note: str | None = Field(
        default=None, description='Optional: a short note added to this answer, in your own words.'
    )


class _NotedPersonaReply(BaseModel):
    """The persona's answers to every question, each with an optional note, or a refusal to answer."""

    model_config = ConfigDict(extra='forbid')

    answers: list[_NotedPersonaAnswer] = Field(
        default_factory=list[_NotedPersonaAnswer], description='One answer per question; empty when declined.'
    )
    declined: bool = Field(default=False, description='True when you refuse to answer at all.')


def _response(reply: _PersonaReply | _NotedPersonaReply, answered_by: str | None = None) -> AskUserResponse:
    if reply.declined:
        return AskUserResponse(cancelled=True, answered_by=answered_by)
    return AskUserResponse(
        answers=tuple(
            AskUserAnswer(
                header=answer.header,
                selected=tuple(answer.selected),
                custom_answer=answer.custom_answer,
                note=answer.note if isinstance(answer, _NotedPersonaAnswer) else None,
            )
            for answer in reply.answers
        ),
        answered_by=answered_by,
    )


_Reply = TypeVar('_Reply', _PersonaReply, _NotedPersonaReply)


async def _check(ctx: RunContext[AskUserRequest], reply: _Reply) -> _Reply:
    try:
        check_response(ctx.deps, _response(reply))
    except ValueError as error:
        # Told to the model as a retry: what does not fit, so the next reply can.
        raise ModelRetry(f'That answer does not fit the questions: {printable(str(error))}. Answer again.') from None
    return reply


@dataclass(init=False)
class PersonaAnswerer:
    """An `Answerer` that answers through a Pydantic AI agent playing `persona`: a simulated user for evaluations.

    ```python
    answerer = PersonaAnswerer('openai:gpt-5-mini', persona='a cautious SRE who never deploys on Fridays')
    ```

    Every reply is checked with `check_response`; one that does not fit (a label not offered, two picks
    on a single-select question, a missing header) goes back to the persona's model as a retry naming
    the problem, up to `retries` times, after which the answerer raises and the run it answers fails.

    For a request that takes notes (`AskUser(notes=True)`), the persona's model may add a note to any
    answer. Every response says who answered: `answered_by='persona'`, or `'persona:<name>'` with `name=`.
    """

    persona: str
    """Who the model plays, in plain words: 'a cautious SRE who never deploys on Fridays'."""

    agent: Agent[AskUserRequest, _PersonaReply]
    """The agent that answers; its model is the one given."""

    noted_agent: Agent[AskUserRequest, _NotedPersonaReply]
    """The agent that answers a request that takes notes: the same model and persona, and a note per answer."""

    answered_by: str
    """What each response carries as `answered_by`: `'persona'`, or `'persona:<name>'`."""

    requests: list[AskUserRequest] = field(default_factory=list[AskUserRequest])
    """Every request seen so far, in arrival order."""

    responses: list[AskUserResponse] = field(default_factory=list[AskUserResponse])
    """Every response given so far, in the same order."""

    def __init__(
        self, model: Model | KnownModelName | str, *, persona: str, retries: int = 2, name: str | None = None
    ) -> None:
        if not isinstance(persona, str) or not persona.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f'PersonaAnswerer(persona=...) must describe someone in words, not {persona!r}.')
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f'PersonaAnswerer(retries=...) must be 0 or more, not {retries!r}.')
        answered_by = 'persona' if name is None else f'persona:{name}'
        if name is not None and (not isinstance(name, str) or not name.strip()):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f'PersonaAnswerer(name=...) must be a short one-line name, not {name!r}')
        if (problem := check_answered_by(answered_by)) is not None:
            raise UserError(f'PersonaAnswerer(name=...) must be a short one-line name: {problem}')
        self.persona = persona
        self.answered_by = answered_by
        self.agent = Agent(
            model,
            output_type=_PersonaReply,
            deps_type=AskUserRequest,
            instructions=PERSONA_INSTRUCTIONS.format(persona=persona),
            retries=retries,
            name='persona',
        )
        self.agent.output_validator(_check)
        self.noted_agent = Agent(
            model,
            output_type=_NotedPersonaReply,
            deps_type=AskUserRequest,
            instructions=[PERSONA_INSTRUCTIONS.format(persona=persona), PERSONA_NOTES_INSTRUCTIONS],
            retries=retries,
            name='persona',
        )
        self.noted_agent.output_validator(_check)
        self.requests = []
        self.responses = []

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Ask the persona's model, and return its checked response."""
        self.requests.append(request)
        prompt = json.dumps({'questions': questions_to_json(request)}, ensure_ascii=False, indent=2)
        prompt = f'The assistant asks:\n{prompt}'
        reply: _PersonaReply | _NotedPersonaReply
        recommending = any(question.recommended is not None for question in request.questions)
        instructions = PERSONA_RECOMMENDED_INSTRUCTIONS if recommending else None
        if request.notes:
            reply = (await self.noted_agent.run(prompt, deps=request, instructions=instructions)).output
        else:
            reply = (await self.agent.run(prompt, deps=request, instructions=instructions)).output
        response = _response(reply, self.answered_by)  # checked against the request by the output validator
        self.responses.append(response)
        return response

    def __repr__(self) -> str:
        return f'PersonaAnswerer(persona={self.persona!r})'
