"""Signals while the menu is shown, in a real pseudo-terminal: the terminal is handed back as it was found."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import termios
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.receipts import os_user_at_host
from pydantic_ai_ask_user.terminal import TerminalAnswerer

from ._pty_pair import TIMEOUT, PtyPair
from ._screen import ASK_USER, DOWN, Screen

pytestmark = [pytest.mark.anyio, pytest.mark.pty]

Spawn = Callable[..., Screen]

ONE = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database should the migration target?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
        }
    ]
}


def _slave_attributes(folder: Path) -> list[Any]:
    """The termios settings of the pty the script runs in, read from its device as `stty -a < /dev/pts/N` would."""
    fd = os.open((folder / 'tty').read_text().strip(), os.O_RDONLY | os.O_NOCTTY)
    try:
        return termios.tcgetattr(fd)
    finally:
        os.close(fd)


def _raw(attributes: list[Any]) -> bool:
    return not attributes[3] & (termios.ECHO | termios.ICANON | termios.ISIG)


@pytest.mark.parametrize(('signum', 'status'), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_term_and_hup_erase_the_menu_restore_the_terminal_and_exit_128_plus_the_signal(
    spawn: Spawn, write_questions: Any, signum: int, status: int
) -> None:
    path = write_questions(ONE)
    folder = path.parent
    script = (
        f'tty > {folder}/tty; stty -g > {folder}/before; '
        f'{shlex.quote(ASK_USER)} ask {path} > {folder}/out & echo $! > {folder}/pid; wait $!; '
        f'echo $? > {folder}/code; stty -g > {folder}/after; echo READY; read -r line; echo "got:$line"'
    )
    screen = spawn(script)
    screen.wait_for('1/1 Database')
    assert _raw(_slave_attributes(folder))
    os.kill(int((folder / 'pid').read_text()), signum)
    screen.wait_for('READY')
    assert (folder / 'code').read_text().strip() == str(status)
    assert (folder / 'before').read_text() == (folder / 'after').read_text()
    assert not screen.screen.cursor.hidden
    assert 'Which database' not in screen.text
    assert (folder / 'out').read_text() == ''
    # Cooked mode again: the line is echoed and read whole.
    screen.send('hello 123\r')
    screen.wait_for('got:hello 123')
    assert screen.finish() == 0


def _job_control_script(folder: Path, path: Path) -> str:
    # `set -m`: the shell gives the terminal to the job, takes it back when the job stops, and `fg` resumes it.
    return (
        f'set -m; tty > {folder}/tty; stty -g > {folder}/before; '
        f'{shlex.quote(ASK_USER)} ask {path} > {folder}/out & echo $! > {folder}/pid; fg > /dev/null; '
        f'echo "stopped:$?"; stty -g > {folder}/stopped; read -r line; fg > /dev/null; '
        f'echo $? > {folder}/code; stty -g > {folder}/after'
    )


@pytest.mark.parametrize('how', ['ctrl-z', 'kill -TSTP'])
def test_suspending_restores_the_terminal_and_resuming_brings_the_menu_back_in_raw_mode(
    spawn: Spawn, write_questions: Any, how: str
) -> None:
    path = write_questions(ONE)
    folder = path.parent
    screen = spawn(_job_control_script(folder, path))
    screen.wait_for('1/1 Database')
    if how == 'ctrl-z':
        screen.send('\x1a')
    else:
        os.kill(int((folder / 'pid').read_text()), signal.SIGTSTP)
    screen.wait_for(f'stopped:{128 + signal.SIGTSTP}')
    assert (folder / 'stopped').read_text() == (folder / 'before').read_text()
    assert not screen.screen.cursor.hidden
    assert 'Which database' not in screen.text
    screen.send('\r')  # `read`, then `fg`
    screen.wait_for('Which database')
    screen.wait_for(lambda _: _raw(_slave_attributes(folder)))
    screen.send(DOWN)
    screen.wait_for('❯ 2. SQLite')
    assert '^[' not in screen.text
    screen.send('\r')
    screen.wait_for(lambda _: (folder / 'after').exists() and (folder / 'after').stat().st_size > 0)
    assert (folder / 'code').read_text().strip() == '0'
    assert (folder / 'out').read_text().strip() == '{"Database":["SQLite"]}'
    assert (folder / 'after').read_text() == (folder / 'before').read_text()


def test_a_stop_it_did_not_see_coming_is_followed_by_raw_mode_on_resume(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    folder = path.parent
    screen = spawn(_job_control_script(folder, path))
    screen.wait_for('1/1 Database')
    os.kill(int((folder / 'pid').read_text()), signal.SIGSTOP)
    screen.wait_for(f'stopped:{128 + signal.SIGSTOP}')
    screen.send('\r')
    screen.wait_for(lambda _: _raw(_slave_attributes(folder)))
    screen.send(DOWN)
    screen.wait_for('❯ 2. SQLite')
    assert '^[' not in screen.text
    screen.send('\r')
    screen.wait_for(lambda _: (folder / 'after').exists() and (folder / 'after').stat().st_size > 0)
    assert (folder / 'out').read_text().strip() == '{"Database":["SQLite"]}'
    assert (folder / 'after').read_text() == (folder / 'before').read_text()


@pytest.fixture
def pty() -> Iterator[PtyPair]:
    pair = PtyPair()
    yield pair
    pair.close()


REQUEST = AskUserRequest(
    questions=(
        Question(header='Go', question='Go ahead?', options=(QuestionOption(label='yes'), QuestionOption(label='no'))),
    )
)
YES = AskUserResponse(answers=(AskUserAnswer(header='Go', selected=('yes',)),), answered_by=os_user_at_host())


def _application_handler(signum: int, frame: FrameType | None) -> None:  # pragma: no cover - never sent
    pass


async def test_an_embedded_answerer_handles_signals_only_while_asking_and_keeps_the_applications_own(
    pty: PtyPair,
) -> None:
    previous = signal.signal(signal.SIGHUP, _application_handler)
    try:
        answerer = TerminalAnswerer(tty=pty.path)
        task = asyncio.ensure_future(answerer(REQUEST))
        await pty.wait_for('1/1 Go')
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGHUP) is _application_handler
        pty.send('\r')
        assert await task == YES
        answerer.close()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGTSTP) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGCONT) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGHUP) is _application_handler
    finally:
        signal.signal(signal.SIGHUP, previous)


async def test_an_answerer_outside_the_main_thread_installs_no_signal_handler(pty: PtyPair) -> None:
    got: list[AskUserResponse] = []

    def ask() -> None:
        answerer = TerminalAnswerer(tty=pty.path)
        got.append(asyncio.run(answerer(REQUEST)))
        answerer.close()

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    await pty.wait_for('1/1 Go')
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    pty.send('\r')
    await asyncio.to_thread(thread.join, TIMEOUT)
    assert not thread.is_alive(), f'the answerer in its thread did not return within {TIMEOUT:.0f} s of Enter'
    assert got == [YES]
