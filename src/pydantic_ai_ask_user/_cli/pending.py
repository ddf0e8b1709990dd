"""`ask-user pending`: the questions, approvals and other waits waiting in a DBOS database or in the workflows of a
Temporal namespace, a page at a time, as text for a person or as one JSON object per line.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio

from .._audience import addressing_json
from .._json import questions_to_json
from .._text import printable, terminal_json
from .._tool_args import approval_args
from ..dbos import on_unreadable_row
from ..store import BadCursorError, PendingFilter, PendingRecord, page_inbox
from .approvals import approval_json, approval_lines
from .common import (
    cannot_read_questions,
    clipped,
    fail,
    next_page_command,
    open_store,
    person_asked_for,
    print_addressing,
    search_options,
    timestamp,
    without_nulls,
)
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _
from .inbox import DEFAULT_PENDING_LIMIT

if TYPE_CHECKING:
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.messages import ToolCallPart

    from ..temporal import TemporalEventRecord, TemporalQuestionStore

__all__ = ('run_pending',)


def run_pending(args: argparse.Namespace) -> int:
    """List what waits: approvals, then questions (and, with `--temporal`, the other waits), a page at a time."""
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

    now = time.time()
    where = PendingFilter(
        asked_before=None if args.older_than is None else now - args.older_than,
        asked_after=None if args.newer_than is None else now - args.newer_than,
        kind=args.kind,
        agent=args.agent,
        title=args.title,
        conversation=args.conversation,
        addressee=args.addressee,
        text=args.search,
    )

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
                    if where.takes(event.created_at) and not where.searching and _more_than_approvals(event)
                ]
        except BadCursorError as error:
            fail(str(error))
            return EXIT_INVALID
        except Exception as error:  # the database is unreachable or not a DBOS database; the server unreachable
            fail(cannot_read_questions(args, error))
            return EXIT_CANNOT_ASK
        finally:
            store.close()
        for event in events:
            if args.json:
                print(terminal_json(_event_json(event)))
            else:
                _print_event(event)
        for approval in page.approvals:
            if args.json:
                print(terminal_json(approval_json(approval)))
                continue
            lines = approval_lines(approval)
            print(lines[0])
            print_addressing(approval.audience, approval.context)
            print('\n'.join(lines[1:]))
        for record in page.questions:
            if args.json:
                print(terminal_json(_pending_json(record)))
            else:
                _print_pending(record)
        # The other waits are counted too, except where the store counts workflows (Temporal), which holds them.
        total = page.total + (len(events) if page.total_exact else 0)
        if args.json:
            # The page's trailer; `next_cursor` left out on the last page, as every absent field is.
            trailer = {'total': total, 'total_exact': page.total_exact, 'next_cursor': page.next_cursor}
            print(terminal_json(without_nulls(trailer)))
            return 0
        sys.stdout.flush()  # a reader that closed the pipe (`| head`) ends it here: exit 141, no count line
        if not len(page) and not events:
            print(_('nothing is waiting'), file=sys.stderr)
        else:
            _print_count(len(page) + len(events), total, _next_page(args, page.next_cursor))
        return 0

    try:
        return anyio.run(list_them)
    finally:
        stop_warning()


def _print_count(shown: int, total: int, next_page: str | None) -> None:
    """The count line on stderr: how many were shown of how many wait, and the command for the next page."""
    if next_page is None:
        print(_('{shown} of {total} waiting items shown').format(shown=shown, total=total), file=sys.stderr)
        return
    print(
        _('{shown} of {total} waiting items shown; the next ones: {command}').format(
            shown=shown, total=total, command=next_page
        ),
        file=sys.stderr,
    )


def _next_page(args: argparse.Namespace, cursor: str | None) -> str | None:
    """The command that lists the next page: this one's options again (so that it can be pasted), with `cursor`."""
    ages: list[str] = []
    for option, seconds in (('--older-than', args.older_than), ('--newer-than', args.newer_than)):
        if seconds is not None:
            ages += [option, f'{seconds:g}']
    options = [*ages, *search_options(args)]
    return next_page_command(args, 'pending', cursor, default_limit=DEFAULT_PENDING_LIMIT, options=options)


def _pending_json(record: PendingRecord) -> dict[str, Any]:
    """One line of `pending --json`: the question's key (`id`), its tool call and run, the request as the model asked
    it, whether it takes notes, and its deadline.
    """
    request = record.request
    line = {
        'kind': 'question',
        # What `answer` takes: the question's key (its run and its tool call); the tool call id alone is not unique.
        'id': record.request.key,
        'tool_call_id': request.id,
        'run_id': request.run_id,
        'workflow_id': record.workflow_id,
        'asked_at': timestamp(record.created_at),
        # As the model wrote them: an option without a description has no `description`, not `null`.
        'questions': questions_to_json(request),
        'notes': request.notes,
        'deadline': None if request.deadline is None else timestamp(request.deadline),
        # Who may answer (absent: anyone) and where it comes from, as the model's and the application's text.
        **addressing_json(request),
    }
    return without_nulls(line)


def _more_than_approvals(record: TemporalEventRecord) -> bool:
    """Whether `pending` shows the wait itself: it waits for a result (of a call, or of no waiting handler); a wait
    of approvals only is shown by its approvals alone.
    """
    requests = record.event.requests
    return requests is None or bool(requests.calls)


def _event_json(record: TemporalEventRecord) -> dict[str, Any]:
    """One line of `pending --temporal --json` for a waiting external event: its `token` (what `resolve` takes, where
    a question has an `id`), its workflow, when it opened, its name, and the calls waiting for a result with the
    model's arguments (none for a wait that is not the waiting handler's). Its approvals are lines of their own (`kind`
    `approval`, with this `token`), as every approval is.
    """
    event = record.event
    line: dict[str, Any] = {
        'kind': 'wait',
        'token': event.token,
        'workflow_id': record.workflow_id,
        'opened_at': timestamp(record.created_at),
        'name': event.name,
    }
    if event.requests is not None:
        line['calls'] = [_call_json(event.requests, call) for call in event.requests.calls]
    return line | addressing_json(record.addressed_event)


def _call_json(requests: DeferredToolRequests, call: ToolCallPart) -> dict[str, Any]:
    """A pending call as `pending --json` shows it: its id, its tool and its arguments (`approval_args`)."""
    return {'tool_call_id': call.tool_call_id, 'tool_name': call.tool_name, 'args': approval_args(requests, call)}


def _print_event(record: TemporalEventRecord) -> None:
    """One waiting external event as `pending` shows it to a person, every string from the model made printable."""
    event = record.event
    print(
        _('{token}  opened {opened}  workflow {workflow}').format(
            token=printable(event.token), opened=timestamp(record.created_at), workflow=printable(record.workflow_id)
        )
    )
    addressed = record.addressed_event
    print_addressing(addressed.audience, addressed.context)
    if event.requests is None:
        print('  ' + _('waits for {name} (ask-user resolve TOKEN --json FILE)').format(name=printable(event.name)))
        return
    for call in event.requests.calls:
        args = approval_args(event.requests, call)
        shown = printable(f'{call.tool_name} {terminal_json(args)}', allow_newline=False)
        print('  ' + _('result of') + f': {clipped(shown)}  ' + _('call {id}').format(id=printable(call.tool_call_id)))


def _print_pending(record: PendingRecord) -> None:
    """One waiting request as `pending` shows it to a person, every string from the model made printable."""
    request = record.request
    print(
        _('{id}  asked {asked}  workflow {workflow}').format(
            id=printable(request.key),
            asked=timestamp(record.created_at),
            # Every store `pending` opens is durable: each question has its run's workflow.
            workflow=printable(record.workflow_id or '-'),
        )
    )
    if request.deadline is not None:
        print('  ' + _('waits until {deadline}').format(deadline=timestamp(request.deadline)))
    print_addressing(request.audience, request.context)
    if request.notes:
        print('  ' + _('a note may go with each answer'))
    for question in request.questions:
        kind = _('pick one or more') if question.multi_select else _('pick one')
        text = ' '.join(question.question.split())
        print(f'  [{printable(question.header)}] {printable(text)} ({kind})')
        for option in question.options:
            mark = ' ' + _('(recommended)') if option.label == question.recommended else ''
            print(f'    - {printable(option.label)}{mark}')
            if option.description:
                # Under its label, indented, each of its lines (a description may span lines).
                for line in option.description.split('\n'):
                    print(f'        {printable(line)}')
