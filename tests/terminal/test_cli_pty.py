"""`ask-user ask` in a real pseudo-terminal: what a person sees, the keys they press, stdout and the exit code."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pydantic_ai_ask_user import DECLINED, TIMED_OUT

from ._screen import ASK_USER, DOWN, ESC, LEFT, SHIFT_TAB, TIMEOUT, UP, Screen, paste

pytestmark = pytest.mark.pty

Spawn = Callable[..., Screen]

DATABASE = {
    'header': 'Database',
    'question': 'Which database should the migration target?',
    'options': [
        {'label': 'PostgreSQL', 'description': 'The production database.'},
        {'label': 'SQLite', 'description': 'A local file, for development.'},
        {'label': 'MySQL'},
    ],
}
ENVIRONMENTS = {
    'header': 'Environments',
    'question': 'Which environments should be migrated?',
    'options': [{'label': 'dev'}, {'label': 'staging'}, {'label': 'production'}],
    'multi_select': True,
}
TWO = {'questions': [DATABASE, ENVIRONMENTS]}
ONE = {'questions': [DATABASE]}


def ask(spawn: Spawn, questions: Path, options: str = '', **kwargs: Any) -> Screen:
    """Run `choice=$(ask-user ask FILE)` in a pty, leaving the exit code and the captured stdout in files."""
    folder = questions.parent
    script = (
        f'choice=$({shlex.quote(ASK_USER)} ask {shlex.quote(str(questions))} {options}); '
        f'echo $? > {folder}/code; printf %s "$choice" > {folder}/out'
    )
    return spawn(script, **kwargs)


def outcome(screen: Screen, questions: Path) -> tuple[int, Any]:
    assert screen.finish() == 0, screen.text
    code = int((questions.parent / 'code').read_text())
    out = (questions.parent / 'out').read_text(encoding='utf-8')
    return code, json.loads(out) if out else None


def test_a_single_answer_is_printed_on_captured_stdout_and_exits_0(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send(DOWN)
    screen.wait_for('❯ 2. SQLite')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['SQLite']})


def test_the_menu_stays_below_what_was_already_on_the_terminal(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = spawn(f'echo "the model wrote this first"; {shlex.quote(ASK_USER)} ask {path} > {path.parent}/out')
    screen.wait_for('1/1 Database')
    assert screen.screen.display[0].startswith('the model wrote this first')
    screen.send('\r')
    screen.finish()
    assert 'the model wrote this first' in screen.text
    assert 'Database: PostgreSQL' in screen.text


def test_digits_pick_and_space_toggles_in_multi_select(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(TWO)
    screen = ask(spawn, path)
    screen.wait_for('1/2 Database')
    screen.send('3')
    screen.wait_for('❯ 3. MySQL')
    screen.send('\r')
    screen.wait_for('2/2 Environments')
    screen.send('1')
    screen.wait_for('[x] 1. dev')
    screen.send(DOWN + DOWN + ' ')
    screen.wait_for('❯ [x] 3. production')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['MySQL'], 'Environments': ['dev', 'production']})


def test_enter_on_a_multi_select_with_nothing_picked_shows_a_hint(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions({'questions': [ENVIRONMENTS]})
    screen = ask(spawn, path)
    screen.wait_for('1/1 Environments')
    screen.send('\r')
    screen.wait_for('Pick at least one option')
    screen.send('j ')
    screen.wait_for('❯ [x] 2. staging')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Environments': ['staging']})


def test_going_back_keeps_the_earlier_answer(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(TWO)
    screen = ask(spawn, path)
    screen.wait_for('1/2 Database')
    screen.send('2\r')
    screen.wait_for('2/2 Environments')
    screen.send(LEFT)
    screen.wait_for('❯ 2. SQLite')
    screen.send('k\r')
    screen.wait_for('2/2 Environments')
    screen.send('2' + SHIFT_TAB)
    screen.wait_for('1/2 Database')
    screen.send('\r')
    screen.wait_for('[x] 2. staging')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['PostgreSQL'], 'Environments': ['staging']})


def test_digits_typed_in_the_text_field_are_text_and_pasting_works(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('CockroachDB 24')
    screen.wait_for('CockroachDB 24')
    screen.send(paste(', in 3 regions'))
    screen.wait_for('28/2000 characters')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['CockroachDB 24, in 3 regions']})


def test_typing_in_the_text_row_shows_the_cap(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('Oracle')
    screen.wait_for('6/2000 characters')
    screen.send('\r')
    assert outcome(screen, path) == (0, {'Database': ['Oracle']})


def test_a_pasted_control_character_is_rejected_with_a_message(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send(paste('evil\x07bell'))
    screen.wait_for('9/2000 characters')
    screen.send('\r')
    screen.wait_for('cannot be sent')
    screen.send('\x7f' * 5 + '\r')
    assert outcome(screen, path) == (0, {'Database': ['evil']})


def test_esc_declines_and_exits_1(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(TWO)
    screen = ask(spawn, path)
    screen.wait_for('1/2 Database')
    screen.send(ESC)
    assert outcome(screen, path) == (1, DECLINED)
    assert 'You declined to answer.' in screen.text


def test_ctrl_c_declines_too(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    screen = ask(spawn, path)
    screen.wait_for('1/1 Database')
    screen.send('\x03')
    assert outcome(screen, path) == (1, DECLINED)


def test_a_timeout_withdraws_the_menu_restores_the_terminal_and_keeps_later_keys(
    spawn: Spawn, write_questions: Any
) -> None:
    path = write_questions(ONE)
    folder = path.parent
    script = (
        f'stty -g > {folder}/before; {shlex.quote(ASK_USER)} ask --timeout 2 {path} > {folder}/out; '
        f'echo $? > {folder}/code; stty -g > {folder}/after; echo READY; read -r line; echo "got:$line"'
    )
    screen = spawn(script)
    # The raw output, not the screen: on a slow machine the menu may be drawn and withdrawn between two looks.
    screen.wait_for(lambda screen: b'1/1 Database' in screen.raw)
    screen.wait_for('READY')
    assert 'withdrawn' in screen.text
    assert 'Which database' not in screen.text
    screen.send('hello 123\r')
    screen.wait_for('got:hello 123')
    assert screen.finish() == 0
    assert (folder / 'code').read_text().strip() == '3'
    assert json.loads((folder / 'out').read_text()) == TIMED_OUT
    assert (folder / 'before').read_text() == (folder / 'after').read_text()
    assert not screen.screen.cursor.hidden


def test_questions_on_stdin_with_keys_from_the_terminal(spawn: Spawn, write_questions: Any) -> None:
    path = write_questions(ONE)
    folder = path.parent
    screen = spawn(f'cat {path} | {shlex.quote(ASK_USER)} ask - > {folder}/out; echo $? > {folder}/code')
    screen.wait_for('1/1 Database')
    screen.send('2\r')
    assert outcome(screen, path) == (0, {'Database': ['SQLite']})


KOREAN = {
    'questions': [
        {
            'header': '데이터베이스',
            'question': (
                '주문 서비스에는 데이터베이스가 두 개 설정되어 있습니다. 마이그레이션은 어느 쪽을 대상으로 해야 합니까?'
            ),
            'options': [
                {
                    'label': '운영 데이터베이스',
                    'description': '실제 고객 주문이 저장되는 운영 서버입니다. 점검 시간이 필요합니다.',
                },
                {'label': '개발용 파일', 'description': '개발자 노트북에 있는 로컬 파일입니다.'},
            ],
        }
    ]
}


@pytest.mark.parametrize('columns', [80, 40])
def test_korean_text_wraps_by_display_cells_and_stays_aligned(spawn: Spawn, write_questions: Any, columns: int) -> None:
    path = write_questions(KOREAN)
    screen = ask(spawn, path, columns=columns)
    screen.wait_for('1/1 데이터베이스')
    rows = screen.screen.display
    start = next(i for i, row in enumerate(rows) if row.startswith('1/1'))
    end = next(i for i, row in enumerate(rows) if row.startswith('↑↓'))
    menu = [row.rstrip() for row in rows[start:end]]
    question = KOREAN['questions'][0]
    option = question['options'][0]
    label_row = next(i for i, row in enumerate(menu) if '1. 운영' in row)
    second_row = next(i for i, row in enumerate(menu) if '2. 개발' in row)
    # The question fills the rows between the title and the first option, broken only at spaces.
    assert ' '.join(row.strip() for row in menu[1:label_row]) == question['question']
    # Every description row starts under the label, never at column 0 as a terminal's own wrap would.
    description_rows = menu[label_row + 1 : second_row]
    assert len(description_rows) >= (2 if columns == 40 else 1)
    assert all(row.startswith('     ') and row[5] != ' ' for row in description_rows)
    assert ' '.join(row.strip() for row in description_rows) == option['description']
    # pyte gives a wide character one cell and the next one ''; a row of more than `columns` cells cannot exist,
    # so compare the cells drawn with what the text needs.
    for row in menu:
        assert sum(2 if '\uac00' <= char <= '\ud7a3' else 1 for char in row) <= columns
    screen.send('\r')
    assert outcome(screen, path) == (0, {'데이터베이스': ['운영 데이터베이스']})


def test_invalid_questions_are_reported_on_stderr_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / 'bad.json'
    path.write_text(json.dumps({'questions': [{'header': 'x', 'question': 'q', 'options': [{'label': 'only'}]}]}))
    result = subprocess.run(
        [ASK_USER, 'ask', str(path)], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT
    )
    assert result.returncode == 2
    assert 'questions.0.options' in result.stderr
    assert result.stdout == ''


def test_without_a_terminal_it_says_so_and_exits_4_at_once(tmp_path: Path) -> None:
    path = tmp_path / 'q.json'
    path.write_text(json.dumps(ONE))
    # A new session has no controlling terminal, as in CI or under a service manager.
    result = subprocess.run(
        [ASK_USER, 'ask', str(path)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=60,
    )
    assert result.returncode == 4
    assert 'needs a terminal' in result.stderr
    assert '--web' in result.stderr
    assert 'deferred' in result.stderr
    assert 'ScriptedAnswerer' in result.stderr
    assert 'Traceback' not in result.stderr
