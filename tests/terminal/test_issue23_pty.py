"""Issue 23 in a real pseudo-terminal: nothing prints above the menu, one `❯` at a time, Korean key help in 80 columns."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.terminal import TerminalAnswerer
from pydantic_ai_ask_user.terminal._render import cell_width

from ._pty_pair import PtyPair
from ._screen import Screen
from .test_issue12_pty import _ask

pytestmark = pytest.mark.pty

AGENT = """\
from pydantic_ai import Agent

from pydantic_ai_ask_user import AskUser
from pydantic_ai_ask_user.terminal import TerminalAnswerer
from pydantic_ai_ask_user.testing import asking_model

agent = Agent(asking_model(), capabilities=[AskUser(answerer=TerminalAnswerer())])
print('OUTPUT', agent.run_sync('Pick one.').output)
"""
"""A user's script: an agent that asks in the terminal, run from a directory of their own (not an installed package)."""


def run_agent(spawn: Callable[..., Screen], tmp_path: Path) -> Screen:
    (tmp_path / 'agent.py').write_text(AGENT, encoding='utf-8')
    # As a person runs it: not under pytest, not in CI, where Pydantic AI keeps its first-run banner to itself.
    return spawn(
        f'env -u PYTEST_VERSION -u CI -u PYDANTIC_AI_NO_BANNER {shlex.quote(sys.executable)} agent.py', cwd=tmp_path
    )


def test_pydantic_ais_first_run_banner_does_not_print_above_the_menu(
    spawn: Callable[..., Screen], tmp_path: Path
) -> None:
    screen = run_agent(spawn, tmp_path)
    screen.wait_for('Enter')
    screen.wait_for('A')
    screen.send('\r')
    assert screen.finish() == 0, screen.text
    shown = screen.raw.decode(errors='replace')
    assert 'OUTPUT {"Choice":["A"]}' in screen.text, screen.text
    assert 'PYDANTIC_AI_NO_BANNER' not in shown, screen.text
    assert 'logfire' not in shown.lower(), screen.text


@pytest.fixture
def pty() -> Iterator[PtyPair]:
    pair = PtyPair(columns=80)
    yield pair
    pair.close()


def _database(*, multi: bool = False, header: str = 'Database') -> Question:
    return Question(
        header=header,
        question='Which database should the migration target?',
        options=tuple(QuestionOption(label=label) for label in ('PostgreSQL', 'SQLite', 'MySQL', 'DuckDB')),
        multi_select=multi,
    )


@pytest.mark.anyio
async def test_one_pointer_while_a_note_is_edited(pty: PtyPair) -> None:
    pointers: list[int] = []

    async def person(pty: PtyPair) -> None:
        await pty.wait_for('Tab note')
        pty.send('\x1b[B')  # SQLite
        await pty.wait_for('❯ 2. SQLite')
        pty.send('\t')
        await pty.wait_for('Enter or Tab done')
        pty.send('after the backup')
        await pty.wait_for('16/2000 characters')
        pointers.append(pty.text.count('❯'))
        assert '❯ + Note' in pty.text, pty.text
        pty.send('\r')  # the note closes: the pointer is back on the option
        await pty.wait_for('+ Note: after the backup')
        await pty.wait_for('❯ 2. SQLite')
        pointers.append(pty.text.count('❯'))
        pty.send('\r')

    request = AskUserRequest(questions=(_database(),), notes=True)
    response = await _ask(TerminalAnswerer(tty=pty.path), request, pty, person)
    assert response.answers == (AskUserAnswer(header='Database', selected=('SQLite',), note='after the backup'),)
    assert pointers == [1, 1]


KOREAN_HINTS = (
    '↑↓ 이동',
    'Enter 확정',
    '← 이전',
    'Tab 메모',
    'Esc 답하지 않기',
    'Enter 선택 확정',
    '←→ 글 안에서 이동',
    '↑↓ 입력 칸 나가기',
    'Shift-Tab 이전',
)
"""Key hints of the Korean menu, each of which must stay whole on one row."""


def _help_rows(pty: PtyPair) -> list[str]:
    rows = [row.rstrip() for row in pty.screen.display if row.strip()]
    start = next(index for index, row in enumerate(rows) if row.startswith(('↑↓', 'Enter')))
    return rows[start:]


@pytest.mark.anyio
async def test_the_korean_key_help_fits_80_columns_and_never_breaks_a_hint(pty: PtyPair) -> None:
    helps: list[list[str]] = []

    async def person(pty: PtyPair) -> None:
        pty.send('1\r')  # the first question answered: the second has "← back" in its help
        await pty.wait_for('2/2')
        await pty.wait_for('Tab 메모')
        helps.append(_help_rows(pty))
        pty.send('2')  # a tick, then the text row: the longest help of all
        await pty.wait_for('[x] 2. SQLite')
        for _ in range(3):
            pty.send('\x1b[B')
        await pty.wait_for('Shift-Tab')
        helps.append(_help_rows(pty))
        pty.send('\x1b')

    request = AskUserRequest(questions=(_database(multi=True), _database(multi=True, header='Backup')), notes=True)
    response = await _ask(TerminalAnswerer(tty=pty.path, language='ko'), request, pty, person, drawn='1/2')
    assert response.cancelled
    options_help, typing_help = helps
    # On the option rows, the whole help is one row of at most 80 cells (Korean letters are two cells wide).
    assert len(options_help) == 1, options_help
    assert cell_width(options_help[0]) <= 80, options_help
    assert 'Space/1-4 선택/해제' in options_help[0], options_help
    # Longer than a row in the text row: it breaks between hints, never inside one.
    assert all(cell_width(row) <= 80 for row in typing_help), typing_help
    for hint in KOREAN_HINTS[4:]:
        assert any(hint in row for row in typing_help), (hint, typing_help)
