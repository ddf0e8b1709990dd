"""`ask-user pending`: the questions, approvals and other waits waiting in a DBOS database or in the workflows of a
Temporal namespace, a page at a time, as text for a person or as one JSON object per line.

On a SQLite file it reads with the standard library alone, on PostgreSQL (a plain URL, no options) with psycopg alone
(`dbos.PlainPendingReader`: the store's statements, each row checked by the rules the store checks it with, into
plain records), and prints with the code below, which prints the store's records too. Whatever only the store may do
or say (a damaged row to name, an ended workflow's question to withdraw, a database to upgrade, approvals waiting, a
server that does not answer), and every other database, goes through the store (`pending_store`, loaded only then):
the output is the same either way.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._audience import addressing_json
from .._inbox_page import InboxPage, page_inbox
from .._plain_questions import questions_to_json
from .._question_store import PendingFilter, decode_cursor
from .._text import printable, terminal_json
from .._tool_args import approval_args
from ..dbos import NeedsTheStore, NotAQuestionDatabaseError, PlainPendingReader
from .arguments import later
from .common import (
    cannot_read_questions,
    clipped,
    dbos_source,
    fail,
    next_page_command,
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

    from .._approvals import PendingApproval
    from .._audience import Person
    from .._question_store import PendingRecord, QuestionStore
    from ..temporal import TemporalEventRecord

__all__ = ('run_pending', 'pending_filter', 'print_listing', 'more_than_approvals', 'THROUGH_THE_STORE')

THROUGH_THE_STORE = 'ASK_USER_PENDING_THROUGH_THE_STORE'
"""Set (to anything) in the environment, `pending` lists through the store even where it could read without it: what
the tests compare the plain reading with."""


def run_pending(args: argparse.Namespace) -> int:
    """List what waits: approvals, then questions (and, with `--temporal`, the other waits), a page at a time."""
    who = person_asked_for(args)
    if isinstance(who, str):
        fail(who)
        return EXIT_INVALID  # a usage error, as argparse exits
    if args.temporal is None and THROUGH_THE_STORE not in os.environ and dbos_source(args) is None:
        code = _list_plainly(args, who)
        if code is not None:
            return code
    return later('pending_store', 'run_pending_on_store')(args)


def _list_plainly(args: argparse.Namespace, who: Person | None) -> int | None:
    """List a SQLite file's or a PostgreSQL database's page without the store; `None` (nothing printed) when the store
    must list it.
    """
    try:
        reader = PlainPendingReader.of(args.db)
    except NotAQuestionDatabaseError as error:  # no such file: said as the store says it, before anything heavy
        fail(cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    if reader is None or (args.cursor is not None and _continues_approvals(args.cursor)):
        return None
    try:
        page = _done(
            page_inbox(
                cast('QuestionStore', _Pages(reader)),
                limit=args.limit,
                cursor=args.cursor,
                where=pending_filter(args),
                visible_to=who,
            )
        )
    except Exception:  # `NeedsTheStore`, a bad cursor, a file the store reads or names otherwise: nothing printed
        return None
    return print_listing(args, page, (), show_approval=_no_approval)


class _Pages:
    """`PlainPendingReader` as the one method of a question store `page_inbox` pages through."""

    def __init__(self, reader: PlainPendingReader) -> None:
        self.reader = reader
        """The database's plain reader."""

    async def pending_page(
        self, *, limit: int, cursor: str | None, where: PendingFilter, visible_to: Person | None
    ) -> Any:
        """The reader's page, as `DBOSQuestionStore.pending_page` gives it."""
        return self.reader.page(limit=limit, cursor=cursor, where=where, visible_to=visible_to)


def _done(coroutine: Coroutine[Any, Any, InboxPage]) -> InboxPage:
    """The result of a coroutine that never waits (`page_inbox` on `_Pages`), without an event loop to import."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return cast(InboxPage, finished.value)
    coroutine.close()
    raise NeedsTheStore('the listing waited')


def _continues_approvals(cursor: str) -> bool:
    """Whether `cursor` continues the approvals (which the store lists); a cursor that is none, the store names."""
    try:
        position = decode_cursor(cursor)
    except ValueError:
        return True
    return not position or position[0] == 'approval'


def _no_approval(approval: PendingApproval, as_json: bool) -> None:
    raise NeedsTheStore('an approval')  # never: the plain reader leaves every page with approvals to the store


def pending_filter(args: argparse.Namespace) -> PendingFilter:
    """What `--older-than`, `--newer-than` and the search options take, from now."""
    now = time.time()
    return PendingFilter(
        asked_before=None if args.older_than is None else now - args.older_than,
        asked_after=None if args.newer_than is None else now - args.newer_than,
        kind=args.kind,
        agent=args.agent,
        title=args.title,
        conversation=args.conversation,
        addressee=args.addressee,
        text=args.search,
    )


def print_listing(
    args: argparse.Namespace,
    page: InboxPage,
    events: Sequence[TemporalEventRecord],
    *,
    show_approval: Callable[[PendingApproval, bool], None],
) -> int:
    """Print a page as `pending` shows it (the other waits of Temporal's workflows first, then the page's approvals,
    shown by `show_approval`, then its questions), and its count or its JSON trailer; the exit code.
    """
    for event in events:
        if args.json:
            print(terminal_json(_event_json(event)))
        else:
            _print_event(event)
    for approval in page.approvals:
        show_approval(approval, args.json)
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


def more_than_approvals(record: TemporalEventRecord) -> bool:
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
