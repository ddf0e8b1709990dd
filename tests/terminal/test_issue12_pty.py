"""`TerminalAnswerer` in a real pseudo-terminal: the time left, notes, the recommended option, notifications,
who answered, and the menu in Korean."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.receipts import os_user_at_host
from pydantic_ai_ask_user.terminal import TerminalAnswerer

from ._pty_pair import PtyPair
from ._screen import ASK_USER, ESC, UP, Screen, paste
from .test_cli_pty import ONE, ask, outcome

pytestmark = pytest.mark.pty


@pytest.fixture
def pty() -> Iterator[PtyPair]:
    pair = PtyPair()
    yield pair
    pair.close()


DATABASE = Question(
    header='Database',
    question='Which database should the migration target?',
    options=(QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite'), QuestionOption(label='MySQL')),
    recommended='SQLite',
)


def _request(*, notes: bool = False, deadline: float | None = None, multi: bool = False) -> AskUserRequest:
    return AskUserRequest(
        questions=(DATABASE.model_copy(update={'multi_select': multi}),), notes=notes, deadline=deadline
    )


async def _ask(
    answerer: TerminalAnswerer, request: AskUserRequest, pty: PtyPair, keys: Any, *, drawn: str = '1/1 Database'
) -> AskUserResponse:
    """Ask `request`, run `keys(pty)` (the person) once `drawn` is on the screen, and return the response."""
    got: list[AskUserResponse] = []

    async def run() -> None:
        got.append(await answerer(request))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await pty.wait_for(drawn)
            await keys(pty)
    finally:
        answerer.close()
    return got[0]


def _left(pty: PtyPair) -> str | None:
    found = re.search(r'(\d+:\d\d) left', pty.text)
    return found.group(1) if found else None


def _style_of(pty: PtyPair, text: str) -> Any:
    for y, line in enumerate(pty.screen.display):
        if (x := line.find(text)) >= 0:
            return pty.screen.buffer[y][x]
    raise AssertionError(f'{text!r} is not on the screen:\n{pty.text}')


@pytest.mark.anyio
async def test_the_time_left_counts_down_each_second_redrawing_only_what_changed(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for(lambda pair: _left(pair) is not None)
        shown = _left(pty)
        assert shown in ('1:10', '1:11'), pty.text
        assert not _style_of(pty, f'{shown} left').bold
        for _ in range(2):
            size = len(pty.raw)
            seconds = int(shown[0]) * 60 + int(shown[2:]) - 1
            shown = f'{seconds // 60}:{seconds % 60:02}'
            await pty.wait_for(f'{shown} left')
        # A second later only the digits that changed were written again, not the menu.
        assert len(pty.raw) - size < 80, bytes(pty.raw[size:])
        assert pty.text.startswith(f'1/1 Database · pick one · {shown} left\n')
        pty.send('\r')

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(deadline=time.time() + 70.5), pty, person)
    assert response.answers == (AskUserAnswer(header='Database', selected=('SQLite',)),)


@pytest.mark.anyio
async def test_under_a_minute_the_time_left_is_bold_and_red(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for(lambda pair: _left(pair) is not None)
        cell = _style_of(pty, f'{_left(pty)} left')
        assert cell.bold
        assert cell.fg == 'red'
        pty.send(ESC)

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(deadline=time.time() + 45), pty, person)
    assert response.cancelled


@pytest.mark.anyio
async def test_without_a_deadline_no_time_is_shown(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for('Esc decline')
        assert 'left' not in pty.text
        pty.send('\r')

    await _ask(TerminalAnswerer(tty=pty.path), _request(), pty, person)


@pytest.mark.anyio
async def test_the_cursor_starts_on_the_recommended_option_and_enter_picks_it(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for('❯ 2. SQLite (recommended)')
        assert _style_of(pty, '(recommended)').fg == 'green'
        pty.send('\r')

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(), pty, person)
    assert response.answers == (AskUserAnswer(header='Database', selected=('SQLite',)),)
    await pty.wait_for('Database: SQLite')


@pytest.mark.anyio
async def test_the_recommended_option_of_a_multi_select_question_is_ticked_only_by_the_person(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for('❯ [ ] 2. SQLite (recommended)')
        pty.send('\r')
        await pty.wait_for('Pick at least one option')
        assert '[x]' not in pty.text
        pty.send(' ')
        await pty.wait_for('❯ [x] 2. SQLite (recommended)')
        pty.send('\r')

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(multi=True), pty, person)
    assert response.answers == (AskUserAnswer(header='Database', selected=('SQLite',)),)


@pytest.mark.anyio
async def test_tab_adds_a_note_that_is_returned_with_the_answer(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for('Tab note · Esc decline')
        pty.send('\t')
        await pty.wait_for('Enter or Tab done')
        pty.send('only after the backup\x1b[D\x7f')  # Left, Backspace: edited like the typed answer
        await pty.wait_for('20/2000 characters')
        pty.send('\r')
        await pty.wait_for('+ Note: only after the backp')
        pty.send('\t\x7fup\t')  # Tab opens it again with the caret at the end
        await pty.wait_for('+ Note: only after the backup')
        pty.send('\r')

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(notes=True), pty, person)
    assert response.answers == (AskUserAnswer(header='Database', selected=('SQLite',), note='only after the backup'),)
    await pty.wait_for('Database: SQLite · Note: only after the backup')


@pytest.mark.anyio
async def test_a_note_with_a_control_character_is_refused_and_kept_for_editing(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        await pty.wait_for('Esc decline')
        pty.send('\t')
        await pty.wait_for('Enter or Tab done')
        pty.send(paste('ok\a'))
        await pty.wait_for('3/2000 characters')
        pty.send('\r')
        await pty.wait_for('it contains U+0007')
        pty.send('\x7f\r')
        await pty.wait_for('+ Note: ok')
        pty.send('\r')

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(notes=True), pty, person)
    assert response.answers[0].note == 'ok'


@pytest.mark.anyio
async def test_a_declined_response_says_who_declined(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        pty.send(ESC)

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(), pty, person)
    assert response == AskUserResponse(cancelled=True, answered_by=os_user_at_host())


@pytest.mark.anyio
@pytest.mark.parametrize(('option', 'expected'), [('Alice Kim', 'Alice Kim'), (False, None)])
async def test_answered_by_names_someone_else_or_no_one(pty: PtyPair, option: str | bool, expected: str | None) -> None:
    async def person(pty: PtyPair) -> None:
        pty.send('\r')

    response = await _ask(TerminalAnswerer(tty=pty.path, answered_by=option), _request(), pty, person)
    assert response.answered_by == expected


def test_answered_by_must_be_one_short_line() -> None:
    with pytest.raises(ValueError, match='answered_by'):
        TerminalAnswerer(answered_by='two\nlines')


@pytest.mark.anyio
async def test_bell_and_desktop_notification_escape_the_models_header(pty: PtyPair) -> None:
    # Validation rejects control characters; build the question without it, as a buggy caller could.
    hostile = DATABASE.model_copy(update={'header': 'Database\x1b]0;pwned\x07;x\x9c\x1b\\'})
    request = AskUserRequest.__new__(AskUserRequest)
    object.__setattr__(request, 'questions', (hostile,))
    object.__setattr__(request, 'id', 'hostile')

    async def person(pty: PtyPair) -> None:
        pty.send(ESC)

    await _ask(TerminalAnswerer(tty=pty.path, bell=True, desktop_notification=True), request, pty, person)
    raw = bytes(pty.raw)
    body = b'Database]0pwnedx\\'
    title = b'A question is waiting for you'
    assert raw.startswith(
        b'\x07\x1b]9;' + title + b': ' + body + b'\x07\x1b]777;notify;' + title + b';' + body + b'\x07'
    )
    assert b'\x1b]0;' not in raw
    assert '\x9c' not in raw.decode()


@pytest.mark.anyio
async def test_no_bell_and_no_notification_unless_asked(pty: PtyPair) -> None:
    async def person(pty: PtyPair) -> None:
        pty.send(ESC)

    await _ask(TerminalAnswerer(tty=pty.path), _request(), pty, person)
    assert b'\x07' not in pty.raw
    assert b'\x1b]9;' not in pty.raw
    assert b'\x1b]777;' not in pty.raw


KOREAN = {
    'title': '1/1 Database · 하나 고르기 · 1:',
    'left': '남음',
    'recommended': '❯ 2. SQLite (추천)',
    'custom': '✎ 직접 답 입력하기',
    'help': '↑↓ 이동 · 1-3 고르기 · Enter 확정 · Tab 메모 · Esc 답하지 않기',
    'refused': '이 글은 보낼 수 없습니다. U+0007 문자가 들어 있습니다.',
    'note': '❯ + 메모:',
    'note help': 'Enter 또는 Tab 완료',
    'saved note': '+ 메모: 백업 후',
    'declined': '답하지 않기로 했습니다.',
}
ENGLISH = {
    'title': '1/1 Database · pick one · 1:',
    'left': 'left',
    'recommended': '❯ 2. SQLite (recommended)',
    'custom': '✎ Type my own answer',
    'help': '↑↓ move · 1-3 pick · Enter confirm · Tab note · Esc decline',
    'refused': 'This text cannot be sent: it contains U+0007;',
    'note': '❯ + Note:',
    'note help': 'Enter or Tab done',
    'saved note': '+ Note: 백업 후',
    'declined': 'You declined to answer.',
}


@pytest.mark.anyio
@pytest.mark.parametrize(('lang', 'shown'), [('ko_KR.UTF-8', KOREAN), ('C', ENGLISH)], ids=['ko', 'C'])
async def test_the_menu_speaks_the_language_of_lang(
    pty: PtyPair, monkeypatch: pytest.MonkeyPatch, lang: str, shown: dict[str, str]
) -> None:
    monkeypatch.setenv('LANG', lang)

    async def person(pty: PtyPair) -> None:
        for key in ('title', 'left', 'recommended', 'custom', 'help'):
            await pty.wait_for(shown[key])
        pty.send(UP + UP)  # from the recommended option up to PostgreSQL, then round to the text row
        pty.send(paste('x\a') + '\r')
        await pty.wait_for(shown['refused'])
        pty.send('\t')
        await pty.wait_for(shown['note'])
        await pty.wait_for(shown['note help'])
        pty.send('백업 후\r')
        await pty.wait_for(shown['saved note'])
        pty.send(ESC)

    response = await _ask(TerminalAnswerer(tty=pty.path), _request(notes=True, deadline=time.time() + 100), pty, person)
    assert response.cancelled
    await pty.wait_for(shown['declined'])


@pytest.mark.anyio
async def test_the_language_option_wins_over_lang(pty: PtyPair, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('LANG', 'C')

    async def person(pty: PtyPair) -> None:
        await pty.wait_for(KOREAN['help'].replace(' · Tab 메모', ''))
        pty.send('\r')

    await _ask(TerminalAnswerer(tty=pty.path, language='ko'), _request(), pty, person)


def test_ask_user_ask_rings_and_notifies_only_with_its_flags(spawn: Any, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen: Screen = ask(spawn, path, '--bell --notify-desktop')
    screen.wait_for('1/1 Database')
    assert b'\x07\x1b]9;A question is waiting for you: Database\x07' in screen.raw
    assert b'\x1b]777;notify;A question is waiting for you;Database\x07' in screen.raw
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['PostgreSQL']})

    quiet = ask(spawn, path)
    quiet.wait_for('1/1 Database')
    assert b'\x07' not in quiet.raw
    quiet.send('\r')
    assert outcome(quiet, path) == (0, {'Database': ['PostgreSQL']})


@pytest.mark.skipif(shutil.which('tmux') is None, reason='needs tmux')
def test_inside_tmux_the_desktop_notification_reaches_the_outer_terminal(
    spawn: Any, write_questions: Any, tmp_path: Path
) -> None:
    path = write_questions(ONE)
    socket = tmp_path / 'tmux.sock'
    inner = (
        'tmux set -g allow-passthrough on; '
        f'{shlex.quote(ASK_USER)} ask --notify-desktop {shlex.quote(str(path))} > {tmp_path}/out; echo $? > {tmp_path}/code'
    )
    try:
        screen: Screen = spawn(f'tmux -S {socket} -f /dev/null new-session {shlex.quote(inner)}')
        screen.wait_for('1/1 Database')
        # tmux unwraps the passthrough and writes the sequence itself to the terminal it runs in.
        screen.wait_for(lambda screen: b'\x1b]9;A question is waiting for you: Database\x07' in screen.raw)
        assert b'\x1b]777;notify;A question is waiting for you;Database\x07' in screen.raw
        screen.send('\r')
        screen.finish()
        assert (tmp_path / 'code').read_text().strip() == '0'
        assert json.loads((tmp_path / 'out').read_text()) == {'Database': ['PostgreSQL']}
    finally:
        subprocess.run(['tmux', '-S', str(socket), 'kill-server'], capture_output=True, check=False, timeout=60)


def test_ask_user_ask_draws_the_menu_in_korean_under_a_korean_lang(
    spawn: Any, write_questions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('LANG', 'ko_KR.UTF-8')
    path = write_questions({'questions': [{**ONE['questions'][0], 'question': '마이그레이션 대상 데이터베이스는?'}]})
    screen: Screen = ask(spawn, path)
    screen.wait_for('1/1 Database · 하나 고르기')
    screen.wait_for('✎ 직접 답 입력하기')
    screen.wait_for('↑↓ 이동 · 1-3 고르기 · Enter 확정 · Esc 답하지 않기')
    screen.send('q')
    screen.wait_for('직접 답을 쓰려면 먼저 "직접 답 입력하기"로 이동하세요 (↑↓).')
    screen.send(ESC)
    assert outcome(screen, path)[0] == 1
    assert '답하지 않기로 했습니다.' in screen.text
