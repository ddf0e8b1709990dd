"""TerminalAnswerer in a real pty: time from the call to the first frame, and from a keystroke to the redraw."""

from __future__ import annotations

import asyncio
import fcntl
import os
import statistics
import struct
import termios
import time

import pyte

from benchmarks.quick import sized
from pydantic_ai_ask_user import AskUserRequest, Question, QuestionOption
from pydantic_ai_ask_user.terminal import TerminalAnswerer

ROUNDS = sized(20, 2)
"""Requests asked, each giving one first-frame figure (2 in quick mode)."""

KEYS_PER_ROUND = sized(5, 2)
"""Down-arrow presses per request, each giving one redraw figure (2 in quick mode)."""


class _Person:
    """The master end of the pty, fed into a pyte screen; `wait_for` resolves when the screen shows a text."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
        os.set_blocking(self.master, False)
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.ByteStream(self.screen)
        self.screen.write_process_input = lambda data: os.write(self.master, data.encode())  # type: ignore[method-assign]
        self.changed = asyncio.Event()
        asyncio.get_running_loop().add_reader(self.master, self._read)

    def _read(self) -> None:
        try:
            self.stream.feed(os.read(self.master, 65536))
        except BlockingIOError:
            return
        self.changed.set()

    async def wait_for(self, text: str) -> None:
        while not any(text in line for line in self.screen.display):
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 10)

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)
        os.close(self.master)
        os.close(self.slave)


def _request(round_number: int) -> AskUserRequest:
    options = tuple(QuestionOption(label=f'Option {n}', description=f'What option {n} means.') for n in range(1, 7))
    return AskUserRequest(questions=(Question(header=f'Round {round_number}', question='Which one?', options=options),))


async def _measure() -> tuple[list[float], list[float]]:
    person = _Person()
    answerer = TerminalAnswerer(tty=os.ttyname(person.slave))
    first_frames: list[float] = []
    redraws: list[float] = []
    try:
        for round_number in range(ROUNDS):
            started = time.perf_counter()
            task = asyncio.ensure_future(answerer(_request(round_number)))
            await person.wait_for(f'1/1 Round {round_number}')
            first_frames.append(time.perf_counter() - started)
            for key in range(2, KEYS_PER_ROUND + 2):
                started = time.perf_counter()
                os.write(person.master, b'\x1b[B')
                await person.wait_for(f'❯ {key}. Option {key}')
                redraws.append(time.perf_counter() - started)
            os.write(person.master, b'\r')
            await task
    finally:
        answerer.close()
        person.close()
    return first_frames, redraws


def _figures(name: str, seconds: list[float], goal_ms: float) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    verdict = 'meets' if statistics.median(ms) <= goal_ms else 'misses'
    return (
        f'{name}: median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms '
        f'over {len(ms)} ({verdict} the {goal_ms:.0f} ms goal)'
    )


def main() -> None:
    first_frames, redraws = asyncio.run(_measure())
    print(_figures('call to first frame', first_frames, 50))
    print(_figures('keystroke to redraw', redraws, 16))


if __name__ == '__main__':
    main()
