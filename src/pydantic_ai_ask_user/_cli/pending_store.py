"""`ask-user pending` through the store: what the command lists from a DBOS database through `DBOSQuestionStore`, and
from the workflows of a Temporal namespace through `TemporalQuestionStore`, printed by `pending.print_listing`.

Loaded (by name, `arguments.later`) when `pending` cannot list without the store: every listing on Temporal or on
PostgreSQL, and on a SQLite file whatever the plain reader leaves to the store (`dbos.NeedsTheStore`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import anyio

from .._approvals import PendingApproval
from .._text import terminal_json
from ..dbos import on_unreadable_row
from ..store import BadCursorError, page_inbox
from .approvals import approval_json, approval_lines
from .common import cannot_read_questions, fail, open_store, person_asked_for, print_addressing
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _
from .pending import more_than_approvals, pending_filter, print_listing

if TYPE_CHECKING:
    from ..temporal import TemporalEventRecord, TemporalQuestionStore

__all__ = ('run_pending_on_store',)


def run_pending_on_store(args: argparse.Namespace) -> int:
    """List what waits through the store: approvals, then questions (and, with `--temporal`, the other waits)."""
    who = person_asked_for(args)
    if isinstance(who, str):
        fail(who)
        return EXIT_INVALID  # a usage error, as argparse exits
    store = open_store(args)
    if isinstance(store, str):
        fail(store)
        return EXIT_CANNOT_ASK
    stop_warning: Callable[[], None] = lambda: None  # noqa: E731
    if args.temporal is None:
        # One damaged row is left out, named on stderr, and the rest listed: it does not hide every question.
        stop_warning = on_unreadable_row(
            lambda error: fail(_('warning: {problem}; it is left out').format(problem=error))
        )

    where = pending_filter(args)

    async def list_them() -> int:
        events: Sequence[TemporalEventRecord] = ()
        try:
            page = await page_inbox(store, limit=args.limit, cursor=args.cursor, where=where, visible_to=who)
            if args.temporal is not None and args.cursor is None:
                # The other waits of the workflows too (`TemporalExternalEvents`), with the first page, unpaged as
                # Temporal lists them with their workflows: those with a call to give a result for (a deferred
                # question among them), or none of the waiting handler's. Their approvals are paged with the others.
                waits = await cast('TemporalQuestionStore', store).pending_events(visible_to=who)
                events = [
                    event
                    for event in waits
                    if where.takes(event.created_at) and not where.searching and more_than_approvals(event)
                ]
        except BadCursorError as error:
            fail(str(error))
            return EXIT_INVALID
        except Exception as error:  # the database is unreachable or not a DBOS database; the server unreachable
            fail(cannot_read_questions(args, error))
            return EXIT_CANNOT_ASK
        finally:
            store.close()
        return print_listing(args, page, events, show_approval=_show_approval)

    try:
        return anyio.run(list_them)
    finally:
        stop_warning()


def _show_approval(approval: PendingApproval, as_json: bool) -> None:
    """One waiting approval as `pending` shows it: its JSON line, or its lines for a person."""
    if as_json:
        print(terminal_json(approval_json(approval)))
        return
    lines = approval_lines(approval)
    print(lines[0])
    print_addressing(approval.audience, approval.context)
    print('\n'.join(lines[1:]))
