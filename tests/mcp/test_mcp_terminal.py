"""`ask-user mcp` over stdio, answered in its controlling terminal: a real pty, while stdin and stdout carry MCP.

The server is started the way a host starts it (pipes for stdin and stdout), in a session of its own whose
controlling terminal is a pty this test reads with pyte and types into: the menu must appear there, and
the JSON-RPC stream on stdout must stay intact.
"""

from __future__ import annotations

import fcntl
import json
import os
import struct
import sys
import termios
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pyte
import pytest
import waits
from mcp import Client, StdioServerParameters

from pydantic_ai_ask_user import TOOL_NAME

pytestmark = [pytest.mark.anyio, pytest.mark.pty]

LAUNCHER = (
    'import os, sys\n'
    'try:\n'
    '    os.setsid()\n'
    'except PermissionError:\n'  # already a process group leader: a child can start the session
    '    child = os.fork()\n'
    '    if child:\n'
    '        os._exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) & 0xFF)\n'
    '    os.setsid()\n'
    # The first terminal a session leader opens becomes its controlling terminal: /dev/tty from now on.
    'os.close(os.open(sys.argv[1], os.O_RDWR))\n'
    'os.execv(sys.argv[2], sys.argv[2:])\n'
)

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite', 'description': 'A local file.'}],
        },
        {
            'header': 'Environments',
            'question': 'Where to deploy?',
            'options': [{'label': 'staging'}, {'label': 'production'}],
            'multi_select': True,
        },
    ]
}


class Pty:
    def __init__(self, columns: int = 100, rows: int = 30) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack('HHHH', rows, columns, 0, 0))
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.screen.write_process_input = lambda data: os.write(self.master, data.encode())  # type: ignore[method-assign]

    @property
    def text(self) -> str:
        return '\n'.join(line.rstrip() for line in self.screen.display)

    def pump(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.stream.feed(data)

    async def wait_for(self, condition: Callable[[str], bool] | str) -> None:
        check = (lambda text: condition in text) if isinstance(condition, str) else condition
        end = time.monotonic() + waits.WAIT
        while time.monotonic() < end:
            self.pump()
            if check(self.text):
                return
            await anyio.sleep(0.02)
        raise AssertionError(f'timed out waiting for {condition!r}; the screen shows:\n{self.text}')

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def pty() -> Iterator[Pty]:
    pair = Pty()
    yield pair
    pair.close()


def server(pty: Pty) -> StdioServerParameters:
    command = ['-c', LAUNCHER, pty.path, sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'mcp']
    return StdioServerParameters(command=sys.executable, args=command)


@pytest.mark.parametrize('mode', ['legacy', '2026-07-28'])
async def test_the_question_is_drawn_on_the_terminal_and_the_answer_goes_back_over_stdio(pty: Pty, mode: str) -> None:
    results: list[Any] = []
    async with Client(server(pty), mode=mode) as client, anyio.create_task_group() as group:

        async def call() -> None:
            results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

        group.start_soon(call)
        await pty.wait_for('1/2 Database ·')
        assert 'A local file.' in pty.text
        pty.send('2\r')
        await pty.wait_for('2/2 Environments ·')
        pty.send('12\r')
    assert not results[0].is_error
    assert json.loads(results[0].content[0].text) == {'Database': ['SQLite'], 'Environments': ['staging', 'production']}
    await pty.wait_for(lambda text: 'Environments ·' not in text)


async def test_escape_declines_and_a_hostile_question_is_refused_before_anything_is_drawn(pty: Pty) -> None:
    hostile = json.loads(json.dumps(QUESTIONS))
    hostile['questions'][0]['question'] = 'Which\x1b]0;pwned\x07 database?'
    results: list[Any] = []
    async with Client(server(pty)) as client, anyio.create_task_group() as group:
        refused = await client.call_tool(TOOL_NAME, hostile)

        async def call() -> None:
            results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

        group.start_soon(call)
        await pty.wait_for('1/2 Database ·')
        pty.send('\x1b')
    assert refused.is_error
    assert 'questions.0.question' in refused.content[0].text  # type: ignore[union-attr]
    assert 'pwned' not in pty.text
    assert results[0].content[0].text.startswith('The user declined to answer.')
