"""The tests' own layout: any combination of their folders collects in one pytest session.

pytest's default import mode (`prepend`) puts each test folder without an `__init__.py` first on `sys.path` and
imports its modules by their base name: two support modules of one name in two folders, or a test importing from
`conftest` (whichever conftest was imported last), import the wrong module once both folders are in one session.
So no support module shares a base name with another, no test module with another outside a package, and nothing
imports from a `conftest`: shared helpers live in support modules of their own (`waits`, `cli_support`,
`temporal_support`, ...). The last test proves it by collecting every folder in one session.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import waits
from ask_user_support import unmeasured

TESTS = Path(__file__).resolve().parent
"""The tests' folder."""

ROOT = TESTS.parent
"""The project's root, where pytest runs."""

SKIPPED = {'node_modules', '__pycache__'}
"""Folders that hold no Python of ours (the JavaScript clients' packages)."""


def _python_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob('*.py') if not SKIPPED & set(path.relative_to(TESTS).parts))


def _in_a_package(path: Path) -> bool:
    """Whether `path` is imported as part of a package (its folder has an `__init__.py`), not by its base name."""
    return (path.parent / '__init__.py').exists()


def _same_names(paths: list[Path]) -> dict[str, list[str]]:
    by_name: defaultdict[str, list[str]] = defaultdict(list)
    for path in paths:
        by_name[path.name].append(str(path.relative_to(TESTS)))
    return {name: where for name, where in by_name.items() if len(where) > 1}


def test_no_two_support_modules_share_a_base_name() -> None:
    support = [
        path
        for path in _python_files()
        if not path.name.startswith('test_') and path.name not in {'conftest.py', '__init__.py'}
    ]
    assert _same_names(support) == {}


def test_no_two_test_modules_outside_a_package_share_a_base_name() -> None:
    tests = [path for path in _python_files() if path.name.startswith('test_') and not _in_a_package(path)]
    assert _same_names(tests) == {}


def test_nothing_imports_from_a_conftest() -> None:
    importing: list[str] = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if (isinstance(node, ast.ImportFrom) and node.module == 'conftest' and not node.level) or (
                isinstance(node, ast.Import) and any(alias.name == 'conftest' for alias in node.names)
            ):
                importing.append(f'{path.relative_to(TESTS)}:{node.lineno}')
    assert importing == []


def test_every_test_folder_collects_in_one_session() -> None:
    folders = sorted(
        str(folder.relative_to(ROOT))
        for folder in TESTS.iterdir()
        if folder.is_dir() and folder.name not in SKIPPED and any(folder.rglob('test_*.py'))
    )
    assert len(folders) >= 9, folders  # cli, dbos, hub, mcp, prefect, temporal, terminal, ui, web at least
    done = subprocess.run(
        [sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider', '-o', 'addopts=', *folders],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=4 * waits.WAIT,
        env=unmeasured(os.environ),
    )
    assert done.returncode == 0, f'{done.stdout[-5000:]}\n{done.stderr[-5000:]}'
    [summary] = done.stdout.strip().splitlines()[-1:]
    assert ' collected in ' in summary, summary
    assert 'error' not in summary, summary
