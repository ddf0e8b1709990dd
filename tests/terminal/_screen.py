"""A real process in a real pseudo-terminal, and the screen it draws, as a person would see it (pexpect + pyte)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte
import waits

ROOT = Path(__file__).resolve().parents[2]
ASK_USER = str(Path(sys.executable).with_name('ask-user'))
TIMEOUT = waits.WAIT

UP, DOWN, LEFT, RIGHT, SHIFT_TAB, ESC = '\x1b[A', '\x1b[B', '\x1b[D', '\x1b[C', '\x1b[Z', '\x1b'


def paste(text: str) -> str:
    """What a terminal sends when `text` is pasted with bracketed paste on."""
    return f'\x1b[200~{text}\x1b[201~'


class Screen:
    """A process in a pty of `columns` x `rows`, its output fed to a pyte screen that answers cursor queries."""

    def __init__(self, script: str, *, columns: int = 80, rows: int = 24, cwd: Path | None = None) -> None:
        env = {**os.environ, 'TERM': 'xterm-256color', 'PATH': f'{Path(sys.executable).parent}:{os.environ["PATH"]}'}
        # The pty's size is the terminal's: a COLUMNS or LINES left in this process (by a library, or a test
        # that ran before in the same worker) would override it in the child and wrap its lines elsewhere.
        for name in ('COLUMNS', 'LINES'):
            env.pop(name, None)
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        executable, *args = waits.launched('bash', '-c', script)
        self.child = pexpect.spawn(executable, args, dimensions=(rows, columns), env=env, cwd=str(cwd or ROOT))
        self.screen.write_process_input = self._reply  # type: ignore[method-assign]
        self.raw = b''

    def _reply(self, data: str) -> None:
        if self.child.isalive():
            self.child.send(data)

    def pump(self) -> None:
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.02)
            except (pexpect.TIMEOUT, pexpect.EOF):
                return
            self.raw += data
            self.stream.feed(data)

    @property
    def text(self) -> str:
        return '\n'.join(line.rstrip() for line in self.screen.display)

    def wait_for(self, condition: Callable[[Screen], bool] | str, timeout: float = TIMEOUT) -> None:
        check = (lambda screen: condition in screen.text) if isinstance(condition, str) else condition
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.pump()
            if check(self):
                return
        raise AssertionError(f'timed out waiting for {condition!r}; the screen shows:\n{self.text}')

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self, timeout: float = TIMEOUT) -> int:
        end = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < end:
            self.pump()
        self.pump()
        self.child.close()
        assert self.child.exitstatus is not None, self.text
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
