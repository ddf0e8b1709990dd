"""Nothing the `ask-user` command prints can carry a terminal escape sequence, whatever its input holds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_cli_process

from pydantic_ai_ask_user._cli.exit_codes import EXIT_INVALID

HOSTILE_KEYS = {
    'osc title': '\u001b]0;pwned\u0007',
    'osc 52 clipboard': '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007',
    'c1 csi': '\u009b31mred',
    'csi clear screen': '\u001b[2J\u001b[H',
    'backspace and delete': 'ok\u0008\u0008\u007fx',
}
"""Unknown field names a question file may hold: each is echoed back in the error's location."""


def _question(**extra: Any) -> dict[str, Any]:
    return {'header': 'Database', 'question': 'Which?', 'options': [{'label': 'a'}, {'label': 'b'}], **extra}


def _run(*args: str, stdin: bytes = b'') -> subprocess.CompletedProcess[bytes]:
    return run_cli_process(*args, stdin=stdin)


def assert_nothing_a_terminal_acts_on(output: bytes) -> None:
    """No C0 control but newline and tab, no DEL, and no C1 control (as a byte or as a character)."""
    bad_bytes = [byte for byte in output if (byte < 0x20 and byte not in b'\n\t') or byte == 0x7F]
    assert bad_bytes == [], output
    text = output.decode('utf-8')
    assert [char for char in text if 0x7F <= ord(char) <= 0x9F] == [], text
    assert '\x1b' not in text


@pytest.mark.parametrize('key', HOSTILE_KEYS.values(), ids=HOSTILE_KEYS.keys())
def test_an_unknown_field_name_with_escapes_is_reported_without_them(tmp_path: Path, key: str) -> None:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps({'questions': [_question(**{key: 1})], key: 2}), encoding='utf-8')
    done = _run('ask', str(path))
    assert done.returncode == EXIT_INVALID
    assert done.stdout == b''
    assert_nothing_a_terminal_acts_on(done.stderr)
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 2
    assert all(line.startswith('ask-user: ') and line.endswith(': Extra inputs are not permitted') for line in lines)
    assert lines[0].startswith('ask-user: questions.0.')


def test_an_unknown_field_name_on_stdin_is_reported_without_its_escapes() -> None:
    key = HOSTILE_KEYS['osc title']
    done = _run('ask', '-', stdin=json.dumps({'questions': [_question(**{key: 1})]}).encode())
    assert done.returncode == EXIT_INVALID
    assert_nothing_a_terminal_acts_on(done.stderr)
    assert done.stderr.decode() == 'ask-user: questions.0.\ufffd]0;pwned\ufffd: Extra inputs are not permitted\n'


def test_a_file_name_with_escapes_is_named_without_them(tmp_path: Path) -> None:
    missing = tmp_path / 'q\u001b]0;pwned\u0007.json'
    done = _run('ask', str(missing))
    assert done.returncode == EXIT_INVALID
    assert_nothing_a_terminal_acts_on(done.stderr)
    assert done.stderr.decode().startswith('ask-user: cannot read ')
    assert ']0;pwned' in done.stderr.decode()


def test_an_argument_the_parser_refuses_is_echoed_without_its_escapes() -> None:
    done = _run('demo', '--scripted', '\u001b]0;pwned\u0007')
    assert done.returncode == 2
    assert_nothing_a_terminal_acts_on(done.stderr)
    assert 'unrecognized arguments: \ufffd]0;pwned\ufffd' in done.stderr.decode()


def test_a_demo_model_name_with_escapes_is_refused_without_them() -> None:
    done = _run('demo', '--scripted', '--model', 'nope:\u001b]0;pwned\u0007')
    assert done.returncode == 2
    assert_nothing_a_terminal_acts_on(done.stdout)
    assert_nothing_a_terminal_acts_on(done.stderr)
    assert done.stderr.decode() == 'ask-user: Unknown model: nope:\ufffd]0;pwned\ufffd\n'


def test_a_web_host_with_escapes_is_named_without_them(tmp_path: Path) -> None:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps({'questions': [_question()]}), encoding='utf-8')
    done = _run('ask', '--web', '--host', 'x\u001b]0;pwned\u0007', str(path))
    assert done.returncode == 4
    assert_nothing_a_terminal_acts_on(done.stderr)
    assert done.stderr.decode().startswith('ask-user: cannot serve the question page on x\ufffd]0;pwned\ufffd:0')


def test_the_result_json_on_stdout_escapes_what_a_terminal_would_act_on() -> None:
    from pydantic_ai_ask_user._text import terminal_json

    value = {'Notes \u009b': ['line\u2028two \u202e', '\U000e0001 데이터']}
    line = terminal_json(value)
    assert json.loads(line) == value
    assert line.isprintable()
    assert '데이터' in line


def test_an_unexpected_error_prints_its_traceback_without_escapes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pydantic_ai_ask_user._cli.demo as demo
    from pydantic_ai_ask_user._cli import main

    def crash(args: Any) -> int:
        raise RuntimeError('failed on \u001b]52;c;cm0gLXJmIH4=\u0007')

    monkeypatch.setattr(demo, 'run', crash)
    monkeypatch.setenv('ASK_USER_TRACEBACK', '1')  # without it, one line (tests/cli/test_cli_exit_codes.py)
    assert main(['demo']) == 70  # an internal error; never 1, which means "declined"
    err = capsys.readouterr().err
    assert_nothing_a_terminal_acts_on(err.encode())
    assert err.startswith('Traceback (most recent call last):')
    assert err.endswith('RuntimeError: failed on \ufffd]52;c;cm0gLXJmIH4=\ufffd\n')


def test_an_unknown_demo_model_exits_2_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    from pydantic_ai_ask_user._cli import main

    assert main(['demo', '--scripted', '--model', 'nope:\u009b2J']) == 2
    assert capsys.readouterr().err == 'ask-user: Unknown model: nope:\ufffd2J\n'
