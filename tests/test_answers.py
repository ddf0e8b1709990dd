"""`check_response`, `check_custom_answer`, `ask_user_result` and the text rules behind them."""

from __future__ import annotations

from typing import Any

import pytest
from ask_user_support import make_question

from pydantic_ai_ask_user import DECLINED, AskUserAnswer, AskUserRequest, AskUserResponse, check_response
from pydantic_ai_ask_user._text import describe_character, fold
from pydantic_ai_ask_user.checks import check_custom_answer, printable
from pydantic_ai_ask_user.deferred import ask_user_result

REQUEST = AskUserRequest(
    questions=(
        make_question('Database', 'PostgreSQL', 'SQLite'),
        make_question('Envs', 'dev', 'staging', 'prod', multi_select=True),
    ),
    id='req-1',
)


def _response(*answers: AskUserAnswer) -> AskUserResponse:
    return AskUserResponse(answers=answers)


def _db(*selected: str, custom: str | None = None) -> AskUserAnswer:
    return AskUserAnswer(header='Database', selected=selected, custom_answer=custom)


def _envs(*selected: str) -> AskUserAnswer:
    return AskUserAnswer(header='Envs', selected=selected)


def test_a_fitting_response_passes_the_check() -> None:
    check_response(REQUEST, _response(_envs('prod', 'dev'), _db('SQLite')))


def test_a_declined_response_passes_the_check() -> None:
    check_response(REQUEST, AskUserResponse(cancelled=True))


def test_an_unknown_header_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the response answers 'Region', which is not a header of request req-1"):
        check_response(
            REQUEST, _response(_db('SQLite'), _envs('dev'), AskUserAnswer(header='Region', selected=('EU',)))
        )


def test_a_label_the_question_did_not_offer_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the answer to 'Database' selects 'Oracle', which is not one of its options"):
        check_response(REQUEST, _response(_db('Oracle'), _envs('dev')))


def test_labels_are_matched_exactly_not_by_their_folded_form() -> None:
    with pytest.raises(ValueError, match="selects 'sqlite', which is not one of its options"):
        check_response(REQUEST, _response(_db('sqlite'), _envs('dev')))


def test_several_labels_on_a_single_select_question_are_a_bug_in_the_answerer() -> None:
    with pytest.raises(
        ValueError, match="the answer to 'Database' selects 2 labels, but the question is single-select"
    ):
        check_response(REQUEST, _response(_db('SQLite', 'PostgreSQL'), _envs('dev')))


def test_a_missing_answer_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the response has no answer for 'Envs'"):
        check_response(REQUEST, _response(_db('SQLite')))


def test_an_empty_response_names_every_missing_answer() -> None:
    with pytest.raises(ValueError, match="the response has no answer for 'Database', 'Envs'"):
        check_response(REQUEST, AskUserResponse())


def test_a_repeated_answer_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the response answers 'Database' more than once"):
        check_response(REQUEST, _response(_db('SQLite'), _db('SQLite'), _envs('dev')))


def test_a_label_picked_twice_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the answer to 'Envs' selects 'dev' twice"):
        check_response(REQUEST, _response(_db('SQLite'), _envs('dev', 'dev')))


def test_an_answer_that_picks_nothing_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the answer to 'Envs' selects nothing"):
        check_response(REQUEST, _response(_db('SQLite'), _envs()))


def test_a_cancelled_response_with_answers_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match=r'a cancelled response carries 1 answer\(s\); it must carry none'):
        check_response(REQUEST, AskUserResponse(answers=(_db('SQLite'),), cancelled=True))


def test_a_custom_answer_passes_the_check() -> None:
    check_response(REQUEST, _response(_db(custom='CockroachDB'), _envs('dev')))


def test_a_blank_custom_answer_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the answer to 'Database': the custom answer is blank"):
        check_response(REQUEST, _response(_db(custom=' \n '), _envs('dev')))


@pytest.mark.parametrize('char', ['\x1b', '\t', '\r', '\u200b', '\u202e', '\u2028'])
def test_a_custom_answer_with_control_or_format_characters_is_a_bug_in_the_answerer(char: str) -> None:
    with pytest.raises(ValueError, match=f"the answer to 'Database': the custom answer contains U\\+{ord(char):04X}"):
        check_response(REQUEST, _response(_db(custom=f'my{char}words'), _envs('dev')))


def test_a_custom_answer_together_with_selected_labels_is_a_bug_in_the_answerer() -> None:
    with pytest.raises(ValueError, match="the answer to 'Database' has both selected labels and a custom answer"):
        check_response(REQUEST, _response(_db('SQLite', custom='mine'), _envs('dev')))


def test_something_that_is_not_a_response_fails_the_check() -> None:
    bad: Any = {'Database': ['SQLite']}
    with pytest.raises(ValueError, match='the answerer returned dict, not an AskUserResponse'):
        check_response(REQUEST, bad)


def test_something_that_is_not_an_answer_inside_a_response_fails_the_check() -> None:
    bad: Any = ('Database', 'SQLite')
    with pytest.raises(ValueError, match='the response holds tuple, not an AskUserAnswer'):
        check_response(REQUEST, AskUserResponse(answers=(bad,)))


def test_check_custom_answer_allows_plain_text_and_newlines() -> None:
    assert check_custom_answer('two\nlines, 한국어, ｆｕｌｌ') is None


def test_check_custom_answer_says_why_text_cannot_be_a_custom_answer() -> None:
    assert check_custom_answer('   ') == 'is blank'
    assert (
        check_custom_answer('a\x1b[31m')
        == 'contains U+001B, a control character; only plain text and line breaks are allowed'
    )
    assert check_custom_answer(42) == 'must be a string, not int'  # pyright: ignore[reportArgumentType]


def test_answers_and_responses_given_lists_store_tuples() -> None:
    answer = AskUserAnswer(header='Envs', selected=['dev', 'prod'])  # pyright: ignore[reportArgumentType]
    response = AskUserResponse(answers=[answer])  # pyright: ignore[reportArgumentType]
    assert answer.selected == ('dev', 'prod')
    assert response.answers == (answer,)


def test_the_result_maps_each_header_to_its_labels_in_the_order_of_the_questions() -> None:
    result = ask_user_result(REQUEST, _response(_envs('prod', 'dev'), _db('SQLite')))
    assert result == {'Database': ['SQLite'], 'Envs': ['prod', 'dev']}
    assert list(result) == ['Database', 'Envs']  # pyright: ignore[reportArgumentType]


def test_the_result_of_a_custom_answer_is_a_one_item_list_and_other_answers_keep_their_shape() -> None:
    assert ask_user_result(REQUEST, _response(_db(custom='mine'), _envs('dev', 'staging'))) == {
        'Database': ['mine'],
        'Envs': ['dev', 'staging'],
    }


def test_the_result_of_a_declined_response_is_the_declined_sentence() -> None:
    assert ask_user_result(REQUEST, AskUserResponse(cancelled=True)) == DECLINED


def test_the_result_is_checked_first() -> None:
    with pytest.raises(ValueError, match='no answer for'):
        ask_user_result(REQUEST, _response(_db('SQLite')))


def test_printable_replaces_every_undrawable_character() -> None:
    assert printable('a\x1b[31mb\u202ec\u200bd\ne') == 'a\ufffd[31mb\ufffdc\ufffdd\ne'
    assert printable('a\nb', allow_newline=False) == 'a\ufffdb'
    assert printable('한국어 ｆｕｌｌ\u3000width') == '한국어 ｆｕｌｌ\u3000width'


def test_fold_makes_case_and_width_variants_alike() -> None:
    assert fold('Yes') == fold('yes') == fold('ＹＥＳ')
    assert fold('Straße') == fold('STRASSE')
    assert fold('Yes') != fold('No')


def test_describe_character_names_a_character_without_drawing_it() -> None:
    assert describe_character('\u200b') == 'U+200B (ZERO WIDTH SPACE), an invisible format character'
    assert describe_character('\x1b') == 'U+001B, a control character'
    assert describe_character('\u2029') == 'U+2029 (PARAGRAPH SEPARATOR), a paragraph separator'
    assert describe_character('x') == 'U+0078 (LATIN SMALL LETTER X)'
    assert describe_character('\ud800') == 'U+D800, a lone surrogate'


def test_response_from_result_reads_back_what_ask_user_result_wrote_and_refuses_what_it_could_not_have() -> None:
    from pydantic_ai_ask_user._answers import response_from_result

    request = AskUserRequest(
        id='call_0',
        questions=(make_question('Database', 'PostgreSQL', 'SQLite'), make_question('Region', 'EU', 'US')),
        notes=True,
    )
    responses = [
        AskUserResponse(
            answers=(
                AskUserAnswer(header='Database', selected=('SQLite',), note='the small one'),
                AskUserAnswer(header='Region', custom_answer='Seoul'),
            )
        ),
        AskUserResponse(cancelled=True),
    ]
    for response in responses:
        assert response_from_result(request, ask_user_result(request, response)) == response
    for result, message in [
        ({'Database': ['Oracle', 'MySQL'], 'Region': ['EU']}, 'not its options'),
        ({'Database': ['SQLite']}, 'Region'),
        ('the question was withdrawn', 'not the answers object'),
    ]:
        with pytest.raises(ValueError, match=message):
            response_from_result(request, result)
