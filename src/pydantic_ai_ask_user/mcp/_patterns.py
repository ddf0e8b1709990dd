"""A server's regular expressions, run on a linear-time engine: a form's `pattern` is hostile input.

JSON Schema's `pattern` is run by `jsonschema` with Python's backtracking `re`, where `^(a+)+$` and an
input of a few dozen characters hold the event loop for minutes. Here every `pattern` of a server's
schema is compiled by pydantic-core's Rust regex engine, which matches in time linear in the input and
cannot compile what would need backtracking (backreferences, look-around): such a pattern is refused,
never handed to `re`. `patternProperties` (which `jsonschema` also consults with `re` when it checks
`additionalProperties`) has no place in a form, whose fields are named in `properties`: it is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import Any, cast

from jsonschema import ValidationError as SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import extend  # pyright: ignore[reportUnknownVariableType] - untyped in jsonschema
from pydantic_core import SchemaError as PatternError
from pydantic_core import SchemaValidator, core_schema

from .._text import printable

__all__ = ('pattern_problem', 'linear_validator_class', 'PATTERN_CACHE_SIZE', 'MAX_PATTERN_SHOWN')

PATTERN_CACHE_SIZE = 256
"""How many compiled patterns are kept: a server sends the same form again and again, and compiling is the cost."""

MAX_PATTERN_SHOWN = 60
"""How many characters of a refused pattern the reason sent back to the server quotes."""


@lru_cache(maxsize=PATTERN_CACHE_SIZE)
def _compiled(pattern: str) -> SchemaValidator | str:
    """A validator matching `pattern` anywhere in a string (JSON Schema's semantics), or why Rust cannot compile it."""
    try:
        return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine='rust-regex'))
    except PatternError as error:
        # The last line is the engine's reason ("backreferences are not supported"); the rest draws the pattern.
        reason = str(error).strip().splitlines()[-1].removeprefix('error: ').removeprefix('SchemaError: ')
        return reason


def _shown(pattern: str) -> str:
    cut = pattern if len(pattern) <= MAX_PATTERN_SHOWN else pattern[: MAX_PATTERN_SHOWN - 1] + '…'
    return printable(repr(cut))


def _schemas(schema: object) -> Iterator[tuple[str, object]]:
    """Every key and value of every object in `schema`, however deep; iterative, so depth cannot overflow."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in cast(Mapping[object, object], node).items():
                if isinstance(key, str):
                    yield key, value
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(cast(list[object], node))


def pattern_problem(schema: object) -> str | None:
    """Why `schema` holds a pattern ask-user will not run, or `None` when every `pattern` compiles in linear time.

    Looks everywhere, `$defs` and values included: a string under a `pattern` key that is data, not a
    keyword, is held to the same rule, which refuses too much rather than let one through.
    """
    for key, value in _schemas(schema):
        if key == 'patternProperties' and isinstance(value, Mapping):
            return 'it uses patternProperties; a form names its fields in properties'
        if key == 'pattern' and isinstance(value, str):
            compiled = _compiled(value)
            if isinstance(compiled, str):
                return (
                    f'its pattern {_shown(value)} is not one ask-user runs ({printable(compiled)}): patterns are '
                    'matched in linear time, without backreferences or look-around'
                )
    return None


def _linear_pattern(validator: Any, pattern: object, instance: object, schema: object) -> Iterator[SchemaError]:
    """The `pattern` keyword on the Rust engine; a pattern it cannot compile fails the check, never runs on `re`."""
    if not isinstance(instance, str) or not isinstance(pattern, str):
        return
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        yield SchemaError(f'the pattern {_shown(pattern)} is not one ask-user runs ({compiled})')
    elif not compiled.isinstance_python(instance):
        yield SchemaError(f'{instance!r} does not match {pattern!r}')


def _no_pattern_properties(
    validator: Any, pattern_properties: object, instance: object, schema: object
) -> Iterator[SchemaError]:
    """`patternProperties` refused: `jsonschema` runs its keys on `re`, here and for `additionalProperties`."""
    yield SchemaError('patternProperties is not checked by ask-user')


@cache
def linear_validator_class(base: type[Validator]) -> type[Validator]:
    """`base` (a `jsonschema` validator class) with `pattern` on the Rust engine and `patternProperties` refused."""
    keywords = {'pattern': _linear_pattern, 'patternProperties': _no_pattern_properties}
    return cast(type[Validator], extend(base, validators=keywords))
