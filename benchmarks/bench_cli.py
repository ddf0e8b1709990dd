"""`ask-user` start-up: the first frame of `ask-user ask` in a real pty, `ask-user --help`, and the durable commands
`pending`, `pending --json`, `answer` and `resolve` on a SQLite file and on a local PostgreSQL server, with one
question waiting and with 100,000, against a floor; each figure is printed beside its floor and its goal.

The floor is `python -c "import pydantic"` in the same run. Each round runs the floor, `--help` and `ask`
one after another in fresh interpreters, so a load that comes and goes affects all three alike; the figure
is the median of the per-round ratios, with their min and max. Bytecode is cached as users have it (an
installed package has its `.pyc` files): one warm-up round writes them, and `PYTHONDONTWRITEBYTECODE` is
unset for the measured processes.
"""

from __future__ import annotations

import json
import os
import shutil
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

SQLITE_GOAL = 2.5
"""Goal: `pending`, `answer` and `resolve` on a SQLite file each within 2.5x the floor."""

POSTGRES_GOAL = 3.0
"""Goal: `pending`, `answer` and `resolve` on a local PostgreSQL server each within 3x the floor."""

MANY = sized(100_000, 30)
"""The second number of questions waiting for the durable commands, beside one (30 in quick mode)."""

COUNTS = sized((1, MANY), (MANY,))
"""The numbers of questions waiting the durable commands are timed with: one and `MANY`; in quick mode only `MANY`
(which runs every path the single one does: quick mode is there to show that nothing crashes)."""


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


MENU_LIBRARIES = 'import pydantic_core, prompt_toolkit.application, anyio._backends._asyncio, wcwidth'
"""Where the time goes, 2: only the libraries the menu draws with (prompt_toolkit, asyncio under anyio, wcwidth) and
pydantic-core, which checks the file: the least a first frame drawn by prompt_toolkit costs, none of this package."""

MODELS_AND_MENU = 'import pydantic_ai_ask_user._answers, pydantic_ai_ask_user._asking, pydantic_ai_ask_user.terminal'
"""Where the time goes, 3: the question models and the terminal menu imported, nothing drawn."""


def main() -> None:
    floor_argv = [sys.executable, '-c', 'import pydantic']
    help_argv = [ASK_USER, '--help']
    model_argv = [sys.executable, '-c', BASE_MODEL]
    libraries_argv = [sys.executable, '-c', MENU_LIBRARIES]
    imports_argv = [sys.executable, '-c', MODELS_AND_MENU]
    with tempfile.TemporaryDirectory() as folder:
        questions = Path(folder) / 'questions.json'
        questions.write_text(json.dumps(QUESTIONS), encoding='utf-8')
        # Warm-up: writes the bytecode caches, as installing the package does.
        _run(floor_argv), _run(help_argv), _run(model_argv), _run(libraries_argv), _run(imports_argv)
        _first_frame(questions)
        floors: list[float] = []
        helps: list[float] = []
        frames: list[float] = []
        models: list[float] = []
        libraries: list[float] = []
        imports: list[float] = []
        for _ in range(ROUNDS):
            floors.append(_run(floor_argv))
            helps.append(_run(help_argv))
            frames.append(_first_frame(questions))
            models.append(_run(model_argv))
            libraries.append(_run(libraries_argv))
            imports.append(_run(imports_argv))
    print(f'floor, python -c "import pydantic": median {statistics.median(floors) * 1000:.0f} ms over {ROUNDS} rounds')
    print('bytecode cached, as installed; each round interleaves the floor and every figure')
    print(_summary('ask-user --help', _ratios(helps, floors), helps, HELP_GOAL))
    print(_summary('ask-user ask, start to first frame in a pty', _ratios(frames, floors), frames, FIRST_FRAME_GOAL))
    print('where the first frame goes (no goal):')
    print(_summary('  a fresh interpreter defining one pydantic model', _ratios(models, floors), models, None))
    menu_only = "  only the menu's libraries imported (no pydantic model)"
    print(_summary(menu_only, _ratios(libraries, floors), libraries, None))
    print(_summary('  the question models and the terminal menu imported', _ratios(imports, floors), imports, None))
    _durable_commands()


def _durable_commands() -> None:
    """`pending`, `pending --json`, `answer --json` and `resolve --json` on SQLite and on PostgreSQL, with one question
    waiting and with `MANY` waiting, each round beside the floor: see `_durable_backend`.
    """
    with tempfile.TemporaryDirectory() as folder:
        for count in COUNTS:
            _durable_backend('SQLite', f'sqlite:///{Path(folder) / f"waiting-{count}.sqlite"}', count, SQLITE_GOAL)
    from benchmarks.bench_durable import _start_postgres  # pyright: ignore[reportPrivateUsage]

    root = Path(tempfile.mkdtemp(prefix='ask-user-bench-cli-pg-'))
    started = _start_postgres(root)
    if started is None:
        print('PostgreSQL: not installed (scripts/bootstrap.sh test installs it); its goals are not measured')
        return
    url, stop = started
    try:
        import psycopg

        server = url.rsplit('/', 1)[0]
        for count in COUNTS:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE waiting_{count}')  # pyright: ignore[reportArgumentType]
            _durable_backend('PostgreSQL', f'{server}/waiting_{count}', count, POSTGRES_GOAL)
    finally:
        subprocess.run(stop, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def _durable_backend(name: str, url: str, count: int, goal: float) -> None:
    """One database with `count` questions waiting (each of its own `PENDING` DBOS workflow, inserted as the store
    writes them), then round by round: the floor, `pending`, `pending --json`, `answer --json` of one more question
    (inserted before the round, so that `count` still wait beside it; recorded and sent to its workflow) and
    `resolve --json` of a token no run waits on (its decision read and checked against the database: exit 7).
    """
    from benchmarks.bench_inbox import _make_schema  # pyright: ignore[reportPrivateUsage]

    _make_schema(url)
    _seed(url, range(count))
    with tempfile.TemporaryDirectory() as folder:
        answer_file = Path(folder) / 'answer.json'
        answer_file.write_text('{"Database": ["SQLite"]}', encoding='utf-8')
        decision = Path(folder) / 'decision.json'
        decision.write_text('{"approvals": {"deploy-1": true}}', encoding='utf-8')
        floor_argv = [sys.executable, '-c', 'import pydantic']
        pending_argv = [ASK_USER, 'pending', '--db', url]
        json_argv = [*pending_argv, '--json']
        resolve_argv = [ASK_USER, 'resolve', 'dbos1.none.wf', '--db', url, '--json', str(decision)]
        extra = iter(range(count, count + ROUNDS + 1))

        def answer_argv() -> list[str]:
            number = next(extra)
            _seed(url, range(number, number + 1))
            return [ASK_USER, 'answer', f'call_{number}', '--db', url, '--json', str(answer_file)]

        listed = subprocess.run(json_argv, capture_output=True, text=True, env=_env(), check=True)
        total = json.loads(listed.stdout.splitlines()[-1])['total']
        if total != count:
            raise RuntimeError(f'{count} questions were seeded, pending counts {total}')
        # Warm-up: bytecode cached, the database's pages in the OS's cache.
        _run(floor_argv), _run(pending_argv), _run(json_argv), _run(answer_argv()), _timed(resolve_argv, 7)
        figures: dict[str, list[float]] = {'floor': [], 'pending': [], 'json': [], 'answer': [], 'resolve': []}
        for _ in range(ROUNDS):
            argv = answer_argv()
            figures['floor'].append(_run(floor_argv))
            figures['pending'].append(_run(pending_argv))
            figures['json'].append(_run(json_argv))
            figures['answer'].append(_run(argv))
            figures['resolve'].append(_timed(resolve_argv, 7))
    floors = figures['floor']
    print(
        f'durable commands on {name}, {count:,} waiting (goal: each <= {goal}x the floor, '
        f'python -c "import pydantic", this run\'s: median {statistics.median(floors) * 1000:.0f} ms):'
    )
    for key, what in [
        ('pending', 'ask-user pending'),
        ('json', 'ask-user pending --json'),
        ('answer', 'ask-user answer --json, sent to its workflow'),
        ('resolve', 'ask-user resolve --json, checked (no wait: exit 7)'),
    ]:
        print(_summary(f'  {what}', _ratios(figures[key], floors), figures[key], goal))


def _seed(url: str, numbers: range) -> None:
    """Questions `call_N` for `numbers`, each waiting in a `PENDING` workflow `wf-N` of its own, as the store writes
    them (`_inbox`'s columns, and the addressees beside those addressed to someone: none here).
    """
    import sqlalchemy as sa

    from pydantic_ai_ask_user.dbos._engine import create_engine, ensure_table
    from pydantic_ai_ask_user.dbos._tables import requests_table

    engine = create_engine(url)
    try:
        ensure_table(engine)
        workflows = 'dbos.workflow_status' if engine.dialect.name == 'postgresql' else 'workflow_status'
        now = time.time()
        with engine.begin() as conn:
            for start in range(numbers.start, numbers.stop, 5000):
                batch = range(start, min(numbers.stop, start + 5000))
                conn.execute(
                    sa.text(f"INSERT INTO {workflows} (workflow_uuid, status) VALUES (:w, 'PENDING')"),
                    [{'w': f'wf-{n}'} for n in batch],
                )
                rows = [
                    {
                        'id': f'call_{n}',  # a request of no run: its key is its tool call id
                        'workflow_id': f'wf-{n}',
                        'questions': json.dumps(QUESTIONS),
                        'status': 'pending',
                        'created_at': now - 1e6 + n,
                        'updated_at': now - 1e6 + n,
                        'run_id': None,
                        'tool_call_id': f'call_{n}',
                        'due_at': 1e12,
                    }
                    for n in batch
                ]
                conn.execute(sa.insert(requests_table), rows)
        if engine.dialect.name == 'postgresql' and len(numbers) > 1:
            with engine.connect().execution_options(isolation_level='AUTOCOMMIT') as conn:
                conn.execute(sa.text('VACUUM ANALYZE'))
    finally:
        engine.dispose()


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
