"""`ScriptedAnswerer`: answers from a script, and remembers every request it saw."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

import anyio
from pydantic_ai.exceptions import UserError

from .._answers import AskUserAnswer, AskUserRequest, AskUserResponse, check_answered_by, check_response
from .._questions import Question

__all__ = ('ScriptedAnswerer', 'Custom', 'WithNote', 'DECLINE', 'Reply', 'Choice')


@dataclass(frozen=True)
class Custom:
    """A scripted custom answer: the user typed `text` instead of picking a label."""

    text: str
    """The user's own words."""


class _Decline:
    def __repr__(self) -> str:
        return 'DECLINE'


DECLINE: Final = _Decline()
"""A scripted reply in which the user declines the whole request."""


@dataclass(frozen=True)
class WithNote:
    """A scripted answer with a note: `WithNote('PostgreSQL', "only after tonight's backup")`.

    Only for a request that takes notes (`AskUser(notes=True)`); the answerer refuses it otherwise.
    """

    choice: str | int | Sequence[str | int] | Custom
    """The answer itself: a label, a 0-based option index, several of either, or `Custom`."""

    note: str
    """What the person adds to it."""


Choice: TypeAlias = str | int | Sequence[str | int] | Custom | WithNote
"""One scripted answer: a label, a 0-based option index, several of either (multi-select), `Custom`, or `WithNote`."""

Reply: TypeAlias = Mapping[str, Choice] | _Decline | AskUserResponse | Callable[[AskUserRequest], AskUserResponse]
"""One scripted reply to a whole request: choices keyed by header, `DECLINE`, a ready response, or a function."""


@dataclass(init=False)
class ScriptedAnswerer:
    """An `Answerer` that replies to each request with the next reply of its script.

    ```python
    from pydantic_ai_ask_user.testing import DECLINE, Custom, ScriptedAnswerer

    answerer = ScriptedAnswerer(
        {'Database': 'PostgreSQL', 'Environments': [0, 'staging']},  # labels or 0-based indexes
        {'Name': Custom('my own words')},
        DECLINE,
    )
    ```

    With `AskUser(notes=True)`, `WithNote(choice, note)` adds a note to an answer; `answered_by='...'`
    says who answered in every response the script makes (a ready `AskUserResponse` keeps its own).

    Replies are used in the order requests arrive; `ScriptedAnswerer(default=0)` picks every
    question's first option for ever. Every response is checked with `check_response`,
    so a script that does not fit its request fails loudly, naming the problem.
    """

    replies: list[Reply]
    """The replies still to give, next first."""

    delay: float
    """Seconds to wait before each reply, as a person would."""

    default: Choice | None
    """The choice for a question no reply mentions (`0`: the first option), also used once the replies run out.

    `None` makes both an error.
    """

    answered_by: str | None
    """Who answered, put in each response the script makes (`AskUserResponse.answered_by`); `None`: nobody named."""

    requests: list[AskUserRequest] = field(default_factory=list[AskUserRequest])
    """Every request seen so far, in arrival order."""

    def __init__(
        self, *replies: Reply, delay: float = 0.0, default: Choice | None = None, answered_by: str | None = None
    ) -> None:
        if answered_by is not None and (problem := check_answered_by(answered_by)) is not None:
            raise UserError(f'ScriptedAnswerer(answered_by=...): {problem}')
        self.replies = list(replies)
        self.delay = delay
        self.default = default
        self.answered_by = answered_by
        self.requests = []

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        self.requests.append(request)
        reply: Reply
        if self.replies:
            reply = self.replies.pop(0)
        elif self.default is not None:
            reply = dict[str, Choice]()
        else:
            raise RuntimeError(
                f'ScriptedAnswerer ran out of replies: request {len(self.requests)} ({request.id}) has none left'
            )
        if self.delay:
            await anyio.sleep(self.delay)
        response = self._respond(request, reply)
        if self.answered_by is not None and response.answered_by is None:
            response = replace(response, answered_by=self.answered_by)
        check_response(request, response)
        return response

    def _respond(self, request: AskUserRequest, reply: Reply) -> AskUserResponse:
        if isinstance(reply, _Decline):
            return AskUserResponse(cancelled=True)
        if isinstance(reply, AskUserResponse):
            return reply
        if callable(reply):
            return reply(request)
        if unknown := set(reply) - {question.header for question in request.questions}:
            raise ValueError(f'the script answers {sorted(unknown)}, which request {request.id} does not ask')
        answers: list[AskUserAnswer] = []
        for question in request.questions:
            choice = reply.get(question.header, self.default)
            if choice is None:
                raise ValueError(f'the script has no answer for {question.header!r} and no default')
            answers.append(_answer(request, question, choice))
        return AskUserResponse(answers=tuple(answers))


def _answer(request: AskUserRequest, question: Question, choice: Choice) -> AskUserAnswer:
    if isinstance(choice, WithNote):
        if not request.notes:
            raise ValueError(
                f'the script adds a note to {question.header!r}, but request {request.id} takes none '
                '(notes need AskUser(notes=True))'
            )
        if isinstance(choice.choice, WithNote):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f'the script gives {question.header!r} two notes; WithNote takes one')
        return replace(_answer(request, question, choice.choice), note=choice.note)
    if isinstance(choice, Custom):
        return AskUserAnswer(header=question.header, custom_answer=choice.text)
    picks: Sequence[str | int] = [choice] if isinstance(choice, (str, int)) else choice
    return AskUserAnswer(header=question.header, selected=tuple(_label(question, pick) for pick in picks))


def _label(question: Question, pick: str | int) -> str:
    if isinstance(pick, str):
        return pick
    if not 0 <= pick < len(question.options):
        raise ValueError(f'the script picks option {pick} of {question.header!r}, which has {len(question.options)}')
    return question.options[pick].label
