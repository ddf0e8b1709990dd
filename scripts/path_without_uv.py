"""Print a PATH on which no `uv` is found, for `make test` to run the suite under: what a fresh machine has.

    python3 scripts/path_without_uv.py DIR "$PATH"

`scripts/bootstrap.sh` installs uv with `pip install --user uv` where there is none, and pip puts the `uv` command
in a directory (`~/.local/bin`) that is often not on PATH: there only `python3 -m uv` starts it, as the Makefile
does. The tests that start uv find it the same way (`uv_command` in `tests/ask_user_support.py`). Run under this
PATH, the suite proves that case on every machine where `python3 -m uv` works, whether or not `uv` is on PATH too.

Each directory of PATH holding a `uv` (or `uvx`) is replaced by one under DIR holding a link to everything else in
it, rather than dropped: `uv` is often installed beside `python3` and the other tools the tests start
(`/usr/local/bin`, where `pip install uv` puts it in Python's container images), and those must stay found, the
same ones and in the same order. PATH comes as an argument: a `python3` that is a pyenv shim runs with pyenv's own
directories put first on its PATH. Where this `python3` has no uv module (uv installed on its own, not by pip),
hiding `uv` would leave the suite none: the PATH is printed unchanged, and a line on stderr says so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

HIDDEN = ('uv', 'uvx')
"""The commands a directory of PATH must not offer."""


def _holds_uv(directory: Path) -> bool:
    return any(os.access(directory / name, os.X_OK) and (directory / name).is_file() for name in HIDDEN)


def _shadow(directory: Path, into: Path) -> Path:
    """`into`, made anew, with a link to each entry of `directory` except the hidden commands."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    for entry in directory.iterdir():
        if entry.name not in HIDDEN:
            (into / entry.name).symlink_to(entry)
    return into


def path_without_uv(path: str, shadows: Path) -> str:
    """`path` with each directory holding a `uv` replaced by its shadow under `shadows` (numbered by position)."""
    parts: list[str] = []
    for index, part in enumerate(path.split(os.pathsep)):
        directory = Path(part)
        parts.append(str(_shadow(directory, shadows / str(index))) if part and _holds_uv(directory) else part)
    return os.pathsep.join(parts)


def main(shadows: str, path: str) -> None:
    if importlib.util.find_spec('uv') is None:
        print(
            f'path_without_uv: {sys.executable} has no uv module (uv was not installed with pip): the tests use '
            'the `uv` on PATH, and the machine without one is not exercised here',
            file=sys.stderr,
        )
        print(path)
        return
    print(path_without_uv(path, Path(shadows).resolve()))


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
