"""The question schema the model fills in, and its validation."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ._question_limits import (
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS,
    MIN_OPTIONS,
)
from ._text import (
    MAX_COMBINING_MARKS,
    describe_character,
    find_forbidden_character,
    find_mark_run,
    fold,
    fold_all,
    folds_by_case_and_width,
    is_clean,
    is_latin1,
)

__all__ = (
    'QuestionOption',
    'Question',
    'Questions',
    'RecommendingQuestions',
    'ToolArguments',
    'PlainToolArguments',
    'check_questions',
)

# The two text rules run on every string of every call, so each starts with a fast path: printable text (with
# line breaks, where allowed) that is Latin-1 (checked in C) or clean (checked in Rust) breaks no rule. Only
# other text takes the exact, slower walk, which finds the problem and names it.


def _one_line(value: str) -> str:
    if value.isprintable() and (is_latin1(value) or is_clean(value)):
        return value
    if (char := find_forbidden_character(value, allow_newline=False)) is not None:
        kind = 'a line break' if char in '\n\r\u2028\u2029\x85' else describe_character(char)
        raise ValueError(f'must be one line of plain text, but contains {kind}')
    if (run := find_mark_run(value)) is not None:
        raise ValueError(f'must be one line of plain text, but {_stacks(run)}')
    # A header or a label is what the person tells options apart by: a private-use character is drawn as
    # whatever the font puts there (an icon in a terminal's Nerd Font, a logo on a Mac), so none is allowed.
    if (char := next((c for c in value if unicodedata.category(c) == 'Co'), None)) is not None:
        raise ValueError(f'must be one line of plain text, but contains {describe_character(char)}')
    return value


def _multi_line(value: str) -> str:
    if (value.isprintable() or value.replace('\n', ' ').isprintable()) and (is_latin1(value) or is_clean(value)):
        return value
    if (char := find_forbidden_character(value, allow_newline=True)) is not None:
        raise ValueError(
            f'must be plain text (line breaks written as \\n are allowed), but contains {describe_character(char)}'
        )
    if (run := find_mark_run(value)) is not None:
        raise ValueError(f'must be plain text, but {_stacks(run)}')
    return value


def _stacks(run: int) -> str:
    return f'stacks {run} combining marks on one character; at most {MAX_COMBINING_MARKS} are allowed'


def _blank_to_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


# Stripping and the limits live in the string schema itself (in Rust, which keeps a maximal call cheap), so
# the model reads "String should have at most 25 characters"; limits placed after a function validator are
# checked generically and say "Value should have at most 25 items after validation". The strip removes
# Unicode White_Space; the C0 separators U+001C-U+001F, which `str.strip` would also drop, stay and are
# rejected as control characters.
_Header = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_HEADER_LENGTH),
    AfterValidator(_one_line),
]
_QuestionText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUESTION_LENGTH),
    AfterValidator(_multi_line),
]
_Label = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_LABEL_LENGTH),
    AfterValidator(_one_line),
]
_Description = Annotated[
    Annotated[
        str, StringConstraints(strip_whitespace=True, max_length=MAX_DESCRIPTION_LENGTH), AfterValidator(_multi_line)
    ]
    | None,
    BeforeValidator(_blank_to_none),
]


class QuestionOption(BaseModel):
    """One choice the user can pick."""

    model_config = ConfigDict(extra='forbid', frozen=True, defer_build=True)

    label: _Label = Field(description='What the user picks: 1-50 characters, one line, unique within the question.')
    """What the user picks and what the model gets back: one line, unique within its question."""

    description: _Description = Field(
        default=None, description='Optional detail shown under the label: at most 200 characters.'
    )
    """Optional detail shown under the label, or `None`."""


def _check_options(options: tuple[QuestionOption, ...]) -> tuple[QuestionOption, ...]:
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise ValueError(f'a question offers {MIN_OPTIONS} to {MAX_OPTIONS} options, not {len(options)}')
    _reject_repeats([option.label for option in options], 'option label')
    return options


def _reject_repeats(names: Sequence[str], what: str) -> None:
    keys = fold_all(names)
    if len(set(keys)) == len(keys):
        return
    seen: dict[str, str] = {}
    for name in names:
        key = fold(name)
        if key in seen:
            if seen[key] == name:
                same = 'is repeated'
            elif folds_by_case_and_width(seen[key], name):
                same = f'is the same as {seen[key]!r} (ignoring case and width)'
            else:
                same = f'looks the same as {seen[key]!r} (it has letters of another script that look alike)'
            raise ValueError(f'{what} {name!r} {same}; every {what} must be unique')
        seen[key] = name


class _Spec:
    """Holds the question model of the specification under its own name, `Question`, as the default tool shows it.

    The public `Question` below adds the opt-in `recommended` field. The default tool validates this one, so the
    model reads exactly the specified schema and a call that sets `recommended` (even to null) gets the same
    retry as any other unknown field; its questions become public `Question`s right after validation.
    """

    class Question(BaseModel):
        """One multiple-choice question."""

        model_config = ConfigDict(extra='forbid', frozen=True, defer_build=True)

        header: _Header = Field(
            description='A short title, 1-25 characters, one line, unique in the call; the answer is keyed by it.'
        )
        """A short title, unique within the call; the answer comes back keyed by it."""

        question: _QuestionText = Field(description='The full question, 1-500 characters; may span lines.')
        """The full question put to the user; may span lines."""

        options: Annotated[
            tuple[QuestionOption, ...],
            # Counted after the items validate, so one bad option is reported once, not also as "too few".
            AfterValidator(_check_options),
            Field(json_schema_extra={'minItems': MIN_OPTIONS, 'maxItems': MAX_OPTIONS}),
        ] = Field(description='2-6 concrete choices with unique labels.')
        """The 2 to 6 choices offered, labels unique within the question."""

        multi_select: bool = Field(default=False, description='True when the user may pick more than one option.')
        """Whether the user may pick more than one option (at least one either way)."""


_SpecQuestion = _Spec.Question
"""The question of the specification: header, question, options, multi_select and nothing else."""


class Question(_SpecQuestion):
    """One multiple-choice question."""

    model_config = ConfigDict(extra='forbid', frozen=True, defer_build=True)

    recommended: _Label | None = Field(
        default=None,
        description='Optional: the label of the one option you recommend; the user still picks.',
    )
    """The label of the option the model recommends, or `None`: at most one per question, never picked for the person.

    The model can set it only with `AskUser(recommended_options=True)`; front ends show it and put the cursor on it.
    With the option off, the field is not in the tool's schema and a call that sets it gets a validation retry.
    """

    @model_validator(mode='after')
    def _recommended_is_an_option(self) -> Question:
        if self.recommended is not None and self.recommended not in {option.label for option in self.options}:
            raise ValueError(f'recommended {self.recommended!r} is not the label of one of its options')
        return self

    def __setstate__(self, state: dict[Any, Any]) -> None:
        # A question pickled before `recommended` existed (a durable engine may hold one) has none.
        fields = state.get('__dict__')
        if isinstance(fields, dict):
            fields.setdefault('recommended', None)  # pyright: ignore[reportUnknownMemberType]
        super().__setstate__(state)


def _promote(question: _SpecQuestion) -> Question:
    """The public `Question` of a question the default tool validated: the same fields, `recommended` None."""
    return Question.model_construct(
        _fields_set=question.model_fields_set,
        header=question.header,
        question=question.question,
        options=question.options,
        multi_select=question.multi_select,
    )


def check_questions(questions: tuple[Question, ...]) -> tuple[Question, ...]:
    """Check what holds across the questions of one call: how many, and that headers are unique."""
    if not 1 <= len(questions) <= MAX_QUESTIONS:
        raise ValueError(f'a call asks 1 to {MAX_QUESTIONS} questions, not {len(questions)}')
    _reject_repeats([question.header for question in questions], 'header')
    return questions


def _check_plain_questions(questions: tuple[_SpecQuestion, ...]) -> tuple[Question, ...]:
    """The default tool's questions as public `Question`s, checked across the call by `check_questions`."""
    return check_questions(tuple(_promote(question) for question in questions))


def _normalized(name: str) -> str:
    return name.casefold().replace('_', '').replace('-', '').replace(' ', '')


def did_you_mean(name: object, fields: Collection[str]) -> str | None:
    """The field of `fields` that `name`, a field no model of the call has, was probably meant to be; else `None`.

    Case, `_`, `-` and spaces are ignored first (`multiselect`, `multiSelect`, `Multi-Select` are `multi_select`),
    then a close spelling is looked for (`lable` is `label`, `descripton` is `description`).
    """
    if not isinstance(name, str) or len(name) > 100:
        return None
    import difflib  # here, not at the top: only a misspelt field needs it, and every command that asks imports this

    by_form = {_normalized(field): field for field in fields}
    close = difflib.get_close_matches(_normalized(name), list(by_form), n=1, cutoff=0.75)
    return by_form[close[0]] if close else None


def _suggesting(question_fields: Collection[str]) -> Callable[[Any, ValidatorFunctionWrapHandler], Any]:
    """A wrap validator for the questions of a call that adds "did you mean" to an unknown field that is a misspelling.

    The model (and a person writing a question file) reads `questions.0.multiselect: Extra inputs are not permitted;
    did you mean 'multi_select'?` in its retry, instead of guessing. Only the field names of the schema are
    suggested; the unknown name itself is never quoted back, so the message holds nothing the caller wrote.
    """
    option_fields = tuple(QuestionOption.model_fields)

    def fields_at(loc: tuple[int | str, ...]) -> Collection[str]:
        if len(loc) == 2:  # (question, field)
            return question_fields
        if len(loc) == 4 and loc[1] == 'options':  # (question, 'options', option, field)
            return option_fields
        return ()

    def validate(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError as error:
            details: list[InitErrorDetails] = []
            suggested = False
            for item in error.errors(include_url=False):
                loc = item['loc']
                if item['type'] == 'extra_forbidden' and (hint := did_you_mean(loc[-1], fields_at(loc))) is not None:
                    hinted = PydanticCustomError(
                        'extra_forbidden', "Extra inputs are not permitted; did you mean '{field}'?", {'field': hint}
                    )
                    details.append({'type': hinted, 'loc': loc, 'input': item['input']})
                    suggested = True
                else:
                    detail: InitErrorDetails = {'type': item['type'], 'loc': loc, 'input': item['input']}
                    if 'ctx' in item:
                        detail['ctx'] = item['ctx']
                    details.append(detail)
            if not suggested:
                raise
            raise ValidationError.from_exception_data(error.title, details) from None

    return validate


RecommendingQuestions = Annotated[
    tuple[Question, ...],
    AfterValidator(check_questions),
    WrapValidator(_suggesting(tuple(Question.model_fields))),
    Field(json_schema_extra={'minItems': 1, 'maxItems': MAX_QUESTIONS}),
]
"""The `questions` of `ask_user_question` with `AskUser(recommended_options=True)`: each may recommend a label."""

Questions = Annotated[
    tuple[_SpecQuestion, ...],
    AfterValidator(_check_plain_questions),
    WrapValidator(_suggesting(tuple(_SpecQuestion.model_fields))),
    Field(json_schema_extra={'minItems': 1, 'maxItems': MAX_QUESTIONS}),
]
"""The `questions` argument of `ask_user_question`: 1 to 10 questions with unique headers, as specified.

Validated as the specification's question (no `recommended`), then made public `Question`s.
"""


class ToolArguments(BaseModel):
    """The whole argument object of one `ask_user_question` call, validated exactly as the tool does."""

    model_config = ConfigDict(extra='forbid', frozen=True, defer_build=True)

    questions: RecommendingQuestions
    """The validated questions, in the order the model asked them.

    Recommended labels are accepted here: a deferred call was validated by the tool before it was deferred,
    with the options it had, and rebuilding it must not lose what the model sent.
    """


class PlainToolArguments(BaseModel):
    """The argument object of the default `ask_user_question` (every option off): its schema is the specified one.

    For a server of the tool outside an agent (`ask-user mcp`): `model_json_schema()` is what the model reads
    and `model_validate` refuses what the default tool refuses, `recommended` included.
    """

    model_config = ConfigDict(extra='forbid', frozen=True, defer_build=True)

    questions: Questions
    """The validated questions, in the order the model asked them."""
