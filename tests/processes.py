"""The processes the tests start: worker programs (`WorkerProcess`) and applications served by uvicorn (`Served`).

A worker program is one the tests start, kill with SIGKILL, restart and wait for: one `WorkerProcess` for every engine.

A DBOS worker (tests/dbos/durable_support.py) or a Temporal worker (tests/temporal/temporal_testing.py) is forked
from the test process's fork server (`forked`), logs each start to a file of its own in its directory, and may
print to a pipe the test reads (`start(pipe=True)`, `stdout`).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Self, TextIO, TypeVar

import anyio
from anyio.abc import Process
from forked import Forked, forked
from waits import WAIT


@dataclass
class WorkerProcess:
    """A worker program run as a process of its own, which a test starts, kills with SIGKILL, restarts and waits for.

    Each start logs to `<name>-N.log` in `directory`; `log_text()` is what failures show. Used as a context
    manager (or through a fixture), the process is killed at the end if it still runs.
    """

    server: str
    """What the worker works against: DBOS's system database (a URL), a Temporal server (its address)."""

    directory: Path
    """Where the worker writes its files and logs, and its working directory."""

    process: Forked | None = field(default=None, kw_only=True)
    """The process of the latest start, or `None` before the first."""

    starts: int = field(default=0, kw_only=True)
    """How many times it was started."""

    logs: list[Path] = field(default_factory=list[Path], kw_only=True)
    """The log of every start, in order."""

    name: str = field(default='worker', kw_only=True)
    """Its logs' name: `<name>-1.log` for the first start."""

    environment: dict[str, str] | None = field(default=None, kw_only=True)
    """Its environment; the test process's when `None`."""

    stdout: TextIO | None = field(default=None, kw_only=True)
    """What the latest start prints, when started with `pipe=True` (else that goes to its log too)."""

    def command(self, *, resume: bool) -> list[str]:
        """The command line of a start; `resume` starts it to recover the runs of the worker it replaces."""
        raise NotImplementedError

    def start(self, *, resume: bool = False, pipe: bool = False) -> None:
        """Start the worker (again), logging to a file of this start's own; with `pipe`, its standard output is
        `stdout`, for the test to read."""
        self.starts += 1
        log = self.directory / f'{self.name}-{self.starts}.log'
        self.logs.append(log)
        log.write_bytes(b'')
        command = self.command(resume=resume)
        if not pipe:
            self.process = forked(command, self.directory, out=str(log), err=log, environment=self.environment)
            return
        reading, writing = multiprocessing.Pipe(duplex=False)
        self.process = forked(command, self.directory, out=writing, err=log, environment=self.environment)
        writing.close()
        with reading:
            self.stdout = open(os.dup(reading.fileno()), encoding='utf-8')  # noqa: SIM115  (closed by kill)

    def running(self) -> bool:
        """Whether the latest start is still running."""
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """Kill the worker with SIGKILL, as a crash would, and reap it."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=WAIT)
        if self.stdout is not None:
            self.stdout.close()

    def wait_ended(self, timeout: float = WAIT) -> int:
        """Wait for the worker to end on its own, and return its exit code."""
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f'the worker did not end:\n{self.log_text()}') from None

    def wait_crashed(self, timeout: float = WAIT) -> None:
        """Wait for the worker to kill itself at its crash point."""
        code = self.wait_ended(timeout)
        assert code == -signal.SIGKILL, f'the worker ended with {code}, not SIGKILL:\n{self.log_text()}'

    def wait_succeeded(self, timeout: float = WAIT) -> None:
        """Wait for the worker to finish its runs and exit with 0."""
        code = self.wait_ended(timeout)
        assert code == 0, f'the worker failed with exit code {code}:\n{self.log_text()}'

    def log_text(self) -> str:
        """The end of every start's log, for a failure to show."""
        return '\n'.join(log.read_text(errors='replace')[-3000:] for log in self.logs if log.exists())

    def lines(self, name: str) -> list[str]:
        """The lines of the file `name` the worker wrote in `directory`; none when it wrote no such file."""
        path = self.directory / name
        return path.read_text().splitlines() if path.exists() else []

    def stop(self) -> None:
        """Kill the worker if it still runs: the end of a test, whatever happened in it."""
        if self.running():
            self.kill()
        elif self.stdout is not None:
            self.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


P = TypeVar('P')
"""The kind of process that serves: `anyio`'s (`served`), or a `subprocess.Popen`."""


@dataclass
class Served(Generic[P]):
    """An application served by uvicorn in a process of its own: the process, its base URL (ending in `/`), and what
    it printed (when `served` read it)."""

    process: P
    base: str = ''
    output: list[str] = field(default_factory=list[str])

    @property
    def log(self) -> str:
        return '\n'.join(self.output)


@asynccontextmanager
async def served(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
) -> AsyncIterator[Served[Process]]:
    """Run `command` (which starts uvicorn on a free port) until it says where it listens; killed at the end."""
    process = await anyio.open_process(
        list(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    server = Served(process)
    started = anyio.Event()

    async def read() -> None:
        assert process.stdout is not None
        buffered = ''
        async for chunk in process.stdout:
            buffered += chunk.decode(errors='replace')
            *lines, buffered = buffered.split('\n')
            server.output.extend(lines)
            for line in lines:
                if found := re.search(r'Uvicorn running on (http://127\.0\.0\.1:\d+)', line):
                    server.base = found.group(1) + '/'
                    started.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        try:
            with anyio.fail_after(WAIT):
                await started.wait()
            yield server
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
            group.cancel_scope.cancel()
