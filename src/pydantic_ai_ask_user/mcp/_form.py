"""Our questions as one MCP form elicitation, and the form's content back as a checked `AskUserResponse`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from .._answers import (
    MAX_CUSTOM_ANSWER_LENGTH,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    check_response,
)
from .._questions import Question
from .._text import is_blank, printable

__all__ = ('ElicitationForm', 'elicitation_form', 'CUSTOM_FIELD_SUFFIX', 'NOTE_FIELD_SUFFIX', 'RefusedAnswerError')

CUSTOM_FIELD_SUFFIX = '_own'
"""The suffix of the optional string field that carries a question's answer in the person's own words."""

NOTE_FIELD_SUFFIX = '_note'
"""The suffix of the optional string field that carries a note to a question's answer (a request with `notes`)."""

RECOMMENDED_MARK = ' (recommended)'
"""Added to the title of the option the model recommends; the option's value (`const`) stays its label."""


class RefusedAnswerError(ToolError, ValueError):
    """An MCP client's answer that does not fit the questions it was asked; the message names the problem.

    A `ValueError`, and an `MCPServer` `ToolError`: in a tool, the call fails with this message for the
    client to read, and nothing the client sent is taken.
    """


def _choice_key(index: int) -> str:
    return f'q{index + 1}'


def _describe(question: Question) -> str:
    """The question text, then each option that has a description, as `label: description` lines."""
    lines = [question.question]
    lines.extend(f'{option.label}: {option.description}' for option in question.options if option.description)
    if question.recommended is not None:
        lines.append(f'Recommended: {question.recommended}')
    return '\n'.join(lines)


def _title(question: Question, label: str) -> str:
    return label + RECOMMENDED_MARK if label == question.recommended else label


@dataclass(frozen=True)
class ElicitationForm:
    """One `AskUserRequest` as the `message` and `requestedSchema` of a form elicitation (MCP 2025-11-25).

    Each question is a field `q1`, `q2`, ... titled with its header: a single choice is a string with
    `oneOf` of `{const, title}`, a multi-select an array whose `items.anyOf` lists the options. An option's
    description has no slot of its own in the schema, so it goes into the field's description. When custom
    answers are allowed, each question gets an optional string field `q1_own`, ... for the person's own words,
    and the choice fields are optional too (one or the other is checked when the form comes back).

    A request with `notes` gives each question an optional string field `q1_note`, ... whose text becomes
    the answer's `note`. The option the model recommends has `(recommended)` after its title, and the field's
    description says which it is; the schema sets no `default`, which a client could submit without the person.
    """

    request: AskUserRequest
    """The request this form asks."""

    message: str
    """The elicitation's `message`: what the client shows above the form."""

    schema: dict[str, Any]
    """The elicitation's `requestedSchema`."""

    allow_custom_answers: bool
    """Whether the form has the optional own-words fields."""

    max_custom_answer_length: int = MAX_CUSTOM_ANSWER_LENGTH
    """The longest own answer the form takes: its `maxLength`, enforced again when the form comes back."""

    def read(self, action: str, content: Mapping[str, Any] | None) -> AskUserResponse:
        """The response a client's elicitation result stands for; `ValueError` naming the problem if it does not fit.

        `decline` and `cancel` are a declined response. An accepted form must fill exactly the fields of this
        form, with values of their types, and the answers must pass `check_response`: whatever a client sends
        is untrusted, and its own strings are filtered before an error quotes them.
        """
        if action in ('decline', 'cancel'):
            return AskUserResponse(cancelled=True)
        if action != 'accept':
            raise RefusedAnswerError(
                f'the elicitation action is {printable(repr(action))}, not accept, decline or cancel'
            )
        if not isinstance(content, Mapping):
            raise RefusedAnswerError('the elicitation was accepted without content')
        known = set(self.schema['properties'])
        for key in content:
            if key not in known:
                raise RefusedAnswerError(
                    f'the form content has a field {printable(repr(key))} that the form did not ask for'
                )
        answers = [self._answer(index, question, content) for index, question in enumerate(self.request.questions)]
        response = AskUserResponse(answers=tuple(answers))
        try:
            check_response(self.request, response)
        except ValueError as error:
            raise RefusedAnswerError(printable(str(error))) from None
        return response

    def _answer(self, index: int, question: Question, content: Mapping[str, Any]) -> AskUserAnswer:
        key = _choice_key(index)
        choice = content.get(key)
        own = content.get(key + CUSTOM_FIELD_SUFFIX) if self.allow_custom_answers else None
        where = f'field {key} ({printable(repr(question.header))})'
        if own is not None and not isinstance(own, str):
            raise RefusedAnswerError(f'{where}: the own answer is {type(own).__name__}, not a string')
        if own is not None and is_blank(own):
            own = None  # a form client sends an untouched optional text field as ''
        if choice in ('', []):
            choice = None
        if own is not None and len(own) > self.max_custom_answer_length:
            raise RefusedAnswerError(
                f'{where}: the own answer has {len(own)} characters, more than the {self.max_custom_answer_length} '
                'the form allows'
            )
        note = self._note(where, content.get(key + NOTE_FIELD_SUFFIX) if self.request.notes else None)
        if own is not None:
            if choice is not None:
                raise RefusedAnswerError(f'{where}: both an option and an own answer were given; give one or the other')
            return AskUserAnswer(header=question.header, custom_answer=own, note=note)
        if choice is None:
            raise RefusedAnswerError(f'{where}: nothing was picked')
        if question.multi_select:
            if not isinstance(choice, list) or not all(isinstance(item, str) for item in choice):  # pyright: ignore[reportUnknownVariableType]
                got = type(choice).__name__  # pyright: ignore[reportUnknownArgumentType]
                raise RefusedAnswerError(f'{where}: expected a list of option labels, got {got}')
            return AskUserAnswer(header=question.header, selected=tuple(choice), note=note)  # pyright: ignore[reportUnknownArgumentType]
        if not isinstance(choice, str):
            raise RefusedAnswerError(f'{where}: expected one option label, got {type(choice).__name__}')
        return AskUserAnswer(header=question.header, selected=(choice,), note=note)

    def _note(self, where: str, note: object) -> str | None:
        """The note of one answer, or `None` for an untouched field; its rules are checked by `check_response`.

        Held to the form's own limit, as the own answer is: a note follows the rules of a custom answer.
        """
        if note is None:
            return None
        if not isinstance(note, str):
            raise RefusedAnswerError(f'{where}: the note is {type(note).__name__}, not a string')
        if is_blank(note):
            return None  # an untouched optional text field comes back as ''
        if len(note) > self.max_custom_answer_length:
            raise RefusedAnswerError(
                f'{where}: the note has {len(note)} characters, more than the {self.max_custom_answer_length} '
                'the form allows'
            )
        return note


def elicitation_form(
    request: AskUserRequest,
    *,
    allow_custom_answers: bool = True,
    max_custom_answer_length: int = MAX_CUSTOM_ANSWER_LENGTH,
) -> ElicitationForm:
    """Put `request` into one form elicitation; see `ElicitationForm` for the shape."""
    if not 1 <= max_custom_answer_length <= MAX_CUSTOM_ANSWER_LENGTH:
        raise ValueError(
            f'max_custom_answer_length must be 1 to {MAX_CUSTOM_ANSWER_LENGTH} (MAX_CUSTOM_ANSWER_LENGTH), '
            f'not {max_custom_answer_length}'
        )
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, question in enumerate(request.questions):
        key = _choice_key(index)
        choices = [{'const': option.label, 'title': _title(question, option.label)} for option in question.options]
        field: dict[str, Any]
        if question.multi_select:
            field = {
                'type': 'array',
                'title': question.header,
                'description': _describe(question),
                'minItems': 1,
                'maxItems': len(choices),
                'items': {'anyOf': choices},
            }
        else:
            field = {'type': 'string', 'title': question.header, 'description': _describe(question), 'oneOf': choices}
        properties[key] = field
        if allow_custom_answers:
            properties[key + CUSTOM_FIELD_SUFFIX] = {
                'type': 'string',
                'title': f'{question.header}: your own answer',
                'description': 'Instead of picking above, answer in your own words (leave empty to use your pick).',
                'maxLength': max_custom_answer_length,
            }
        else:
            required.append(key)
        if request.notes:
            properties[key + NOTE_FIELD_SUFFIX] = {
                'type': 'string',
                'title': f'{question.header}: note',
                'description': 'Optional: add a note to your answer, such as a condition or a reason.',
                'maxLength': max_custom_answer_length,
            }
    schema: dict[str, Any] = {'type': 'object', 'properties': properties}
    if required:
        schema['required'] = required
    if len(request.questions) == 1:
        message = request.questions[0].question
    else:
        message = f'Please answer {len(request.questions)} questions: ' + ', '.join(q.header for q in request.questions)
    return ElicitationForm(
        request=request,
        message=message,
        schema=schema,
        allow_custom_answers=allow_custom_answers,
        max_custom_answer_length=max_custom_answer_length,
    )
