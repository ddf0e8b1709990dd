"""Answer any MCP server's form elicitation through one of our answerers, for Pydantic AI's MCP toolsets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from jsonschema import ValidationError as SchemaError
from mcp_types import ElicitRequestFormParams, ElicitResult
from pydantic import ValidationError

from .._answers import Answerer, AskUserRequest, AskUserResponse, check_response, format_validation_error
from .._module_names import LazyModule
from .._question_limits import MAX_HEADER_LENGTH, MAX_LABEL_LENGTH, MAX_OPTIONS, MAX_QUESTION_LENGTH, MAX_QUESTIONS
from .._questions import Question
from .._schemas import linear_validator, schema_problem
from .._text import printable

if TYPE_CHECKING:
    from fastmcp.client import elicitation as _elicitation
else:
    # Read by `typing.get_type_hints`, imported only then: fastmcp takes seconds to import, and only Pydantic AI's
    # MCP client needs it.
    _elicitation = LazyModule('fastmcp.client.elicitation')

__all__ = ('elicitation_handler', 'request_from_form', 'DECLINE_REASON_KEY', 'FormMapping', 'CannotExpressError')

DECLINE_REASON_KEY = 'pydantic-ai-ask-user/reason'
"""The `_meta` key of a declined elicitation result that says why the form could not be asked."""

YES = 'Yes'
"""The option a boolean field is asked with for `true`."""

NO = 'No'
"""The option a boolean field is asked with for `false`."""


class CannotExpressError(ValueError):
    """A form, or an answer to it, has a shape our multiple-choice questions cannot carry faithfully."""


@dataclass(frozen=True)
class _Field:
    key: str
    header: str
    values: dict[str, Any]
    """Each option label and the value it stands for in the server's schema."""
    multi: bool = False
    free_text: bool = False
    """Any string is a valid value, so an answer in the person's own words is taken as it is."""


@dataclass(frozen=True)
class FormMapping:
    """A server's form as an `AskUserRequest`, and the way back from its response to the form's content."""

    request: AskUserRequest
    """The questions put to the person: one per field that is asked."""

    schema: dict[str, Any]
    """The server's `requestedSchema`, that the content is validated against."""

    fields: tuple[_Field, ...] = field(default=())
    """How each question maps back to its field."""

    def content(self, response: AskUserResponse) -> dict[str, Any]:
        """The form content `response` stands for, valid against the server's schema; `CannotExpressError` if none."""
        check_response(self.request, response)
        if (problem := schema_problem(self.schema)) is not None:  # a mapping built by hand skipped the form's check
            raise CannotExpressError(f'the form cannot check an answer: {problem}')
        by_header = {answer.header: answer for answer in response.answers}
        content: dict[str, Any] = {}
        for item in self.fields:
            answer = by_header[item.header]
            if answer.custom_answer is not None:
                if not item.free_text:
                    raise CannotExpressError(
                        f'the person answered {item.key!r} in their own words, and the field takes only its options'
                    )
                content[item.key] = answer.custom_answer
            elif item.multi:
                content[item.key] = [item.values[label] for label in answer.selected]
            else:
                content[item.key] = item.values[answer.selected[0]]
        try:
            _validator(self.schema).validate(content)
        except SchemaError as error:
            raise CannotExpressError(f'the answer does not fit the form: {printable(error.message)}') from None
        except Exception as error:  # a hostile schema: an unresolvable $ref, a pattern that is no regex, ...
            raise CannotExpressError(f'the form cannot check an answer: {printable(type(error).__name__)}') from None
        return content


def _validator(schema: dict[str, Any]) -> Any:
    """A validator of `schema` that resolves no reference outside it and runs its patterns in linear time."""
    return linear_validator(schema)


def _shown_whole(key: str, title: str, *, exact: bool = False) -> str:
    """`title` as an option label, or `CannotExpressError` when a label could not show all of it.

    With `exact`, the label is also the value the server gets, so it must not need trimming either.
    """
    label = title.strip()
    if len(label) > MAX_LABEL_LENGTH or (exact and label != title):
        raise CannotExpressError(
            f'field {key!r} has an option longer than a label shows whole ({MAX_LABEL_LENGTH} characters)'
            if len(label) > MAX_LABEL_LENGTH
            else f'field {key!r} has a suggestion with spaces around it, which a label would not show'
        )
    return label


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + '…'


def _object(value: Any) -> dict[str, Any] | None:
    """`value` as a JSON object, or `None` when it is not one."""
    return dict(cast('Mapping[str, Any]', value)) if isinstance(value, Mapping) else None


def _array(value: Any) -> list[Any] | None:
    """`value` as a JSON array, or `None` when it is not one."""
    return list(cast('list[Any]', value)) if isinstance(value, list) else None


def _choices(key: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Label to value for an enum: `oneOf`/`anyOf` of `{const, title}`, `enum` (with legacy `enumNames`)."""
    titled = _array(schema.get('oneOf', schema.get('anyOf')))
    values = _array(schema.get('enum'))
    pairs: list[tuple[Any, Any]]
    if titled is not None:
        items = [item for item in map(_object, titled) if item is not None]
        pairs = [(item.get('title', item.get('const')), item.get('const')) for item in items]
    elif values is not None:
        names = _array(schema.get('enumNames'))
        pairs = list(zip(names if names is not None and len(names) == len(values) else values, values, strict=True))
    else:
        raise CannotExpressError(f'field {key!r} has no options')
    if not all(isinstance(title, str) and isinstance(value, str) for title, value in pairs):
        raise CannotExpressError(f'field {key!r} has an option that is not a string')
    if len(pairs) > MAX_OPTIONS:
        raise CannotExpressError(f'field {key!r} has {len(pairs)} options; a question offers at most {MAX_OPTIONS}')
    choices: dict[str, Any] = {}
    for title, value in pairs:
        label = _shown_whole(key, title)
        if label in choices:
            raise CannotExpressError(f'field {key!r} has two options shown as {printable(repr(label))}')
        choices[label] = value
    return choices


def _field(key: str, schema: Any) -> _Field | str:
    """How field `key` is asked, or why it cannot be."""
    schema = _object(schema)
    if schema is None:
        return 'its schema is not an object'
    kind = schema.get('type')
    title = schema.get('title') if isinstance(schema.get('title'), str) else key
    header = _cut(str(title).strip() or key, MAX_HEADER_LENGTH)
    try:
        if kind == 'boolean':
            return _Field(key, header, {YES: True, NO: False})
        if kind == 'string' and any(name in schema for name in ('oneOf', 'anyOf', 'enum')):
            return _Field(key, header, _choices(key, schema))
        if kind == 'array':
            items = _object(schema.get('items'))
            if items is None:
                return 'it is a list without item options'
            choices = _choices(key, items)
            low, high = schema.get('minItems', 0), schema.get('maxItems', len(choices))
            if not (isinstance(low, int) and low <= 1 and isinstance(high, int) and high >= len(choices)):
                return f'it takes {low} to {high} of its {len(choices)} options, and a question takes 1 to all'
            return _Field(key, header, choices, multi=True)
        if kind == 'string' and not schema.get('format') and not schema.get('pattern'):
            suggestions: list[str] = [schema['default']] if isinstance(schema.get('default'), str) else []
            for example in _array(schema.get('examples')) or []:
                if isinstance(example, str) and example not in suggestions:
                    suggestions.append(example)
            if len(suggestions) >= 2:
                # The person picks the very text the server gets: a suggestion shown cut or trimmed could
                # hide a tail ("I agree ...   and I authorise a transfer") that the pick would send.
                values = {_shown_whole(key, text, exact=True): text for text in suggestions[:MAX_OPTIONS]}
                return _Field(key, header, values, free_text=True)
            return 'it is free text, and a question offers 2 to 6 options'
    except CannotExpressError as error:
        return str(error).removeprefix(f'field {key!r} ').strip()
    return f'it is a {printable(str(kind))} field{" with a format" if schema.get("format") else ""}'


def request_from_form(message: str, schema: Mapping[str, Any], *, id: str | None = None) -> FormMapping:
    """The questions a server's form elicitation asks; `CannotExpressError` naming what cannot be asked.

    String enums (`oneOf`/`anyOf` with titles, `enum`) become options, labelled with their titles; a
    multi-select array becomes a multi-select question; a boolean is asked as Yes/No. A free-text string
    is asked only when its `default` and `examples` give two options to pick, and then an answer in the
    person's own words is that string. Any other field that is required makes the whole form
    inexpressible; an optional one is left out (the server gets no value for it, as its schema allows).
    The server's message opens the first question.
    """
    properties = _object(schema.get('properties'))
    if not properties:
        raise CannotExpressError('the form asks for nothing')
    required = {name for name in _array(schema.get('required')) or [] if isinstance(name, str)}
    fields: list[_Field] = []
    questions: list[Question] = []
    left_out: list[str] = []
    for key, field_schema in properties.items():
        item = _field(key, field_schema)
        if isinstance(item, str):
            if key in required:
                raise CannotExpressError(f'field {printable(repr(key))} cannot be asked as a question: {item}')
            left_out.append(f'{printable(repr(key))}: {item}')
            continue
        description = (_object(field_schema) or {}).get('description')
        text = description if isinstance(description, str) and description.strip() else item.header
        if not questions and message.strip():
            text = f'{message.strip()}\n\n{text}'
        try:
            questions.append(
                Question(
                    header=item.header,
                    question=_cut(text, MAX_QUESTION_LENGTH),
                    options=tuple({'label': label} for label in item.values),  # pyright: ignore[reportArgumentType]
                    multi_select=item.multi,
                )
            )
        except ValidationError as error:
            problem = '; '.join(format_validation_error(error))
            raise CannotExpressError(f'field {printable(repr(key))} cannot be asked: {printable(problem)}') from None
        fields.append(item)
    if not questions:
        raise CannotExpressError(f'none of the form fields can be asked as a question ({"; ".join(left_out)})')
    if len(questions) > MAX_QUESTIONS:
        raise CannotExpressError(f'the form has {len(questions)} fields; at most {MAX_QUESTIONS} questions are asked')
    if (problem := schema_problem(schema)) is not None:
        raise CannotExpressError(f'the form schema is not one ask-user can check: {problem}')
    try:  # a schema that cannot check answers is declined before the person is asked, not after
        # No format checker: the meta-schema's `"format": "regex"` would compile the server's patterns with `re`,
        # and `pattern_problem` has checked them on the linear engine already.
        _validator(dict(schema)).check_schema(dict(schema), format_checker=None)
        _validator(dict(schema)).is_valid({})
    except Exception as error:
        raise CannotExpressError(
            f'the form schema is not one ask-user can check: {printable(type(error).__name__)}'
        ) from None
    try:
        request = AskUserRequest(questions=tuple(questions)) if id is None else AskUserRequest(tuple(questions), id=id)
    except ValueError as error:
        raise CannotExpressError(f'the form cannot be asked: {printable(str(error))}') from None
    return FormMapping(request=request, schema=dict(schema), fields=tuple(fields))


def _decline(reason: str) -> ElicitResult:
    return ElicitResult.model_validate({'action': 'decline', '_meta': {DECLINE_REASON_KEY: reason}})


def elicitation_handler(answerer: Answerer) -> _elicitation.ElicitationHandler[Any, Any]:
    """An `elicitation_handler` for Pydantic AI's `MCPToolset` that asks the server's forms through `answerer`.

    Any answerer works: terminal, web, durable or scripted. A form (see `request_from_form`) becomes one
    `AskUserRequest`; the person's answers are mapped back to the server's values and validated against
    its schema. A person who declines declines the elicitation. A form that cannot be asked faithfully,
    an answer it cannot take (own words for an options-only field), and URL-mode elicitations are
    declined, with the reason under `_meta[DECLINE_REASON_KEY]` for the server to read.
    """

    async def handle(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        if not isinstance(params, ElicitRequestFormParams):
            return _decline('URL-mode elicitation is not something ask-user can show; only forms are asked')
        try:
            mapping = request_from_form(message, params.requested_schema)
        except CannotExpressError as error:
            return _decline(str(error))
        response = await answerer(mapping.request)
        check_response(mapping.request, response)
        if response.cancelled:
            return ElicitResult(action='decline')
        try:
            return ElicitResult(action='accept', content=mapping.content(response))
        except CannotExpressError as error:
            return _decline(str(error))

    return handle
