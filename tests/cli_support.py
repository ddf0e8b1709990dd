"""Helpers for the command line's tests: run `ask-user` (in a fresh interpreter, or in this process) and see which
top-level modules it imported."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import waits

COMMAND = [sys.executable, '-m', 'pydantic_ai_ask_user._cli']
"""`ask-user`, run from this interpreter (the installed script is its sibling; this needs no PATH)."""

HEAVY = ('pydantic_ai', 'dbos', 'sqlalchemy', 'starlette', 'uvicorn', 'prompt_toolkit', 'mcp')
"""The libraries a command may import only when it needs them."""

RECORDING_MAIN = (
    'import atexit, json, sys\n'
    'record = sys.argv[1]\n'
    'def dump():\n'
    '    with open(record, "w") as handle:\n'
    '        json.dump(sorted({name.partition(".")[0] for name in sys.modules}), handle)\n'
    'atexit.register(dump)\n'
    'from pydantic_ai_ask_user._cli import main\n'
    'sys.exit(main(sys.argv[2:]))\n'
)
"""`ask-user`, writing the top-level modules it has imported to the file `argv[1]` as it exits (argparse's too)."""


WITHOUT_PACKAGES = (
    'import sys\n'
    'for name in sys.argv[1].split(","):\n'
    '    sys.modules[name] = None\n'
    'from pydantic_ai_ask_user._cli import main\n'
    'sys.exit(main(sys.argv[2:]))\n'
)
"""`ask-user`, with the packages named in `argv[1]` (comma-separated) hidden, as if their extra were not installed."""


def run_without(packages: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `ask-user ARGS` with `packages` hidden, without a terminal (stdin empty)."""
    return subprocess.run(
        [sys.executable, '-c', WITHOUT_PACKAGES, packages, *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=waits.WAIT,
    )


def recording_command(record: Path, *args: str) -> list[str]:
    """The argv that runs `ask-user ARGS` and records its imports in `record`."""
    return [sys.executable, '-c', RECORDING_MAIN, str(record), *args]


def recording_script(record: Path, *args: str) -> str:
    """The same, as one shell command line, for a process started in a pseudo-terminal."""
    return shlex.join(recording_command(record, *args))


def run_recording(record: Path, *args: str, stdin: str = '') -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `ask-user ARGS` without a terminal; its result and the heavy libraries it imported."""
    done = subprocess.run(
        recording_command(record, *args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
        env={**os.environ, 'COLUMNS': '100'},  # help is wrapped to it
    )
    return done, heavy_imported(record)


def imported(record: Path) -> set[str]:
    """The top-level modules the recorded run imported."""
    return set(json.loads(record.read_text(encoding='utf-8')))


def heavy_imported(record: Path) -> set[str]:
    """Which of `HEAVY` the recorded run imported."""
    return imported(record) & set(HEAVY)


def run_cli_process(
    *args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[Any]:
    """Run `ask-user ARGS` in a fresh interpreter without a terminal; text in and out, or bytes if `stdin` is bytes.

    Without `stdin`, stdin is empty (`/dev/null`), as for a command started by a service.
    """
    return subprocess.run(
        [*COMMAND, *args],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=not isinstance(stdin, bytes),
        timeout=waits.WAIT,
        env={**os.environ, **(env or {})},
    )


def run_cli_in_process(argv: list[str], stdin: str = '') -> tuple[int, str, str]:
    """`ask-user ARGV` run in this process by `main` (where the test may have launched DBOS), standard input `stdin`;
    its exit code, standard output and standard error. `run_cli_process` runs it in a fresh interpreter instead.
    """
    from pydantic_ai_ask_user._cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()
