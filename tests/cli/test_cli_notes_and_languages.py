"""`ask-user ask --notes`, who decided in `ask-user resolve`, and the command's messages in the terminal's language."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
import waits
from babel.messages.pofile import read_po
from cli_support import COMMAND

from pydantic_ai_ask_user import Answerer, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._cli import asking, main
from pydantic_ai_ask_user._messages import CLI
from pydantic_ai_ask_user.receipts import os_user_at_host

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
            'recommended': 'SQLite',
        }
    ]
}


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    return path


def _ask_with(
    monkeypatch: pytest.MonkeyPatch, reply: Callable[[AskUserRequest], AskUserResponse], argv: list[str]
) -> tuple[int, str, list[AskUserRequest]]:
    """`ask-user ask ARGV` with the terminal replaced by `reply`; the exit code, stdout and the requests asked."""
    seen: list[AskUserRequest] = []

    async def answerer(request: AskUserRequest) -> AskUserResponse:
        seen.append(request)
        return reply(request)

    @asynccontextmanager
    async def opened() -> AsyncGenerator[Answerer]:
        yield answerer

    def opener() -> Callable[[], AbstractAsyncContextManager[Answerer]]:
        return opened

    monkeypatch.setattr(asking, '_terminal_opener', opener)
    out = io.StringIO()
    monkeypatch.setattr(sys, 'stdout', out)
    code = main(['ask', *argv])
    return code, out.getvalue(), seen


def test_ask_with_notes_offers_notes_and_prints_a_noted_answer_in_the_model_shape(
    monkeypatch: pytest.MonkeyPatch, questions: Path
) -> None:
    def reply(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='after 6pm'),))

    before = time.time()
    code, out, [request] = _ask_with(monkeypatch, reply, [str(questions), '--notes', '--timeout', '600'])
    assert code == 0
    assert json.loads(out) == {'Database': {'answer': ['SQLite'], 'note': 'after 6pm'}}
    assert request.notes is True
    assert request.questions[0].recommended == 'SQLite'  # read from the file, for the menu to show
    assert request.deadline is not None
    assert before + 600 <= request.deadline <= time.time() + 600


def test_ask_without_notes_refuses_a_note_and_sets_no_deadline(
    monkeypatch: pytest.MonkeyPatch, questions: Path
) -> None:
    def reply(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='hm'),))

    code, _, [request] = _ask_with(monkeypatch, reply, [str(questions)])
    assert (request.notes, request.deadline) == (False, None)
    assert code == 4  # an answerer that adds a note nobody offered is a bug, said in one line


def test_resolve_names_the_os_user_for_every_call_it_decides_unless_the_json_names_someone() -> None:
    from pydantic_ai import DeferredToolResults

    from pydantic_ai_ask_user._decision import with_answered_by

    results = DeferredToolResults(
        approvals={'deploy-1': True}, calls={'q-1': {'Database': ['SQLite']}}, answered_by={'q-1': 'alice'}
    )
    assert with_answered_by(results, os_user_at_host()).answered_by == {'deploy-1': os_user_at_host(), 'q-1': 'alice'}
    assert with_answered_by(DeferredToolResults(), 'x').answered_by == {}


def test_every_message_the_command_looks_up_is_in_the_cli_tuple_the_catalogs_are_made_from(tmp_path: Path) -> None:
    # Babel skips `_cli` (a directory starting with `_`) when `make messages` extracts the package.
    extracted = tmp_path / 'cli.pot'
    cli_dir = Path(asking.__file__).parent
    subprocess.run(
        [sys.executable, '-m', 'babel.messages.frontend', 'extract', '-o', str(extracted), str(cli_dir)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    with extracted.open('rb') as file:
        looked_up = {str(message.id) for message in read_po(file) if message.id}
    assert looked_up == set(CLI)


def _run(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(('LC_', 'LANG'))}
    return subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, env={**env, **environ}, timeout=waits.WAIT, check=False
    )


@pytest.mark.parametrize(
    ('environ', 'expected'),
    [
        ({'LANG': 'ko_KR.UTF-8'}, '을(를) 읽을 수 없습니다'),
        ({'LANG': 'en_US.UTF-8', 'LANGUAGE': 'ko'}, '을(를) 읽을 수 없습니다'),
        ({'LANG': 'C', 'LANGUAGE': 'ko'}, 'ask-user: cannot read '),
        ({}, 'ask-user: cannot read '),
    ],
    ids=['ko', 'language-ko', 'c', 'unset'],
)
def test_ask_speaks_the_terminals_language_and_its_exit_code_stays(
    tmp_path: Path, environ: dict[str, str], expected: str
) -> None:
    done = _run(environ, 'ask', str(tmp_path / 'missing.json'))
    assert done.returncode == 2
    assert expected in done.stderr
    assert done.stdout == ''


@pytest.mark.parametrize(
    ('environ', 'expected'),
    [({'LANG': 'ko_KR.UTF-8'}, '의 질문을 읽을 수 없습니다'), ({'LANG': 'C'}, 'cannot read the questions in')],
)
def test_pending_on_a_missing_database_speaks_the_terminals_language(
    tmp_path: Path, environ: dict[str, str], expected: str
) -> None:
    done = _run(environ, 'pending', '--db', f'sqlite:///{tmp_path / "missing.sqlite"}')
    assert done.returncode == 4
    assert expected in done.stderr
