"""Start a command with the signal state a login shell gives it: `python -S launch.py [--file-limit=N] -- COMMAND...`.

What a test would otherwise do in a `preexec_fn` (see `waits.launched`), done here in a fresh interpreter of its
own, which then `exec`s COMMAND in its place (same pid): every signal a test sends is back at its default
disposition and unblocked, SIGPIPE and SIGXFSZ included (Python ignores both at start-up, and an ignored signal
stays ignored across `exec`). With `--file-limit=N`, COMMAND may have N open files at most (`RLIMIT_NOFILE`).
"""

from __future__ import annotations

import os
import resource
import signal
import sys

SIGNALS = ('SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGTSTP', 'SIGCONT', 'SIGPIPE', 'SIGXFSZ', 'SIGTTIN', 'SIGTTOU')
"""The signals put back to their default disposition."""


def main(argv: list[str]) -> None:
    separator = argv.index('--')
    options, command = argv[:separator], argv[separator + 1 :]
    for option in options:
        name, _, value = option.partition('=')
        if name != '--file-limit':
            raise SystemExit(f'launch.py: unknown option {option!r}')
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (int(value), hard))
    for name in SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.execvp(command[0], command)


if __name__ == '__main__':
    main(sys.argv[1:])
