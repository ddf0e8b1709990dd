"""`ask-user demo` in a terminal is a conversation with you; without one it is the scripted walkthrough."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable

import pytest

from ._screen import ASK_USER, Screen


@pytest.mark.pty
def test_the_demo_in_a_terminal_asks_you_and_acts_on_your_answers(spawn: Callable[..., Screen]) -> None:
    screen = spawn(f'{shlex.quote(ASK_USER)} demo', rows=60)
    screen.wait_for('answered by you, in the terminal')
    screen.wait_for('1/2 Database')
    screen.send('2\r')
    screen.wait_for('2/2 Environments')
    screen.send('13\r')
    screen.wait_for('Existing rows keep NULL')
    assert screen.finish() == 0
    text = ' '.join(screen.text.split())  # the demo wraps its lines to the terminal's width
    assert 'for SQLite' in text
    assert 'rolled it out to dev, then production' in text


def test_the_demo_without_a_terminal_keeps_the_scripted_walkthrough() -> None:
    result = subprocess.run(
        [ASK_USER, 'demo'],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = ' '.join(result.stdout.split())  # wrapped to 80 columns, joined again
    assert 'answered by a scripted person' in out
    assert 'rolled it out to staging, then production' in out
