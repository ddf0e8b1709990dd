"""Each request is validated once where it enters the process, and trusted after; the fast paths keep every rule."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from ask_user_support import make_question
from pydantic import ValidationError

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, DurableAnswerer, Question, QuestionOption
from pydantic_ai_ask_user import _questions as questions_module
from pydantic_ai_ask_user._answers import durable_answerer
from pydantic_ai_ask_user._text import _INVISIBLE, MAX_COMBINING_MARKS, fold, fold_all, is_clean  # pyright: ignore[reportPrivateUsage]

CALL = {
    'questions': [
        {'header': 'Database', 'question': 'Which one?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]},
        {'header': 'Région', 'question': 'Où ?\nChoisissez.', 'options': [{'label': 'Nord'}, {'label': 'Süd'}]},
    ]
}


def test_a_request_from_tool_arguments_checks_its_questions_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = questions_module.check_questions

    def counting(questions: tuple[Question, ...]) -> tuple[Question, ...]:
        calls.append(len(questions))
        return real(questions)

    # The validator of `ToolArguments` holds its own reference; count what runs after it.
    monkeypatch.setattr('pydantic_ai_ask_user._answers.check_questions', counting)
    request = AskUserRequest.from_tool_args(CALL, id='call-1')
    assert calls == []
    assert request == AskUserRequest(questions=request.questions, id='call-1')
    assert calls == [2]  # built by hand, the same questions are checked


def test_a_request_built_by_hand_is_still_checked() -> None:
    with pytest.raises(ValueError, match="header 'Database' is repeated"):
        AskUserRequest(questions=(make_question('Database'), make_question('Database')))
    with pytest.raises(ValueError, match='must be a non-empty string'):
        AskUserRequest.from_tool_args(CALL, id='')


def test_a_request_from_tool_arguments_gets_a_fresh_id_when_none_is_given() -> None:
    first, second = AskUserRequest.from_tool_args(CALL), AskUserRequest.from_tool_args(CALL)
    assert len(first.id) == len(second.id) == 32
    assert first.id != second.id
    assert first.questions == second.questions


@pytest.mark.parametrize(
    'texts',
    [
        pytest.param(['Yes', 'yes', 'YES'], id='ascii'),
        pytest.param(['Straße', 'STRASSE', 'Süd'], id='latin-1-sharp-s'),
        pytest.param(['Ｙｅｓ', 'ﬁle', 'ﬀ', '½'], id='compatibility-forms'),
        pytest.param(['e\u0301', '\u00e9', 'Å', 'A\u030a'], id='composition-at-the-edges'),
        pytest.param(['a\x00b', 'c'], id='nul-inside-a-text'),
        pytest.param([''], id='one-empty-text'),
    ],
)
def test_folding_many_texts_at_once_is_folding_each(texts: list[str]) -> None:
    assert fold_all(texts) == [fold(text) for text in texts]


@pytest.mark.parametrize(
    ('field', 'value', 'message'),
    [
        pytest.param('label', 'Ye\u200bs', 'U+200B (ZERO WIDTH SPACE), an invisible format character', id='zero-width'),
        pytest.param('label', 'a\u00adb', 'U+00AD (SOFT HYPHEN)', id='latin-1-soft-hyphen'),
        pytest.param('label', 'a\x85b', 'contains a line break', id='latin-1-next-line'),
        pytest.param('description', 'line\nline\x1b[2J', 'U+001B', id='escape-after-a-line-break'),
        pytest.param('description', 'e' + '\u0301' * 5, 'stacks 5 combining marks', id='stacked-marks'),
    ],
)
def test_the_fast_paths_let_no_rule_slip(field: str, value: str, message: str) -> None:
    fields = {'label': 'Fine', 'description': 'Fine'} | {field: value}
    with pytest.raises(ValidationError, match=re.escape(message)):
        QuestionOption(**fields)


def test_printable_latin_1_text_with_line_breaks_passes_unchanged() -> None:
    text = 'Größe ½ über\nÇa va, señor?'
    assert unicodedata.is_normalized('NFC', text)
    option = QuestionOption(label='Größe ½', description=text)
    assert option.description == text


def test_the_rust_check_is_sure_when_it_says_clean() -> None:
    # Its marks must cover every Mn and Me character this Python knows, and every invisible character is refused.
    marks = [
        chr(code)
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ('Mn', 'Me') and not _INVISIBLE.fullmatch(chr(code))
    ]
    assert len(marks) > 1500
    assert [mark for mark in marks if is_clean('a' + mark * (MAX_COMBINING_MARKS + 1))] == []
    assert [mark for mark in marks if not is_clean('a' + mark * MAX_COMBINING_MARKS)] == []
    invisible = [chr(code) for code in range(0x110000) if _INVISIBLE.fullmatch(chr(code))]
    assert [char for char in invisible if is_clean(f'a{char}b')] == []


@pytest.mark.parametrize(
    'text',
    [
        pytest.param('Слово 낱말 line\nmore', id='cyrillic-korean'),
        pytest.param('Tiếng Việt', id='vietnamese-two-marks'),
        pytest.param('क्षि ॐ', id='devanagari'),
        pytest.param('😀 👍🏽', id='emoji-without-selector'),
    ],
)
def test_clean_text_beyond_latin_1_passes_the_fast_path(text: str) -> None:
    assert is_clean(text)
    assert QuestionOption(label=text.replace('\n', ' '), description=text).description == text


class _Durable:
    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        return AskUserResponse(cancelled=True)

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        return None


async def _plain(request: AskUserRequest) -> AskUserResponse:
    return AskUserResponse(cancelled=True)


@pytest.mark.parametrize(
    'answerer',
    [
        pytest.param(_Durable(), id='durable'),
        pytest.param(_plain, id='plain-function'),
    ],
)
def test_the_cheap_durable_check_agrees_with_isinstance(answerer: Any) -> None:
    assert (durable_answerer(answerer) is answerer) == isinstance(answerer, DurableAnswerer)
