"""How long a test waits for something that is going to happen: generous, and scaled to this machine's speed now.

A wait here is an upper bound on waiting for an event or for output, never a sleep: a test goes on
the moment what it waits for happens, so a long bound costs nothing when things go well and keeps a
loaded machine (CI on 2 shared cores, a CPU hog next door) from turning slowness into a failure.
Every test polls through `wait_for` (in a thread) or `wait_until` (async) here, and reads a child's output
with `read_line` and `line_matching`.
The bound is scaled by how long a fresh Python takes to import `ask-user`'s command line right now,
measured once per test session: under load, that start-up is what slows every subprocess a test waits on.
"""

from __future__ import annotations

import inspect
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, AnyStr

import anyio

_IDLE_STARTUP_SECONDS = 1.5
"""What importing the command line takes on an idle 2-core machine (about 1.4 s); the scale's unit."""


def _startup_seconds() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, '-c', 'import pydantic_ai_ask_user._cli, pydantic_ai'], check=False, timeout=600)
    return time.monotonic() - started


STARTUP_SECONDS = _startup_seconds()
"""How long a fresh interpreter took to import the command line when the tests started."""

SLOWDOWN = max(1.0, STARTUP_SECONDS / _IDLE_STARTUP_SECONDS)
"""How much slower than idle this machine is now (1 when idle)."""


def scaled(seconds: float) -> float:
    """`seconds` of waiting on an idle machine, made longer in proportion to the present slowdown."""
    return seconds * SLOWDOWN


WAIT = scaled(90.0)
"""The default bound on waiting for an event or for output."""


LAUNCHER = str(Path(__file__).with_name('launch.py'))
"""The script `launched` starts a command through (see its docstring)."""


def launched(*command: str, file_limit: int | None = None) -> list[str]:
    """`command`, started through `launch.py`: with the signal state a login shell gives it (and `file_limit` files).

    Use it instead of a `preexec_fn`. A child inherits ignored signals and the blocked-signal mask across `exec`,
    and a program (bash, Python) keeps a signal that was ignored when it started ignored: the tests that send HUP,
    INT, TERM or TSTP to a child test how the child handles them, so it must not inherit what some other part of
    the test process (a library run in-process earlier in the session) left ignored or blocked. A `preexec_fn`
    would run Python in the forked child of a test process that has threads (execnet's, Prefect's and Temporal's
    clients, DBOS): a lock some other thread held at the fork is never released there, the child hangs before
    `exec`, and `Popen()` waits for it forever. `launch.py` does the same work in a fresh interpreter, then `exec`s.
    """
    limit = [f'--file-limit={file_limit}'] if file_limit is not None else []
    return [sys.executable, '-S', LAUNCHER, *limit, '--', *command]


def read_line(stream: IO[AnyStr], what: str, timeout: float | None = None) -> AnyStr:
    """The next line a child writes to `stream` (its pipe), within `timeout` (`WAIT`); fails saying `what` never came.

    `stream.readline()` alone waits as long as the child lives without writing a line: forever, for a child that
    hangs. The read runs in a daemon thread, which ends at the latest when the test kills the child; `''` (or
    `b''`) means the child closed the pipe, exited most likely, without writing the line.
    """
    bound = WAIT if timeout is None else timeout
    lines: queue.Queue[AnyStr] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), name=f'read_line: {what}', daemon=True).start()
    try:
        return lines.get(timeout=bound)
    except queue.Empty:
        raise AssertionError(f'{what} did not come within {bound:.0f} s') from None


def line_matching(stream: IO[str], pattern: str, what: str, timeout: float | None = None) -> re.Match[str]:
    """The match of `pattern` in the first line that has one, of those a child writes to `stream`, within `timeout`.

    Fails saying `what` did not come, with the lines that came instead, if the child closes `stream` first (exits,
    most likely) or the time (`WAIT` by default) runs out.
    """
    bound = WAIT if timeout is None else timeout
    deadline = time.monotonic() + bound
    seen: list[str] = []
    try:
        while line := read_line(stream, what, max(0.0, deadline - time.monotonic())):
            if found := re.search(pattern, line):
                return found
            seen.append(line)
    except AssertionError as error:
        raise AssertionError(f'{error}; the lines before: {seen}') from None
    raise AssertionError(f'the stream closed without {what}; the lines before: {seen}')


def wait_for(condition: Callable[[], Any], what: str, timeout: float | None = None) -> Any:
    """Poll `condition` until it returns something truthy, and return it; fail saying `what` after `timeout` (`WAIT`).

    For a test that waits in its own thread; in async code, `wait_until`.
    """
    bound = WAIT if timeout is None else timeout
    deadline = time.monotonic() + bound
    delay = 0.02
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {bound:.0f}s waiting for {what}')
        time.sleep(delay)  # the poll's pace, not a wait for time to pass
        delay = min(delay * 1.5, 0.25)


async def wait_until(condition: Callable[[], Any], what: str, timeout: float | None = None) -> Any:
    """Poll `condition` (a function, or an async one) until it returns something truthy, and return it; fail saying
    `what` after `timeout` seconds (`WAIT`). The event loop runs between looks.
    """
    bound = WAIT if timeout is None else timeout
    deadline = time.monotonic() + bound
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {bound:.0f}s waiting for {what}')
        await anyio.sleep(0.02)  # the poll's pace, not a wait for time to pass
