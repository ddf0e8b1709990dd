"""`ask-user resolve` reads a decision as Pydantic AI's `TypeAdapter(DeferredToolResults)` does: the same values, the
same JSON sent to the run, the same refusals, whether it takes the way without Pydantic AI or hands it over.
"""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import TypeAdapter, ValidationError
from pydantic_ai import DeferredToolResults
from pydantic_core import PydanticSerializationError, to_jsonable_python

from pydantic_ai_ask_user import _decision as decision_module
from pydantic_ai_ask_user._decision import Decision, read_decision

ADAPTER = TypeAdapter(DeferredToolResults)

NAMES = [field.name for field in dataclasses.fields(DeferredToolResults)]

DECISIONS = [
    pytest.param('{}', id='empty'),
    pytest.param('{"approvals": {"a": true, "b": false}}', id='approvals'),
    pytest.param('{"calls": {"c": {"Database": ["SQLite"]}}}', id='an-answer'),
    pytest.param('{"calls": {"c": "text", "d": 3, "e": [1, {"x": null}], "f": null, "g": 1.5}}', id='plain-values'),
    pytest.param('{"calls": {"c": 12345678901234567890123}}', id='big-int'),
    pytest.param('{"calls": {"c": NaN}}', id='nan'),
    pytest.param('{"calls": {"c": 1}, "calls": {"d": 2}}', id='duplicate-key'),
    pytest.param('{"metadata": {"a": {"k": 1}}, "answered_by": {"a": "ann"}, "approvals": {"a": true}}', id='all'),
    pytest.param('{"calls": {"c": 1}, "unknown": 2}', id='unknown-field'),
    pytest.param('{"approvals": {"a": {"kind": "tool-approved"}}}', id='tool-approved'),
    pytest.param('{"approvals": {"a": {"kind": "tool-denied", "message": "no"}}}', id='tool-denied'),
    pytest.param('{"calls": {"c": {"kind": "tool-return", "return_value": 1}}}', id='tool-return'),
    pytest.param('{"calls": {"c": {"kind": "tool-failed", "message": "x"}}}', id='tool-failed'),
    pytest.param('{"calls": {"c": {"kind": "unknown-kind", "x": 1}}}', id='unknown-kind'),
    pytest.param('{"calls": {"c": {"part_kind": "x"}}}', id='part-kind'),
]
"""Decisions Pydantic AI accepts: plain ones, and ones with its result objects."""

REFUSED = [
    pytest.param('{"approvals": {"a": 1}}', id='approval-not-bool'),
    pytest.param('{"approvals": {"a": "true"}}', id='approval-string'),
    pytest.param('{"approvals": {"a": {"kind": "nope"}}}', id='approval-unknown-kind'),
    pytest.param('{"calls": []}', id='calls-not-object'),
    pytest.param('{"metadata": {"a": 1}}', id='metadata-not-object'),
    pytest.param('{"answered_by": {"a": 1}}', id='answered-by-not-string'),
    pytest.param('[]', id='not-object'),
    pytest.param('{"calls": {"c": "\\ud800"}}', id='lone-surrogate'),
    pytest.param('{"calls": ', id='not-json'),
    pytest.param('{"calls": {"c": ' + '[' * 300 + ']' * 300 + '}}', id='deep'),
]
"""Decisions Pydantic AI refuses."""


def test_a_decision_has_the_fields_of_deferred_tool_results_in_their_order() -> None:
    # Its JSON form is a `DeferredToolResults`'s only while the fields are the same, in the same order.
    assert [field.name for field in dataclasses.fields(Decision)] == NAMES
    assert list(decision_module._FIELDS) == NAMES  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize('text', DECISIONS)
def test_a_decision_reads_as_pydantic_ai_reads_it(text: str) -> None:
    ours, theirs = read_decision(text), ADAPTER.validate_json(text)
    # repr: NaN is not equal to itself, and a `ToolFailed` (an exception) is equal to no other.
    assert [repr(getattr(ours, name)) for name in NAMES] == [repr(getattr(theirs, name)) for name in NAMES]
    try:
        sent = to_jsonable_python(theirs)
    except PydanticSerializationError:  # a `ToolFailed`: neither can be sent, and `resolve` says so
        with pytest.raises(PydanticSerializationError):
            to_jsonable_python(ours)
    else:
        assert repr(to_jsonable_python(ours)) == repr(sent)


@pytest.mark.parametrize('text', DECISIONS[:9])
def test_a_plain_decision_is_read_without_pydantic_ai(text: str) -> None:
    assert decision_module._plain(text) is not None  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize('text', DECISIONS[9:] + REFUSED)
def test_any_other_is_left_to_pydantic_ai(text: str) -> None:
    assert decision_module._plain(text) is None  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize('text', REFUSED)
def test_a_refused_decision_is_refused_with_pydantic_ais_message(text: str) -> None:
    with pytest.raises(ValidationError) as theirs:
        ADAPTER.validate_json(text)
    with pytest.raises(ValueError, match='validation error') as ours:
        read_decision(text)
    assert str(ours.value) == str(theirs.value)
