"""`ask-user ask` in a real pty, up to the first frame of the menu: it has loaded the menu and nothing heavier."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import heavy_imported, recording_script

from ._screen import ESC, Screen

pytestmark = pytest.mark.pty

QUESTIONS = {
    'questions': [
        {'header': 'Database', 'question': 'Which one?', 'options': [{'label': 'SQLite'}, {'label': 'MySQL'}]}
    ]
}


def test_ask_draws_its_menu_without_pydantic_ai_dbos_or_starlette(
    spawn: Callable[..., Screen], write_questions: Any, tmp_path: Path
) -> None:
    record = tmp_path / 'modules.json'
    screen = spawn(recording_script(record, 'ask', str(write_questions(QUESTIONS))))
    screen.wait_for('Which one?')
    screen.send(ESC)
    assert screen.finish() == 1, screen.text
    assert heavy_imported(record) == {'prompt_toolkit'}
