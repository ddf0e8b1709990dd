"""Coverage of every package of the library, subprocesses included, each held to its own floor.

    python scripts/coverage_floors.py [--data .coverage]

`make test` runs it after pytest. pytest-cov combines what the test processes measured, and coverage's
`patch = ["subprocess"]` makes every Python child they start (workers killed with -9 aside, servers,
the CLI under a pty) measure itself too. This prints one line per package and fails when a package falls
below its floor. The floors are what the suite reaches today, rounded down: raise them as tests are added,
never lower them to make a change pass.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from coverage import Coverage
from coverage.exceptions import NoDataError

PACKAGE = 'pydantic_ai_ask_user'
"""The import package whose files are grouped."""

FLOORS: dict[str, float] = {
    'core': 95.0,
    '_cli': 85.0,
    'testing': 90.0,
    'ui': 90.0,
    'mcp': 85.0,
    'terminal': 80.0,
    'web': 85.0,
    'dbos': 80.0,
    'hub': 90.0,
    'temporal': 85.0,
    'prefect': 80.0,
    'notify': 85.0,
}
"""The lowest coverage (lines and branches, in percent) each package may have. `core` is the package's own modules."""


SUBPACKAGES = tuple(name for name in FLOORS if name != 'core')
"""The subpackages, each measured apart; `core` is everything else in the package."""

SOURCE = Path(__file__).resolve().parent.parent / 'src' / PACKAGE
"""The package's source directory, where every subpackage must have a floor."""


def unfloored() -> list[str]:
    """Subpackages with no floor: a new one would otherwise be counted as part of the core."""
    return sorted(path.parent.name for path in SOURCE.glob('*/__init__.py') if path.parent.name not in FLOORS)


def percent_of(coverage: Coverage, package: str) -> float | None:
    """The package's coverage in percent (lines and branches, as `coverage report` counts), `None` if unmeasured."""
    if package == 'core':
        include = [f'*/{PACKAGE}/*']
        omit = [f'*/{PACKAGE}/{name}/*' for name in SUBPACKAGES]
    else:
        include, omit = [f'*/{PACKAGE}/{package}/*'], []
    try:
        return coverage.report(include=include, omit=omit, file=io.StringIO())
    except NoDataError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--data', default='.coverage', help='the combined coverage data file')
    arguments = parser.parse_args()
    if missing := unfloored():
        print(f'no coverage floor for {", ".join(missing)}: add one to FLOORS in {Path(__file__).name}')
        return 1
    # The package's own settings (branches, exclusions), but every file measured: the floors are per package here.
    coverage = Coverage(data_file=arguments.data, config_file='pyproject.toml', omit=[])
    coverage.load()
    failed = False
    print(f'{"package":<10} {"percent":>8} {"floor":>6}')
    for package in ('core', *SUBPACKAGES):
        percent = percent_of(coverage, package)
        floor = FLOORS[package]
        below = percent is None or percent < floor
        failed |= below
        shown = 'none' if percent is None else f'{percent:.1f}%'
        print(f'{package:<10} {shown:>8} {floor:>5.0f}%{"  BELOW ITS FLOOR" if below else ""}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
