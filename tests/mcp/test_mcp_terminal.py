"""`ask-user mcp` over stdio, answered in its controlling terminal: a real pty, while stdin and stdout carry MCP.

The server is started the way a host starts it (pipes for stdin and stdout), in a session of its own whose
controlling terminal is a pty this test reads with pyte and types into: the menu must appear there, and
the JSON-RPC stream on stdout must stay intact.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from terminal._pty_pair import PtyPair

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


@pytest.fixture
def pty() -> Iterator[PtyPair]:
    pair = PtyPair(columns=100, rows=30)
    yield pair
    pair.close()


def server(pty: PtyPair) -> StdioServerParameters:
    command = ['-c', LAUNCHER, pty.path, sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'mcp']
    return StdioServerParameters(command=sys.executable, args=command)


@pytest.mark.parametrize('mode', ['legacy', '2026-07-28'])
async def test_the_question_is_drawn_on_the_terminal_and_the_answer_goes_back_over_stdio(
    pty: PtyPair, mode: str
) -> None:
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
    await pty.wait_for(lambda pair: 'Environments ·' not in pair.text)


async def test_escape_declines_and_a_hostile_question_is_refused_before_anything_is_drawn(pty: PtyPair) -> None:
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
