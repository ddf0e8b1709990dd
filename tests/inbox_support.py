"""`ask-user inbox` for the tests: served in a process of its own until it says it serves, stopped with SIGTERM, and
`ask-user inbox link` run beside it; each in an environment whose config directory is the test's own.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc
from cli_support import COMMAND
from waits import WAIT

READY = 'press Ctrl-C to stop'
"""The last line `ask-user inbox` prints once it serves."""


def _environment(tmp_path: Path) -> dict[str, str]:
    """The commands' environment: a config directory of the test's own, so no key file lands in the real one."""
    return {**os.environ, 'XDG_CONFIG_HOME': str(tmp_path / 'config'), 'COLUMNS': '100'}


@dataclass
class Inbox:
    """`ask-user inbox` serving in a process of its own: where, and what it printed."""

    process: anyio.abc.Process
    lines: list[str] = field(default_factory=list[str])

    def said(self, start: str) -> str:
        """What follows `start` on the line of its output that holds it."""
        [line] = [line for line in self.lines if start in line]
        return line.split(start, 1)[1].strip()

    @property
    def base(self) -> str:
        return self.said('team inbox of ').split(' is at ', 1)[1].strip()

    @property
    def admin_link(self) -> str:
        return self.said('within a day): ')


@asynccontextmanager
async def inbox(tmp_path: Path, *args: str, command: Sequence[str] = COMMAND) -> AsyncIterator[Inbox]:
    """`ask-user inbox ARGS --port 0` until it says it serves; stopped with SIGTERM after, which it must take calmly.

    `command` is the `ask-user` to run: this interpreter's by default, or an installed script.
    """
    process = await anyio.open_process(
        [*command, 'inbox', *args, '--port', '0'], stderr=subprocess.PIPE, env=_environment(tmp_path)
    )
    served = Inbox(process)
    ready = anyio.Event()

    async def read() -> None:
        assert process.stderr is not None
        buffered = ''
        async for chunk in process.stderr:
            buffered += chunk.decode(errors='replace')
            *lines, buffered = buffered.split('\n')
            served.lines.extend(lines)
            if any(READY in line for line in lines):
                ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        try:
            with anyio.fail_after(WAIT):
                while not ready.is_set():
                    assert process.returncode is None, '\n'.join(served.lines)
                    with anyio.move_on_after(0.2):
                        await ready.wait()
            yield served
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(WAIT):
                assert await process.wait() == 0, '\n'.join(served.lines)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            group.cancel_scope.cancel()
    assert 'ask-user: stopped' in served.lines, served.lines


def ask_user(tmp_path: Path, *args: str, command: Sequence[str] = COMMAND) -> subprocess.CompletedProcess[str]:
    """`ask-user ARGS` in the test's environment, its output as text."""
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=WAIT, env=_environment(tmp_path), check=False
    )


def link(tmp_path: Path, *args: str, command: Sequence[str] = COMMAND) -> str:
    """The sign-in link `ask-user inbox link ARGS` prints."""
    done = ask_user(tmp_path, 'inbox', 'link', *args, command=command)
    assert done.returncode == 0, done.stderr
    [printed] = done.stdout.splitlines()
    return printed
