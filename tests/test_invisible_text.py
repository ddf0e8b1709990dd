"""Invisible and look-alike text: default-ignorable code points, blank fillers and stacked combining marks.

Model-written text (header, question, label, description) may hold none of them; a custom answer may hold
invisible characters but must hold something visible, and has one length limit everywhere.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from ask_user_support import question
from pydantic import ValidationError

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, check_response
from pydantic_ai_ask_user._answers import format_validation_error
from pydantic_ai_ask_user._text import (
    MAX_COMBINING_MARKS,
    describe_character,
    find_forbidden_character,
    find_mark_run,
)
from pydantic_ai_ask_user.checks import check_custom_answer
from pydantic_ai_ask_user.limits import MAX_CUSTOM_ANSWER_LENGTH

INVISIBLE = {
    '\u034f': 'U+034F (COMBINING GRAPHEME JOINER), an invisible character',
    '\ufe0f': 'U+FE0F (VARIATION SELECTOR-16), an invisible character',
    '\ufe00': 'U+FE00 (VARIATION SELECTOR-1), an invisible character',
    '\U000e0100': 'U+E0100 (VARIATION SELECTOR-17), an invisible character',
    '\u180b': 'U+180B (MONGOLIAN FREE VARIATION SELECTOR ONE), an invisible character',
    '\u3164': 'U+3164 (HANGUL FILLER), an invisible character',
    '\u115f': 'U+115F (HANGUL CHOSEONG FILLER), an invisible character',
    '\u1160': 'U+1160 (HANGUL JUNGSEONG FILLER), an invisible character',
    '\uffa0': 'U+FFA0 (HALFWIDTH HANGUL FILLER), an invisible character',
    '\u17b4': 'U+17B4 (KHMER VOWEL INHERENT AQ), an invisible character',
    '\u2800': 'U+2800 (BRAILLE PATTERN BLANK), an invisible character',
    '\U000e0000': 'U+E0000, an invisible character',
}
"""Printable characters that draw as nothing, each with how an error message names it."""


def _problems(*questions: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        AskUserRequest.from_tool_args({'questions': list(questions)})
    return format_validation_error(caught.value)


@pytest.mark.parametrize('char', list(INVISIBLE), ids=[f'U+{ord(c):04X}' for c in INVISIBLE])
def test_a_label_that_differs_only_by_an_invisible_character_is_rejected_with_its_name(char: str) -> None:
    (problem,) = _problems(question('Confirm', 'Yes', f'Yes{char}'))
    assert problem == (f'questions.0.options.1.label: must be one line of plain text, but contains {INVISIBLE[char]}')
    assert char not in problem


def test_a_header_that_differs_only_by_an_invisible_character_is_rejected() -> None:
    (problem,) = _problems(question('DB', question='Which?'), question('DB\u034f', question='Which?'))
    assert problem == (
        'questions.1.header: must be one line of plain text, '
        'but contains U+034F (COMBINING GRAPHEME JOINER), an invisible character'
    )


@pytest.mark.parametrize('field', ['question', 'description'])
def test_invisible_characters_are_rejected_in_multi_line_fields_too(field: str) -> None:
    call = question('H')
    if field == 'question':
        call['question'] = 'Which\n\u2800one?'
    else:
        call['options'][0]['description'] = 'A\n\u3164'
    (problem,) = _problems(call)
    name = 'U+2800 (BRAILLE PATTERN BLANK)' if field == 'question' else 'U+3164 (HANGUL FILLER)'
    assert problem.endswith(f'but contains {name}, an invisible character')
    assert 'must be plain text (line breaks written as \\n are allowed)' in problem


def test_a_label_made_only_of_a_filler_is_rejected_not_taken_as_text() -> None:
    (problem,) = _problems(question('H', '\u3164', 'b'))
    assert 'U+3164 (HANGUL FILLER), an invisible character' in problem


def test_format_characters_keep_their_own_name() -> None:
    assert describe_character('\u200b') == 'U+200B (ZERO WIDTH SPACE), an invisible format character'
    assert describe_character('a') == 'U+0061 (LATIN SMALL LETTER A)'


def test_up_to_four_combining_marks_on_one_character_are_text() -> None:
    label = 'a' + '\u0301\u0302\u0303\u0304'
    assert MAX_COMBINING_MARKS == 4
    request = AskUserRequest.from_tool_args({'questions': [question('H', label, 'b')]})
    assert request.questions[0].options[0].label == label
    # Real scripts stack marks: Vietnamese, Devanagari, Hebrew pointing, Tibetan.
    for text in ('Tiếng Việt', 'हिन्दी', 'בְּרֵאשִׁית', 'བསྒྲུབས'):
        call = question(text, question=f'{text}?')
        assert AskUserRequest.from_tool_args({'questions': [call]}).questions[0].header == text


def test_a_label_that_stacks_49_combining_marks_is_rejected() -> None:
    (problem,) = _problems(question('H', 'a' + '\u0301' * 49, 'b'))
    assert problem == (
        'questions.0.options.0.label: must be one line of plain text, '
        'but stacks 49 combining marks on one character; at most 4 are allowed'
    )


@pytest.mark.parametrize('field', ['header', 'question', 'description'])
def test_five_combining_marks_in_a_row_are_rejected_in_every_field(field: str) -> None:
    marks = 'e' + '\u0300\u0301\u0302\u0303\u20dd'  # Mn and an enclosing mark (Me)
    call = question('H')
    if field == 'description':
        call['options'][0]['description'] = f'x {marks} y'
    else:
        call[field] = f'x {marks} y'
    (problem,) = _problems(call)
    assert 'stacks 5 combining marks on one character; at most 4 are allowed' in problem


@pytest.mark.parametrize('text', ['\u3164', '\u2800', ' \u3164\u2800 ', '\u115f\u1160', '\ufe0f'])
def test_a_custom_answer_of_only_invisible_characters_is_blank(text: str) -> None:
    assert check_custom_answer(text) == 'is blank'


def test_a_custom_answer_may_hold_invisible_characters_among_visible_ones() -> None:
    # A person's emoji keyboard writes U+FE0F; a Korean input method may leave a filler behind.
    assert check_custom_answer('Ship it \u2764\ufe0f') is None
    assert check_custom_answer('네\u3164') is None


def test_a_custom_answer_has_one_length_limit() -> None:
    assert MAX_CUSTOM_ANSWER_LENGTH == 2000
    assert check_custom_answer('x' * MAX_CUSTOM_ANSWER_LENGTH) is None
    assert check_custom_answer('x' * (MAX_CUSTOM_ANSWER_LENGTH + 1)) == (
        'is 2001 characters long; at most 2000 are allowed'
    )


def test_check_response_refuses_an_overlong_or_invisible_custom_answer() -> None:
    request = AskUserRequest.from_tool_args({'questions': [question('H')]})
    for text, why in (('y' * 20_000_000, 'is 20000000 characters long'), ('\u2800', 'is blank')):
        response = AskUserResponse(answers=(AskUserAnswer(header='H', custom_answer=text),))
        with pytest.raises(ValueError, match=f"the answer to 'H': the custom answer {why}"):
            check_response(request, response)


def test_the_cheap_scan_for_stacked_marks_sees_every_combining_mark() -> None:
    # `find_mark_run` only walks runs of characters that are not word characters, spaces or ASCII.
    from pydantic_ai_ask_user._text import _MARK_RUN_CANDIDATE  # pyright: ignore[reportPrivateUsage]

    marks = ''.join(chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) in ('Mn', 'Me'))
    assert len(marks) > 1000
    for start in range(0, len(marks), 5):
        five = marks[start : start + 5].ljust(5, '\u0301')
        assert _MARK_RUN_CANDIDATE.fullmatch(five), [f'U+{ord(c):04X}' for c in five]


def test_a_run_of_marks_is_counted_within_a_run_of_symbols_and_starts_again_after_each_symbol() -> None:
    # The arrow is neither a word character, a space nor ASCII: the marks and arrows make one candidate run.
    acute = '\u0301'
    assert find_mark_run(f'{acute * 5}\u2192\u2192') == 5  # five marks, then a symbol: too many
    assert find_mark_run(f'\u2192{acute * 4}\u2192{acute * 4}\u2192') is None  # four each time, counted anew
    assert find_mark_run(f'{acute * 2}\u2192{acute * 6}') == 6  # the count starts again after the arrow


def test_latin1_text_takes_the_fast_path_and_is_still_checked() -> None:
    assert find_forbidden_character('Wörd ñ text', allow_newline=False) is None
    assert find_forbidden_character('soft\u00adhyphen', allow_newline=False) == '\u00ad'
    assert find_mark_run('Wörd ñ') is None
    assert find_forbidden_character('a\u3164\x1b', allow_newline=False) == '\u3164'
    assert find_forbidden_character('a\x1b\u3164', allow_newline=False) == '\x1b'
    assert find_forbidden_character('a\u3164', allow_newline=False, allow_invisible=True) is None


# -- letters of other scripts that look Latin, and private-use characters ----------------------


@pytest.mark.parametrize(
    ('first', 'second'),
    [
        ('Yes', 'Y\u0435s'),  # Cyrillic е
        ('Boc', '\u0412\u043e\u0441'),  # Cyrillic В, о, с: the whole label
        ('NO', '\u039d\u039f'),  # Greek Ν, Ο
        ('Apply', '\u0410pply'),  # Cyrillic А
    ],
)
def test_a_label_that_looks_the_same_in_another_script_collides(first: str, second: str) -> None:
    (problem,) = _problems(question('Confirm', first, second))
    assert problem == (
        f'questions.0.options: option label {second!r} looks the same as {first!r} '
        '(it has letters of another script that look alike); every option label must be unique'
    )


def test_a_header_that_looks_the_same_in_another_script_collides() -> None:
    (problem,) = _problems(question('Deploy', question='Which?'), question('D\u0435ploy', question='Which?'))
    assert 'looks the same as' in problem


def test_labels_wholly_in_cyrillic_or_greek_are_text() -> None:
    request = AskUserRequest.from_tool_args(
        {'questions': [question('Ответ', 'Да', 'Нет'), question('Απάντηση', 'Ναι', 'Όχι')]}
    )
    assert [[option.label for option in q.options] for q in request.questions] == [['Да', 'Нет'], ['Ναι', 'Όχι']]


@pytest.mark.parametrize('field', ['header', 'label'])
def test_a_private_use_character_is_refused_in_a_header_or_a_label(field: str) -> None:
    call = question('\ue000Deploy') if field == 'header' else question('Deploy', 'Yes', '\uf8ffYes')
    (problem,) = _problems(call)
    assert problem.endswith(
        f'must be one line of plain text, but contains U+{"E000" if field == "header" else "F8FF"}, '
        'a private-use character, which each font draws as it likes'
    )
