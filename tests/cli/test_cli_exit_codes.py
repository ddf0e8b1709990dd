"""Every `ask-user` failure has its documented exit code and one line on stderr; none exits 1 ("declined")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pydantic_ai_ask_user._cli import main
from pydantic_ai_ask_user._cli.exit_codes import EXIT_INTERNAL_ERROR

QUESTIONS = '{"questions": [{"header": "H", "question": "Q?", "options": [{"label": "a"}, {"label": "b"}]}]}'


@pytest.mark.parametrize('port', ['99999', '65536', '-1', 'http'])
def test_a_web_port_out_of_range_exits_2_with_one_line(
    port: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / 'questions.json'
    questions.write_text(QUESTIONS)
    with pytest.raises(SystemExit) as exited:
        main(['ask', '--web', '--port', port, str(questions)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f'ask-user ask: error: argument --port: {port!r} is not a port number (0 to 65535)\n')
    assert 'Traceback' not in err


def _crash(monkeypatch: pytest.MonkeyPatch) -> None:
    import pydantic_ai_ask_user._cli.demo as demo

    def crash(args: Any) -> int:
        raise RuntimeError('failed on \u001b]52;c;cm0gLXJmIH4=\u0007')

    monkeypatch.setattr(demo, 'run', crash)


def test_an_unexpected_error_exits_70_in_one_line_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _crash(monkeypatch)
    monkeypatch.delenv('ASK_USER_TRACEBACK', raising=False)
    assert main(['demo']) == EXIT_INTERNAL_ERROR == 70
    assert capsys.readouterr().err == (
        'ask-user: internal error (a bug in ask-user): RuntimeError: failed on \ufffd]52;c;cm0gLXJmIH4=\ufffd; '
        'set ASK_USER_TRACEBACK=1 to see where it happened\n'
    )


def test_ask_user_traceback_shows_where_an_unexpected_error_happened(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _crash(monkeypatch)
    monkeypatch.setenv('ASK_USER_TRACEBACK', '1')
    assert main(['demo']) == EXIT_INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err.startswith('Traceback (most recent call last):')
    assert err.endswith('RuntimeError: failed on \ufffd]52;c;cm0gLXJmIH4=\ufffd\n')
