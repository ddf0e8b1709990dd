"""Worker programs started by fork from a server that imported them once: `forked(command, ...)` for `Popen(command)`.

The durable and Temporal tests start, kill with -9 and restart worker programs (`dbos/worker.py`,
`dbos/request_input_worker.py`, `temporal/temporal_worker.py`), one to three times a test. A fresh
interpreter spent about 4 s of CPU on each start importing DBOS or Temporal and Pydantic AI, most of the
suite's CPU once. Here each test process has one fork server (`multiprocessing`'s `forkserver`, started on
first use) that imports the programs' modules once; a start forks it and runs the program as
`python SCRIPT ARGS...` would: as `__main__`, with `sys.argv`, in its directory, with the environment given,
its output where asked. What the programs do (DBOS's launch and recovery, a Temporal worker's start) happens
after the fork, as in a fresh interpreter. Each program is a process of its own, which a test kills with -9;
the server goes on, and ends with the test process.

Coverage: the fork server is not measured. When the tests measure coverage, each forked program measures
itself from its start and writes its data when it ends (one killed with -9 writes nothing, as before); what
the server imported before the fork (module-level lines) the test processes measure themselves.

This module is imported in the forked programs too (`run_forked`): it imports nothing of the tests.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.process
import os
import runpy
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""The tests' folder."""

FOLDERS = [TESTS / 'dbos', TESTS / 'temporal', TESTS]
"""Where the worker programs and the modules they import are (the fork server's `PYTHONPATH`)."""

PRELOADED = ['forked', 'worker', 'request_input_worker', 'temporal_worker', 'ask_user_program']
"""The modules the fork server imports once, so that the programs forked from it need not."""


Output = str | multiprocessing.connection.Connection
"""Where a forked program's output goes: a file (appended to), or the writing end of a pipe."""


def run_forked(
    script: str,
    argv: list[str],
    directory: str,
    environment: dict[str, str],
    out: Output,
    err: str,
    stdin: str | None = None,
) -> None:
    """In a process forked from the fork server: run `script` as `python script ARGV` would, in `directory`, with
    `environment`; its standard output to `out`, its standard error to the file `err`, its standard input from the
    file `stdin` (empty, `/dev/null`, without).
    """
    if stdin is not None:
        handle = os.open(stdin, os.O_RDONLY)
        os.dup2(handle, 0)
        os.close(handle)
        sys.stdin = open(0, encoding='utf-8', closefd=False)  # noqa: SIM115  (the process's, for its life)
    for target, where in ((1, out), (2, err)):
        if isinstance(where, str):
            handle = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(handle, target)
            os.close(handle)
        else:
            os.dup2(where.fileno(), target)
            where.close()
    os.chdir(directory)
    sys.path.insert(0, str(Path(script).parent))  # as `python SCRIPT` has it
    os.environ.clear()
    os.environ.update(environment)
    sys.argv = [script, *argv]
    measured = None
    if 'COVERAGE_PROCESS_CONFIG' in environment:
        import coverage

        measured = coverage.process_startup()
    try:
        runpy.run_path(script, run_name='__main__')
    finally:
        if measured is not None:
            measured.stop()
            measured.save()


def _fork_server() -> multiprocessing.context.ForkServerContext:
    """This test process's fork server, started on first use, with `PRELOADED` imported and unmeasured."""
    from multiprocessing import forkserver

    context = multiprocessing.get_context('forkserver')
    context.set_forkserver_preload(PRELOADED)
    # The server takes this process's environment as it is when the server starts: with the folders where it
    # finds the modules to import, and without coverage's request to measure it.
    saved = dict(os.environ)
    os.environ.pop('COVERAGE_PROCESS_CONFIG', None)
    os.environ['PYTHONPATH'] = os.pathsep.join([*map(str, FOLDERS), *filter(None, [saved.get('PYTHONPATH')])])
    try:
        forkserver.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return context


class Forked:
    """A program forked from the fork server, seen as the `subprocess.Popen` it stands for."""

    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code, `-signal` when a signal ended it (`-9` killed), `None` while it runs."""
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(str(self._process.name), timeout or 0)
        return code

    def send_signal(self, signal_number: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, signal_number)


def forked(
    command: Sequence[str],
    directory: Path,
    *,
    out: Output,
    err: Path,
    environment: dict[str, str] | None = None,
    stdin: Path | None = None,
) -> Forked:
    """`command`, `[sys.executable, SCRIPT, *ARGS]`, run forked from the fork server (see the module's docstring).

    Its standard output goes to `out` (a file or a pipe's writing end, which the caller closes on its side after
    this), its standard error to the file `err`, its standard input comes from the file `stdin` (else
    `/dev/null`); `environment` is this process's unless given.
    """
    executable, script, *argv = command
    assert executable == sys.executable, f'not a Python program: {command}'
    environ = dict(os.environ if environment is None else environment)
    arguments = (script, argv, str(directory), environ, out, str(err), None if stdin is None else str(stdin))
    process = _fork_server().Process(target=run_forked, args=arguments, daemon=True)
    process.start()
    return Forked(process)


ASK_USER_PROGRAM = TESTS / 'ask_user_program.py'
"""`ask-user` as a program the fork server has imported (`PRELOADED`)."""


def forked_cli(
    *args: str, stdin: str | None = None, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`ask-user ARGS` in a process of its own forked from the fork server, as `subprocess.run` would run it: its exit
    code, standard output and standard error (text), standard input `stdin` (else empty), this process's environment
    with `env` added. Killed after `timeout` s.

    For the tests where the command is how a person answers from another process (its own Temporal client or
    database connections, started and ended with it), not where the program itself is tested: a fresh interpreter
    (`cli_support.run_cli_process`) is what those run, its imports, its start and its end.
    """
    with tempfile.TemporaryDirectory(prefix='ask-user-cli-') as folder:
        files = Path(folder)
        if stdin is not None:
            (files / 'in').write_text(stdin, encoding='utf-8')
        process = forked(
            [sys.executable, str(ASK_USER_PROGRAM), *args],
            Path.cwd(),
            out=str(files / 'out'),
            err=files / 'err',
            environment=None if env is None else {**os.environ, **env},
            stdin=None if stdin is None else files / 'in',
        )
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            raise
        out, err = (
            (files / name).read_text(encoding='utf-8') if (files / name).exists() else '' for name in ('out', 'err')
        )
        return subprocess.CompletedProcess(['ask-user', *args], code, out, err)
