"""Issue 23 in a real pseudo-terminal: nothing prints above the menu, one `❯` at a time, Korean key help in 80 columns."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ._screen import Screen

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
    return spawn(f'env -u PYTEST_VERSION -u CI -u PYDANTIC_AI_NO_BANNER {shlex.quote(sys.executable)} agent.py', cwd=tmp_path)


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
