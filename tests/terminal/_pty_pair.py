"""A real pseudo-terminal pair in this process: the answerer draws on the slave end, the test types at the master."""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import time
from collections.abc import Callable

import anyio
import pyte
import waits

TIMEOUT = waits.WAIT


class PtyPair:
    """The slave end is a terminal device the `TerminalAnswerer` opens by path; the master end feeds a pyte screen."""

    def __init__(self, columns: int = 80, rows: int = 24) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack('HHHH', rows, columns, 0, 0))
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.screen.write_process_input = self._reply  # type: ignore[method-assign]
        self.raw = bytearray()
        """Every byte drawn so far, as written (escape sequences included)."""

    def _reply(self, data: str) -> None:
        os.write(self.master, data.encode())

    def pump(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.raw.extend(data)
            self.stream.feed(data)

    @property
    def text(self) -> str:
        return '\n'.join(line.rstrip() for line in self.screen.display)

    async def wait_for(self, condition: Callable[[PtyPair], bool] | str, timeout: float = TIMEOUT) -> None:
        check = (lambda pair: condition in pair.text) if isinstance(condition, str) else condition
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.pump()
            if check(self):
                return
            await anyio.sleep(0.01)
        raise AssertionError(f'timed out waiting for {condition!r}; the screen shows:\n{self.text}')

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)
