"""`_schemas`: a schema from elsewhere is applied bounded, with references inside it, and patterns in linear time.

The web and command-line tests (`tests/web/test_web_hostile_schemas.py`, `tests/dbos/test_hostile_edits_cli.py`)
try these through approvals; here each bound on its own, and a recursive schema Pydantic writes still works.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from pydantic_ai_ask_user._schemas import MAX_DEPTH, MAX_VALUES, UncheckableSchemaError, schema_errors


class Node(BaseModel):
    name: str
    children: list[Node] = []


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_a_recursive_schema_pydantic_writes_checks_a_tree() -> None:
    schema = Node.model_json_schema()
    tree = {'name': 'a', 'children': [{'name': 'b', 'children': [{'name': 'c'}]}]}
    assert schema_errors(schema, tree) == []
    [(where, message)] = schema_errors(schema, {'name': 'a', 'children': [{'children': []}]})
    assert where == 'children/0'
    assert "'name' is a required property" in message


def test_a_value_too_deep_or_too_large_is_refused_before_it_is_checked() -> None:
    with pytest.raises(ValueError, match=f'nests deeper than {MAX_DEPTH} levels'):
        schema_errors({'type': 'array'}, nested(MAX_DEPTH + 1))
    assert schema_errors({'type': 'array'}, nested(MAX_DEPTH)) == []
    with pytest.raises(ValueError, match=f'holds more than {MAX_VALUES} values'):
        schema_errors({'type': 'array'}, [0] * MAX_VALUES)


@pytest.mark.parametrize(
    ('schema', 'problem'),
    [
        (nested(MAX_DEPTH + 1), 'nests deeper'),
        ({'allOf': [{'$ref': '#/$defs/a'}], '$defs': {'a': {'anyOf': [{'$ref': '#'}]}}}, 'refers back to itself'),
        ({'not': {'$ref': '#'}}, 'refers back to itself'),
        ({'$ref': 'https://example.com/schema.json'}, 'points outside the schema'),
        ({'$ref': '#anchor'}, 'points outside the schema'),
        ({'$ref': '#/$defs/missing'}, 'points to no schema'),
        ({'$dynamicRef': '#meta'}, '$dynamicRef'),
        ({'patternProperties': {'^(a+)+$': {}}}, 'patternProperties'),
        ({'pattern': '(?=a)a'}, 'look-around'),
    ],
)
def test_a_schema_that_cannot_be_applied_safely_is_refused_with_its_reason(schema: Any, problem: str) -> None:
    with pytest.raises(UncheckableSchemaError, match='the schema cannot be checked') as caught:
        schema_errors(schema if isinstance(schema, dict) else {'items': schema}, 'x')
    assert problem in str(caught.value)


@pytest.mark.parametrize('number', [float('nan'), float('inf'), float('-inf')])
def test_nan_and_infinity_are_not_json_numbers(number: float) -> None:
    with pytest.raises(ValueError, match='NaN and Infinity are refused'):
        schema_errors({'type': 'object'}, {'amount': {'nested': [number]}})
