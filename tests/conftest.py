"""Where each kind of test lives: a folder per subpackage of `pydantic_ai_ask_user`, the core's tests at the root.

`tests/hub` (the in-process `QuestionHub` store), `tests/dbos`, `tests/temporal`, `tests/prefect` (each store and
answerer on its real engine and server, its command-line tests beside it), `tests/web` (pages, API, Chromium,
`ask-user ask --web`), `tests/terminal` (the menu in a real pty), `tests/mcp`, `tests/ui` (AG-UI and Vercel AI),
`tests/cli` (the command line itself: parsing, exit codes, pipes, start-up, `demo`); an approval test is with the
store or front end it drives. Helpers shared across folders are root modules: `waits` (every wait and poll),
`cli_support` (running `ask-user`), `ask_user_support` (scripted models, sample questions), `forked` (worker
programs); a folder's own are `<folder>_support` and the like. No two support modules share a name and nothing
imports from a conftest, so any set of folders runs in one session (tests/test_test_layout.py).
"""

from __future__ import annotations

import faulthandler
import io
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile('default', max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile('long', max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
# `make test-floor` runs the same properties against the lowest dependency versions, right after `make test` ran
# them with 300 examples each on the same code: it checks the floor versions behave alike, not a new search.
settings.register_profile('floor', max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'default'))


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


def _timeout(config: pytest.Config) -> float:
    """pytest-timeout's bound on a test in seconds (`--timeout`, or the configuration's), 0 if none."""
    try:
        return float(config.getoption('timeout', default=None) or config.getini('timeout') or 0)
    except ValueError:  # pytest-timeout is not installed
        return 0.0


def _backstop(bound: float) -> float:
    """How long a test may run in all before its process is ended: half as long again as pytest-timeout's bound."""
    return bound + max(60.0, bound / 2)


_STDERR = pytest.StashKey[TextIO]()
"""The test process's stderr as it was before pytest captured it: where the backstop writes the stacks."""


def pytest_configure(config: pytest.Config) -> None:
    capture = config.pluginmanager.getplugin('capturemanager')
    if capture is not None:
        capture.suspend_global_capture()
    try:
        try:
            stderr = sys.stderr.fileno()
        except (AttributeError, ValueError, io.UnsupportedOperation):
            stderr = 2  # a stand-in without a file descriptor
        config.stash[_STDERR] = open(os.dup(stderr), 'w')  # noqa: SIM115  (open for the session)
    finally:
        if capture is not None:
            capture.resume_global_capture()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    """A bound on each test (its fixtures' set-up and teardown included) that nothing in the test can undo.

    pytest-timeout's signal method raises its failure in whatever Python code runs when the alarm comes: code that
    catches BaseException swallows it (asyncio's callbacks log it; Temporal's SDK retries a workflow's eviction
    forever and held a worker, and CI, that way), and a call that never returns to Python never sees it. So past
    `_backstop()` of pytest-timeout's bound, a C thread of faulthandler's writes every thread's stack to stderr and
    ends the process with 1: under xdist the test is reported as crashing its worker, and a new worker goes on.
    """
    bound = _timeout(item.config)
    if bound:
        faulthandler.dump_traceback_later(_backstop(bound), exit=True, file=item.config.stash[_STDERR])
    started, times = time.time(), os.times()
    try:
        return (yield)
    finally:
        if bound:
            faulthandler.cancel_dump_traceback_later()
        if TIMELINE:
            _record(item, started, times)


TIMELINE = os.environ.get('ASK_USER_TEST_TIMELINE', '')
"""A directory where each test process writes a line per test: when it ran and the CPU it and its children took.

For `scripts/test_timeline.py`, which shows where a whole run's time goes: which worker ran what, when, and what
each file cost. Unset, nothing is written."""


def _record(item: pytest.Item, started: float, times: os.times_result) -> None:
    now = os.times()
    _write_line(
        {
            'test': item.nodeid,
            'start': started,
            'end': time.time(),
            'cpu': now.user + now.system - times.user - times.system,
            'children_cpu': now.children_user + now.children_system - times.children_user - times.children_system,
        }
    )


def _write_line(line: dict[str, object]) -> None:
    worker = os.environ.get('PYTEST_XDIST_WORKER', f'main-{os.getpid()}')
    with open(Path(TIMELINE, f'{worker}.jsonl'), 'a', encoding='utf-8') as out:
        out.write(json.dumps({'worker': worker, **line}) + '\n')


def _event(name: str) -> None:
    """A moment of the session in the timeline (its start, collection's end, its end), with the CPU so far."""
    if TIMELINE:
        times = os.times()
        _write_line({'event': name, 'at': time.time(), 'cpu': times.user + times.system})


def pytest_sessionstart() -> None:
    _event('session start')


def pytest_collection_finish() -> None:
    _event('collected')


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish() -> Iterator[None]:
    _event('session finish')  # the last test is done; the session's fixtures are torn down next
    try:
        return (yield)
    finally:
        _event('session finished')


def pytest_unconfigure() -> None:
    _event('unconfigure')


@pytest.hookimpl(optionalhook=True)  # xdist's: `make test-floor` runs without it
def pytest_testnodedown(node: Any) -> None:
    """Under xdist, in the main process: a worker is done (its coverage data is combined next)."""
    _event(f'{node.gateway.id} down')


DURATIONS = Path(__file__).with_name('durations.json')
"""Each test file's seconds in a whole run, written by `scripts/test_durations.py`."""

NEW_FILE_SECONDS = 10.0
"""What a file missing from `DURATIONS` counts as: a new file, most likely a short one."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist, the test files longest first, each file's tests together and in their order.

    `make test` hands whole files to its workers in this order (`--dist loadfile --no-loadscope-reorder`): the files
    that take minutes start at once, and the last ones handed out take seconds, so no worker goes on alone long after
    the others are done, as one did with a minutes-long file it was given last. Each file runs in one worker, where
    its module fixtures are made once. Every worker orders the same collection the same way, as xdist requires.
    Without xdist the order is left alone.
    """
    if 'PYTEST_XDIST_WORKER' not in os.environ or not DURATIONS.exists():
        return
    seconds: dict[str, float] = json.loads(DURATIONS.read_text(encoding='utf-8'))
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(item.nodeid.split('::', 1)[0], index)

    def longest_first(pair: tuple[int, pytest.Item]) -> tuple[float, int, int]:
        index, item = pair
        name = item.nodeid.split('::', 1)[0]
        return (-seconds.get(name, NEW_FILE_SECONDS), first_seen[name], index)

    items[:] = [item for _, item in sorted(enumerate(items), key=longest_first)]
