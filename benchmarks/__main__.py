"""`make bench`: run every `benchmarks/bench_*.py` module's `main()`, each printing its figures."""

from __future__ import annotations

import importlib
import pathlib
import sys


def main() -> int:
    names = sorted(path.stem for path in pathlib.Path(__file__).parent.glob('bench_*.py'))
    wanted = sys.argv[1:]
    for name in names:
        if wanted and not any(w in name for w in wanted):
            continue
        print(f'== {name}', flush=True)
        importlib.import_module(f'benchmarks.{name}').main()
        print(flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
