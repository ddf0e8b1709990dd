"""`ask-user demo` in a real terminal: each question shown once, by the menu, and no word broken at the edge."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from pydantic_ai_ask_user._cli.demo_agent import DEMO_QUESTIONS

from ._screen import ASK_USER, Screen


def _words_on(screen: Screen) -> set[str]:
    return {word for row in screen.text.splitlines() for word in row.split()}


@pytest.mark.pty
@pytest.mark.parametrize('columns', [80, 40])
def test_the_demo_in_a_terminal_shows_each_question_once_with_whole_words(
    spawn: Callable[..., Screen], columns: int
) -> None:
    database, environments = DEMO_QUESTIONS['questions']
    screen = spawn(f'{shlex.quote(ASK_USER)} demo', columns=columns, rows=80)
    screen.wait_for('1/2 Database')
    assert screen.text.count('1/2 Database') == 1, screen.text  # the menu's title; the timeline does not list it
    assert set(database['question'].split()) <= _words_on(screen), screen.text
    screen.send('2\r')
    screen.wait_for('2/2 Environments · pick one or more')
    assert 'pick any' not in screen.text
    assert set(environments['question'].split()) <= _words_on(screen), screen.text
    screen.send('13\r')
    screen.wait_for(lambda screen: 'until they ship.' in ' '.join(screen.text.split()))
    assert screen.finish() == 0
    final = ' '.join(screen.text.split())
    assert 'rolled it out to dev, then production. Existing rows keep NULL until they ship.' in final, screen.text
    if columns == 80:  # the JSON the model received fits on a row of its own, unbroken
        assert '{"Database":["SQLite"],"Environments":["dev","production"]}' in _words_on(screen), screen.text
