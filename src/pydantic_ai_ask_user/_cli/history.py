"""`ask-user history`: the questions and approvals that finished in a DBOS database or Temporal's workflows (answered,
declined, decided, withdrawn), the latest first, a page at a time, as text for a person or as one JSON object per line.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio

from .._history import FinishedRecord, finished_json, record_receipt
from .._i18n import N_
from .._receipt import ReceiptStatus
from .._text import printable, terminal_json
from ..dbos import on_unreadable_row
from ..store import BadCursorError, HistoryFilter, NoHistoryError, page_history
from .common import (
    RECEIPT_KEY_VARIABLE,
    cannot_read_questions,
    clipped,
    fail,
    next_page_command,
    open_store,
    person_asked_for,
    print_addressing,
    receipt_key,
    search_options,
    timestamp,
    without_nulls,
)
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _
from .inbox import DEFAULT_PENDING_LIMIT

__all__ = ('run_history',)

_OUTCOMES = {
    'answered': N_('answered'),
    'declined': N_('declined'),
    'withdrawn': N_('withdrawn'),
    'approved': N_('approved'),
    'edited': N_('approved with edited arguments'),
    'denied': N_('denied'),
    'responded': N_('replied instead'),
    'ignored': N_('ignored'),
}
"""How each outcome (`FinishedRecord.outcome`) is printed (in the terminal's language, `_` when printed)."""


def run_history(args: argparse.Namespace) -> int:
    """List what finished, the latest first, a page at a time; exit 0, 2 for a bad cursor, 4 when it cannot read."""
    who = person_asked_for(args)
    if isinstance(who, str):
        fail(who)
        return EXIT_INVALID  # a usage error, as argparse exits
    try:
        key = receipt_key(os.environ)
    except ValueError as error:
        fail(str(error))
        return EXIT_INVALID
    store = open_store(args)
    if isinstance(store, str):
        fail(store)
        return EXIT_CANNOT_ASK
    # One damaged row is left out, named on stderr, and the rest listed.
    stop_warning = on_unreadable_row(lambda error: fail(_('warning: {problem}; it is left out').format(problem=error)))

    async def list_them() -> int:
        try:
            page = await page_history(store, limit=args.limit, cursor=args.cursor, where=_where(args), visible_to=who)
        except BadCursorError as error:
            fail(str(error))
            return EXIT_INVALID
        except NoHistoryError as error:
            fail(str(error))
            return EXIT_CANNOT_ASK
        except Exception as error:  # the database is unreachable or not a DBOS database
            fail(cannot_read_questions(args, error))
            return EXIT_CANNOT_ASK
        finally:
            store.close()
        for record in page.records:
            if args.json:
                print(terminal_json(_record_json(record, key)))
            else:
                _print_record(record, key)
        if args.json:
            print(terminal_json(without_nulls({'total': page.total, 'next_cursor': page.next_cursor})))
            return 0
        sys.stdout.flush()  # a reader that closed the pipe (`| head`) ends it here: exit 141, no count line
        if not page.records:
            print(_('nothing has finished yet'), file=sys.stderr)
            return 0
        options = search_options(args)
        following = next_page_command(
            args, 'history', page.next_cursor, default_limit=DEFAULT_PENDING_LIMIT, options=options
        )
        shown, total = len(page.records), page.total
        if following is None:
            print(_('{shown} of {total} finished items shown').format(shown=shown, total=total), file=sys.stderr)
        else:
            print(
                _('{shown} of {total} finished items shown; the next ones: {command}').format(
                    shown=shown, total=total, command=following
                ),
                file=sys.stderr,
            )
        return 0

    try:
        return anyio.run(list_them)
    finally:
        stop_warning()


def _where(args: argparse.Namespace) -> HistoryFilter:
    """The filter of this run's `--kind` and search options."""
    return HistoryFilter(
        kind=args.kind,
        agent=args.agent,
        title=args.title,
        conversation=args.conversation,
        addressee=args.addressee,
        text=args.search,
    )


def _record_json(record: FinishedRecord, key: bytes | None) -> dict[str, Any]:
    """One line of `history --json`: `finished_json` (a kept receipt checked with `key`), its times as the commands
    print them, absent fields left out.
    """
    line = finished_json(record, receipt_key=key) | {
        'asked_at': timestamp(record.asked_at),
        'finished_at': timestamp(record.finished_at),
    }
    return without_nulls(line)


def _print_record(record: FinishedRecord, key: bytes | None) -> None:
    """One finished item as `history` shows it to a person, every string from the model made printable; a kept
    receipt checked with `key` (one that does not verify said loudly, in capitals, with why).
    """
    outcome = _(_OUTCOMES[record.outcome])
    by = '' if record.by is None else ' ' + _('by {name}').format(name=printable(record.by))
    print(
        _('{id}  {outcome}{by}  {finished}').format(
            id=printable(record.key), outcome=outcome, by=by, finished=timestamp(record.finished_at)
        )
    )
    print(
        '  '
        + _('asked {asked}  workflow {workflow}').format(
            asked=timestamp(record.asked_at), workflow=printable(record.workflow_id or '-')
        )
    )
    print_addressing(record.audience, record.context)
    if record.request is not None:
        answers = {} if record.response is None else {answer.header: answer for answer in record.response.answers}
        for question in record.request.questions:
            text = ' '.join(question.question.split())
            print(f'  [{printable(question.header)}] {printable(text)}')
            answer = answers.get(question.header)
            if answer is None:
                continue
            picked = [answer.custom_answer] if answer.custom_answer is not None else list(answer.selected)
            print('    -> ' + printable(', '.join(picked), allow_newline=False))
            if answer.note:
                print('       ' + _('note: {note}').format(note=printable(answer.note, allow_newline=False)))
    elif record.approval is not None:
        approval = record.approval
        print('  ' + clipped(printable(f'{approval.tool_name} {terminal_json(approval.args)}', allow_newline=False)))
        decision = record.decision
        if decision is not None and decision.override_args is not None:
            edited = printable(terminal_json(decision.override_args), allow_newline=False)
            print('    ' + _('ran with: {args}').format(args=clipped(edited)))
        if decision is not None and decision.reason:
            print('    ' + _('reason: {reason}').format(reason=printable(decision.reason, allow_newline=False)))
        if decision is not None and decision.response is not None:
            print('    ' + _('reply: {reply}').format(reply=printable(decision.response, allow_newline=False)))
    _print_receipt(record_receipt(record, key))
    for handoff in record.handoffs:
        names = printable(', '.join(handoff.to_audience), allow_newline=False)
        who = printable(handoff.by or '-', allow_newline=False)
        print('  ' + _('handed on to {names} by {name}  {at}').format(names=names, name=who, at=timestamp(handoff.at)))
        if handoff.note:
            print('    ' + _('note: {note}').format(note=printable(handoff.note, allow_newline=False)))


def _print_receipt(status: ReceiptStatus | None) -> None:
    """The line of a kept receipt: verified, NOT verifying (and why), or not checked for want of the key."""
    if status is None:
        return
    signed = ''
    if status.receipt is not None:
        signed = '  ' + _('signed for {name} at {at}').format(
            name=printable(status.receipt.answered_by, allow_newline=False),
            at=timestamp(status.receipt.answered_at.timestamp()),
        )
    if status.check == 'verified':
        line = _('receipt: signed by the run, verified')
    elif status.check == 'not_checked':
        line = _('receipt: signed, not checked (no key: set {variable})').format(variable=RECEIPT_KEY_VARIABLE)
    else:
        problem = printable(status.problem or '', allow_newline=False)
        line = _('RECEIPT DOES NOT VERIFY: {problem}').format(problem=problem)
    print('  ' + line + signed)
