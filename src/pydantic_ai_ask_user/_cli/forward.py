"""`ask-user forward ID --to NAME`: hand a waiting question or approval on to other people or groups, with a note.

The id is read as `answer` reads it (`find_waiting`: a whole key, else a unique beginning of one). Administrative
access, as `answer`: whoever can write the database may forward any item. What the run waiting for it sees does not
change: it gets its one answer, from whoever answers it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import cast

from .._escalation import Handoff
from .._history import check_handoff, handoff_json
from .._receipt import os_user_at_host
from .._text import terminal_json
from ..store import StoreError, UnknownRequestError, find_waiting
from .approvals import approval_error
from .common import Store, ambiguous, cannot_read_questions, fail, open_store, run_on
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _

__all__ = ('run_forward',)


def run_forward(args: argparse.Namespace) -> int:
    """Forward one waiting item; print the hand-off as JSON. Exit codes as `answer`'s."""
    try:
        names, note = check_handoff(list(args.to), args.note or '')
    except (ValueError, TypeError) as error:
        fail(_('cannot forward: {error}').format(error=error))
        return EXIT_INVALID
    args.names, args.checked_note = names, note
    return run_on(open_store(args), _forward, args)


async def _key_of(store: Store, item: str) -> str | int:
    """The whole key `item` means (a key, or a unique beginning of one), or the exit code of why there is none."""
    try:
        await store.get(item)
        return item
    except UnknownRequestError:
        pass
    try:
        await store.get_approval(item)
        return item
    except UnknownRequestError as unknown:
        found = await find_waiting(store, item)
        if len(found) > 1:
            return ambiguous(item, found.candidates())
        if found.approvals:
            return found.approvals[0].key
        if found.questions:
            return found.questions[0].key
        return approval_error(unknown)


async def _forward(store: Store, args: argparse.Namespace) -> int:
    forward = cast('Callable[..., Awaitable[Handoff]] | None', getattr(store, 'forward', None))
    if forward is None:
        fail(_('this store cannot forward questions or approvals'))
        return EXIT_CANNOT_ASK
    try:
        key = await _key_of(store, args.item)
        if isinstance(key, int):
            return key
        handoff = await forward(key, args.names, note=args.checked_note, by=os_user_at_host(), replace=not args.add)
    except StoreError as error:
        return approval_error(error)
    except ValueError as error:
        fail(_('cannot forward: {error}').format(error=error))
        return EXIT_INVALID
    except Exception as error:  # the database went away
        fail(cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    sys.stdout.write(terminal_json({'id': key, 'status': 'forwarded', 'handoff': handoff_json(handoff)}) + '\n')
    return EXIT_ANSWERED
