"""The `ask-user` paths that need no terminal: `demo`, and `ask` on invalid input and through `ask_and_print`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_support import run_cli_process

from pydantic_ai_ask_user import (
    DECLINED,
    TIMED_OUT,
    Answerer,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    CannotAskError,
)
from pydantic_ai_ask_user._cli import main
from pydantic_ai_ask_user._cli.asking import ask_and_print
from pydantic_ai_ask_user._cli.demo_agent import run_demo
from pydantic_ai_ask_user._cli.exit_codes import (
    EXIT_ANSWERED,
    EXIT_CANNOT_ASK,
    EXIT_DECLINED,
    EXIT_INVALID,
    EXIT_TIMED_OUT,
)
from pydantic_ai_ask_user.testing import DECLINE, ScriptedAnswerer

pytestmark = pytest.mark.anyio


VALID = {
    'questions': [
        {'header': 'Database', 'question': 'Which?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]},
    ]
}
INVALID = {
    'questions': [
        {'header': 'x' * 30, 'question': 'Which?', 'options': [{'label': 'a\x1b[2J'}, {'label': 'b'}], 'icon': 1},
    ]
}


def test_the_demo_runs_offline_and_prints_the_whole_exchange() -> None:
    # One entry a line; wrapping is tested in test_cli_demo.py.
    done = run_cli_process('demo', '--scripted', env={'COLUMNS': '200'})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert 'answered by a scripted person' in out
    assert 'AskUserRequestedEvent' in out
    assert 'AskUserAnsweredEvent' in out
    assert 'answered: Database -> PostgreSQL; Environments -> staging, production' in out
    assert 'model receives          {"Database":["PostgreSQL"],"Environments":["staging","production"]}' in out
    assert 'rolled it out to staging, then production' in out
    assert out.index('AskUserRequestedEvent') < out.index('AskUserAnsweredEvent') < out.index('model receives')


def test_the_demo_without_a_terminal_is_answered_by_a_scripted_person_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(['demo']) == 0
    out = capsys.readouterr().out
    assert 'answered by a scripted person' in out
    assert 'Done: wrote migration 0042_add_shipped_at for PostgreSQL' in out


async def test_a_declined_demo_tells_which_default_the_model_chose() -> None:
    out = io.StringIO()
    final = await run_demo(answerer=ScriptedAnswerer(DECLINE), who='a test', out=out)
    assert 'I chose the safe default' in final
    assert 'declined' in out.getvalue()


async def test_the_demo_timeline_reports_a_custom_answer() -> None:
    from pydantic_ai_ask_user.testing import Custom

    out = io.StringIO()
    answerer = ScriptedAnswerer({'Database': Custom('Cockroach'), 'Environments': ['dev']})
    final = await run_demo(answerer=answerer, who='a test', out=out, width=200)
    assert "Database -> 'Cockroach'" in out.getvalue()
    assert 'for Cockroach' in final


def _run_ask(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli_process('ask', *args, stdin=stdin)


def test_ask_with_invalid_input_from_stdin_exits_2_with_each_problem_on_stderr() -> None:
    done = _run_ask(stdin=json.dumps(INVALID))
    assert done.returncode == EXIT_INVALID == 2
    assert done.stdout == ''
    lines = done.stderr.splitlines()
    assert lines == [
        'ask-user: questions.0.header: String should have at most 25 characters',
        'ask-user: questions.0.options.0.label: must be one line of plain text, '
        'but contains U+001B, a control character',
        'ask-user: questions.0.icon: Extra inputs are not permitted',
    ]
    assert '\x1b' not in done.stderr


def test_a_misspelled_field_in_a_question_file_is_named_with_the_field_meant() -> None:
    misspelled = {
        'questions': [
            {'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'No'}], 'multiSelect': True}
        ]
    }
    done = _run_ask(stdin=json.dumps(misspelled))
    assert done.returncode == EXIT_INVALID
    assert done.stderr == (
        "ask-user: questions.0.multiSelect: Extra inputs are not permitted; did you mean 'multi_select'?\n"
    )


def test_ask_with_invalid_input_from_a_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps({'questions': []}), encoding='utf-8')
    done = _run_ask(str(path))
    assert done.returncode == EXIT_INVALID
    assert done.stderr == 'ask-user: questions: a call asks 1 to 10 questions, not 0\n'


def test_ask_with_text_that_is_not_json_exits_2() -> None:
    done = _run_ask('-', stdin='questions: [what]')
    assert done.returncode == EXIT_INVALID
    assert 'Invalid JSON' in done.stderr


def test_ask_with_a_missing_file_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / 'nope.json'
    done = _run_ask(str(missing))
    assert done.returncode == EXIT_INVALID
    assert done.stderr.startswith(f'ask-user: cannot read {missing}:')


def test_ask_with_a_file_that_is_not_utf8_exits_2(tmp_path: Path) -> None:
    path = tmp_path / 'latin1.json'
    path.write_bytes(b'{"questions": "\xff"}')
    done = _run_ask(str(path))
    assert done.returncode == EXIT_INVALID
    assert 'cannot read' in done.stderr


def test_ask_rejects_a_timeout_that_is_not_a_positive_number(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ('0', 'soon', '1e12', 'nan'):
        with pytest.raises(SystemExit) as exited:
            main(['ask', '--timeout', bad, '-'])
        assert exited.value.code == 2
    err = capsys.readouterr().err
    assert 'the timeout must be a positive number of seconds' in err
    assert "'soon' is not a number of seconds" in err
    assert 'the timeout must be at most 316224000 seconds (ten years)' in err


def test_the_longest_timeout_of_the_command_line_is_the_capabilitys() -> None:
    from pydantic_ai_ask_user._capability import MAX_TIMEOUT
    from pydantic_ai_ask_user._cli.arguments import LONGEST_TIMEOUT

    assert LONGEST_TIMEOUT == MAX_TIMEOUT


def test_ask_reads_a_valid_file_from_stdin_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai_ask_user._cli.asking import read_request

    monkeypatch.setattr(sys, 'stdin', io.StringIO(json.dumps(VALID)))
    request = read_request('-')
    assert isinstance(request, AskUserRequest)
    assert request.questions[0].header == 'Database'


def _opener(answerer: Answerer) -> Any:
    @asynccontextmanager
    async def open_answerer() -> AsyncIterator[Answerer]:
        yield answerer

    return open_answerer


def _request() -> AskUserRequest:
    return AskUserRequest.from_tool_args(VALID)


async def test_ask_and_print_prints_the_result_json_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = await ask_and_print(_request(), _opener(ScriptedAnswerer({'Database': 'SQLite'})), None)
    assert code == EXIT_ANSWERED == 0
    assert json.loads(capsys.readouterr().out) == {'Database': ['SQLite']}


async def test_ask_and_print_prints_the_declined_sentence_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = await ask_and_print(_request(), _opener(ScriptedAnswerer(DECLINE)), None)
    assert code == EXIT_DECLINED == 1
    assert json.loads(capsys.readouterr().out) == DECLINED


async def test_ask_and_print_prints_the_timed_out_sentence_and_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    with anyio.fail_after(30):
        code = await ask_and_print(_request(), _opener(ScriptedAnswerer(default=0, delay=60)), 0.05)
    assert code == EXIT_TIMED_OUT == 3
    assert json.loads(capsys.readouterr().out) == TIMED_OUT


async def test_ask_and_print_exits_4_when_there_is_no_way_to_ask(capsys: pytest.CaptureFixture[str]) -> None:
    async def no_terminal(request: AskUserRequest) -> AskUserResponse:
        raise CannotAskError('no terminal here; use --web')

    code = await ask_and_print(_request(), _opener(no_terminal), None)
    assert code == EXIT_CANNOT_ASK == 4
    captured = capsys.readouterr()
    assert captured.out == ''
    assert captured.err == 'ask-user: no terminal here; use --web\n'


@pytest.mark.parametrize(
    ('returned', 'problem'),
    [
        pytest.param(None, 'it returned None, not an AskUserResponse', id='none'),
        pytest.param(
            AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('Oracle',)),)),
            "the answer to 'Database' selects 'Oracle', which is not one of its options",
            id='a-label-not-offered',
        ),
    ],
)
async def test_ask_and_print_exits_4_when_the_answerer_returns_what_does_not_fit(
    capsys: pytest.CaptureFixture[str], returned: AskUserResponse | None, problem: str
) -> None:
    async def broken(request: AskUserRequest) -> Any:
        return returned

    assert await ask_and_print(_request(), _opener(broken), None) == EXIT_CANNOT_ASK
    captured = capsys.readouterr()
    assert captured.out == ''
    assert captured.err == f'ask-user: the answerer returned an invalid response: {problem}\n'


async def test_ask_and_print_keeps_non_ascii_answers_readable(capsys: pytest.CaptureFixture[str]) -> None:
    request = AskUserRequest.from_tool_args(
        {
            'questions': [
                {'header': '데이터베이스', 'question': '어느 것?', 'options': [{'label': '예'}, {'label': '아니요'}]}
            ]
        }
    )
    assert await ask_and_print(request, _opener(ScriptedAnswerer(default=1)), None) == 0
    assert capsys.readouterr().out == '{"데이터베이스":["아니요"]}\n'


def test_an_interrupted_command_says_so_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pydantic_ai_ask_user._cli.demo as demo

    def interrupted(args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, 'run', interrupted)
    assert main(['demo']) == 130
    assert capsys.readouterr().err == 'ask-user: interrupted\n'


def test_the_command_without_a_subcommand_shows_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert 'usage: ask-user' in capsys.readouterr().err


def test_ask_without_a_terminal_exits_4_saying_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Under pytest stdin is not a terminal: the terminal answerer (or its missing extra) cannot ask here.
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(VALID), encoding='utf-8')
    assert main(['ask', '--timeout', '20', str(path)]) == EXIT_CANNOT_ASK
    captured = capsys.readouterr()
    assert captured.out == ''
    assert captured.err.startswith('ask-user: ')


def test_ask_runs_the_terminal_answerer_and_prints_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pydantic_ai_ask_user._cli.asking as cli_ask

    monkeypatch.setattr(cli_ask, '_terminal_opener', lambda: _opener(ScriptedAnswerer({'Database': 'SQLite'})))
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(VALID), encoding='utf-8')
    assert main(['ask', str(path)]) == EXIT_ANSWERED
    assert json.loads(capsys.readouterr().out) == {'Database': ['SQLite']}


def test_ask_with_a_missing_extra_exits_4_naming_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pydantic_ai_ask_user._cli.asking as cli_ask

    def missing(args: Any) -> Any:
        raise ImportError("No module named 'starlette'")

    monkeypatch.setattr(cli_ask, '_web_opener', missing)
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(VALID), encoding='utf-8')
    assert main(['ask', '--web', str(path)]) == EXIT_CANNOT_ASK
    assert capsys.readouterr().err.startswith("ask-user: No module named 'starlette'; install the web extra: ")


async def test_the_demo_with_a_named_model_is_answered_by_a_person_who_picks_every_first_option() -> None:
    from pydantic_ai_ask_user._cli.demo_agent import demo_model

    out = io.StringIO()
    final = await run_demo(model=demo_model(), out=out, width=200)
    assert 'answered by a scripted person who picks every first option' in out.getvalue()
    assert 'for PostgreSQL' in final
    assert 'rolled it out to dev.' in final


def test_the_demo_model_stops_when_it_cannot_read_the_answers() -> None:
    from pydantic_ai_ask_user._cli.demo_agent import _final_message  # pyright: ignore[reportPrivateUsage]

    assert (
        _final_message('{not json')
        == "I could not read the answers ('{not json'), so I stopped before changing anything."
    )


async def test_the_demo_timeline_reports_timed_out_and_failed_waits() -> None:
    from pydantic_ai import Agent

    from pydantic_ai_ask_user import AskUser
    from pydantic_ai_ask_user._cli.demo_agent import Timeline, demo_model

    async def slow(request: AskUserRequest) -> AskUserResponse:
        await anyio.sleep(60)
        raise AssertionError('not reached')  # pragma: no cover

    async def broken(request: AskUserRequest) -> AskUserResponse:
        raise RuntimeError('the UI crashed')

    out = io.StringIO()
    await Agent(demo_model(), capabilities=[AskUser(answerer=slow, timeout=0.05), Timeline(out=out, width=200)]).run(
        'go'
    )
    assert 'timed out' in out.getvalue()
    with pytest.raises(RuntimeError):
        await Agent(demo_model(), capabilities=[AskUser(answerer=broken), Timeline(out=out, width=200)]).run('go')
    assert 'failed' in out.getvalue()
