"""`ask-user` start-up: the first frame of `ask-user ask` in a real pty, and `ask-user --help`, against a floor.

The floor is `python -c "import pydantic"` in the same run. Each round runs the floor, `--help` and `ask`
one after another in fresh interpreters, so a load that comes and goes affects all three alike; the figure
is the median of the per-round ratios, with their min and max. Bytecode is cached as users have it (an
installed package has its `.pyc` files): one warm-up round writes them, and `PYTHONDONTWRITEBYTECODE` is
unset for the measured processes.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect
import pyte

ROUNDS = 15
"""Measured rounds, each one floor, one `--help` and one `ask` to its first frame."""

ASK_USER = str(Path(sys.executable).with_name('ask-user'))
"""The installed `ask-user` script, as a person runs it."""

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database should the migration target?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}, {'label': 'MySQL'}],
        }
    ]
}
"""A question file like one a shell script writes."""

FIRST_FRAME_GOAL = 2.0
"""Goal: the first frame of `ask-user ask` within 2x the floor."""

HELP_GOAL = 1.5
"""Goal: `ask-user --help` within 1.5x the floor."""


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != 'PYTHONDONTWRITEBYTECODE'}
    return {**env, 'TERM': 'xterm-256color', 'COLUMNS': '80', 'LINES': '24'}


def _run(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    return time.perf_counter() - started


def _first_frame(questions: Path) -> float:
    """Seconds from starting `ask-user ask FILE` in a pty to the question on its screen; then Esc declines.

    The screen is a terminal emulator (pyte) that answers the menu's cursor-position query, as a real one does.
    """
    screen = pyte.Screen(80, 24)
    stream = pyte.ByteStream(screen)
    started = time.perf_counter()
    child = pexpect.spawn(ASK_USER, ['ask', str(questions)], dimensions=(24, 80), env=_env())
    screen.write_process_input = lambda data: child.send(data)  # type: ignore[method-assign]
    try:
        while not any('Which database' in line for line in screen.display):
            if time.perf_counter() - started > 120:
                raise TimeoutError('ask-user ask drew no menu in 120 s')
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.005))
            except pexpect.TIMEOUT:
                continue
        elapsed = time.perf_counter() - started
        child.send('\x1b')
        child.expect(pexpect.EOF, timeout=120)
    finally:
        child.close(force=True)
    return elapsed


def _summary(name: str, ratios: list[float], seconds: list[float], goal: float | None) -> str:
    median = statistics.median(ratios)
    verdict = '' if goal is None else f'; {"meets" if median <= goal else "misses"} the <= {goal}x goal'
    return (
        f'{name}: {statistics.median(seconds) * 1000:.0f} ms, {median:.2f}x the floor '
        f'(per-round min {min(ratios):.2f}x, max {max(ratios):.2f}x{verdict})'
    )


BASE_MODEL = 'from pydantic import BaseModel\nclass A(BaseModel):\n    x: int'
"""Where the time goes, 1: a fresh interpreter that defines one pydantic model, the least any validation costs."""

MODELS_AND_MENU = 'import pydantic_ai_ask_user._answers, pydantic_ai_ask_user._asking, pydantic_ai_ask_user.terminal'
"""Where the time goes, 2: the question models and the terminal menu imported, nothing drawn."""


def main() -> None:
    floor_argv = [sys.executable, '-c', 'import pydantic']
    help_argv = [ASK_USER, '--help']
    model_argv = [sys.executable, '-c', BASE_MODEL]
    imports_argv = [sys.executable, '-c', MODELS_AND_MENU]
    with tempfile.TemporaryDirectory() as folder:
        questions = Path(folder) / 'questions.json'
        questions.write_text(json.dumps(QUESTIONS), encoding='utf-8')
        # Warm-up: writes the bytecode caches, as installing the package does.
        _run(floor_argv), _run(help_argv), _run(model_argv), _run(imports_argv), _first_frame(questions)
        floors: list[float] = []
        helps: list[float] = []
        frames: list[float] = []
        models: list[float] = []
        imports: list[float] = []
        for _ in range(ROUNDS):
            floors.append(_run(floor_argv))
            helps.append(_run(help_argv))
            frames.append(_first_frame(questions))
            models.append(_run(model_argv))
            imports.append(_run(imports_argv))
    print(f'floor, python -c "import pydantic": median {statistics.median(floors) * 1000:.0f} ms over {ROUNDS} rounds')
    print('bytecode cached, as installed; each round interleaves the floor and every figure')
    print(_summary('ask-user --help', _ratios(helps, floors), helps, HELP_GOAL))
    print(_summary('ask-user ask, start to first frame in a pty', _ratios(frames, floors), frames, FIRST_FRAME_GOAL))
    print('where the first frame goes (no goal):')
    print(_summary('  a fresh interpreter defining one pydantic model', _ratios(models, floors), models, None))
    print(_summary('  the question models and the terminal menu imported', _ratios(imports, floors), imports, None))


def _ratios(measured: list[float], floors: list[float]) -> list[float]:
    return [value / floor for value, floor in zip(measured, floors, strict=True)]


if __name__ == '__main__':
    main()
