"""`ask-user ask --web` interrupted with Ctrl-C exits 130, as the README's exit codes say."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from waits import WAIT, launched, line_matching

pytest.importorskip('starlette')

QUESTIONS = {'questions': [{'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]}


def test_ask_web_interrupted_exits_130_with_nothing_on_stdout(tmp_path: Path) -> None:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    process = subprocess.Popen(
        # SIGINT as a shell leaves it, not as the test process may have it.
        launched(sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'ask', '--web', str(path)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line_matching(process.stderr, 'login[?]code=', 'the sign-in link on stderr')
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    assert stdout == ''
    assert stderr.endswith('ask-user: interrupted\n')
