"""The terminal's custom-answer options are spelled as in every front end; the old names still work, and warn."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from inline_snapshot import snapshot

from pydantic_ai_ask_user import AskUserRequest, terminal
from pydantic_ai_ask_user.terminal import DEFAULT_MAX_CUSTOM_ANSWER_LENGTH, Menu, TerminalAnswerer

REQUEST = AskUserRequest.from_tool_args(
    {'questions': [{'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]}
)


def test_the_new_names_set_the_options_without_a_warning(recwarn: pytest.WarningsRecorder) -> None:
    answerer = TerminalAnswerer(allow_custom_answers=False, max_custom_answer_length=12)
    menu = Menu(REQUEST, allow_custom_answers=False, max_custom_answer_length=12)
    assert (answerer.allow_custom_answers, answerer.max_custom_answer_length) == (False, 12)
    assert (menu.allow_custom_answers, menu.max_custom_answer_length) == (False, 12)
    assert DEFAULT_MAX_CUSTOM_ANSWER_LENGTH == 2000
    assert [str(warning.message) for warning in recwarn] == []


@pytest.mark.parametrize(
    ('old', 'new'),
    [
        pytest.param(lambda: TerminalAnswerer(allow_custom=False).allow_custom_answers, False, id='answerer-allow'),
        pytest.param(lambda: TerminalAnswerer(max_custom_length=9).max_custom_answer_length, 9, id='answerer-max'),
        pytest.param(lambda: TerminalAnswerer(allow_custom_answers=False).allow_custom, False, id='answerer-read'),
        pytest.param(lambda: TerminalAnswerer(max_custom_answer_length=9).max_custom_length, 9, id='answerer-read-max'),
        pytest.param(lambda: Menu(REQUEST, allow_custom=False).allow_custom_answers, False, id='menu-allow'),
        pytest.param(lambda: Menu(REQUEST, max_custom_length=9).max_custom_answer_length, 9, id='menu-max'),
        pytest.param(lambda: Menu(REQUEST, allow_custom_answers=False).allow_custom, False, id='menu-read'),
        pytest.param(lambda: Menu(REQUEST, max_custom_answer_length=9).max_custom_length, 9, id='menu-read-max'),
        pytest.param(lambda: terminal.DEFAULT_MAX_CUSTOM_LENGTH, 2000, id='constant'),
    ],
)
def test_an_old_name_still_works_and_warns_naming_the_new_one(old: Callable[[], Any], new: Any) -> None:
    with pytest.warns(DeprecationWarning, match=r'is deprecated, use \w+ \(the same name in every front end\)'):
        assert old() == new


def test_the_deprecation_warnings_read_as_documented() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        TerminalAnswerer(allow_custom=True, max_custom_length=5)
        _ = terminal.DEFAULT_MAX_CUSTOM_LENGTH
    # Each names the line that used the old name, not a line of the package.
    assert {warning.filename for warning in caught} == {__file__}
    assert {warning.category for warning in caught} == {DeprecationWarning}
    assert [str(warning.message) for warning in caught] == snapshot(
        [
            'TerminalAnswerer: allow_custom is deprecated, use allow_custom_answers (the same name in every front end)',
            'TerminalAnswerer: max_custom_length is deprecated, use max_custom_answer_length (the same name in every front end)',
            'pydantic_ai_ask_user.terminal: DEFAULT_MAX_CUSTOM_LENGTH is deprecated, use DEFAULT_MAX_CUSTOM_ANSWER_LENGTH (the same name in every front end)',
        ]
    )


def test_an_old_name_the_module_never_had_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'MAX_CUSTOM_LENGTH'"):
        _ = terminal.MAX_CUSTOM_LENGTH  # pyright: ignore[reportAttributeAccessIssue]


def test_the_old_names_are_not_in_the_public_api() -> None:
    assert 'DEFAULT_MAX_CUSTOM_LENGTH' not in terminal.__all__
