"""Quick mode: every benchmark with tiny sizes, so that `make test` runs each one (`tests/test_benchmarks.py`).

`python -m benchmarks --quick` sets `QUICK_VARIABLE` before it imports the benchmarks, and the processes they start
inherit it. The figures a quick run prints mean nothing (a round or two, under the suite's load); what it proves is
that every benchmark still runs to its figures: its servers start, its workers and clients talk, its sums add up.
`make bench` is the full run.
"""

from __future__ import annotations

import os
from typing import TypeVar

QUICK_VARIABLE = 'ASK_USER_BENCH_QUICK'
"""The environment variable that asks for quick mode (any value but empty)."""

T = TypeVar('T')


def is_quick() -> bool:
    """Whether this process runs the benchmarks in quick mode (read when asked: `--quick` sets it after import)."""
    return bool(os.environ.get(QUICK_VARIABLE))


def sized(full: T, quick: T) -> T:
    """`full` for a measurement (`make bench`), `quick` in quick mode."""
    return quick if is_quick() else full
