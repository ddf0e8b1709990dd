"""Every benchmark (`benchmarks/bench_*.py`) runs to its figures, in quick mode: one that crashes fails the suite.

Each runs as `make bench` runs it (`python -m benchmarks`), with `--quick`: tiny sizes, a few seconds each
(`benchmarks/quick.py`), with the real servers, workers and clients it starts itself (PostgreSQL, Temporal's dev
server, a pty, a client process). Only that it runs and prints its figures beside its goals is checked: the figures
of a round or two on a machine busy with the rest of the suite mean nothing. `make bench` is the full run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import waits
from ask_user_support import unmeasured

ROOT = Path(__file__).resolve().parent.parent
"""The repository, where `python -m benchmarks` finds them."""

BENCHMARKS = sorted(path.stem for path in (ROOT / 'benchmarks').glob('bench_*.py'))
"""Every benchmark module, as `python -m benchmarks` finds them."""

MARKS = {
    'bench_cli': [pytest.mark.pty, pytest.mark.postgres],
    'bench_durable': [pytest.mark.postgres],
    'bench_inbox': [pytest.mark.postgres],
    'bench_terminal': [pytest.mark.pty],
}
"""What each benchmark drives for real, as the tests' marks name it (each needs the extras too)."""

FIGURE = re.compile(r'\d[\d,.]* ?(ms|us/call|KB|MiB|answers/s|x)\b')
"""A figure as the benchmarks print them: a number and its unit."""

pytestmark = pytest.mark.extras


def test_the_benchmarks_are_all_found() -> None:
    assert {'bench_cli', 'bench_core', 'bench_durable', 'bench_temporal', 'bench_web'} <= set(BENCHMARKS)


@pytest.mark.parametrize('name', [pytest.param(name, marks=MARKS.get(name, [])) for name in BENCHMARKS])
def test_each_benchmark_runs_to_its_figures_in_quick_mode(name: str) -> None:
    # Not measured by coverage: the benchmarks are not what the suite tests, and tracing doubled their CPU.
    done = subprocess.run(
        [sys.executable, '-m', 'benchmarks', '--quick', name],
        cwd=ROOT,
        env=unmeasured(os.environ),
        capture_output=True,
        text=True,
        timeout=4 * waits.WAIT,
    )
    assert done.returncode == 0, f'{name} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}'
    assert done.stdout.startswith(f'== {name}\n'), done.stdout
    assert 'goal' in done.stdout, done.stdout
    assert FIGURE.search(done.stdout), done.stdout
    assert 'not installed' not in done.stdout, done.stdout
