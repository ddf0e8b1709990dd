"""The menu's state machine and its drawing, without a terminal."""

from __future__ import annotations

import unicodedata

import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.terminal import Menu, cell_width, wrap
from pydantic_ai_ask_user.terminal._menu import NO_TYPED_ANSWER_HINT, STRAY_KEY_HINT, TEXT_BLOCKS_TICKS
from pydantic_ai_ask_user.terminal._render import to_fragments


def _request(*, multi: bool = False, second: bool = False) -> AskUserRequest:
    questions = [
        Question(
            header='Database',
            question='Which one?',
            options=(QuestionOption(label='PostgreSQL', description='Production.'), QuestionOption(label='SQLite')),
            multi_select=multi,
        )
    ]
    if second:
        questions.append(
            Question(header='Size', question='How big?', options=(QuestionOption(label='S'), QuestionOption(label='L')))
        )
    return AskUserRequest(questions=tuple(questions))


def _text(menu: Menu, width: int = 80) -> str:
    return ''.join(text for _, text in to_fragments(menu.render(width)))


def test_enter_on_the_highlighted_option_answers_a_single_select() -> None:
    menu = Menu(_request())
    menu.down()
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


def test_a_digit_selects_without_confirming() -> None:
    menu = Menu(_request(second=True))
    menu.type('2')
    assert menu.index == 0
    assert menu.picked_labels() == ('SQLite',)


def test_moving_wraps_round_through_the_text_row() -> None:
    menu = Menu(_request())
    menu.up()
    assert menu.typing
    menu.down()
    assert menu.state.cursor == 0


def test_multi_select_needs_one_pick_and_says_so() -> None:
    menu = Menu(_request(multi=True))
    assert menu.enter() is None
    assert menu.message is not None
    assert 'at least one' in _text(menu)
    menu.type(' ')
    menu.type('2')
    response = menu.enter()
    assert response == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('PostgreSQL', 'SQLite')),))


def test_a_digit_toggles_in_multi_select() -> None:
    menu = Menu(_request(multi=True))
    menu.pick(1)
    menu.pick(1)
    assert menu.picked_labels() == ()


def test_an_option_number_out_of_range_is_a_message_not_a_pick() -> None:
    menu = Menu(_request())
    menu.pick(5)
    assert menu.message == 'There is no option 5.'
    assert menu.state.cursor == 0


def test_back_keeps_the_previous_answer() -> None:
    menu = Menu(_request(second=True))
    menu.pick(2)
    assert menu.enter() is None
    menu.back()
    assert menu.index == 0
    assert menu.picked_labels() == ('SQLite',)


def test_back_on_the_first_question_stays_and_says_so() -> None:
    menu = Menu(_request())
    menu.back()
    assert menu.index == 0
    assert menu.message == 'This is the first question.'


def test_digits_in_the_text_field_are_text() -> None:
    menu = Menu(_request())
    menu.up()
    for char in 'v2 j k 1':
        menu.type(char)
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', custom_answer='v2 j k 1'),))


def test_a_letter_on_an_option_row_types_nothing_and_says_where_to_type() -> None:
    menu = Menu(_request())
    menu.type('q')
    assert not menu.typing
    assert menu.state.text == ''
    assert menu.message == STRAY_KEY_HINT
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('PostgreSQL',)),))


@pytest.mark.parametrize('digit', ['0', '7', '9'])
def test_a_digit_with_no_option_is_a_message_not_text(digit: str) -> None:
    menu = Menu(_request())
    menu.type(digit)
    assert not menu.typing
    assert menu.message == f'There is no option {digit}.'


def test_j_and_k_wrap_round_the_options_without_entering_the_text_row() -> None:
    menu = Menu(_request())
    menu.type('j')
    menu.type('j')
    assert menu.state.cursor == 0
    menu.type('k')
    assert menu.state.cursor == 1
    assert not menu.typing


def test_a_paste_on_an_option_row_opens_the_text_field() -> None:
    menu = Menu(_request())
    menu.paste('x')
    assert menu.typing
    assert menu.state.text == 'x'


def test_without_custom_answers_letters_are_ignored_and_there_is_no_text_row() -> None:
    menu = Menu(_request(), allow_custom_answers=False)
    menu.type('x')
    assert menu.message == NO_TYPED_ANSWER_HINT
    menu.paste('hello')
    assert not menu.typing
    assert 'Type my own answer' not in _text(menu)


def test_the_text_row_warns_before_typing_unticks_the_options() -> None:
    menu = Menu(_request(multi=True))
    menu.pick(2)
    menu.up()
    menu.up()
    assert menu.typing
    assert 'Typing here unticks SQLite' in _text(menu)
    menu.type('x')
    assert menu.state.picked == set()
    assert '[x]' not in _text(menu)
    menu.type('y')
    assert 'Your own answer replaces the ticked options: unticked SQLite.' in _text(menu)
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', custom_answer='xy'),))


def test_enter_in_the_text_row_with_nothing_typed_confirms_the_ticks_shown() -> None:
    menu = Menu(_request(multi=True))
    menu.pick(1)
    menu.up()
    assert menu.typing
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('PostgreSQL',)),))


def test_ticking_while_a_typed_answer_is_there_is_refused_and_keeps_it() -> None:
    menu = Menu(_request(multi=True))
    menu.up()
    menu.type('qa')
    menu.down()
    menu.toggle()
    menu.pick(2)
    assert menu.message == TEXT_BLOCKS_TICKS
    assert menu.state.picked == set()
    assert menu.state.text == 'qa'
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', custom_answer='qa'),))


def test_a_blank_typed_answer_gives_way_to_a_tick() -> None:
    menu = Menu(_request(multi=True))
    menu.up()
    menu.type(' ')
    menu.down()
    menu.toggle()
    assert menu.state.text == ''
    assert menu.picked_labels() == ('PostgreSQL',)


def test_the_caret_edits_in_place() -> None:
    menu = Menu(_request())
    menu.paste('ac')
    menu.left()
    menu.type('b')
    menu.home()
    menu.delete()
    menu.end()
    menu.backspace()
    assert menu.state.text == 'b'


def test_the_text_is_capped_with_a_message_and_a_counter() -> None:
    menu = Menu(_request(), max_custom_answer_length=5)
    menu.paste('abcdefgh')
    assert menu.state.text == 'abcde'
    assert 'at most 5 characters' in _text(menu)
    assert '5/5 characters' in _text(menu)


def test_pasted_line_breaks_become_newlines() -> None:
    menu = Menu(_request())
    menu.paste('one\r\ntwo\rthree')
    assert menu.state.text == 'one\ntwo\nthree'


def test_a_blank_or_control_character_answer_is_refused() -> None:
    menu = Menu(_request())
    menu.up()
    assert menu.enter() is None
    assert menu.message is not None
    menu.paste('tab\there')
    assert menu.enter() is None
    assert 'cannot be sent' in (menu.message or '')


def test_decline_is_a_cancelled_response() -> None:
    assert Menu(_request()).decline() == AskUserResponse(cancelled=True)


def test_progress_and_header_are_drawn() -> None:
    menu = Menu(_request(second=True))
    menu.enter()
    assert _text(menu).startswith('2/2 Size · pick one')


def test_cell_width_counts_wide_and_combining_characters() -> None:
    assert cell_width('한국어') == 6
    assert cell_width('中文') == 4
    assert cell_width(unicodedata.normalize('NFD', 'é')) == 1
    assert cell_width('abc') == 3


@pytest.mark.parametrize('width', [10, 17, 40])
def test_wrapping_never_exceeds_the_width_in_cells(width: int) -> None:
    text = '주문 서비스에는 데이터베이스가 두 개 설정되어 있습니다. 中文没有空格的长句子也要正确换行 mixed words'
    rows = wrap(text, width)
    assert all(cell_width(row) <= width for row in rows)
    assert ''.join(rows).replace(' ', '') == text.replace(' ', '')


def test_drawn_text_holds_no_control_character_even_when_handed_one() -> None:
    fragments = to_fragments([[('', 'a\x1b[2Jb\x07\u202e')], [('', 'c\nd')]])
    drawn = ''.join(text for _, text in fragments)
    assert drawn == 'a\ufffd[2Jb\ufffd\ufffd\nc\ufffdd'
