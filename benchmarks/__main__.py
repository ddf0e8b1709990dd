"""`make bench`: run every `benchmarks/bench_*.py` module's `main()`, each printing its figures.

    python -m benchmarks [--quick] [NAME ...]

NAME picks the benchmarks whose module name holds it (all when none). `--quick` runs each with tiny sizes, in
seconds (`benchmarks/quick.py`): what `make test` does, to prove they still run; its figures mean nothing.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys


def main() -> int:
    wanted = sys.argv[1:]
    if '--quick' in wanted:
        wanted.remove('--quick')
        from benchmarks.quick import QUICK_VARIABLE

        os.environ[QUICK_VARIABLE] = '1'  # before any benchmark is imported, and for the processes they start
    names = sorted(path.stem for path in pathlib.Path(__file__).parent.glob('bench_*.py'))
    for name in names:
        if wanted and not any(w in name for w in wanted):
            continue
        print(f'== {name}', flush=True)
        importlib.import_module(f'benchmarks.{name}').main()
        print(flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
