"""The question schema: every limit and text rule, validated exactly as the tool validates a call."""

from __future__ import annotations

from typing import Any

import pytest
from ask_user_support import question
from pydantic import ValidationError

from pydantic_ai_ask_user import MAX_QUESTIONS, AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user._answers import format_validation_error
from pydantic_ai_ask_user.limits import (
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
    MIN_OPTIONS,
)


def _ask(*questions: dict[str, Any], **extra: Any) -> AskUserRequest:
    return AskUserRequest.from_tool_args({'questions': list(questions), **extra})


def _problems(*questions: dict[str, Any], **extra: Any) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        _ask(*questions, **extra)
    return format_validation_error(caught.value)


def _with_option(**option: Any) -> dict[str, Any]:
    return {'header': 'H', 'question': 'Q?', 'options': [option, {'label': 'other'}]}


def test_the_limits_are_those_of_the_spec() -> None:
    assert (MAX_QUESTIONS, MIN_OPTIONS, MAX_OPTIONS) == (10, 2, 6)
    assert (MAX_HEADER_LENGTH, MAX_QUESTION_LENGTH, MAX_LABEL_LENGTH, MAX_DESCRIPTION_LENGTH) == (25, 500, 50, 200)


def test_a_call_with_no_questions_is_rejected() -> None:
    assert _problems() == ['questions: a call asks 1 to 10 questions, not 0']


def test_a_call_with_ten_questions_is_accepted_and_eleven_is_rejected() -> None:
    assert len(_ask(*(question(f'Q{i}') for i in range(10))).questions) == 10
    assert _problems(*(question(f'Q{i}') for i in range(11))) == ['questions: a call asks 1 to 10 questions, not 11']


def test_a_call_without_the_questions_field_is_rejected() -> None:
    with pytest.raises(ValidationError, match='questions'):
        AskUserRequest.from_tool_args(None)


def test_a_call_may_be_given_as_json_text() -> None:
    request = AskUserRequest.from_tool_args(
        '{"questions": [{"header": "H", "question": "Q?", "options": [{"label": "a"}, {"label": "b"}]}]}'
    )
    assert request.questions[0].header == 'H'
    assert (
        AskUserRequest.from_tool_args(
            b'{"questions": [{"header": "H", "question": "Q?", "options": [{"label": "a"}, {"label": "b"}]}]}'
        )
        .questions[0]
        .options[1]
        .label
        == 'b'
    )


def test_a_header_of_25_characters_is_accepted_and_26_is_rejected() -> None:
    assert _ask(question('x' * 25)).questions[0].header == 'x' * 25
    (problem,) = _problems(question('x' * 26))
    assert problem.startswith('questions.0.header: String should have at most 25 characters')


def test_an_empty_or_blank_header_is_rejected() -> None:
    for header in ('', '   '):
        (problem,) = _problems(question(header))
        assert problem.startswith('questions.0.header: String should have at least 1 character')


def test_surrounding_whitespace_is_stripped_before_the_limits_apply() -> None:
    request = _ask(question('  ' + 'x' * 25 + '\n '))
    assert request.questions[0].header == 'x' * 25


def test_a_header_must_be_one_line() -> None:
    (problem,) = _problems(question('two\nlines'))
    assert problem == 'questions.0.header: must be one line of plain text, but contains a line break'


def test_headers_must_be_unique_in_a_call() -> None:
    assert _problems(question('Database'), question('Database')) == [
        "questions: header 'Database' is repeated; every header must be unique"
    ]


def test_header_uniqueness_ignores_case_and_width() -> None:
    assert _problems(question('Yes'), question('ｙｅｓ')) == [
        "questions: header 'ｙｅｓ' is the same as 'Yes' (ignoring case and width); every header must be unique"
    ]


def test_header_uniqueness_uses_case_folding_not_just_lowercasing() -> None:
    (problem,) = _problems(question('Straße'), question('STRASSE'))
    assert "header 'STRASSE' is the same as 'Straße'" in problem


def test_question_text_of_500_characters_is_accepted_and_501_is_rejected() -> None:
    assert len(_ask(question('H', question='q' * 500)).questions[0].question) == 500
    (problem,) = _problems(question('H', question='q' * 501))
    assert problem.startswith('questions.0.question: String should have at most 500 characters')


def test_question_text_may_span_lines() -> None:
    assert _ask(question('H', question='line one\nline two')).questions[0].question == 'line one\nline two'


def test_a_question_with_one_option_is_rejected_and_with_two_accepted() -> None:
    assert _problems(question('H', 'only')) == ['questions.0.options: a question offers 2 to 6 options, not 1']
    assert len(_ask(question('H', 'a', 'b')).questions[0].options) == 2


def test_a_question_with_six_options_is_accepted_and_seven_is_rejected() -> None:
    assert len(_ask(question('H', *'abcdef')).questions[0].options) == 6
    assert _problems(question('H', *'abcdefg')) == ['questions.0.options: a question offers 2 to 6 options, not 7']


def test_one_bad_option_is_reported_once_not_also_as_too_few_options() -> None:
    assert _problems(_with_option(label='')) == ['questions.0.options.0.label: String should have at least 1 character']


def test_a_label_of_50_characters_is_accepted_and_51_is_rejected() -> None:
    assert _ask(_with_option(label='l' * 50)).questions[0].options[0].label == 'l' * 50
    (problem,) = _problems(_with_option(label='l' * 51))
    assert problem.startswith('questions.0.options.0.label: String should have at most 50 characters')


def test_a_label_must_be_one_line() -> None:
    (problem,) = _problems(_with_option(label='a\nb'))
    assert problem.endswith('must be one line of plain text, but contains a line break')


def test_labels_must_be_unique_within_a_question_ignoring_case_and_width() -> None:
    assert _problems(question('H', 'Yes', 'YES')) == [
        "questions.0.options: option label 'YES' is the same as 'Yes' (ignoring case and width); "
        'every option label must be unique'
    ]
    assert _problems(question('H', 'Yes', 'Yes')) == [
        "questions.0.options: option label 'Yes' is repeated; every option label must be unique"
    ]


def test_the_same_label_in_two_questions_is_fine() -> None:
    request = _ask(question('A', 'Yes', 'No'), question('B', 'Yes', 'No'))
    assert [q.options[0].label for q in request.questions] == ['Yes', 'Yes']


def test_a_description_of_200_characters_is_accepted_and_201_is_rejected() -> None:
    assert _ask(_with_option(label='a', description='d' * 200)).questions[0].options[0].description == 'd' * 200
    (problem,) = _problems(_with_option(label='a', description='d' * 201))
    assert problem.startswith('questions.0.options.0.description')
    assert 'at most 200 characters' in problem


def test_a_description_may_span_lines_and_a_blank_one_counts_as_none() -> None:
    assert _ask(_with_option(label='a', description='one\ntwo')).questions[0].options[0].description == 'one\ntwo'
    assert _ask(_with_option(label='a', description='  \n ')).questions[0].options[0].description is None
    assert _ask(_with_option(label='a', description=None)).questions[0].options[0].description is None


def test_multi_select_defaults_to_false_and_must_be_a_boolean() -> None:
    assert _ask(question('H')).questions[0].multi_select is False
    assert _ask(question('H', multi_select=True)).questions[0].multi_select is True
    (problem,) = _problems({**question('H'), 'multi_select': 'maybe'})
    assert problem.startswith('questions.0.multi_select: Input should be a valid boolean')


@pytest.mark.parametrize(
    ('where', 'call'),
    [
        ('arguments', lambda: {'questions': [question('H')], 'urgent': True}),
        ('question', lambda: {'questions': [question('H', urgent=True)]}),
        ('option', lambda: {'questions': [_with_option(label='a', icon='x')]}),
    ],
)
def test_a_field_the_schema_does_not_have_is_an_error_not_silently_dropped(where: str, call: Any) -> None:
    with pytest.raises(ValidationError, match='Extra inputs are not permitted'):
        AskUserRequest.from_tool_args(call())


@pytest.mark.parametrize(
    ('char', 'kind'),
    [
        ('\x1b', 'U+001B, a control character'),
        ('\x07', 'U+0007, a control character'),
        ('\t', 'U+0009, a control character'),
        ('\x7f', 'U+007F, a control character'),
        ('\x9b', 'U+009B, a control character'),
        ('\u200b', 'U+200B (ZERO WIDTH SPACE), an invisible format character'),
        ('\u202e', 'U+202E (RIGHT-TO-LEFT OVERRIDE), an invisible format character'),
        ('\u2066', 'U+2066 (LEFT-TO-RIGHT ISOLATE), an invisible format character'),
        ('\ufeff', 'U+FEFF (ZERO WIDTH NO-BREAK SPACE), an invisible format character'),
        ('\u200d', 'U+200D (ZERO WIDTH JOINER), an invisible format character'),
    ],
)
@pytest.mark.parametrize('field', ['header', 'question', 'label', 'description'])
def test_control_and_format_characters_are_rejected_in_every_field(char: str, kind: str, field: str) -> None:
    text = f'ok{char}ok'
    call = {'header': 'H', 'question': 'Q?', 'options': [{'label': 'a'}, {'label': 'b'}]}
    if field in ('header', 'question'):
        call[field] = text
    else:
        call['options'] = [{'label': text} if field == 'label' else {'label': 'a', 'description': text}, {'label': 'b'}]
    (problem,) = _problems(call)
    assert kind in problem
    assert char not in problem  # the message names the character without drawing it


@pytest.mark.parametrize('char', ['\r', '\u2028', '\u2029', '\x85'])
def test_other_line_breaks_are_rejected_even_where_newlines_are_allowed(char: str) -> None:
    (problem,) = _problems(question('H', question=f'one{char}two'))
    assert problem.startswith('questions.0.question: must be plain text')
    (problem,) = _problems({**question('H'), 'header': f'one{char}two'})
    assert problem.endswith('contains a line break')


def test_spaces_of_any_width_are_ordinary_text() -> None:
    text = 'a\u00a0b\u3000c\u2003d'
    assert _ask(question(text)).questions[0].header == text


def test_wide_and_combining_characters_are_ordinary_text() -> None:
    assert _ask(question('데이터베이스', '예', '아니요')).questions[0].options[1].label == '아니요'
    assert _ask(question('Cafe\u0301')).questions[0].header == 'Cafe\u0301'


def test_every_problem_in_a_call_is_reported_with_where_it_is() -> None:
    problems = _problems(question('x' * 30, 'a', 'a'), question('ok', question='bad\x1b'))
    assert [problem.split(':')[0] for problem in problems] == [
        'questions.0.header',
        'questions.0.options',
        'questions.1.question',
    ]


def test_a_request_built_in_code_is_checked_like_a_call() -> None:
    good = Question(header='H', question='Q?', options=(QuestionOption(label='a'), QuestionOption(label='b')))
    with pytest.raises(ValueError, match="header 'H' is repeated"):
        AskUserRequest(questions=(good, good))
    with pytest.raises(ValueError, match='a call asks 1 to 10 questions, not 0'):
        AskUserRequest(questions=())
    with pytest.raises(TypeError, match=r'AskUserRequest\.questions holds dict, not Question'):
        AskUserRequest(questions=({'header': 'H'},))  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match='id must be a non-empty string'):
        AskUserRequest(questions=(good,), id='')


def test_a_request_accepts_a_list_of_questions_and_stores_a_tuple() -> None:
    good = Question(header='H', question='Q?', options=(QuestionOption(label='a'), QuestionOption(label='b')))
    request = AskUserRequest(questions=[good])  # pyright: ignore[reportArgumentType]
    assert request.questions == (good,)


def test_a_request_finds_its_question_by_header() -> None:
    request = _ask(question('A'), question('B'))
    assert request.question('B').header == 'B'
    with pytest.raises(KeyError):
        request.question('C')


def test_from_tool_args_keeps_a_given_id() -> None:
    assert _ask(question('A')).id != AskUserRequest.from_tool_args({'questions': [question('A')]}, id='x').id
    assert AskUserRequest.from_tool_args({'questions': [question('A')]}, id='call-3').id == 'call-3'


def test_from_tool_call_refuses_a_call_to_another_tool() -> None:
    from pydantic_ai.messages import ToolCallPart

    call = ToolCallPart('delete_everything', {'questions': [question('A')]}, tool_call_id='c1')
    with pytest.raises(ValueError, match="tool call 'c1' is a call to 'delete_everything', not 'ask_user_question'"):
        AskUserRequest.from_tool_call(call)


def test_from_tool_call_validates_the_arguments() -> None:
    from pydantic_ai.messages import ToolCallPart

    call = ToolCallPart('ask_user_question', {'questions': [question('A', 'only')]}, tool_call_id='c1')
    with pytest.raises(ValidationError, match='a question offers 2 to 6 options, not 1'):
        AskUserRequest.from_tool_call(call)


@pytest.mark.parametrize('char', ['\x1c', '\x1f'])
def test_a_control_separator_at_the_edge_is_rejected_not_silently_stripped(char: str) -> None:
    (problem,) = _problems({**question('H'), 'header': f'{char}Database'})
    assert f'U+{ord(char):04X}, a control character' in problem
