"""`ask-user ... | head`: a reader that closes stdout early ends the command quietly, with 141, as Unix tools do.

Real pipes, real processes: one whose reader goes away mid-output (`demo`, which prints as the run goes), and one
whose reader is gone before the command writes at all (`--help`, `--version`). Buffered and unbuffered stdout both,
as a user's shell has it and as `PYTHONUNBUFFERED=1` has it. The durable commands are checked against a real
database in tests/dbos/test_store_and_cli.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import waits
from cli_support import COMMAND

from pydantic_ai_ask_user._cli.exit_codes import EXIT_BROKEN_PIPE

BUFFERING = [pytest.param('', id='buffered'), pytest.param('1', id='unbuffered')]


def _env(unbuffered: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != 'PYTHONUNBUFFERED'}
    return {**env, 'PYTHONUNBUFFERED': unbuffered} if unbuffered else env


def run_into_a_closed_pipe(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `ask-user ARGS` with stdout a pipe whose reading end is already closed: every write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*COMMAND, *args],
            stdout=write,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=waits.WAIT,
            env=env,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize('unbuffered', BUFFERING)
def test_demo_piped_into_head_exits_141_without_a_word(unbuffered: str) -> None:
    # `ask-user demo | head -1`: the reader takes one line and goes; the demo goes on printing as its run goes on.
    process = subprocess.Popen(
        [*COMMAND, 'demo', '--scripted'],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**_env(unbuffered), 'COLUMNS': '80'},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    first = waits.read_line(process.stdout, 'the first line of the demo')
    process.stdout.close()
    code = process.wait(timeout=waits.WAIT)
    err = process.stderr.read().decode()
    process.stderr.close()
    assert first.startswith(b'ask-user demo: ')
    assert (code, err) == (EXIT_BROKEN_PIPE, '')


@pytest.mark.parametrize('unbuffered', BUFFERING)
@pytest.mark.parametrize(
    'args',
    [
        pytest.param(['--help'], id='help'),
        pytest.param(['pending', '--help'], id='pending-help'),
        pytest.param(['--version'], id='version'),
        pytest.param(['ask', '--help'], id='ask-help'),
    ],
)
def test_output_into_a_pipe_nobody_reads_exits_141_without_a_word(args: list[str], unbuffered: str) -> None:
    done = run_into_a_closed_pipe(args, _env(unbuffered))
    assert (done.returncode, done.stderr) == (EXIT_BROKEN_PIPE, '')


def test_a_broken_pipe_inside_a_task_group_is_the_same_quiet_exit() -> None:
    from pydantic_ai_ask_user._cli import _broken_pipe  # pyright: ignore[reportPrivateUsage]

    assert _broken_pipe(ExceptionGroup('tasks', [BrokenPipeError(), ExceptionGroup('inner', [BrokenPipeError()])]))
    # Anything else in the group is a real failure, reported as one.
    assert not _broken_pipe(ExceptionGroup('tasks', [BrokenPipeError(), ValueError('bad')]))
    assert not _broken_pipe(OSError('disk full'))


def test_version_is_the_package_metadata_version() -> None:
    from importlib.metadata import version

    import pydantic_ai_ask_user

    done = subprocess.run([*COMMAND, '--version'], capture_output=True, text=True, timeout=waits.WAIT, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, f'ask-user {version("pydantic-ai-ask-user")}\n', '')
    assert pydantic_ai_ask_user.__version__ == version('pydantic-ai-ask-user')


def test_the_version_costs_import_pydantic_ai_ask_user_nothing() -> None:
    from importlib.metadata import version

    # `__version__` is read on first use: a bare import stays free of importlib.metadata.
    code = (
        'import sys, pydantic_ai_ask_user\n'
        'assert "importlib.metadata" not in sys.modules, "imported at import time"\n'
        'print(pydantic_ai_ask_user.__version__)\n'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=waits.WAIT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == version('pydantic-ai-ask-user')
