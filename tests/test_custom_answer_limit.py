"""One limit on a custom answer, everywhere: the core's `MAX_CUSTOM_ANSWER_LENGTH`, which front ends may lower only."""

from __future__ import annotations

import pytest

from pydantic_ai_ask_user.limits import MAX_CUSTOM_ANSWER_LENGTH


def test_the_terminal_menu_allows_the_core_limit_by_default_and_refuses_a_higher_one() -> None:
    terminal = pytest.importorskip('pydantic_ai_ask_user.terminal')
    assert terminal.DEFAULT_MAX_CUSTOM_ANSWER_LENGTH == MAX_CUSTOM_ANSWER_LENGTH
    assert terminal.TerminalAnswerer(max_custom_answer_length=10).max_custom_answer_length == 10
    with pytest.raises(ValueError, match='at most 2000'):
        terminal.TerminalAnswerer(max_custom_answer_length=MAX_CUSTOM_ANSWER_LENGTH + 1)


def test_the_web_answerer_allows_the_core_limit_by_default_and_refuses_a_higher_one() -> None:
    web = pytest.importorskip('pydantic_ai_ask_user.web')
    assert web.DEFAULT_MAX_CUSTOM_ANSWER_LENGTH == MAX_CUSTOM_ANSWER_LENGTH
    assert web.WebAnswerer(max_custom_answer_length=10).options.max_custom_answer_length == 10
    with pytest.raises(ValueError, match='at most 2000'):
        web.WebAnswerer(max_custom_answer_length=MAX_CUSTOM_ANSWER_LENGTH + 1)
