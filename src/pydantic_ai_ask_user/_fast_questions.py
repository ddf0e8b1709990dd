"""The fast path of question validation: the whole call checked in pydantic-core, the exact rules only on rejection.

The exact validators (`Questions`, `RecommendingQuestions`, `ToolArguments`) call a Python function for every
string, to name the problem when there is one. Almost every call has none, so each call is first validated by
a schema of the same shape and limits with no Python call inside (`_fast_validator`), then checked once, as a
whole, in Python (`_holds`): its text in one pass (by its bytes, in C, for Latin-1 text and for most text of
most scripts; by one Rust regular expression for the rest), and the uniqueness of its headers and labels after
folding. Only a call either rejects is validated again by the exact validator, which raises the error the model
reads, byte for byte as before. The fast path is at least as strict as the exact rules (the property tests hold
it to that): what it accepts, they accept, and it builds the same questions.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from ._plain_questions import holds, questions_schema
from ._questions import Question, QuestionOption

__all__ = ('ArgumentsValidator', 'fast_questions')


@cache
def _fast_validator(recommending: bool) -> SchemaValidator:
    """The call's shape and limits (`questions_schema`), building the public `Question`s directly, with no Python call
    inside.
    """
    schema = questions_schema(Question, QuestionOption, recommending=recommending)
    # pydantic-core reuses a complete model's own validator (the exact one, with its Python calls) for a model
    # schema of that class: marked incomplete while this one is built, the classes get the schema above. Each is
    # left as it was: the models build their own validators when first used (`defer_build`), which `ask-user ask`
    # never needs before its first frame.
    models = (Question, QuestionOption)
    complete = [model.__pydantic_complete__ for model in models]
    try:
        for model in models:
            model.__pydantic_complete__ = False
        return SchemaValidator(schema)
    finally:
        for model, was_complete in zip(models, complete, strict=True):
            model.__pydantic_complete__ = was_complete


def fast_questions(
    args: str | bytes | bytearray | Mapping[str, Any], *, recommending: bool
) -> tuple[Question, ...] | None:
    """The questions of a call's arguments (JSON or a mapping) when the fast path accepts them, else `None`.

    `None` says only that the exact validator must run: to name the problem, or to accept what the fast path
    is too strict for.
    """
    validator = _fast_validator(recommending)
    try:
        if isinstance(args, (str, bytes, bytearray)):
            arguments = validator.validate_json(args)
        else:
            arguments = validator.validate_python(args)
    except ValidationError:
        return None
    questions: tuple[Question, ...] = arguments['questions']
    return questions if holds(questions, recommending) else None


class ArgumentsValidator:
    """The argument validator of `ask_user_question`: the fast path, then the tool's own validator when it rejects.

    Given to Pydantic AI as the tool's `args_validator`; what it returns, or raises, is the tool's own validator's.
    """

    def __init__(self, exact: Any, *, recommending: bool) -> None:
        self.exact = exact
        """The tool's validator from its signature: the exact rules, whose errors the model reads."""
        self.recommending = recommending
        """Whether the tool takes `recommended` (`AskUser(recommended_options=True)`)."""

    def validate_json(
        self,
        input: str | bytes | bytearray,
        *,
        allow_partial: bool | Literal['off', 'on', 'trailing-strings'] = False,
        **kwargs: Any,
    ) -> Any:
        """The validated arguments, `{'questions': ...}`, of a call given as JSON."""
        if allow_partial in (False, 'off') and (questions := fast_questions(input, recommending=self.recommending)):
            return {'questions': questions}
        return self.exact.validate_json(input, allow_partial=allow_partial, **kwargs)

    def validate_python(
        self, input: Any, *, allow_partial: bool | Literal['off', 'on', 'trailing-strings'] = False, **kwargs: Any
    ) -> Any:
        """The validated arguments, `{'questions': ...}`, of a call given as a mapping."""
        if (
            allow_partial in (False, 'off')
            and isinstance(input, Mapping)
            and (questions := fast_questions(input, recommending=self.recommending))  # pyright: ignore[reportUnknownArgumentType]
        ):
            return {'questions': questions}
        return self.exact.validate_python(input, allow_partial=allow_partial, **kwargs)
