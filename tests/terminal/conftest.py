from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ._screen import Screen


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    # The menu speaks the language of LANGUAGE, LC_* and LANG: the tests read English unless they ask for another.
    for name in ('LANGUAGE', 'LC_ALL', 'LC_MESSAGES', 'TMUX'):  # and no tmux passthrough unless a test asks for it
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('LANG', 'C.UTF-8')


@pytest.fixture
def spawn() -> Iterator[Callable[..., Screen]]:
    screens: list[Screen] = []

    def start(script: str, **kwargs: Any) -> Screen:
        screen = Screen(script, **kwargs)
        screens.append(screen)
        return screen

    yield start
    for screen in screens:
        screen.close()


@pytest.fixture
def write_questions(tmp_path: Path) -> Callable[[dict[str, Any]], Path]:
    def write(arguments: dict[str, Any]) -> Path:
        path = tmp_path / 'questions.json'
        path.write_text(json.dumps(arguments, ensure_ascii=False), encoding='utf-8')
        return path

    return write
