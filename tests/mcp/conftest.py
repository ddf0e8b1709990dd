"""Fixtures for the MCP tests: real servers in subprocesses, the Python client, the TypeScript client from npm."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import waits
from ask_user_support import free_port
from mcp_support import server_command, stop, wait_for_port

HERE = Path(__file__).parent
NPM_FILES = ('package.json', 'package-lock.json')
"""What the TypeScript client's install is keyed by: a change to either installs it afresh."""


@pytest.fixture(scope='session')
def mcp_http_url() -> Iterator[str]:
    """The URL of the test servers (mcp_servers.py) over streamable HTTP, started once per test process.

    They keep nothing between calls (each call runs its own agent), so the tests that talk to them over HTTP share
    one process: each start costs ~2 s of CPU (Python, Pydantic AI, MCP), once for each such test before.
    """
    port = free_port()
    process = subprocess.Popen(server_command('http', str(port)))
    try:
        wait_for_port(port, process)
        yield f'http://127.0.0.1:{port}/mcp'
    finally:
        stop(process)


@pytest.fixture(scope='session')
def node_client() -> Path:
    """The TypeScript client script, next to `@modelcontextprotocol/sdk` installed from npm by `npm ci`.

    Installed once per package.json and lock into the user's cache; a failed install fails the test.
    """
    digest = hashlib.sha256(b''.join((HERE / name).read_bytes() for name in NPM_FILES)).hexdigest()[:16]
    cache = Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'pydantic-ai-ask-user'
    target = cache / f'mcp-node-{digest}'
    if not (target / 'node_modules' / '@modelcontextprotocol' / 'sdk' / 'package.json').exists():
        cache.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix='mcp-node-', dir=cache))
        for name in NPM_FILES:
            shutil.copy(HERE / name, staging / name)
        npm = shutil.which('npm')
        assert npm is not None, 'npm is needed for the TypeScript MCP client tests (Node 20 and npm)'
        done = subprocess.run(
            [npm, 'ci', '--no-audit', '--no-fund', '--ignore-scripts'],
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=max(600, waits.WAIT),
        )
        assert done.returncode == 0, f'npm ci failed:\n{done.stdout}\n{done.stderr}'
        try:
            staging.rename(target)
        except OSError:  # another session installed it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    shutil.copy(HERE / 'ts_client.mjs', target / 'ts_client.mjs')
    return target / 'ts_client.mjs'


@pytest.fixture
def run_node(node_client: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Run the TypeScript client with `config` and return what it printed."""

    def run(config: dict[str, Any]) -> dict[str, Any]:
        node = shutil.which('node')
        assert node is not None, 'node is needed for the TypeScript MCP client tests'
        done = subprocess.run(
            [node, str(node_client), json.dumps(config)], capture_output=True, text=True, timeout=waits.WAIT
        )
        assert done.returncode == 0, f'the TypeScript client failed:\n{done.stdout}\n{done.stderr}'
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run
