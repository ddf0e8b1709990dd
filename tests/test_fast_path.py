"""Each call's questions are validated once per run, by a fast path that never accepts what the exact rules reject.

The fast path (`_fast_questions`) validates a call's shape and limits in pydantic-core and checks its text and names
once in Python; the exact validators run only when it rejects, and their messages are the ones the model reads
(`tests/test_default_tool_snapshot.py` and `tests/test_schema.py` hold them). The before-request check of results
reads the requests the tool made in the run instead of validating their calls again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections import Counter
from typing import Any

import pytest
from ask_user_support import ask_call, question, script
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition
from test_properties import hostile_calls, valid_calls

from pydantic_ai_ask_user import (
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user import _answers as answers_module
from pydantic_ai_ask_user import _fast_questions as fast_module
from pydantic_ai_ask_user import _plain_questions as plain_module
from pydantic_ai_ask_user._questions import ToolArguments, _multi_line, _one_line  # pyright: ignore[reportPrivateUsage]
from pydantic_ai_ask_user._text import _FORBIDDEN_CATEGORIES, _INVISIBLE, _LOOKALIKES, fold  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.anyio

_TOOL_VALIDATOR: Any = AskUser(answerer=None).get_toolset().tools[TOOL_NAME].function_schema.validator  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
"""The exact validator of the default tool, from its signature."""


class _Counts:
    """How many times the fast schema and the exact rules ran on a call's questions."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: Counter[str] = Counter()
        real_fast = fast_module._fast_validator  # pyright: ignore[reportPrivateUsage]
        counts = self.runs

        class Counting:
            def __init__(self, recommending: bool) -> None:
                self.validator = real_fast(recommending)

            def validate_json(self, *args: Any, **kwargs: Any) -> Any:
                counts['fast'] += 1
                return self.validator.validate_json(*args, **kwargs)

            def validate_python(self, *args: Any, **kwargs: Any) -> Any:
                counts['fast'] += 1
                return self.validator.validate_python(*args, **kwargs)

        real_init = fast_module.ArgumentsValidator.__init__

        class CountingExact:
            def __init__(self, validator: Any) -> None:
                self.validator = validator

            def validate_json(self, *args: Any, **kwargs: Any) -> Any:
                counts['exact'] += 1
                return self.validator.validate_json(*args, **kwargs)

            def validate_python(self, *args: Any, **kwargs: Any) -> Any:
                counts['exact'] += 1
                return self.validator.validate_python(*args, **kwargs)

        def init(validator: fast_module.ArgumentsValidator, exact: Any, *, recommending: bool) -> None:
            real_init(validator, CountingExact(exact), recommending=recommending)

        class CountingToolArguments:
            # What `AskUserRequest.from_tool_args` validates with when the fast path rejects.
            @staticmethod
            def model_validate_json(*args: Any, **kwargs: Any) -> ToolArguments:
                counts['exact'] += 1
                return ToolArguments.model_validate_json(*args, **kwargs)

            @staticmethod
            def model_validate(*args: Any, **kwargs: Any) -> ToolArguments:
                counts['exact'] += 1
                return ToolArguments.model_validate(*args, **kwargs)

        monkeypatch.setattr(fast_module, '_fast_validator', Counting)
        monkeypatch.setattr(fast_module.ArgumentsValidator, '__init__', init)
        monkeypatch.setattr(answers_module, 'ToolArguments', CountingToolArguments)


async def _first_labels(request: AskUserRequest) -> AskUserResponse:
    return AskUserResponse(
        answers=tuple(AskUserAnswer(header=q.header, selected=(q.options[0].label,)) for q in request.questions)
    )


# --- Once per run ---


@pytest.mark.parametrize('as_json', [True, False], ids=['json-args', 'dict-args'])
async def test_a_valid_call_in_a_real_run_is_validated_once(monkeypatch: pytest.MonkeyPatch, as_json: bool) -> None:
    call = ask_call(question('Database'), question('Région', 'Nord', 'Süd'), call_id='call_0')
    if as_json:
        call = ToolCallPart(TOOL_NAME, json.dumps(call.args), tool_call_id='call_0')
    model = script([call])
    counts = _Counts(monkeypatch)
    result = await Agent(model.model, capabilities=[AskUser(answerer=_first_labels)]).run('go')
    assert result.output == 'done'
    assert model.returns()[0].content == {'Database': ['PostgreSQL'], 'Région': ['Nord']}
    # The tool's validator ran the fast schema once; neither the exact rules nor the check before the next model
    # request validated the call again.
    assert counts.runs == {'fast': 1}


async def test_an_invalid_call_runs_the_exact_rules_once_and_its_retry_is_validated_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = script([ask_call(question('Database', 'Yes', 'yes'))], [ask_call(question('Database', 'Yes', 'No'))])
    counts = _Counts(monkeypatch)
    await Agent(model.model, capabilities=[AskUser(answerer=_first_labels)]).run('go')
    retry = model.returns(1)[0]
    assert retry.outcome == 'retried'
    assert "option label 'yes' is the same as 'Yes' (ignoring case and width)" in str(retry.content)
    assert counts.runs == {'fast': 2, 'exact': 1}


async def test_a_result_from_outside_the_run_is_validated_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    model = script([ask_call(question('Deploy', 'Yes', 'No'), call_id='call_0')])
    agent = Agent(model.model, capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests])
    paused = await agent.run('deploy')
    assert isinstance(paused.output, DeferredToolRequests)
    counts = _Counts(monkeypatch)
    for result, problem in (({'Deploy': ['Yes', 'No']}, 'selects 2 labels'), ({'Deploy': ['Yes']}, None)):
        counts.runs.clear()
        results = DeferredToolResults(calls={'call_0': result})
        if problem is None:
            resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
            assert resumed.output == 'done'
        else:
            with pytest.raises(UserError, match=problem):
                await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
        # The resumed run did not make the call: its questions are validated again, from the call's arguments.
        assert counts.runs == {'fast': 1}


class _Rewrite(AbstractCapability[Any]):
    """Replaces what the question tool returned, as a hook of another capability could."""

    async def after_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, result: Any
    ) -> Any:
        return {'Database': ['Oracle', 'DB2']} if call.tool_name == TOOL_NAME else result


async def test_a_result_of_the_run_s_own_call_is_still_checked_against_its_questions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = script([ask_call(question('Database'), call_id='call_0')])
    counts = _Counts(monkeypatch)
    agent = Agent(model.model, capabilities=[AskUser(answerer=_first_labels), _Rewrite()])
    with pytest.raises(
        UserError,
        match="call 'call_0' does not answer its questions: the answer to 'Database' picks labels that are not its",
    ):
        await agent.run('go')
    assert counts.runs == {'fast': 1}  # checked against the request the tool made, not validated again


class _ChangeInPlace(AbstractCapability[Any]):
    """Changes the question tool's result in place, keeping the object the tool returned."""

    async def after_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, result: Any
    ) -> Any:
        if call.tool_name == TOOL_NAME:
            result['Database'] = ['Oracle', 'DB2']
        return result


async def test_the_run_s_own_result_changed_in_place_is_still_checked() -> None:
    model = script([ask_call(question('Database'), call_id='call_0')])
    agent = Agent(model.model, capabilities=[AskUser(answerer=_first_labels), _ChangeInPlace()])
    with pytest.raises(UserError, match="call 'call_0' does not answer its questions: the answer to 'Database' picks"):
        await agent.run('go')


class _NotJSON(AbstractCapability[Any]):
    """Replaces what the question tool returned with an object that has no JSON form."""

    async def after_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, result: Any
    ) -> Any:
        return object() if call.tool_name == TOOL_NAME else result


async def test_a_result_with_no_json_form_is_checked_and_refused() -> None:
    model = script([ask_call(question('Database'), call_id='call_0')])
    agent = Agent(model.model, capabilities=[AskUser(answerer=_first_labels), _NotJSON()])
    with pytest.raises(UserError, match='the result is object, not the answers object'):
        await agent.run('go')


async def test_the_requests_of_a_run_are_forgotten_when_it_ends() -> None:
    capability = AskUser(answerer=_first_labels)
    model = script([ask_call(question('Database'))], [ask_call(question('Region', 'North', 'South'))])
    await Agent(model.model, capabilities=[capability]).run('go')
    assert capability._asked == {}  # pyright: ignore[reportPrivateUsage]

    class Stop(AbstractCapability[Any]):
        async def after_tool_execute(self, ctx: RunContext[Any], **_: Any) -> Any:
            raise RuntimeError('stopped')

    model = script([ask_call(question('Database'))])
    with pytest.raises(RuntimeError, match='stopped'):
        await Agent(model.model, capabilities=[capability, Stop()]).run('go')
    assert capability._asked == {}  # pyright: ignore[reportPrivateUsage]


# --- What the fast path accepts, the exact rules accept, as the same questions ---


def _exact(args: Any, recommending: bool) -> tuple[Question, ...] | None:
    try:
        if recommending:
            parsed = json.loads(args) if isinstance(args, str) else args
            return ToolArguments.model_validate(parsed).questions
        validated = (
            _TOOL_VALIDATOR.validate_json(args) if isinstance(args, str) else _TOOL_VALIDATOR.validate_python(args)
        )
        return validated['questions']
    except ValidationError:
        return None


def _agrees(args: Any, recommending: bool) -> tuple[Question, ...] | None:
    fast = fast_module.fast_questions(args, recommending=recommending)
    if fast is not None:
        exact = _exact(args, recommending)
        assert exact is not None, 'the fast path accepted what the exact rules reject'
        assert fast == exact
        assert [type(q) for q in fast] == [Question] * len(fast)
        assert [q.model_fields_set for q in fast] == [q.model_fields_set for q in exact]
        assert [[o.model_fields_set for o in q.options] for q in fast] == [
            [o.model_fields_set for o in q.options] for q in exact
        ]
    return fast


_WHITESPACE = ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\u180e\u200b'
"""Characters that one strip or the other may drop, or not: the edges of a string."""

_TRICKY = st.sampled_from(
    [
        '',
        ' ',
        '\xa0',
        '\u3000',
        '\x1c',
        'Yes',
        'yes',
        'ＹＥＳ',
        'Yеs',  # Cyrillic е
        'Υes',  # Greek capital upsilon
        'ß',
        'SS',
        'µ',
        'm',
        'e\u0301',
        'é',
        'е\u0301',  # Cyrillic е and an acute accent, which folds like é
        '1',
        '¹',
        '①',
        '≠',
        '=\u0338',
        '\ue000',
        '\U000e0001',
        'a\u0300\u0301\u0302\u0303\u0304',
        'a\u0300\u0301\u0302\u0303',
        '\u0378',  # unassigned
        '낱말',
        'ᄀ\u1161',  # conjoining jamo, which compose to 가
        '가',
        'x' * 60,
        'x' * 600,
    ]
)


def _pieces() -> st.SearchStrategy[str]:
    return st.one_of(_TRICKY, st.text(max_size=8), st.text(st.sampled_from(_WHITESPACE), max_size=3))


@st.composite
def _strings(draw: st.DrawFn) -> str:
    return ''.join(draw(st.lists(_pieces(), max_size=4)))


@st.composite
def near_valid_calls(draw: st.DrawFn) -> dict[str, Any]:
    """A valid call with a few of its values replaced: by text near the rules' edges, or by another type."""
    call = draw(valid_calls(max_questions=3))
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(call['questions']))
        option = draw(st.sampled_from(target['options']))
        where, key = draw(
            st.sampled_from(
                [
                    (target, 'header'),
                    (target, 'question'),
                    (target, 'multi_select'),
                    (target, 'recommended'),
                    (target, 'extra'),
                    (option, 'label'),
                    (option, 'description'),
                ]
            )
        )
        if key == 'recommended' and draw(st.booleans()):
            where[key] = draw(st.sampled_from(target['options']))['label']
        elif key == 'label' and draw(st.booleans()):
            # A label like another one of its question: the same folded, or the same but for one piece.
            other = draw(st.sampled_from(target['options']))['label']
            other = other if isinstance(other, str) else 'x'
            where[key] = draw(st.sampled_from([other.upper(), other.casefold(), other + draw(_pieces())]))
        else:
            where[key] = draw(st.one_of(_strings(), st.none(), st.booleans(), st.integers(-1, 2), st.just([])))
    if draw(st.booleans()):
        # Headers near one another: folding alike, or told apart only by letters.
        first = call['questions'][0]
        header = first['header'] if isinstance(first['header'], str) else 'x'
        call['questions'].append({**first, 'header': draw(st.sampled_from([header.upper(), 'x' + draw(_strings())]))})
    return call


@pytest.mark.no_cover
@given(call=st.one_of(near_valid_calls(), hostile_calls(), valid_calls()), recommending=st.booleans())
def test_the_fast_path_never_accepts_what_the_exact_rules_reject(call: dict[str, Any], recommending: bool) -> None:
    _agrees(call, recommending)
    _agrees(json.dumps(call), recommending)
    _agrees(json.dumps(call, ensure_ascii=False), recommending)


@pytest.mark.no_cover
@given(call=valid_calls())
def test_the_fast_path_accepts_a_valid_call_of_drawn_text_or_the_exact_rules_do(call: dict[str, Any]) -> None:
    # Drawn text may hold what the fast path is stricter about (a private-use character in a question, a space
    # other than U+0020 in Latin-1-free text); then the exact rules run and accept it.
    fast = _agrees(json.dumps(call), False)
    assert fast is not None or _exact(json.dumps(call), False) is not None


def _maximal_call(words: str) -> dict[str, Any]:
    # As `benchmarks/bench_core.py` builds it: every string at its longest, names told apart by their digits.
    def text(prefix: str, length: int, unit: str) -> str:
        return (prefix + ' ' + unit * length)[: length - 1].rstrip() + 'x'

    return {
        'questions': [
            {
                'header': text(f'H{q}', 25, words),
                'question': text(f'Question {q}', 500, words + 'line\n'),
                'options': [
                    {
                        'label': text(f'Option {q}-{o}', 50, words),
                        'description': text(f'Detail {q}-{o}', 200, words + '\n'),
                    }
                    for o in range(6)
                ],
                'multi_select': q % 2 == 1,
            }
            for q in range(10)
        ]
    }


@pytest.mark.parametrize('words', ['Wörd ñ ', 'Слово 낱말 ', 'Word '])
@pytest.mark.parametrize('recommending', [False, True])
def test_a_maximal_call_takes_the_fast_path(words: str, recommending: bool) -> None:
    assert _agrees(json.dumps(_maximal_call(words)), recommending) is not None


@pytest.mark.parametrize(
    'call',
    [
        {'questions': [question('Database', 'Yes', 'No', question='Pick \ue000 one')]},  # private use, in a question
        {'questions': [question('Database', 'Yes', 'No', question='Pick\u0378one')]},  # unassigned
        {'questions': [question('Database', 'Oui', 'Non')], 'extra': None},
        {'questions': [{**question('Database'), 'multi_select': 'true'}]},  # lax bool
        {'questions': [question('Database', 'Да', 'Нет'), question('Region', 'Север', 'Юг')]},
    ],
)
def test_what_the_fast_path_is_stricter_about_still_validates_exactly(call: dict[str, Any]) -> None:
    fast = fast_module.fast_questions(json.dumps(call), recommending=False)
    exact = _exact(json.dumps(call), False)
    assert fast is None or fast == exact
    validator = fast_module.ArgumentsValidator(_TOOL_VALIDATOR, recommending=False)
    if exact is None:
        assert fast is None
        with pytest.raises(ValidationError):
            validator.validate_json(json.dumps(call))
    else:
        assert validator.validate_json(json.dumps(call))['questions'] == exact


def test_the_fast_schema_is_its_own_not_the_models_validators() -> None:
    # pydantic-core reuses a complete model's own validator for a model schema of its class (shown as `Prebuilt`):
    # that one calls the exact rules' Python functions for every string, which the fast path is there to avoid.
    # The models build their validators on first use (`defer_build`): built here, as a run's tool has them.
    Question.model_rebuild(force=True)
    QuestionOption.model_rebuild(force=True)
    fast_module._fast_validator.cache_clear()  # pyright: ignore[reportPrivateUsage]
    for recommending in (False, True):
        shown = repr(fast_module._fast_validator(recommending))  # pyright: ignore[reportPrivateUsage]
        assert 'Prebuilt' not in shown
        assert 'Function' not in shown
    assert Question.__pydantic_complete__
    assert QuestionOption.__pydantic_complete__


def test_the_fast_path_leaves_the_models_unbuilt() -> None:
    # `ask-user ask` validates its file by the fast path before its first frame: that builds neither model's own
    # validator (nor loads pydantic's plugins, which look through every installed distribution's entry points).
    script = (
        'import sys\n'
        'from pydantic_ai_ask_user._fast_questions import fast_questions\n'
        'from pydantic_ai_ask_user._questions import Question, QuestionOption\n'
        f'assert fast_questions({json.dumps(json.dumps({"questions": [question("Database")]}))}, recommending=True)\n'
        'assert not Question.__pydantic_complete__ and not QuestionOption.__pydantic_complete__\n'
        "assert 'pydantic.plugin._loader' not in sys.modules, 'plugins loaded'\n"
        'Question(header="H", question="Q?", options=[{"label": "a"}, {"label": "b"}])\n'
        'assert Question.__pydantic_complete__\n'
    )
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_tool_s_validator_keeps_the_exact_errors() -> None:
    validator = fast_module.ArgumentsValidator(_TOOL_VALIDATOR, recommending=False)
    bad = json.dumps({'questions': [question('Data\u200bbase')]})
    with pytest.raises(ValidationError) as fast_error:
        validator.validate_json(bad)
    with pytest.raises(ValidationError) as exact_error:
        _TOOL_VALIDATOR.validate_json(bad)
    assert str(fast_error.value) == str(exact_error.value)
    assert 'U+200B (ZERO WIDTH SPACE)' in str(fast_error.value)


def test_partial_arguments_and_other_inputs_go_to_the_exact_validator() -> None:
    validator = fast_module.ArgumentsValidator(_TOOL_VALIDATOR, recommending=False)
    text = json.dumps({'questions': [question('Database')]})
    partial = validator.validate_json(text[:-10], allow_partial='trailing-strings')
    assert partial == _TOOL_VALIDATOR.validate_json(text[:-10], allow_partial='trailing-strings')
    with pytest.raises(ValidationError):
        validator.validate_python([question('Database')])


def test_a_question_instance_is_read_as_its_fields_not_passed_through() -> None:
    recommended = Question.model_validate({**question('Database'), 'recommended': 'SQLite'})
    # The default tool refuses `recommended`, given in an instance as in a dict.
    assert fast_module.fast_questions({'questions': [recommended]}, recommending=False) is None
    accepted = fast_module.fast_questions({'questions': [recommended]}, recommending=True)
    assert accepted == (recommended,)
    wrong = Question.model_construct(**{**recommended.__dict__, 'recommended': 'Oracle'})
    assert fast_module.fast_questions({'questions': [wrong]}, recommending=True) is None


# --- The one-pass checks, character by character ---


def _every_character() -> list[str]:
    return [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]


@pytest.mark.no_cover
@pytest.mark.parametrize('multi_line', [False, True])
def test_the_one_pass_text_check_accepts_no_character_the_exact_rules_reject(multi_line: bool) -> None:
    exact = _multi_line if multi_line else _one_line
    accepted = [char for char in _every_character() if plain_module._text_is_plain([char], multi_line)]  # pyright: ignore[reportPrivateUsage]
    rejected: list[str] = []
    for char in accepted:
        try:
            exact(char)
        except ValueError:
            rejected.append(char)
    assert rejected == []
    assert len(accepted) > 100_000  # the check lets text through, it is not a wall
    assert ('\n' in accepted) is multi_line


def test_the_one_pass_text_check_counts_marks_as_the_exact_rules_do() -> None:
    marks = [char for char in _every_character() if unicodedata.category(char) in ('Mn', 'Me')]
    for multi_line in (False, True):
        for mark in marks:
            assert not plain_module._text_is_plain(['a' + mark * 5], multi_line)  # pyright: ignore[reportPrivateUsage]
    assert plain_module._text_is_plain(['a\u0301\u0302\u0303\u0304', 'b\u0301'], False)  # pyright: ignore[reportPrivateUsage]
    assert not plain_module._text_is_plain(['a\u0301\u0302\u0303\u0304\u0305', 'b'], False)  # pyright: ignore[reportPrivateUsage]


def test_joining_the_strings_tells_no_string_s_problem_away() -> None:
    plain = plain_module._text_is_plain  # pyright: ignore[reportPrivateUsage]
    assert plain(['Oui', 'Non'], False)
    assert not plain(['Oui', 'N\non'], False)
    assert plain(['Oui', 'N\non'], True)
    assert not plain(['Oui', 'No\x00n'], True)
    assert not plain(['낱말', 'a\u200bb'], False)
    assert not plain(['낱말', 'a\ue000b'], False)  # private use, in a one-line string
    assert not plain(['낱말', 'a\ud800b'], True)  # a lone surrogate: no UTF-8 holds it
    # Kana share their range of code points with marks and invisible characters: the regular expression decides.
    assert plain(['ひらがな\nカタカナ'], True)
    assert not plain(['ひらがな\nカタカナ'], False)
    assert not plain(['ひらがな\u3164'], True)
    # Marks at the end of one string and the start of the next are two runs, as they are apart.
    assert plain(['a' + '\u0301' * 4, '\u0301' * 4 + 'b'], False)


@pytest.mark.no_cover
def test_folding_keeps_the_inert_ascii_characters_of_text_in_nfkc() -> None:
    inert = {chr(code) for code in range(128) if code not in plain_module._NOT_INERT}  # pyright: ignore[reportPrivateUsage]
    for char in _every_character():
        if unicodedata.is_normalized('NFKC', char):
            assert [c for c in fold(char) if c in inert] == [c for c in char if c in inert], repr(char)
    # None of them composes with a following character, nor with a preceding one.
    combining = [
        char for char in _every_character() if unicodedata.combining(char) or unicodedata.category(char)[0] == 'M'
    ]
    for first in sorted(inert):
        for second in combining:
            assert unicodedata.normalize('NFC', first + second) == first + unicodedata.normalize('NFC', second)
        for before in ('a', 'ᄀ', '가', 'e\u0301'):
            assert unicodedata.normalize('NFC', before + first) == unicodedata.normalize('NFC', before) + first


def test_no_look_alike_letter_is_latin_1() -> None:
    # `fold` skips the look-alike translation for Latin-1 text: it would change nothing there.
    assert all(code > 0xFF for code in _LOOKALIKES)


@pytest.mark.no_cover
@given(
    names=st.lists(
        st.one_of(_strings(), st.text(st.sampled_from('aаoоeеxхcс1-2 ≠=\u0338ßs')), st.text()), min_size=1, max_size=7
    ),
)
def test_the_one_pass_name_check_says_unique_only_when_folding_does(names: list[str]) -> None:
    names = [name for name in names if '\x00' not in name]  # the text check refuses it before names are compared
    unique = plain_module._names_are_unique(names, [], [])  # pyright: ignore[reportPrivateUsage]
    if unique:
        assert len({fold(name) for name in names}) == len(names)
    labels = names[1:]
    if plain_module._names_are_unique(names[:1], labels, [labels]):  # pyright: ignore[reportPrivateUsage]
        assert len({fold(label) for label in labels}) == len(labels)


def test_the_exact_forbidden_categories_are_the_ones_the_fast_path_assumes() -> None:
    # `_LATIN1_ONE_LINE` is built from these; the exact rules refuse them (and private use, in one line).
    assert {'Cc', 'Cf', 'Cs', 'Zl', 'Zp'} == _FORBIDDEN_CATEGORIES
    assert _INVISIBLE.match('\xad')
    assert b'\xad' not in plain_module._LATIN1_ONE_LINE  # pyright: ignore[reportPrivateUsage]
    assert b'\xa0' in plain_module._LATIN1_ONE_LINE  # pyright: ignore[reportPrivateUsage]
