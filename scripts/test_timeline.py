"""Where a whole test run's time went, from the lines `ASK_USER_TEST_TIMELINE=DIR make test` left in DIR.

    python scripts/test_timeline.py DIR [--files N]

Prints each worker's span (when it started and ended, and how much of it a test was running), then the files that
took longest: their wall time, the worker that ran them, when, the CPU their tests took in the worker itself, and the
CPU of the child processes the worker waited for (servers and commands it started and reaped). A fork or a server
that outlives its test is counted nowhere: the figures are a lower bound on what a file costs.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass
class File:
    """One test file's tests as one worker ran them."""

    worker: str
    """The xdist worker (`gw0`…), or `main-PID` for a process without xdist (the floor run)."""
    start: float = float('inf')
    """When its first test started (seconds since the epoch)."""
    end: float = 0.0
    """When its last test ended."""
    cpu: float = 0.0
    """CPU seconds of the worker process during its tests."""
    children_cpu: float = 0.0
    """CPU seconds of the child processes the worker reaped during its tests."""
    tests: int = 0
    """How many tests."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('directory', type=Path)
    parser.add_argument('--files', type=int, default=40, help='how many of the longest files to show')
    options = parser.parse_args()
    everything = [
        json.loads(line)
        for path in sorted(options.directory.glob('*.jsonl'))
        for line in path.read_text(encoding='utf-8').splitlines()
    ]
    lines = [line for line in everything if 'test' in line]
    events = sorted((line for line in everything if 'event' in line), key=lambda line: line['at'])
    if not lines:
        raise SystemExit(f'no test lines in {options.directory}')
    origin = min([line['start'] for line in lines] + [event['at'] for event in events])
    print('the session: when, process, what, its CPU so far')
    for event in events:
        print(f'{event["at"] - origin:6.1f} s {event["worker"]:12} {event["event"]:18} {event["cpu"]:6.1f} s')
    print()
    files: dict[tuple[str, str], File] = {}
    busy: defaultdict[str, float] = defaultdict(float)
    for line in lines:
        name = line['test'].split('::', 1)[0]
        file = files.setdefault((line['worker'], name), File(line['worker']))
        file.start = min(file.start, line['start'])
        file.end = max(file.end, line['end'])
        file.cpu += line['cpu']
        file.children_cpu += line['children_cpu']
        file.tests += 1
        busy[line['worker']] += line['end'] - line['start']
    print('worker   first    last     busy    cpu   children')
    for worker in sorted(busy):
        mine = [file for (owner, _), file in files.items() if owner == worker]
        print(
            f'{worker:6} {min(f.start for f in mine) - origin:6.0f} s {max(f.end for f in mine) - origin:6.0f} s'
            f' {busy[worker]:6.0f} s {sum(f.cpu for f in mine):6.0f} s {sum(f.children_cpu for f in mine):6.0f} s'
        )
    print(f'\nthe {options.files} longest files: wall, worker, from, to, cpu, children cpu, tests')
    longest = sorted(files.items(), key=lambda pair: pair[1].start - pair[1].end)[: options.files]
    for (_, name), file in longest:
        print(
            f'{file.end - file.start:6.1f} s {file.worker:5} {file.start - origin:6.0f} {file.end - origin:6.0f}'
            f' {file.cpu:6.1f} {file.children_cpu:6.1f} {file.tests:4}  {name}'
        )
    total_cpu = sum(f.cpu for f in files.values())
    total_children = sum(f.children_cpu for f in files.values())
    print(f'\nin all: {total_cpu:.0f} s CPU in the workers, {total_children:.0f} s in the children they reaped')


if __name__ == '__main__':
    main()
