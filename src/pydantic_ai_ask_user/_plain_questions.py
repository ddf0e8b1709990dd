"""The fast rules of a question call, and plain questions: what `_fast_questions` checks a call with, importable
without pydantic's models, and the questions it builds as plain objects for the commands that only show them.

`questions_schema` is the call's shape and limits as one pydantic-core schema with no Python call inside, building the
classes it is given: the public `Question` and `QuestionOption` (`_fast_questions`, for the tool and every store), or
`PlainQuestion` and `PlainOption`, plain classes with the same attributes (`plain_questions`, for `ask-user pending`
on a SQLite file, which reads stored questions with the standard library and prints them with the code that prints
the models). `holds` is the rest of the rules, checked once for the whole call in Python. What either rejects is not
judged here: the exact validator (`ToolArguments`) names the problem, byte for byte as before.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

from pydantic_core import SchemaValidator, ValidationError, core_schema

from ._question_limits import (
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS,
    MIN_OPTIONS,
)
from ._text import _FORBIDDEN_CATEGORIES, _INVISIBLE, MAX_COMBINING_MARKS, _rust_class, fold_all  # pyright: ignore[reportPrivateUsage]

if TYPE_CHECKING:
    from ._audience import QuestionContext
    from ._escalation import Escalation

__all__ = (
    'questions_to_json',
    'holds',
    'questions_schema',
    'request_key',
    'PlainOption',
    'PlainQuestion',
    'PlainRequest',
    'plain_questions',
)

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


def holds(questions: Sequence[Any], recommending: bool) -> bool:
    """Whether the questions the fast schema built (`Question`s or `PlainQuestion`s) keep the rules it cannot express:
    checked once for the call.
    """
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


def questions_schema(
    question_class: type[Any], option_class: type[Any], *, recommending: bool
) -> core_schema.CoreSchema:
    """The call's shape and limits, building `question_class` and `option_class` directly, with no Python call inside.

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
        option_class,
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
        question_class,
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
    return core_schema.typed_dict_schema(
        {
            'questions': core_schema.typed_dict_field(
                core_schema.tuple_variable_schema(question, min_length=1, max_length=MAX_QUESTIONS)
            )
        },
        extra_behavior='forbid',
    )


class PlainOption:
    """An option as `plain_questions` builds it: the attributes of `QuestionOption`, validated by the same rules."""

    label: str
    """What the person picks."""

    description: str | None
    """What picking it means, or `None`."""


class PlainQuestion:
    """A question as `plain_questions` builds it: the attributes of `Question`, validated by the same rules."""

    header: str
    """The question's short name, unique in its call."""

    question: str
    """The question itself."""

    options: tuple[PlainOption, ...]
    """What may be picked, in the model's order."""

    multi_select: bool
    """Whether more than one option may be picked."""

    recommended: str | None
    """The label of the option the model recommends, or `None`."""


@cache
def _plain_validator() -> SchemaValidator:
    """The fast rules of a call that may recommend, building plain questions (a stored call is read as any call)."""
    return SchemaValidator(questions_schema(PlainQuestion, PlainOption, recommending=True))


def plain_questions(arguments: Mapping[str, Any]) -> tuple[PlainQuestion, ...] | None:
    """The questions of a call's arguments as plain objects when the fast rules accept them, else `None`: then only
    the exact validator (through the models) can say whether they are valid, and what is wrong.

    What these rules accept, the exact ones accept, building the same questions (`_fast_questions`).
    """
    try:
        questions: tuple[PlainQuestion, ...] = _plain_validator().validate_python(arguments)['questions']
    except ValidationError:
        return None
    return questions if holds(questions, True) else None


def request_key(run_id: str, tool_call_id: str, run_step: int | None = None) -> str:
    """`AskUserRequest.key` of call `tool_call_id` in step `run_step` of run `run_id`: 32 hex digits, in any process."""
    # JSON keeps the parts apart whatever characters they hold ('a:b' + 'c' is not 'a' + 'b:c').
    parts: list[str | int] = [run_id, tool_call_id] if run_step is None else [run_id, tool_call_id, run_step]
    joined = json.dumps(parts, ensure_ascii=True)
    return hashlib.sha256(joined.encode('ascii')).hexdigest()[:32]


@dataclass(frozen=True)
class PlainRequest:
    """A stored request read with the standard library: the attributes of `AskUserRequest` that the listings show and
    search, its questions `PlainQuestion`s. Built only from what the same checks accepted (`dbos._pending_rows`).
    """

    questions: tuple[PlainQuestion, ...]
    """The questions, as the model asked them, in its order."""

    id: str
    """The tool call id."""

    notes: bool
    """Whether a note may go with each answer."""

    deadline: float | None
    """When the wait runs out (`time.time()`), or `None`."""

    run_id: str | None
    """The run that asked, or `None` for a request of no run."""

    run_step: int | None
    """The step of the run in which the model asked, or `None`."""

    audience: tuple[str, ...] | None
    """Who may answer (sorted names), or `None`: anyone."""

    context: QuestionContext | None
    """Where the question comes from, or `None`."""

    escalate: tuple[Escalation, ...]
    """The escalation policy; empty: none."""

    @property
    def key(self) -> str:
        """Where the question is stored: as `AskUserRequest.key`."""
        if self.run_id is None:
            return self.id
        return request_key(self.run_id, self.id, self.run_step)


class _Asking(Protocol):
    """A request, of the models (`AskUserRequest`) or plain (`PlainRequest`): what its questions' JSON is made of."""

    @property
    def questions(self) -> Sequence[Any]: ...


def questions_to_json(request: _Asking) -> list[dict[str, Any]]:
    """The request's questions in the shape the model wrote them: the `questions` of an `ask_user_question` call.

    `recommended` appears only on a question that has one, so questions without it (every question of the
    default tool) serialize, and hash in receipts, exactly as before the field existed. Read from the attributes, the
    same for `Question`s and `PlainQuestion`s: the fields in the models' order, an option's `description` `None`
    when it has none, as `model_dump(mode='json')` gives them.
    """
    shown: list[dict[str, Any]] = []
    for question in request.questions:
        data: dict[str, Any] = {
            'header': question.header,
            'question': question.question,
            'options': [{'label': option.label, 'description': option.description} for option in question.options],
            'multi_select': question.multi_select,
        }
        if question.recommended is not None:
            data['recommended'] = question.recommended
        shown.append(data)
    return shown
