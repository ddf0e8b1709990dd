"""JSON schemas written by someone else (an app's tool, a model, an MCP server), applied without trusting them.

`jsonschema` on its own is no safe judge of a hostile schema or value:

- it runs `pattern` (and `patternProperties`, also inside `additionalProperties`) on Python's backtracking
  `re`, where `^([a-z0-9]+\\.?)+@example\\.com$` and 25 characters hold the process (and its GIL) for
  seconds. Here every `pattern` is compiled by pydantic-core's Rust regex engine, which matches in time linear
  in the input and cannot compile what would need backtracking (backreferences, look-around): such a pattern is
  refused, never handed to `re`. `patternProperties` is refused;
- by default it fetches a remote `$ref` from the network, and follows a `$ref` to itself until Python's
  stack runs out. Here a reference must point inside the schema (`#/...`), nothing is ever fetched, and a
  chain of references and in-place keywords (`allOf`, `not`, ...) that comes back to where it started
  without going into the value is refused;
- it walks values and schemas by recursion: both are bounded in depth and size first.

JSON Schema numbers are finite, while Python's `json` reads `NaN` and `Infinity`: a value holding one is
refused. `jsonschema` itself is imported only when a value is checked: the command line's fast path reads
the modules that use this one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

from pydantic_core import SchemaError as PatternError
from pydantic_core import SchemaValidator, core_schema

from ._text import printable

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = (
    'UncheckableSchemaError',
    'schema_problem',
    'value_problem',
    'pattern_problem',
    'linear_validator',
    'schema_errors',
    'MAX_DEPTH',
    'MAX_VALUES',
    'PATTERN_CACHE_SIZE',
    'MAX_PATTERN_SHOWN',
)

MAX_DEPTH = 64
"""How deeply a checked value, or a schema, may nest objects and arrays."""

MAX_VALUES = 100_000
"""How many values (objects, arrays, strings, numbers, ...) a checked value, or a schema, may hold in all."""

PATTERN_CACHE_SIZE = 256
"""How many compiled patterns are kept: the same schema is applied again and again, and compiling is the cost."""

MAX_PATTERN_SHOWN = 60
"""How many characters of a refused pattern a reason quotes."""

_SAME_VALUE_ONE = frozenset({'not', 'if', 'then', 'else', 'extends'})
"""Keywords whose schema applies to the very value being checked (not to a part of it)."""

_SAME_VALUE_MANY = frozenset({'allOf', 'anyOf', 'oneOf', 'extends', 'type'})
"""Keywords whose array of schemas applies to the very value (`extends` and `type` as draft 3 has them)."""

_SAME_VALUE_MAP = frozenset({'dependentSchemas', 'dependencies'})
"""Keywords whose object of schemas applies to the very value."""

_UNFOLLOWED = frozenset({'$dynamicRef', '$recursiveRef'})
"""References whose target depends on the path taken to them: not checked, so refused."""


class UncheckableSchemaError(ValueError):
    """A schema that ask-user will not apply.

    A pattern a linear engine cannot run, a reference outside it or back to itself, or one nested too deeply.
    """


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


def _nodes(value: object) -> Iterator[tuple[object, int]]:
    """Every value inside `value`, with its depth; iterative, so depth cannot overflow the stack."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, Mapping):
            stack.extend((child, depth + 1) for child in cast(Mapping[object, object], node).values())
        elif isinstance(node, list | tuple):
            stack.extend((child, depth + 1) for child in cast(list[object], node))


def _size_problem(value: object, what: str) -> str | None:
    for count, (_, depth) in enumerate(_nodes(value), start=1):
        if depth > MAX_DEPTH:
            return f'{what} nests deeper than {MAX_DEPTH} levels'
        if count > MAX_VALUES:
            return f'{what} holds more than {MAX_VALUES} values'
    return None


def _keywords(schema: object) -> Iterator[tuple[str, object]]:
    """Every key and value of every object in `schema`, however deep."""
    for node, _ in _nodes(schema):
        if isinstance(node, Mapping):
            for key, value in cast(Mapping[object, object], node).items():
                if isinstance(key, str):
                    yield key, value


def pattern_problem(schema: object) -> str | None:
    """Why `schema` holds a pattern ask-user will not run, or `None` when every `pattern` compiles in linear time.

    Looks everywhere, `$defs` and values included: a string under a `pattern` key that is data, not a
    keyword, is held to the same rule, which refuses too much rather than let one through.
    """
    for key, value in _keywords(schema):
        if key == 'patternProperties' and isinstance(value, Mapping):
            return 'it uses patternProperties, which ask-user does not check; name the properties in properties'
        if key == 'pattern' and isinstance(value, str):
            compiled = _compiled(value)
            if isinstance(compiled, str):
                return (
                    f'its pattern {_shown(value)} is not one ask-user runs ({printable(compiled)}): patterns are '
                    'matched in linear time, without backreferences or look-around'
                )
    return None


def _pointed(root: object, ref: str) -> object | None:
    """What the JSON pointer fragment `ref` (`#/$defs/Item`) points to in `root`, or `None` if nothing."""
    node = root
    for part in unquote(ref[1:]).split('/')[1:]:
        part = part.replace('~1', '/').replace('~0', '~')
        if isinstance(node, Mapping) and part in node:
            node = cast(Mapping[str, object], node)[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(cast(list[object], node)):
            node = cast(list[object], node)[int(part)]
        else:
            return None
    return node


def _same_value_schemas(schema: Mapping[str, object]) -> Iterator[object]:
    """The schemas `schema` applies to the very value it checks."""
    for key, value in schema.items():
        if key in _SAME_VALUE_ONE and isinstance(value, Mapping):
            yield value
        if key in _SAME_VALUE_MANY and isinstance(value, list):
            yield from (item for item in cast(list[object], value) if isinstance(item, Mapping))
        if key in _SAME_VALUE_MAP and isinstance(value, Mapping):
            yield from (item for item in cast(Mapping[str, object], value).values() if isinstance(item, Mapping))


def reference_problem(schema: object) -> str | None:
    """Why a `$ref` of `schema` cannot be followed safely, or `None`.

    Each reference must be a JSON pointer into the schema itself that points to a schema; and following
    references and in-place keywords from any schema must never come back to it without going into a part of
    the value (a property, an item), which would recurse forever.
    """
    for key, value in _keywords(schema):
        if key in _UNFOLLOWED:
            return f'it uses {key}, which ask-user does not follow'
        if key == '$ref' and isinstance(value, str):
            if not (value == '#' or value.startswith('#/')):
                return f'its $ref {_shown(value)} points outside the schema, and nothing is fetched'
            if not isinstance(_pointed(schema, value), Mapping | bool):
                return f'its $ref {_shown(value)} points to no schema within it'

    def next_schemas(node: Mapping[str, object]) -> Iterator[Mapping[str, object]]:
        ref = node.get('$ref')
        if isinstance(ref, str) and isinstance(target := _pointed(schema, ref), Mapping):
            yield cast(Mapping[str, object], target)
        yield from (cast(Mapping[str, object], child) for child in _same_value_schemas(node))

    # Depth-first search for a cycle, iterative: white (unseen), grey (on the path), black (done).
    done: set[int] = set()
    for node, _ in _nodes(schema):
        if not isinstance(node, Mapping):
            continue
        start = cast(Mapping[str, object], node)
        if id(start) in done:
            continue
        on_path = {id(start)}
        path: list[tuple[Mapping[str, object], Iterator[Mapping[str, object]]]] = [(start, next_schemas(start))]
        while path:
            node, children = path[-1]
            child = next(children, None)
            if child is None:
                path.pop()
                on_path.discard(id(node))
                done.add(id(node))
            elif id(child) in on_path:
                return 'its $ref refers back to itself without going into the value, which would never end'
            elif id(child) not in done:
                on_path.add(id(child))
                path.append((child, next_schemas(child)))
    return None


def schema_problem(schema: object) -> str | None:
    """Why ask-user will not apply `schema`, or `None` when it may: its size, patterns and references."""
    return _size_problem(schema, 'it') or pattern_problem(schema) or reference_problem(schema)


def value_problem(value: object) -> str | None:
    """Why `value` is not one to check against a schema, or `None`: too deep, too large, or a number JSON lacks."""
    if (problem := _size_problem(value, 'the value')) is not None:
        return problem
    for node, _ in _nodes(value):
        if isinstance(node, float) and not math.isfinite(node):
            return f'{node} is not a number JSON has (NaN and Infinity are refused)'
    return None


def _linear_pattern(validator: Any, pattern: object, instance: object, schema: object) -> Iterator[Exception]:
    """The `pattern` keyword on the Rust engine; a pattern it cannot compile fails the check, never runs on `re`."""
    from jsonschema import ValidationError

    if not isinstance(instance, str) or not isinstance(pattern, str):
        return
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        yield ValidationError(f'the pattern {_shown(pattern)} is not one ask-user runs ({compiled})')
    elif not compiled.isinstance_python(instance):
        yield ValidationError(f'{instance!r} does not match {pattern!r}')


def _no_pattern_properties(
    validator: Any, pattern_properties: object, instance: object, schema: object
) -> Iterator[Exception]:
    """`patternProperties` refused: `jsonschema` runs its keys on `re`, here and for `additionalProperties`."""
    from jsonschema import ValidationError

    yield ValidationError('patternProperties is not checked by ask-user')


@cache
def _linear_class(base: type[Validator]) -> type[Validator]:
    from jsonschema.validators import extend  # pyright: ignore[reportUnknownVariableType] - untyped in jsonschema

    keywords = {'pattern': _linear_pattern, 'patternProperties': _no_pattern_properties}
    return cast('type[Validator]', extend(base, validators=keywords))


def linear_validator(schema: Mapping[str, Any]) -> Validator:
    """A `jsonschema` validator of `schema` with `pattern` on the Rust engine and an empty registry.

    No reference outside the schema is resolved, nothing is fetched. Call `schema_problem` first: this refuses
    nothing.
    """
    from jsonschema.validators import validator_for
    from referencing import Registry

    return _linear_class(validator_for(schema))(schema, registry=Registry[Any]())


def schema_errors(schema: Mapping[str, Any], value: object) -> list[tuple[str, str]]:
    """Where and why `value` does not fit `schema` (`(path, message)`, by path), empty when it fits.

    `UncheckableSchemaError` when the schema is not one to apply (`schema_problem`), `ValueError` when the value
    is not one to check (`value_problem`).
    """
    if (problem := schema_problem(schema)) is not None:
        raise UncheckableSchemaError(f'the schema cannot be checked: {problem}')
    if (problem := value_problem(value)) is not None:
        raise ValueError(problem)
    try:
        found = linear_validator(schema).iter_errors(cast(Any, value))
        errors = sorted(found, key=lambda error: list(error.absolute_path))
    except Exception as error:  # anything else a hostile schema does (a `type` that is no type, ...) is its fault
        raise UncheckableSchemaError(f'the schema cannot be checked: {printable(type(error).__name__)}') from None
    return [('/'.join(str(part) for part in error.absolute_path), error.message) for error in errors]
