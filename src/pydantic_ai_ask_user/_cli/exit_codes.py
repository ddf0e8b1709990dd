"""Every exit code of `ask-user`, in one table that each command imports.

0 answered, 1 declined, 2 invalid input, 3 timed out, 4 cannot ask here, 5/6/7 from the store's errors
(`StoreError.exit_code`), 8 not accepted in time, 9 an id that means several items, 70 an internal error, 130
interrupted, 141 stdout's reader went away. No failure exits 1, which means "declined".
"""

from __future__ import annotations

from .._question_store import AlreadyAnsweredError, UnknownRequestError, WithdrawnError

__all__ = (
    'EXIT_ANSWERED',
    'EXIT_DECLINED',
    'EXIT_INVALID',
    'EXIT_TIMED_OUT',
    'EXIT_CANNOT_ASK',
    'EXIT_UNKNOWN',
    'EXIT_ALREADY_ANSWERED',
    'EXIT_WITHDRAWN',
    'EXIT_NOT_ACCEPTED',
    'EXIT_AMBIGUOUS',
    'EXIT_INTERNAL_ERROR',
    'EXIT_INTERRUPTED',
    'EXIT_BROKEN_PIPE',
)

EXIT_ANSWERED = 0
"""The person answered (or a wait was resolved); the result JSON is on stdout."""

EXIT_DECLINED = 1
"""The person declined; stdout holds the `DECLINED` sentence as a JSON string."""

EXIT_INVALID = 2
"""The input broke the rules (a question file, an answer, an argument, a model name); each problem is on stderr."""

EXIT_TIMED_OUT = 3
"""`--timeout` ran out before the person answered; stdout holds the `TIMED_OUT` sentence as a JSON string."""

EXIT_CANNOT_ASK = 4
"""There is no way to do it here (no terminal, a missing extra, an unreachable database); the reason is on stderr."""

EXIT_UNKNOWN = UnknownRequestError.exit_code
"""No question waits under that id in this database (5)."""

EXIT_ALREADY_ANSWERED = AlreadyAnsweredError.exit_code
"""The question was answered (or declined) already, perhaps a moment ago from another process (6)."""

EXIT_WITHDRAWN = WithdrawnError.exit_code
"""The question is no longer waiting: its run timed out or was cancelled (7)."""

EXIT_NOT_ACCEPTED = 8
"""`answer` or `resolve --temporal` stopped at `--timeout`: no worker of the workflow accepted the answer in time.
Nothing was recorded by this command; the server may still hand it to a worker that comes back, so `pending
--temporal` tells whether the question still waits."""

EXIT_AMBIGUOUS = 9
"""The id given (a tool call id two runs share, or the beginning of several keys) means several waiting items; each is
listed on stderr with what tells it apart, and nothing was done."""

EXIT_INTERNAL_ERROR = 70
"""An error ask-user did not expect: a bug. `EX_SOFTWARE` of sysexits.h, not 1, which means "declined"."""

EXIT_INTERRUPTED = 130
"""Ctrl-C outside a menu (128 + SIGINT, as shells report it)."""

EXIT_BROKEN_PIPE = 141
"""Whoever read stdout closed it first (`ask-user pending | head`): quietly, as 128 + SIGPIPE, what a shell reports
for a Unix tool that SIGPIPE ended, and what `set -o pipefail` scripts see from `seq 100000 | head`.

Not 0: for `answer` and `ask`, 0 says the result JSON is on stdout, and it was not read (the answer itself was
recorded before it was printed). Not a death by the signal itself: `main` returns its code to callers in-process.
"""
