"""`ask-user ask --web`: serve one question file, print the link on stderr, the result on stdout, exit by outcome."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from waits import line_matching
from web_support import WAIT, csrf_of

from pydantic_ai_ask_user import DECLINED, TIMED_OUT

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite', 'description': 'A local file.'}],
        }
    ]
}


@pytest.fixture
def question_file(tmp_path: Path) -> Path:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    return path


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'ask', '--web', *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def link_of(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    return line_matching(process.stderr, r'(http://\S+)', 'a link on stderr').group(1)


@pytest.fixture
def finish() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def answer_in_form(link: str, data: dict[str, str]) -> httpx.Response:
    with httpx.Client(follow_redirects=True, timeout=WAIT) as client:
        page = client.get(link)
        assert page.status_code == 200
        return client.post(str(page.url), data={'csrf': csrf_of(page.text), **data})


def test_answering_in_the_browser_prints_the_result_and_exits_0(
    question_file: Path, finish: list[subprocess.Popen[str]]
) -> None:
    process = start(str(question_file))
    finish.append(process)
    reply = answer_in_form(link_of(process), {'action': 'answer', 'q0': '1'})
    assert reply.status_code == 200
    out, _ = process.communicate(timeout=WAIT)
    assert json.loads(out) == {'Database': ['SQLite']}
    assert process.returncode == 0


def test_declining_in_the_browser_prints_declined_and_exits_1(
    question_file: Path, finish: list[subprocess.Popen[str]]
) -> None:
    process = start(str(question_file))
    finish.append(process)
    answer_in_form(link_of(process), {'action': 'decline'})
    out, _ = process.communicate(timeout=WAIT)
    assert json.loads(out) == DECLINED
    assert process.returncode == 1


def test_the_question_file_can_come_on_stdin(finish: list[subprocess.Popen[str]]) -> None:
    process = subprocess.Popen(
        [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'ask', '--web', '-'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    finish.append(process)
    assert process.stdin is not None
    process.stdin.write(json.dumps(QUESTIONS))
    process.stdin.close()
    process.stdin = None
    answer_in_form(link_of(process), {'action': 'answer', 'q0': 'other', 'q0-text': 'DuckDB'})
    out, _ = process.communicate(timeout=WAIT)
    assert json.loads(out) == {'Database': ['DuckDB']}


def test_no_answer_before_the_timeout_exits_3(question_file: Path, finish: list[subprocess.Popen[str]]) -> None:
    process = start('--timeout', '1', str(question_file))
    finish.append(process)
    link_of(process)
    out, _ = process.communicate(timeout=WAIT)
    assert json.loads(out) == TIMED_OUT
    assert process.returncode == 3


def test_a_port_already_taken_exits_4_with_the_reason(question_file: Path) -> None:
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                '-m',
                'pydantic_ai_ask_user._cli',
                'ask',
                '--web',
                '--port',
                str(port),
                str(question_file),
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
    assert result.returncode == 4
    assert 'cannot serve' in result.stderr


def test_the_printed_link_works_once(question_file: Path, finish: list[subprocess.Popen[str]]) -> None:
    process = start(str(question_file))
    finish.append(process)
    link = link_of(process)
    with httpx.Client(timeout=WAIT) as first:
        assert first.get(link).status_code == 303
    with httpx.Client(timeout=WAIT) as second:
        assert second.get(link).status_code == 403
