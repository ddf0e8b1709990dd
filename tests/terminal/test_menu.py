"""The menu's state machine and its drawing, without a terminal."""

from __future__ import annotations

import unicodedata

import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.terminal import Menu, cell_width, wrap
from pydantic_ai_ask_user.terminal._menu import (
    NO_TYPED_ANSWER_HINT,
    STRAY_KEY_HINT,
    TEXT_BLOCKS_TICKS,
    format_time_left,
)
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


# Issue 12: the recommended option, notes, the time left, the catalogs.


def _recommending(*, multi: bool = False, notes: bool = False, deadline: float | None = None) -> AskUserRequest:
    question = Question(
        header='Database',
        question='Which one?',
        options=(QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite'), QuestionOption(label='MySQL')),
        multi_select=multi,
        recommended='SQLite',
    )
    return AskUserRequest._trusted((question,), 'r1', notes=notes, deadline=deadline)  # pyright: ignore[reportPrivateUsage]


def test_the_recommended_option_is_highlighted_and_marked_but_never_picked_by_the_menu() -> None:
    menu = Menu(_recommending())
    assert menu.state.cursor == 1
    assert '❯ 2. SQLite (recommended)' in _text(menu)
    assert '  1. PostgreSQL\n' in _text(menu)
    # Enter is the person's act: it picks the highlighted option, which is the recommended one.
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


def test_the_recommended_option_of_a_multi_select_question_is_not_ticked() -> None:
    menu = Menu(_recommending(multi=True))
    assert '❯ [ ] 2. SQLite (recommended)' in _text(menu)
    assert menu.enter() is None
    assert menu.message == 'Pick at least one option (Space or its number), then press Enter.'
    menu.type(' ')
    assert menu.enter() == AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


def test_the_recommended_mark_goes_on_a_row_of_its_own_when_the_label_fills_the_row() -> None:
    menu = Menu(_recommending())
    rows = [''.join(text for _, text in row) for row in menu.render(16)]
    assert '❯ 2. SQLite' in rows
    assert '     (recommended)' in rows
    assert all(cell_width(row) <= 18 for row in rows)


def test_tab_opens_a_note_that_goes_with_the_picked_answer() -> None:
    menu = Menu(_recommending(notes=True))
    assert 'Tab note' in _text(menu)
    menu.note()
    assert menu.noting
    assert 'Enter or Tab done' in _text(menu)
    for char in 'after the backup':
        menu.type(char)
    assert '16/2000 characters' in _text(menu)
    assert menu.enter() is None  # Enter closes the note, it does not confirm the question
    assert not menu.noting
    assert '  + Note: after the backup' in _text(menu)
    assert menu.enter() == AskUserResponse(
        answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='after the backup'),)
    )


def test_a_note_goes_with_a_typed_answer_too_and_can_be_edited_and_cleared() -> None:
    menu = Menu(_recommending(notes=True), max_custom_answer_length=5)
    menu.note()
    menu.type('abcdefg')
    assert menu.state.note == 'abcde'
    assert menu.message == 'Your note can be at most 5 characters.'
    menu.left()
    menu.backspace()
    assert menu.state.note == 'abce'
    menu.home()
    menu.delete()
    assert menu.state.note == 'bce'
    menu.note()  # Tab closes it as well
    menu.note()
    menu.end()
    for _ in range(3):
        menu.backspace()
    menu.up()  # an empty note is no note
    assert not menu.noting
    assert 'Note:' not in _text(menu)
    menu.down()
    menu.down()  # the text row
    menu.type('own')
    menu.note()
    menu.paste('a\r\nb')
    menu.enter()
    assert menu.enter() == AskUserResponse(
        answers=(AskUserAnswer(header='Database', custom_answer='own', note='a\nb'),)
    )


def test_a_note_follows_the_custom_answer_rules() -> None:
    menu = Menu(_recommending(notes=True))
    menu.note()
    menu.paste('fine\x1b[31m')
    assert not menu.close_note()
    assert menu.noting
    assert menu.message == (
        'This text cannot be sent: it contains U+001B; only plain text and line breaks are allowed.'
    )
    menu.backspace()
    menu.backspace()
    menu.backspace()
    menu.backspace()
    menu.backspace()
    assert menu.close_note()
    assert menu.enter() == AskUserResponse(
        answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='fine'),)
    )


def test_without_notes_tab_does_nothing_and_the_help_does_not_mention_it() -> None:
    menu = Menu(_recommending())
    menu.note()
    assert not menu.noting
    assert 'Tab' not in _text(menu)
    assert 'Note' not in _text(menu)


@pytest.mark.parametrize(
    ('seconds', 'shown'),
    [(299.2, '5:00'), (299.0, '4:59'), (59.5, '1:00'), (7, '0:07'), (-3, '0:00'), (3723, '1:02:03')],
)
def test_the_time_left_is_rounded_up_to_the_second(seconds: float, shown: str) -> None:
    assert format_time_left(seconds) == shown


def test_the_time_left_is_in_the_title_and_urgent_under_a_minute() -> None:
    now = 1000.0
    menu = Menu(_recommending(deadline=1299.0), clock=lambda: now)
    rows = menu.render(80)
    assert ('class:time', '4:59 left') in rows[0]
    assert _text(menu).startswith('1/1 Database · pick one · 4:59 left\n')
    now = 1250.5
    assert ('class:time-urgent', '0:49 left') in menu.render(80)[0]
    # Too narrow for the title and the time on one row: the time gets its own.
    assert menu.render(24)[1] == [('class:time-urgent', '0:49 left')]


def test_without_a_deadline_no_time_is_shown() -> None:
    assert 'left' not in _text(Menu(_recommending()))


def test_the_menu_draws_every_string_from_the_korean_catalog() -> None:
    menu = Menu(_recommending(notes=True, deadline=1060.0), language='ko', clock=lambda: 1000.0)
    text = _text(menu)
    assert '1/1 Database · 하나 고르기 · 1:00 남음' in text
    assert '❯ 2. SQLite (추천)' in text
    assert '✎ 직접 답 입력하기' in text
    assert '↑↓ 이동 · 1-3 고르기 · Enter 확정 · Tab 메모 · Esc 답하지 않기' in text
    menu.note()
    assert '❯ + 메모:' in _text(menu)
    assert '0/2000자' in _text(menu)
    menu.paste('\x07')
    menu.close_note()
    assert menu.message == '이 글은 보낼 수 없습니다. U+0007 문자가 들어 있습니다. 일반 글자와 줄바꿈만 쓸 수 있습니다.'
    menu.waiting = 2
    assert '요청 2개 더 대기 중' in _text(menu)


def test_korean_rows_never_pass_the_width_in_cells() -> None:
    menu = Menu(_recommending(notes=True, deadline=1060.0), language='ko', clock=lambda: 1000.0)
    menu.note()
    menu.type('백업이 끝난 뒤에만 적용해 주세요')
    for width in (12, 20, 33, 41):
        for row in menu.render(width):
            assert cell_width(''.join(text for _, text in row)) <= width, (width, row)


def test_the_context_is_drawn_above_the_question_cleaned_and_cut_to_a_few_rows() -> None:
    from dataclasses import replace

    from pydantic_ai_ask_user import QuestionContext

    context = QuestionContext(
        title='Refund for order 1042',
        summary='\n'.join(f'line {n}' for n in range(10)),
        link='https://shop.example/orders/1042',
        agent_name='support-bot',
    )
    menu = Menu(replace(_request(), context=context))
    text = _text(menu)
    assert text.index('Refund for order 1042 · Asked by support-bot') < text.index('Which one?')
    assert 'line 2' in text
    assert 'line 3…' in text
    assert 'line 4' not in text
    assert 'https://shop.example/orders/1042' in text
    # A context that did not come through validation (a damaged store) still puts no escape on the screen.
    object.__setattr__(context, 'title', 'evil \x1b]0;pwned\x07 title')
    assert '\x1b' not in _text(menu)
    assert '\x07' not in _text(menu)
    assert 'Asked by' in _text(Menu(replace(_request(), context=context), language='en'))
    assert '의 질문' in _text(Menu(replace(_request(), context=context), language='ko'))
    # What the run alone fills in (the agent's name, the conversation) is not drawn: the screen stays as it was.
    plain = replace(_request(), context=QuestionContext(agent_name='support-bot', conversation_id='c1'))
    assert _text(Menu(plain)) == _text(Menu(_request()))
