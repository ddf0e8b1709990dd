"""The bell and the desktop-notification escape sequences: the model's header can never end or start a sequence."""

from __future__ import annotations

import re

from pydantic_ai_ask_user.terminal._bell import (
    MAX_NOTIFICATION_TEXT,
    notification_sequences,
    notification_text,
    tmux_passthrough,
)

HOSTILE = 'Deploy\x1b]0;pwned\x07; rm\x9c -rf\x1b\\ \u202eevil\u2028now\x00'


def test_the_text_loses_every_control_format_and_separator_character_and_every_semicolon() -> None:
    assert notification_text(HOSTILE) == 'Deploy]0pwned rm -rf\\ evil now'
    assert notification_text('데이터베이스  선택\t\n확인') == '데이터베이스 선택 확인'


def test_the_text_is_cut_short() -> None:
    cut = notification_text('x' * 500)
    assert len(cut) == MAX_NOTIFICATION_TEXT
    assert cut.endswith('…')


def test_nothing_is_written_unless_asked() -> None:
    assert notification_sequences('Title', 'Body', bell=False, desktop=False) == ''
    assert notification_sequences('Title', 'Body', bell=True, desktop=False) == '\a'


def test_the_desktop_sequences_are_osc_9_and_osc_777_each_ended_once_by_bel() -> None:
    out = notification_sequences('A question is waiting for you', HOSTILE, bell=False, desktop=True)
    assert out == (
        '\x1b]9;A question is waiting for you: Deploy]0pwned rm -rf\\ evil now\a'
        '\x1b]777;notify;A question is waiting for you;Deploy]0pwned rm -rf\\ evil now\a'
    )
    # Exactly two sequences, each with one introducer and one terminator, and no other control character.
    assert re.fullmatch(r'(\x1b\][0-9]+;[^\x00-\x1f\x7f-\x9f]*\a){2}', out)
    assert out.count(';') == 1 + 3


def test_inside_tmux_each_osc_sequence_is_wrapped_in_the_passthrough_with_esc_doubled() -> None:
    assert tmux_passthrough('\x1b]9;hi\a') == '\x1bPtmux;\x1b\x1b]9;hi\a\x1b\\'
    out = notification_sequences('T', 'B', bell=True, desktop=True, tmux=True)
    assert out == '\a\x1bPtmux;\x1b\x1b]9;T: B\a\x1b\\\x1bPtmux;\x1b\x1b]777;notify;T;B\a\x1b\\'
