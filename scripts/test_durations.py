"""Write `tests/durations.json`, each test file's seconds, from a whole run's timeline or `--durations=0` table.

    ASK_USER_TEST_TIMELINE=DIR make test     (or: pytest -n 4 --dist loadfile --durations=0 > run.log)
    python scripts/test_durations.py DIR     (or: python scripts/test_durations.py run.log)

`make test` hands whole files to its xdist workers, the longest first (`tests/conftest.py` orders the collection
by these figures): a file that takes minutes starts at once rather than at the end, where it would keep one
worker busy after the others finished. The figures only order the files, so a run on a loaded machine serves as
well as a quiet one; a file missing from them (a new one) counts as `NEW_FILE_SECONDS`. Refresh them when the
suite's shape changes.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / 'tests' / 'durations.json'
"""Where the figures go, beside the tests they time."""

LINE = re.compile(r'^([0-9.]+)s (?:setup|call|teardown)\s+(tests/[^:\s]+)::')
"""One line of pytest's `--durations` table: the seconds and the test's file."""


def main(log: str) -> None:
    seconds: Counter[str] = Counter()
    if Path(log).is_dir():
        # A timeline (tests/conftest.py): each test's span, set-up and teardown included, in its xdist worker.
        for path in Path(log).glob('gw*.jsonl'):
            for line in path.read_text(encoding='utf-8').splitlines():
                test = json.loads(line)
                if 'test' in test:
                    seconds[test['test'].split('::', 1)[0]] += test['end'] - test['start']
    else:
        for line in Path(log).read_text(encoding='utf-8', errors='replace').splitlines():
            if found := LINE.match(line):
                seconds[found[2]] += float(found[1])
    if not seconds:
        sys.exit(f'{log}: no timeline of xdist workers or `--durations=0` table in it')
    figures = {name: round(total, 1) for name, total in sorted(seconds.items())}
    OUTPUT.write_text(json.dumps(figures, indent=1) + '\n', encoding='utf-8')
    print(f'{OUTPUT}: {len(figures)} files, {sum(figures.values()):.0f} s in all')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
