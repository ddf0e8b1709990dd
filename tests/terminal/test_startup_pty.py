"""`ask-user ask` in a real pty, up to the first frame of the menu: it has loaded the menu and nothing heavier."""

from __future__ import annotations

import json
import shlex
import sys
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


RECORDING_EVERY_MODULE = (
    'import atexit, json, sys\n'
    'def dump():\n'
    '    with open(sys.argv[1], "w") as handle:\n'
    '        json.dump(sorted(sys.modules), handle)\n'
    'atexit.register(dump)\n'
    'from pydantic_ai_ask_user._cli import main\n'
    'sys.exit(main(sys.argv[2:]))\n'
)
"""`ask-user`, writing the name of every module it has imported (not only the top-level ones) to `argv[1]` as it exits."""


def test_ask_draws_its_menu_without_building_the_models_or_reading_package_metadata(
    spawn: Callable[..., Screen], write_questions: Any, tmp_path: Path
) -> None:
    # What the first frame does not need stays unloaded (docs/answerers/terminal.md#speed): the question models'
    # own validators and pydantic's plugins (which read every installed distribution's entry points; the file is
    # validated by the fast path), the package metadata (the version, the install hint), and the receipts' models.
    record = tmp_path / 'modules.json'
    questions = write_questions(QUESTIONS)
    screen = spawn(shlex.join([sys.executable, '-c', RECORDING_EVERY_MODULE, str(record), 'ask', str(questions)]))
    screen.wait_for('Which one?')
    screen.send(ESC)
    assert screen.finish() == 1, screen.text
    modules = set(json.loads(record.read_text(encoding='utf-8')))
    assert 'pydantic_ai_ask_user._questions' in modules
    unloaded = {
        'importlib.metadata',
        'pydantic.plugin._loader',
        'pydantic_ai_ask_user._receipt',
        'pydantic_ai_ask_user._json',
        'difflib',
    }
    assert modules & unloaded == set()
