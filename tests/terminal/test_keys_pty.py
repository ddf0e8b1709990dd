"""`ask-user ask` in a real pseudo-terminal: stray keys never become an answer, and what is shown is what is sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ._screen import UP, Screen, paste
from .test_cli_pty import DATABASE, ENVIRONMENTS, ONE, ask, outcome

pytestmark = pytest.mark.pty

Spawn = Callable[..., Screen]

MULTI = {'questions': [ENVIRONMENTS]}


def test_a_stray_letter_on_an_option_row_types_nothing_and_q_never_becomes_an_answer(
    spawn: Spawn, write_questions: Any
) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send('q')
    screen.wait_for('move to "Type my own answer"')
    assert 'Type my own answer:' not in screen.text
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['PostgreSQL']})


def test_an_out_of_range_digit_is_a_message_not_text(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions({'questions': [{**DATABASE, 'options': DATABASE['options'][:2]}]})
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send('2')
    screen.wait_for('❯ 2. SQLite')
    screen.send('9')
    screen.wait_for('There is no option 9.')
    assert 'Type my own answer:' not in screen.text
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['SQLite']})


def test_j_and_k_move_among_the_options_and_never_into_the_text_row(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send('jjj')  # three options: past the last one, back to the first
    screen.send('j')
    screen.wait_for('❯ 2. SQLite')
    screen.send('kk')
    screen.wait_for('❯ 3. MySQL')
    screen.send('q')
    screen.wait_for('move to "Type my own answer"')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['MySQL']})


def test_letters_type_once_the_text_row_is_reached_with_the_arrows(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('jq Oracle')
    screen.wait_for('9/2000 characters')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['jq Oracle']})


def test_typing_your_own_answer_unticks_the_options_after_saying_it_will(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(MULTI)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Environments')
    screen.send('1')
    screen.wait_for('[x] 1. dev')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    # Told before it happens.
    screen.wait_for('your own answer replaces the ticked options')
    screen.send('qa-eu')
    screen.wait_for('5/2000 characters')
    # Never shown ticked while it would not be sent.
    assert '[x]' not in screen.text
    assert '[ ] 1. dev' in screen.text
    assert 'unticked dev' in screen.text
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Environments': ['qa-eu']})


def test_a_paste_unticks_the_options_too(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(MULTI)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Environments')
    screen.send('12')
    screen.wait_for('[x] 2. staging')
    screen.send(paste('qa-eu'))
    screen.wait_for('5/2000 characters')
    assert '[x]' not in screen.text
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Environments': ['qa-eu']})


def test_enter_on_an_option_row_sends_the_typed_answer_that_is_shown(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(MULTI)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Environments')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('qa-eu')
    screen.wait_for('5/2000 characters')
    screen.send(UP)
    screen.wait_for('❯ [ ] 3. production')
    # Ticking is refused while the typed answer is there, so the screen never shows both.
    screen.send(' ')
    screen.wait_for('Your own answer replaces the options')
    assert '[x]' not in screen.text
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Environments': ['qa-eu']})
