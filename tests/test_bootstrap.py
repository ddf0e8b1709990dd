"""`scripts/bootstrap.sh`, which `make demo` and `make test` run, keeps the README's "Set-up" promises.

It is run for real with a PATH of its own: a stand-in `uv` that records its arguments (the real one would sync this
checkout's environment), and only the system tools each case has. No package is installed: each case stops before.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import waits

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = ROOT / 'scripts' / 'bootstrap.sh'
README = (ROOT / 'README.md').read_text(encoding='utf-8')


def _bin(tmp_path: Path, tools: dict[str, str]) -> Path:
    """A directory for PATH with the basic tools the script uses, a recording `uv`, and `tools` (name: script)."""
    folder = tmp_path / 'bin'
    folder.mkdir()
    for name in ('bash', 'dirname', 'ls', 'grep', 'id'):
        (folder / name).symlink_to(f'/usr/bin/{name}')
    scripts = {'uv': f'echo "$@" >> {tmp_path / "uv.log"}', **tools}
    for name, body in scripts.items():
        path = folder / name
        path.write_text(f'#!/usr/bin/bash\n{body}\n', encoding='utf-8')
        path.chmod(0o755)
    return folder


def _bootstrap(folder: Path, what: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ['/usr/bin/bash', str(BOOTSTRAP), what],
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
        env={'PATH': str(folder), 'HOME': str(folder.parent)},
    )


def test_demo_syncs_the_core_and_the_terminal_extra_only(tmp_path: Path) -> None:
    done = _bootstrap(_bin(tmp_path, {}), 'demo')
    assert done.returncode == 0, done.stderr
    assert (tmp_path / 'uv.log').read_text() == 'sync --quiet --frozen --extra terminal --no-dev --inexact\n'


def test_without_apt_get_the_missing_system_packages_are_named_not_silently_skipped(tmp_path: Path) -> None:
    # No tmux, no npm and no apt-get here: the script cannot install them, and says so.
    done = _bootstrap(_bin(tmp_path, {}), 'test')
    assert done.returncode == 1
    assert 'the tests need' in done.stderr
    assert 'tmux' in done.stderr
    assert 'nodejs npm' in done.stderr
    assert 'install them yourself' in done.stderr
    assert (tmp_path / 'uv.log').read_text() == 'sync --quiet --frozen --all-extras --group dev\n'


def test_a_node_older_than_18_is_refused_with_a_message(tmp_path: Path) -> None:
    tools = {
        'tmux': 'exit 0',
        'npm': 'exit 0',
        'node': 'echo 16',
        'fc-list': 'echo "/usr/share/fonts/NotoSansCJK-Regular.ttc: Noto Sans CJK JP"',
    }
    if not os.access('/usr/bin/chromium', os.X_OK) or not list(Path('/usr/lib/postgresql').glob('*/bin/initdb')):
        tools['apt-get'] = 'exit 0'  # a machine without them: stands in for the install
    done = _bootstrap(_bin(tmp_path, tools), 'test')
    assert done.returncode == 1
    assert 'need Node 18 or newer' in done.stderr


def test_the_readme_names_everything_the_script_installs() -> None:
    setup = README.split('\n## Set-up: two commands\n', 1)[1].split('\n## ', 1)[0]
    script = BOOTSTRAP.read_text(encoding='utf-8')
    for package in ('tmux', 'chromium', 'postgresql', 'fonts-noto-cjk', 'fontconfig', 'nodejs', 'npm'):
        assert package in script, package
    for named in ('Chromium', 'PostgreSQL', '`fonts-noto-cjk`', 'fontconfig', 'Node.js and npm', 'tmux', '`make`'):
        assert named in setup, named
