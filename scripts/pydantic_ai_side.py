"""Run pyright and the version-sensitive tests on another Pydantic AI than the lock's: the floor, or the newest.

    python3 scripts/pydantic_ai_side.py floor|latest

The lock (uv.lock) has the release `pip install pydantic-ai-ask-user` resolves today, and the whole suite runs on it.
Users may have any release from the floor pyproject.toml declares on, and tomorrow's newest is not the lock's:

- `floor`: pydantic-ai-slim at the declared floor (`pydantic-ai-slim>=X` in pyproject.toml), or at
  `ASK_USER_PYDANTIC_AI_FLOOR` when set;
- `latest`: the newest pydantic-ai-slim the registry offers, resolved now, or `ASK_USER_PYDANTIC_AI_LATEST` when
  set. When that is the lock's own version the main run already covers it, and this says so and stops.

Each side gets a virtual environment of its own under test-artifacts/ (the lock's packages and every extra, then
pydantic-ai-slim replaced), prints the version it got, and runs pyright (strict, on src/) and `SIDE_TESTS` there:
the code that meets Pydantic AI's API where releases differ (the waiting handlers' order and spelling on DBOS and
Temporal, Prefect's run ids, the UI adapters, MCP, the in-process approvals) and, on the latest side, the core's
tests and the documentation's examples (`make floor-tests` runs the core's on the floor). Not the whole suite:
that would double `make test`'s ten minutes, and the rest of it meets no API that differs. Exit status: non-zero
when any step fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The project's root."""

EXTRAS = 'anthropic,openai,temporal,prefect,dbos,mcp,ag-ui,ui'
"""The extras of pydantic-ai-slim the project's own extras and dev group install."""

CORE_TESTS = (
    'tests/test_capability.py',
    'tests/test_events.py',
    'tests/test_one_id.py',
    'tests/test_public_api.py',
    'tests/test_schema.py',
    'tests/test_scripted.py',
    'tests/test_seed_examples.py',
    'tests/test_store_contract.py',
    'tests/test_opt_in_options.py',
    'tests/test_run_identity.py',
    'tests/test_waiting_handler.py',
)
"""The core's tests: run on the latest side only, since `make floor-tests` runs them on the floor already."""

SIDE_TESTS = (
    'tests/dbos/test_handler_order.py',
    'tests/temporal/test_temporal_handler_order.py',
    'tests/prefect/test_prefect_answerer.py',
    'tests/ui/test_ui_adapters.py',
    'tests/mcp/test_mcp_conformance.py',
    'tests/mcp/test_mcp_form.py',
    'tests/web/test_web_hub_approvals.py',
)
"""The tests run on each side (see the module's docstring), in one pytest session: the test folders' support modules
have names of their own and nothing imports from a `conftest` (tests/test_test_layout.py holds them to it)."""

LATEST_ONLY_TESTS = (*CORE_TESTS, 'tests/test_docs.py')
"""Tests run on the latest side only: the core's (see `CORE_TESTS`), and the documentation's examples, which show the
newest release's spelling (`HandleDeferredToolCalls` with a resume token, which the floor's does not pass)."""

VARIABLES = {'floor': 'ASK_USER_PYDANTIC_AI_FLOOR', 'latest': 'ASK_USER_PYDANTIC_AI_LATEST'}
"""The environment variable that pins each side's version."""


def uv() -> list[str]:
    """The uv command, as the Makefile finds it: `uv` on PATH, else `python3 -m uv`."""
    found = shutil.which('uv')
    return [found] if found else [sys.executable, '-m', 'uv']


def declared_floor() -> str:
    """The lowest pydantic-ai-slim pyproject.toml allows (`pydantic-ai-slim>=X`)."""
    project = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']
    for requirement in project['dependencies']:
        if found := re.fullmatch(r'pydantic-ai-slim(?:\[[^]]*\])?>=([0-9.]+)', requirement.replace(' ', '')):
            return found.group(1)
    raise SystemExit('pydantic_ai_side: pyproject.toml declares no pydantic-ai-slim>=X')


def locked_version() -> str:
    """The pydantic-ai-slim version uv.lock has."""
    lock = tomllib.loads((ROOT / 'uv.lock').read_text())
    return next(package['version'] for package in lock['package'] if package['name'] == 'pydantic-ai-slim')


def installed_version(python: Path) -> str:
    """The pydantic-ai-slim version `python` imports."""
    code = "from importlib.metadata import version; print(version('pydantic-ai-slim'))"
    return subprocess.run([str(python), '-c', code], check=True, capture_output=True, text=True).stdout.strip()


def run(command: list[str], **options: object) -> int:
    """Run `command` from the project's root, echoed first; its exit status."""
    print('+', ' '.join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, **options).returncode  # type: ignore[call-overload]


def main(side: str) -> int:
    """Set up `side`'s environment and run pyright and the tests there."""
    pinned = os.environ.get(VARIABLES[side], '').strip()
    where = ROOT / 'test-artifacts' / f'pydantic-ai-{side}'
    venv = where / 'venv'
    python = venv / 'bin' / 'python'
    environment = {**os.environ, 'UV_PROJECT_ENVIRONMENT': str(venv)}
    if run([*uv(), 'sync', '--quiet', '--frozen', '--all-extras', '--group', 'dev'], env=environment):
        return 1
    if side == 'floor':
        wanted = [f'pydantic-ai-slim[{EXTRAS}]=={pinned or declared_floor()}']
    else:
        wanted = [
            f'pydantic-ai-slim[{EXTRAS}]' + (f'=={pinned}' if pinned else ''),
            '--upgrade-package',
            'pydantic-ai-slim',
        ]
    if run([*uv(), 'pip', 'install', '--quiet', '--python', str(python), *wanted]):
        return 1
    version = installed_version(python)
    print(f'{side}: pydantic-ai-slim {version}', flush=True)
    if side == 'latest' and not pinned and version == locked_version():
        print(f"latest: {version} is the lock's, which the main run is on: nothing more to run here", flush=True)
        return 0
    config = where / 'pyrightconfig.json'
    settings = {'include': ['../../src'], 'typeCheckingMode': 'strict', 'pythonVersion': '3.11'}
    config.write_text(json.dumps({**settings, 'venvPath': '.', 'venv': 'venv'}))
    typed = run([str(venv / 'bin' / 'pyright'), '-p', str(config)])
    # The side's own programs first on PATH: the tests start `ask-user` and workers as the installed commands.
    path = f'{venv / "bin"}{os.pathsep}{os.environ.get("PATH", "")}'
    options = ['-p', 'no:cacheprovider', '--no-cov', '-o', 'addopts=-ra --strict-markers', '-q']
    tests = (*SIDE_TESTS, *(LATEST_ONLY_TESTS if side == 'latest' else ()))
    tested = run([str(python), '-m', 'pytest', *options, *tests], env={**os.environ, 'PATH': path})
    for part, status in (('pyright', typed), ('pytest', tested)):
        if status:
            print(f'{side}: {part} failed on pydantic-ai-slim {version} (exit {status})', flush=True)
    return 1 if typed or tested else 0


if __name__ == '__main__':
    if len(sys.argv) != 2 or sys.argv[1] not in VARIABLES:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
