"""A bounded CPU load generator: keeps every core busy for at most --seconds, then stops by itself.

    python scripts/cpu_load.py [--seconds 1800] [--workers N]

Used by `make test-under-load` to prove that the tests that drive real processes (terminal, browser,
database) do not mistake a slow machine for a failure. It only burns CPU in this machine's own
processes: no network, no disk, no memory to speak of.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time


def _burn(until: float) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    x = 0
    while time.monotonic() < until:
        for _ in range(100_000):
            x = (x * 1_103_515_245 + 12_345) & 0xFFFFFFFF


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--seconds', type=float, default=1800.0, help='stop after this long, at the latest')
    parser.add_argument(
        '--workers', type=int, default=os.cpu_count() or 2, help='busy processes (default: one per core)'
    )
    args = parser.parse_args()
    until = time.monotonic() + args.seconds
    workers = [multiprocessing.Process(target=_burn, args=(until,), daemon=True) for _ in range(args.workers)]
    for worker in workers:
        worker.start()

    def stop(*_: object) -> None:
        for worker in workers:
            worker.terminate()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for worker in workers:
        worker.join()
    return 0


if __name__ == '__main__':
    sys.exit(main())
