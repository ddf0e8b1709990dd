"""`ask-user demo` as a user meets it: `--model` problems in one line, and output that fits the terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import waits
from cli_support import COMMAND, WITHOUT_PACKAGES, run_cli_process
from pydantic_ai.exceptions import UnexpectedModelBehavior, UserError

from pydantic_ai_ask_user._cli import main
from pydantic_ai_ask_user._cli.demo import TEST_MODEL_NOTE
from pydantic_ai_ask_user._cli.demo_agent import DEMO_QUESTIONS, run_demo
from pydantic_ai_ask_user.testing import ScriptedAnswerer

pytestmark = pytest.mark.anyio


THE_TOOL = (Path(__file__).parents[2] / 'docs' / 'the-tool.md').read_text(encoding='utf-8')
"""The page that documents the question rules and the messages that say which one a call broke."""


def _demo(*args: str, columns: int = 80, hidden: str = '') -> subprocess.CompletedProcess[str]:
    env = {**os.environ, 'COLUMNS': str(columns), 'LINES': '24'}
    command = [sys.executable, '-c', WITHOUT_PACKAGES, hidden] if hidden else COMMAND
    return subprocess.run(
        [*command, 'demo', *args],
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def test_the_demo_with_the_test_model_runs_the_asking_model_instead_of_failing() -> None:
    done = _demo('--model', 'test', '--scripted')
    assert done.returncode == 0, done.stderr
    assert 'Traceback' not in done.stderr
    out = ' '.join(done.stdout.split())  # the lines as wrapped to 80 columns, joined again
    assert 'ask-user demo: asking_model, answered by a scripted person' in out
    assert 'answered: Database -> PostgreSQL; Environments -> staging, production' in out
    assert out.endswith('model: {"Database":["PostgreSQL"],"Environments":["staging","production"]}')
    assert done.stderr == f'ask-user: {TEST_MODEL_NOTE}\n'


def test_the_demo_with_a_model_whose_provider_package_is_missing_names_the_extra_and_exits_4() -> None:
    done = _demo('--model', 'openai:gpt-5', '--scripted', hidden='openai')
    assert done.returncode == 4
    assert done.stderr == (
        "ask-user: the model 'openai:gpt-5' needs the openai package; "
        "install it with: pip install 'pydantic-ai-slim[openai]'\n"
    )
    assert done.stdout == ''


def test_a_missing_provider_package_is_one_line_in_process_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [name for name in sys.modules if name.startswith(('anthropic', 'pydantic_ai.providers.anthropic'))]:
        monkeypatch.delitem(sys.modules, name)
    for name in ('pydantic_ai.models.anthropic', 'anthropic'):
        monkeypatch.setitem(sys.modules, name, None)  # type: ignore[arg-type]
    assert main(['demo', '--scripted', '--model', 'anthropic:claude-sonnet-4-5']) == 4
    err = capsys.readouterr().err
    assert err.count('\n') == 1
    assert "pip install 'pydantic-ai-slim[anthropic]'" in err


def _cells(text: str) -> int:
    return sum(
        0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in 'WF' else 1 for char in text
    )


def _words_of_the_questions() -> set[str]:
    words: set[str] = set()
    for question in DEMO_QUESTIONS['questions']:
        words.update(question['question'].split())
        for option in question['options']:
            words.update(option['description'].split())
    return words


@pytest.mark.parametrize('columns', [80, 40])
def test_the_demo_output_fits_the_terminal_width_without_breaking_words(columns: int) -> None:
    done = _demo('--scripted', columns=columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(_cells(line) for line in lines) <= columns, done.stdout
    printed_words = {word for line in lines for word in line.split()}
    assert _words_of_the_questions() <= printed_words, done.stdout
    assert 'then production. Existing rows keep NULL until they ship.' in ' '.join(line.strip() for line in lines)


def test_the_demo_list_names_multi_select_as_the_menu_does() -> None:
    done = _demo('--scripted', columns=100)
    assert '2/2 Environments (pick one or more)' in done.stdout
    assert 'pick any' not in done.stdout
    assert '1/2 Database (pick one)' in done.stdout


async def test_the_demo_prints_each_question_once_when_the_answerer_shows_them() -> None:
    out = io.StringIO()
    await run_demo(answerer=ScriptedAnswerer(default=0), who='a test', out=out, width=80, show_questions=False)
    assert 'Which one should' not in out.getvalue()
    assert 'AskUserRequestedEvent' in out.getvalue()
    out = io.StringIO()
    await run_demo(answerer=ScriptedAnswerer(default=0), who='a test', out=out, width=80)
    assert out.getvalue().count('Which one should') == 1


async def test_the_demo_shows_whole_ids_that_ask_user_answer_would_take() -> None:
    import re

    out = io.StringIO()
    await run_demo(answerer=ScriptedAnswerer(default=0), who='a test', out=out, width=200)
    asked = re.findall(r'AskUserRequestedEvent  request (\S+), 2 question', out.getvalue())
    answered = re.findall(r'AskUserAnsweredEvent   request (\S+), answered', out.getvalue())
    # The request's key (what `pending` lists and `answer` takes), whole: 32 hex digits, not cut to 8.
    assert len(asked) == 1
    assert re.fullmatch('[0-9a-f]{32}', asked[0])
    assert answered == asked


async def test_the_demo_wraps_to_the_width_it_is_given() -> None:
    out = io.StringIO()
    await run_demo(answerer=ScriptedAnswerer(default=0), who='a test', out=out, width=40)
    assert max(_cells(line) for line in out.getvalue().splitlines()) <= 40


def test_a_problem_is_printed_as_the_docs_document_it_without_pydantics_value_error_prefix() -> None:
    questions = {'questions': [{'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'yes'}]}]}
    done = run_cli_process('ask', '-', stdin=json.dumps(questions))
    assert done.returncode == 2
    assert done.stderr == (
        "ask-user: questions.0.options: option label 'yes' is the same as 'Yes' (ignoring case and width); "
        'every option label must be unique\n'
    )
    assert done.stderr.removeprefix('ask-user: ').rstrip('\n') in ' '.join(THE_TOOL.split())


def test_a_problem_pydantic_words_itself_keeps_its_words() -> None:
    from pydantic import ValidationError

    from pydantic_ai_ask_user import AskUserRequest
    from pydantic_ai_ask_user._answers import format_validation_error

    with pytest.raises(ValidationError) as caught:
        AskUserRequest.from_tool_args({'questions': [{'header': 'Go', 'question': 'Go?', 'options': 'no'}]})
    assert format_validation_error(caught.value) == ['questions.0.options: Input should be a valid tuple']


def test_a_missing_package_without_pydantic_ais_hint_is_named_after_the_provider() -> None:
    from pydantic_ai_ask_user._cli.demo import _missing_package_message  # pyright: ignore[reportPrivateUsage]

    error = ImportError("No module named 'mistralai'", name='mistralai')
    assert _missing_package_message('mistral:large', error) == (
        "the model 'mistral:large' needs the mistralai package; "
        "install it with: pip install 'pydantic-ai-slim[mistral]'"
    )
    assert _missing_package_message('odd', ImportError('no')) == "the model 'odd' cannot be loaded: no"


@pytest.mark.parametrize(
    ('raised', 'code', 'line'),
    [
        (
            UnexpectedModelBehavior('Tool exceeded max retries'),
            1,
            'ask-user: the model gave up: Tool exceeded max retries\n',
        ),
        (UserError('Model refused'), 2, 'ask-user: Model refused\n'),
    ],
)
def test_a_model_that_fails_during_the_run_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raised: Exception, code: int, line: str
) -> None:
    import pydantic_ai_ask_user._cli.demo_agent as demo

    async def failing(**kwargs: object) -> str:
        raise raised

    monkeypatch.setattr(demo, 'run_demo', failing)
    assert main(['demo', '--scripted']) == code
    assert capsys.readouterr().err == line


def test_the_demo_with_the_test_model_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['demo', '--scripted', '--model', 'test']) == 0
    captured = capsys.readouterr()
    assert captured.err == f'ask-user: {TEST_MODEL_NOTE}\n'
    assert '"Environments":["staging","production"]}' in captured.out
