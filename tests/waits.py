"""How long a test waits for something that is going to happen: generous, and scaled to this machine's speed now.

A wait here is an upper bound on waiting for an event or for output, never a sleep: a test goes on
the moment what it waits for happens, so a long bound costs nothing when things go well and keeps a
loaded machine (CI on 2 shared cores, a CPU hog next door) from turning slowness into a failure.
The bound is scaled by how long a fresh Python takes to import `ask-user`'s command line right now,
measured once per test session: under load, that start-up is what slows every subprocess a test waits on.
"""

from __future__ import annotations

import subprocess
import sys
import time

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


def default_signals() -> None:
    """For `preexec_fn`: the child starts with the signal state a login shell gives it, whatever the test process has.

    A child inherits ignored signals and the blocked-signal mask across `exec`, and a program (bash, Python) keeps
    a signal that was ignored when it started ignored. The tests that send HUP, INT, TERM or TSTP to a child
    test how the child handles them, so it must not inherit what some other part of the test process (a library
    run in-process earlier in the session) left ignored or blocked.
    """
    import signal

    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGTSTP, signal.SIGCONT, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
