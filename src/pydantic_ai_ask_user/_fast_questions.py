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

import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_core import SchemaValidator, core_schema

from ._questions import (
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS,
    MIN_OPTIONS,
    Question,
    QuestionOption,
)
from ._text import _FORBIDDEN_CATEGORIES, _INVISIBLE, MAX_COMBINING_MARKS, _rust_class, fold_all  # pyright: ignore[reportPrivateUsage]

__all__ = ('ArgumentsValidator', 'fast_questions')

_SEPARATOR = '\x00'
"""Joins the names of a call for the uniqueness checks that run on all of them at once: no validated name holds it."""

_LATIN1_ONE_LINE = bytes(
    code
    for code in range(256)
    if unicodedata.category(chr(code)) not in _FORBIDDEN_CATEGORIES | {'Co'} and not _INVISIBLE.match(chr(code))
)
"""The Latin-1 characters a header or a label may hold, as bytes (a space among them, which joins the strings)."""

_LATIN1_MULTI_LINE = _LATIN1_ONE_LINE + b'\n'
"""The Latin-1 characters a question or a description may hold, as bytes."""

_NOT_INERT = (
    b'<=>' + bytes(range(ord('A'), ord('Z') + 1)) + bytes(range(ord('a'), ord('z') + 1)) + bytes(range(128, 256))
)
"""The bytes of UTF-8 text that are not an inert ASCII character: ASCII letters (folding changes their case, and
look-alikes fold to them), the three ASCII characters that start a canonical composition (`=` and U+0338 make `≠`),
and every byte of a character beyond ASCII. Folding keeps each inert character, in order: in a name already in NFKC,
it neither changes one nor makes one (checked in tests), so two such names whose inert characters differ cannot
fold alike."""


@cache
def _clean_text_validator(multi_line: bool) -> SchemaValidator:
    """Strings joined by `_SEPARATOR` of which each surely breaks no text rule: checked in Rust, in one call.

    A character is a non-mark drawn character (not of category C, line or paragraph separator, nor invisible), a
    space (or a line break, in `multi_line` text), followed by at most `MAX_COMBINING_MARKS`
    visible marks. Stricter than the exact rules where the Unicode versions of Rust and Python differ, or where a
    rule allows a rare character (a private-use one in a question): such text takes the exact path.
    """
    invisible = _rust_class(_INVISIBLE.pattern[1:-1])
    mark = rf'[\p{{M}}--[{invisible}]]'
    base = rf'[^\p{{M}}\p{{C}}\p{{Zl}}\p{{Zp}}{invisible}]'
    if multi_line:
        base = rf'(?:{base}|\n)'
    runs = f'{{0,{MAX_COMBINING_MARKS}}}'
    return SchemaValidator(core_schema.str_schema(pattern=rf'^{mark}{runs}(?:{base}{mark}{runs})*$'))


@cache
def _plain_utf8(multi_line: bool) -> bytes:
    """The bytes of UTF-8 text made only of characters each of which surely passes the text rule, and is no mark.

    ASCII from the space to `~` (and the line break, in `multi_line` text), every continuation byte, and each lead
    byte whose whole range of code points (64 of them for a two-byte character, 4,096 for a three-byte one) holds
    no character of a forbidden category, of private use, no combining mark (`Mn`, `Me`) and no invisible one, by
    this Python's Unicode data: Cyrillic, Greek, Hangul syllables, CJK ideographs, most of Latin beyond Latin-1.
    Text of only these characters holds no run of marks either. Built on first use (some 10 ms).
    """
    refused = _FORBIDDEN_CATEGORIES | {'Co', 'Mn', 'Me'}

    def plain(low: int, high: int) -> bool:
        return not any(
            unicodedata.category(char) in refused or _INVISIBLE.match(char) for char in map(chr, range(low, high))
        )

    allowed = [*range(0x20, 0x7F), *range(0x80, 0xC0)] + ([0x0A] if multi_line else [])
    for lead in range(0xC2, 0xF0):
        if lead < 0xE0:  # a two-byte character: 64 code points
            low = (lead & 0x1F) << 6
            high = low + 0x40
        else:  # a three-byte character: 4,096 code points, those of ED up to the surrogates, which UTF-8 cannot hold
            low = max((lead & 0x0F) << 12, 0x800)
            high = 0xD800 if lead == 0xED else ((lead & 0x0F) << 12) + 0x1000
        if plain(low, high):
            allowed.append(lead)
    return bytes(sorted(allowed))


def _text_is_plain(strings: Sequence[str], multi_line: bool) -> bool:
    """Whether every string of `strings` surely passes `_one_line` (or `_multi_line`), checked for all at once."""
    # Joined by a space, which every string may hold anywhere: the joined text is plain if and only if each is.
    joined = ' '.join(strings)
    try:
        encoded = joined.encode('latin-1')
    except UnicodeEncodeError:
        pass
    else:
        # Latin-1 text holds no mark and no printable invisible character: its characters alone decide, in C.
        return not encoded.translate(None, _LATIN1_MULTI_LINE if multi_line else _LATIN1_ONE_LINE)
    try:
        # Most text of most scripts is told plain by the lead bytes of its characters alone, in C.
        if not joined.encode('utf-8').translate(None, _plain_utf8(multi_line)):
            return True
    except UnicodeEncodeError:
        return False  # a lone surrogate, which the exact rules name
    return _clean_text_validator(multi_line).isinstance_python(joined)


def _names_are_unique(headers: list[str], labels: list[str], label_groups: list[list[str]]) -> bool:
    """Whether the headers, and the labels of each question, surely fold to different keys (`fold`).

    Computed for all names at once, the cheap test first: folding keeps the inert ASCII characters (`_NOT_INERT`)
    of a name already in NFKC where they are, so such names whose digits, spaces and punctuation differ cannot fold
    alike. Names it does not tell apart are folded (`fold_all`, as the exact rule does).
    """
    names = headers + labels
    joined = _SEPARATOR.join(names)
    if unicodedata.is_normalized('NFKC', joined):
        kept = joined.encode('utf-8', 'surrogatepass').translate(None, _NOT_INERT).split(_SEPARATOR.encode())
        if _distinct_in_groups(kept, headers, label_groups):
            return True
    return _distinct_in_groups(fold_all(names), headers, label_groups)


def _distinct_in_groups(keys: Sequence[object], headers: list[str], label_groups: list[list[str]]) -> bool:
    """Whether `keys` (one per name, headers first) differ within the headers and within each question's labels."""
    start = 0
    for group in (headers, *label_groups):
        end = start + len(group)
        if len(set(keys[start:end])) != len(group):
            return False
        start = end
    return True


_HEADER = attrgetter('header')
_QUESTION = attrgetter('question')
_OPTIONS = attrgetter('options')
_LABEL = attrgetter('label')
_DESCRIPTION = attrgetter('description')


def _holds(questions: tuple[Question, ...], recommending: bool) -> bool:
    """Whether the questions the fast schema built keep the rules it cannot express: checked once for the call."""
    options = list(chain.from_iterable(map(_OPTIONS, questions)))
    headers = list(map(_HEADER, questions))
    labels = list(map(_LABEL, options))
    texts = list(map(_QUESTION, questions))
    texts.extend(description for description in map(_DESCRIPTION, options) if description is not None)
    label_groups: list[list[str]] = []
    start = 0
    for question in questions:
        end = start + len(question.options)
        label_groups.append(labels[start:end])
        start = end
    if recommending:
        for question, group in zip(questions, label_groups, strict=True):
            # A recommended label is one of the labels, so its text is checked with them.
            if question.recommended is not None and question.recommended not in group:
                return False
    return (
        _text_is_plain(headers + labels, False)
        and _text_is_plain(texts, True)
        and _names_are_unique(headers, labels, label_groups)
    )


def _string(max_length: int, *, min_length: int = 1) -> core_schema.CoreSchema:
    # The exact schemas strip and count in the same string schema (strict here: only a `str` takes the fast path).
    return core_schema.str_schema(strip_whitespace=True, min_length=min_length, max_length=max_length, strict=True)


def _model(cls: type[Any], fields: dict[str, core_schema.ModelField]) -> core_schema.ModelSchema:
    # `revalidate_instances='always'`: a model instance given in Python is read as its fields, never passed through.
    return core_schema.model_schema(
        cls, core_schema.model_fields_schema(fields, extra_behavior='forbid'), revalidate_instances='always'
    )


@cache
def _fast_validator(recommending: bool) -> SchemaValidator:
    """The call's shape and limits, building the public `Question`s directly, with no Python call inside.

    Without `recommending`, `recommended` is accepted under no key (every key naming it is an extra input), as the
    default tool refuses it; its questions have `recommended=None`, not set, as `_promote` makes them.
    """
    description = core_schema.nullable_schema(
        core_schema.union_schema(
            [
                _string(MAX_DESCRIPTION_LENGTH),
                # A blank description is none (`_blank_to_none`): Rust's strip leaves '', which becomes `None`.
                core_schema.chain_schema(
                    [
                        _string(0, min_length=0),
                        core_schema.with_default_schema(
                            core_schema.str_schema(min_length=1), on_error='default', default=None
                        ),
                    ]
                ),
            ],
            mode='left_to_right',
        )
    )
    option = _model(
        QuestionOption,
        {
            'label': core_schema.model_field(_string(MAX_LABEL_LENGTH)),
            'description': core_schema.model_field(core_schema.with_default_schema(description, default=None)),
        },
    )
    if recommending:
        recommended = core_schema.model_field(
            core_schema.with_default_schema(core_schema.nullable_schema(_string(MAX_LABEL_LENGTH)), default=None)
        )
    else:
        # A field no input can fill: any key is extra, and the value of the one key it reads can never be valid.
        never = core_schema.int_schema(strict=True, ge=1, le=0)
        recommended = core_schema.model_field(
            core_schema.with_default_schema(never, default=None), validation_alias=f'{_SEPARATOR}recommended'
        )
    question = _model(
        Question,
        {
            'header': core_schema.model_field(_string(MAX_HEADER_LENGTH)),
            'question': core_schema.model_field(_string(MAX_QUESTION_LENGTH)),
            'options': core_schema.model_field(
                core_schema.tuple_variable_schema(option, min_length=MIN_OPTIONS, max_length=MAX_OPTIONS)
            ),
            'multi_select': core_schema.model_field(
                core_schema.with_default_schema(core_schema.bool_schema(strict=True), default=False)
            ),
            'recommended': recommended,
        },
    )
    schema = core_schema.typed_dict_schema(
        {
            'questions': core_schema.typed_dict_field(
                core_schema.tuple_variable_schema(question, min_length=1, max_length=MAX_QUESTIONS)
            )
        },
        extra_behavior='forbid',
    )
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
    return questions if _holds(questions, recommending) else None


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
