"""What the UI tests share: the JavaScript clients, the example apps under uvicorn, the Node drivers, hostile answers.

The clients are installed with `npm ci` from `package.json` and `package-lock.json` (next to this file)
into `~/.cache/pydantic-ai-ask-user/node/<hash of both>`, once per machine and lock. An install that
fails fails the tests that need it: never a skip, so a clean clone proves the round trip or says why not.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ask_user_support import free_port
from processes import Served
from waits import WAIT, wait_for

HERE = Path(__file__).parent
EXAMPLES = HERE.parent.parent / 'examples' / 'ui'
"""The example apps and pages the tests serve."""

CHROMIUM = shutil.which('chromium') or '/usr/bin/chromium'
"""Debian's Chromium; Playwright's own download cannot work offline."""

CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking']
"""The closed network refuses Chromium's background connections; these keep it from trying."""

NODE_CACHE = Path(os.environ.get('XDG_CACHE_HOME', Path.home() / '.cache')) / 'pydantic-ai-ask-user' / 'node'
"""Where the clients are installed, one directory per hash of package.json and its lock."""

DRIVERS = ('agui_client.mjs', 'vercel_client.mjs')
"""The Node scripts that drive the example apps with the real clients."""


def install_clients() -> Path:
    """The directory holding the installed clients (`npm ci` into the cache once) and the drivers."""
    manifest = (HERE / 'package.json').read_bytes() + (HERE / 'package-lock.json').read_bytes()
    target = NODE_CACHE / hashlib.sha256(manifest).hexdigest()[:16]
    if not (target / 'node_modules' / '.package-lock.json').exists():
        NODE_CACHE.mkdir(parents=True, exist_ok=True)
        staging = NODE_CACHE / f'{target.name}.{os.getpid()}'
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for name in ('package.json', 'package-lock.json'):
            shutil.copy(HERE / name, staging / name)
        npm = shutil.which('npm')
        if npm is None:
            pytest.fail('npm is not installed: the UI tests need Node 20+ and npm to install the JavaScript clients')
        done = subprocess.run(
            [npm, 'ci', '--no-audit', '--no-fund'], cwd=staging, capture_output=True, text=True, timeout=WAIT * 5
        )
        if done.returncode != 0:
            pytest.fail(f'npm ci of the JavaScript clients failed ({done.returncode}):\n{done.stdout}\n{done.stderr}')
        try:
            staging.rename(target)
        except OSError:  # another session installed the same lock first
            shutil.rmtree(staging, ignore_errors=True)
    for driver in DRIVERS:  # next to node_modules, so that their imports resolve there
        shutil.copy(HERE / driver, target / driver)
    return target


def serve(module: str, app_dir: Path = EXAMPLES) -> Iterator[Served[subprocess.Popen[bytes]]]:
    """Serve `<app_dir>/<module>.py` (an example app by default) with uvicorn in its own process until closed."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, '-m', 'uvicorn', f'{module}:app', '--app-dir', str(app_dir), '--port', str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f'http://127.0.0.1:{port}/'

    def up() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f'{module} exited: {process.stderr.read().decode() if process.stderr else ""}')
        try:
            return httpx.get(base, timeout=5).status_code == 200
        except httpx.TransportError:
            return False  # not listening yet

    try:
        wait_for(up, f'{module} to serve {base}')
    except AssertionError:
        process.kill()
        raise
    try:
        yield Served(process, base)
    finally:
        process.terminate()
        process.wait(timeout=WAIT)


def run_driver(node_clients: Path, driver: str, url: str, mode: str, answer: Any) -> dict[str, Any]:
    """Run one of the Node drivers against `url`; its one line of JSON output, parsed."""
    done = subprocess.run(
        ['node', driver, url, mode, json.dumps(answer)],
        cwd=node_clients,
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={**os.environ, 'SUPPRESS_TRANSFORMATION_WARNINGS': 'true'},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


GOOD: dict[str, Any] = {'answers': [{'header': 'Region', 'selected': ['EU']}], 'cancelled': False}
"""A fitting answer to the examples' question (`Region`: `EU` or `US`)."""

HOSTILE: dict[str, tuple[Any, str]] = {
    'unknown label': ({'answers': [{'header': 'Region', 'selected': ['MARS']}]}, "selects 'MARS', which is not one"),
    'missing header': ({'answers': []}, "has no answer for 'Region'"),
    'extra header': (
        {'answers': [{'header': 'Region', 'selected': ['EU']}, {'header': 'Admin', 'selected': ['yes']}]},
        "answers 'Admin', which is not a header",
    ),
    'picks plus custom answer': (
        {'answers': [{'header': 'Region', 'selected': ['EU'], 'custom_answer': 'Mars'}]},
        'both selected labels and a custom answer',
    ),
    'control characters': (
        {'answers': [{'header': 'Region', 'custom_answer': 'EU\x1b[2J'}]},
        'U+001B, a control character',
    ),
    "the model's shape, where MARS would pass as the person's own words": (
        {'Region': ['MARS']},
        'Region: Extra inputs are not permitted',
    ),
}
"""Each misfit, and what the refusal must say."""
