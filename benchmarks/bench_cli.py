"""`ask-user` start-up: the first frame of `ask-user ask` in a real pty, `ask-user --help`, and the durable commands
`pending`, `answer` and `resolve` on a SQLite file with questions waiting, against a floor.

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

from benchmarks.quick import sized

ROUNDS = sized(15, 1)
"""Measured rounds, each one floor, one `--help` and one `ask` to its first frame (1 in quick mode)."""

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

DURABLE_GOAL = 0.5
"""Goal, in seconds: `pending`, `answer` and `resolve` each done within half a second on SQLite."""

WAITING_WORKER = """
import sys
import anyio
from dbos import DBOS
from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.dbos import DBOSAnswerer, dbos_config

url, count = sys.argv[1], int(sys.argv[2])
DBOS(config=dbos_config(url, name='bench-cli', application_version='bench-cli-1'))
DBOS.launch()
answerer = DBOSAnswerer(url)

@DBOS.workflow()
async def ask(number: int) -> None:
    options = (QuestionOption(label='PostgreSQL', description='The server.'), QuestionOption(label='SQLite'))
    question = Question(header='Database', question=f'Which? ({number})', options=options)
    await answerer(AskUserRequest(questions=(question,)))

async def main() -> None:
    for number in range(count):
        await DBOS.start_workflow_async(ask, number)
    await anyio.sleep_forever()  # killed once the questions wait

anyio.run(main)
"""
"""A DBOS worker that starts COUNT workflows, each waiting on one question, and is then killed: the questions stay
waiting in the file, their workflows PENDING, as after a worker that went away."""


def _waiting_questions(url: str, count: int) -> list[str]:
    """Leave `count` questions waiting in the SQLite database `url`; their ids, oldest first."""
    worker = subprocess.Popen([sys.executable, '-c', WAITING_WORKER, url, str(count)], env=_env())
    try:
        deadline = time.monotonic() + 300
        while True:
            listed = subprocess.run(
                [ASK_USER, 'pending', '--json', '--limit', str(count), '--db', url],
                capture_output=True,
                text=True,
                env=_env(),
            )
            ids = _listed_ids(listed.stdout)
            if len(ids) >= count:
                return ids
            if time.monotonic() > deadline:
                raise TimeoutError(f'the worker left {len(ids)} of {count} questions waiting in 300 s')
            time.sleep(0.5)
    finally:
        worker.kill()
        worker.wait()


def _listed_ids(output: str) -> list[str]:
    """The ids of the questions `ask-user pending --json` printed: each line but the page's last, its total."""
    return [record['id'] for line in output.splitlines() if 'id' in (record := json.loads(line))]


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
    _durable_commands()


def _durable_commands() -> None:
    """`pending` with 3 questions waiting, `answer --json` of one of them (a real answer, sent to its workflow), and
    `resolve --json` (a decision checked against the database; its token has no wait: exit 7), round by round.
    """
    with tempfile.TemporaryDirectory() as folder:
        listed_url = f'sqlite:///{Path(folder) / "listed.sqlite"}'
        answered_url = f'sqlite:///{Path(folder) / "answered.sqlite"}'
        _waiting_questions(listed_url, 3)
        to_answer = _waiting_questions(answered_url, ROUNDS + 1)
        answer_file = Path(folder) / 'answer.json'
        answer_file.write_text('{"Database": ["SQLite"]}', encoding='utf-8')
        decision = Path(folder) / 'decision.json'
        decision.write_text('{"approvals": {"deploy-1": true}}', encoding='utf-8')
        floor_argv = [sys.executable, '-c', 'import pydantic']
        pending_argv = [ASK_USER, 'pending', '--db', listed_url]
        resolve_argv = [ASK_USER, 'resolve', 'dbos1.none.wf', '--db', listed_url, '--json', str(decision)]

        def answer_argv(request_id: str) -> list[str]:
            return [ASK_USER, 'answer', request_id, '--db', answered_url, '--json', str(answer_file)]

        _run(floor_argv), _run(pending_argv), _run(answer_argv(to_answer.pop())), _timed(resolve_argv, 7)
        floors: list[float] = []
        pendings: list[float] = []
        answers: list[float] = []
        resolves: list[float] = []
        for _ in range(ROUNDS):
            floors.append(_run(floor_argv))
            pendings.append(_run(pending_argv))
            answers.append(_run(answer_argv(to_answer.pop())))
            resolves.append(_timed(resolve_argv, 7))
    print(f"durable commands on SQLite (goal: each within {DURABLE_GOAL} s; floor as above, this round's):")
    for name, seconds in [
        ('ask-user pending, 3 questions waiting', pendings),
        ('ask-user answer --json, sent to its workflow', answers),
        ('ask-user resolve --json, checked (no wait: exit 7)', resolves),
    ]:
        median = statistics.median(seconds)
        verdict = 'meets' if median <= DURABLE_GOAL else 'misses'
        print(f'{_summary(name, _ratios(seconds, floors), seconds, None)}; {verdict} the {DURABLE_GOAL} s goal')


def _timed(argv: list[str], code: int) -> float:
    """Seconds `argv` takes, which must exit with `code`."""
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), check=False)
    if done.returncode != code:
        raise RuntimeError(f'{argv[1]} exited {done.returncode}, not {code}: {done.stderr!r}')
    return time.perf_counter() - started


def _ratios(measured: list[float], floors: list[float]) -> list[float]:
    return [value / floor for value, floor in zip(measured, floors, strict=True)]


if __name__ == '__main__':
    main()
