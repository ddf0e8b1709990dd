"""`ask-user pending`, `answer` and `resolve`: the questions (and approvals) waiting in a DBOS database, or in
Temporal workflows (`--temporal ADDRESS`, see `pydantic_ai_ask_user.temporal.TemporalQuestionStore`), from the
command line.

`pending --temporal` lists the approvals of `TemporalExternalEvents` beside the questions, from the same listing
of the namespace (a line with a `token` where a question's has an `id`): a person looking for what waits for them
should not have to know which kind it is. `resolve --temporal` resolves one, checked before it is sent exactly as
`resolve --db` checks a DBOS wait's decision.

Exit codes of `answer`: 0 answered, 1 declined, 2 invalid JSON or answer, 4 no way to ask here (no
terminal, a missing extra, the database or the Temporal server unreachable, missing or not a question
database, a namespace without the search attribute `AskUserQuestions`), 5 no question under that id,
6 already answered, 7 no longer waiting (its run timed out or was cancelled). `pending` exits 0, or 4.
Neither creates a database or a table: a typo in `--db` is an error, not an empty list.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .._text import printable, terminal_json
from .._tool_args import approval_args
from .arguments import END_AT_ONCE, command
from .exit_codes import (
    EXIT_ANSWERED,
    EXIT_CANNOT_ASK,
    EXIT_DECLINED,
    EXIT_INVALID,
    EXIT_NOT_ACCEPTED,
    EXIT_WITHDRAWN,
)
from .i18n import _

if TYPE_CHECKING:
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.messages import ToolCallPart

    from .._answers import AskUserRequest, AskUserResponse
    from .._approvals import PendingApproval
    from .._audience import QuestionContext
    from .._decision import Decision
    from .._question_store import StoreError
    from ..dbos import DBOSQuestionStore, StoredRequest
    from ..temporal import TemporalEventRecord, TemporalQuestionStore, TemporalRecord, WaitingEvent

    Store = DBOSQuestionStore | TemporalQuestionStore
    """Where `pending` and `answer` find the questions: a DBOS database, or a Temporal namespace."""

__all__ = ('register', 'run_pending', 'run_answer', 'run_resolve')

_AnyStore = TypeVar('_AnyStore', bound='Store')
"""A store `_run_on` runs a command on: a DBOS database's, or a Temporal namespace's."""

# The store, the question models and anyio are imported when a command runs, not when the command line is built.

_DB_HELP = (
    'the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB (default: sqlite:///ask_user.sqlite)'
)


_DEFAULT_DB = 'sqlite:///ask_user.sqlite'
"""The DBOS database `--db` names when neither it nor `--temporal` is given."""


_TEMPORAL_HELP = (
    'the questions (TemporalAnswerer) and approvals (TemporalExternalEvents) waiting in Temporal workflows, on this '
    'Temporal server, instead'
)

DEFAULT_PENDING_LIMIT = 10
"""How many questions `ask-user pending` prints unless `--limit` says: about a screenful (each takes a few lines)."""


def _page_size(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text[:6]) <= 500:
        raise argparse.ArgumentTypeError(_('give a whole number from 1 to 500, not {text!r}').format(text=text[:20]))
    return int(text)


def _seconds(text: str) -> float:
    try:
        seconds = float(text[:30])
    except ValueError:
        seconds = -1.0
    if not (seconds >= 0 and seconds != float('inf')):
        raise argparse.ArgumentTypeError(_('give a number of seconds, 0 or more, not {text!r}').format(text=text[:20]))
    return seconds


def _add_accept_timeout(parser: argparse.ArgumentParser) -> None:
    """`--timeout`: how long `answer` or `resolve --temporal` waits for a worker to accept what it sends."""
    parser.add_argument(
        '--timeout',
        type=_seconds,
        metavar='SECONDS',
        dest='accept_timeout',
        help='with --temporal: stop waiting for a worker of the workflow to accept the answer after SECONDS (exit 8)',
    )


def _add_source(parser: argparse.ArgumentParser, temporal_help: str = _TEMPORAL_HELP) -> None:
    """`--db URL`, or `--temporal ADDRESS` with `--namespace`: where the questions wait."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--db', metavar='URL', help=_DB_HELP)
    source.add_argument('--temporal', metavar='HOST:PORT', help=temporal_help)
    parser.add_argument('--namespace', metavar='NAME', help='the Temporal namespace (default: default)')


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `pending` and `answer` to the `ask-user` command line."""
    pending = command(
        subparsers,
        'pending',
        run_pending,
        summary='list the questions waiting for an answer in a DBOS database or in Temporal workflows',
        description=(
            'List the questions waiting in the database (or, with --temporal, in the running workflows of the '
            'Temporal namespace), across all workflows, a page at a time: the nearest deadline first, questions '
            'without one last, oldest first among equals; with who each is for and where it comes from. A line on '
            'stderr says how many wait in all and how to see the next page (--cursor); with --json the last line is '
            '{"total": N, "next_cursor": ...}. This is administrative access: whoever can read the database or '
            'reach the Temporal server sees every question, whoever it is addressed to; --for only narrows the list.'
        ),
    )
    _add_source(pending)
    pending.add_argument('--json', action='store_true', help='print one JSON object per line instead of text')
    pending.add_argument(
        '--for',
        metavar='NAME',
        dest='for_name',
        help=(
            'only the questions NAME may answer: those addressed to NAME (or to one of the --group names) and '
            'the unaddressed ones. A filter, not access control'
        ),
    )
    pending.add_argument(
        '--group',
        metavar='NAME',
        action='append',
        default=[],
        help='with --for: a group NAME belongs to (repeat for several)',
    )
    pending.add_argument(
        '--limit',
        type=_page_size,
        default=DEFAULT_PENDING_LIMIT,
        metavar='N',
        help=f'show at most N questions, 1 to 500 (default: {DEFAULT_PENDING_LIMIT})',
    )
    pending.add_argument('--cursor', metavar='CURSOR', help='start after the page that printed this cursor')
    pending.add_argument(
        '--older-than', type=_seconds, metavar='SECONDS', help='only questions asked more than SECONDS ago'
    )
    pending.add_argument(
        '--newer-than', type=_seconds, metavar='SECONDS', help='only questions asked less than SECONDS ago'
    )

    answer = command(
        subparsers,
        'answer',
        run_answer,
        summary='answer a waiting question in the terminal menu, or from JSON',
        description=(
            'Answer the question ID in the terminal menu, or with --json from FILE or stdin: either '
            '{"answers": [{"header": ..., "selected": [...]} or {"header": ..., "custom_answer": ...}], '
            '"cancelled": false}, {"cancelled": true} to decline, or the shape the model gets, '
            '{"HEADER": ["LABEL", ...]} (labels match ignoring case and width) or {"HEADER": {"custom": "TEXT"}} '
            'for your own words. '
            'A tool approval (an id that pending shows with a tool name) is decided with --approve, --deny [REASON], '
            '--args JSON (approve with these arguments), or --json holding "approve", {"deny": "REASON"} or '
            '{"args": {...}}. With a wait\'s token instead of an id, --json decides every item of the wait at once '
            '(all or nothing): {"CALL_ID": decision or answer, ...}. '
            'Exit codes: 0 answered or approved, 1 declined or denied, 2 invalid answer, 4 cannot ask here, '
            '5 unknown id, 6 already answered, 7 no longer waiting, 8 --timeout ran out before a Temporal worker '
            'accepted the answer.'
        ),
    )
    # The id `pending` shows is the question's key (its run and its call), not the bare tool call id.
    answer.add_argument(
        'request_id',
        metavar='ID',
        help="the id `ask-user pending` shows (a question's or an approval's), or a wait's token (all its items)",
    )
    _add_source(answer)
    _add_accept_timeout(answer)
    given = answer.add_mutually_exclusive_group()
    given.add_argument(
        '--json',
        metavar='FILE|-',
        dest='json_file',
        help="read the answer (or the decision, or for a token every item's, by call id) from FILE or stdin (-)",
    )
    given.add_argument('--approve', action='store_true', help='approve the tool call ID')
    given.add_argument(
        '--deny', metavar='REASON', nargs='?', const='', help='deny the tool call ID, telling the model why'
    )
    given.add_argument(
        '--args',
        metavar='JSON',
        dest='edited_args',
        help="approve the tool call ID with these arguments (checked against the tool's schema)",
    )

    resolve = command(
        subparsers,
        'resolve',
        run_resolve,
        summary='resolve a HandleDeferredToolCalls wait (an approval) of a DBOS run or a Temporal workflow from here',
        description=(
            'End the wait of TOKEN, handed out by DBOSExternalEvents (or, with --temporal, TemporalExternalEvents) '
            "to HandleDeferredToolCalls's ask, with --json FILE|- "
            '(the DeferredToolResults deciding every pending call and nothing else, e.g. {"approvals": '
            '{"CALL_ID": true}, "calls": {"CALL_ID": {"Database": ["SQLite"]}}}) or --fail REASON (every pending '
            'approval is denied with REASON). Exit codes: 0 resolved, 2 invalid JSON, not a token, a call left '
            'out or not pending, or an answer that does not fit its question (nothing is sent), 4 cannot reach '
            'the database or the Temporal server, or a missing extra, 7 no run waits on this token any more, '
            '8 --timeout ran out before a Temporal worker accepted the decision.'
        ),
    )
    resolve.add_argument('token', metavar='TOKEN', help='the token HandleDeferredToolCalls handed to your ask function')
    _add_source(resolve, 'the waits of Temporal workflows (TemporalExternalEvents), on this Temporal server, instead')
    _add_accept_timeout(resolve)
    decision = resolve.add_mutually_exclusive_group(required=True)
    decision.add_argument('--json', metavar='FILE|-', dest='json_file', help='the DeferredToolResults as JSON')
    decision.add_argument('--fail', metavar='REASON', help='end the wait without results, for this reason')


def run_resolve(args: argparse.Namespace) -> int:
    """Resolve (or fail) one external-event wait of a DBOS run, or (`--temporal`) of a Temporal workflow.

    On a SQLite file a DBOS wait is resolved loading neither Pydantic AI, DBOS nor SQLAlchemy: the database through
    `sqlite3`, the decision read as Pydantic AI reads it (`read_decision`), the wait ended as `resolve_dbos_event`
    ends it.
    """
    if args.temporal is not None:
        return _run_on(_open_temporal_store(args), _resolve_temporal, args)
    if (problem := _dbos_source(args)) is not None:
        _fail(problem)
        return EXIT_CANNOT_ASK
    from pydantic_core import to_jsonable_python

    from ..dbos._end_wait import NotAWaitTokenError, WaitNotOpenError, end_wait
    from ..dbos._wait_check import checked_for_wait

    try:
        found = _tokens_meant(args.db, args.token)
        if len(found) > 1:
            return _ambiguous(args.token, [(token, '') for token in found])
        args.token = found[0] if found else args.token
        if args.fail is not None:
            message: dict[str, Any] = {'error': args.fail}
        else:
            results = _decision(args, lambda results: checked_for_wait(results, args.db, args.token))
            if results is None:
                return EXIT_INVALID
            try:
                # As `resolve_dbos_event` sends a `DeferredToolResults`: its JSON form.
                message = {'payload': to_jsonable_python(results)}
            except ValueError as error:  # PydanticSerializationError is one
                _fail(_('invalid answer: {error}').format(error=error))
                return EXIT_INVALID
        end_wait(args.token, message, args.db)
    except ImportError as error:  # PostgreSQL without its driver, or an answer's check without an extra
        from .install import install_hint

        _fail(_('{error}; {hint}').format(error=error, hint=install_hint('dbos')))
        return EXIT_CANNOT_ASK
    except NotAWaitTokenError:
        _fail(_('this is not a DBOSEventWaiter token: it names no DBOS workflow'))
        return EXIT_INVALID
    except WaitNotOpenError:
        _fail(
            _('no wait has this token: it was resolved already, its deadline passed, or it is unknown to this database')
        )
        return EXIT_WITHDRAWN
    except Exception as error:
        _fail(
            _('cannot reach the database {database}: {error}').format(
                database=_shown(args.db), error=_first_line(error)
            )
        )
        return EXIT_CANNOT_ASK
    print(terminal_json({'resolved': args.token}))
    return EXIT_ANSWERED


def _decision(args: argparse.Namespace, checked: Callable[[Decision], Decision]) -> Decision | None:
    """The decision `--json` gives, read as a `DeferredToolResults` (`read_decision`), passed through `checked` (which
    raises `ValueError` for a decision the wait cannot take) and given who decided; `None`, once the problem is said,
    when it is refused.

    Checked here, before anything is sent: a decision the run cannot read would fail the run, not this command.
    """
    from .._decision import read_decision

    text = sys.stdin.read() if args.json_file == '-' else _read_text(args.json_file)
    if text is None:
        return None
    try:
        results = read_decision(text)
    except (ValueError, RecursionError) as error:
        problem = _first_line(error) or type(error).__name__
        _fail(_('not a DeferredToolResults: {problem}').format(problem=problem))
        return None
    try:
        return _with_answered_by(checked(results))
    except ValueError as error:
        _fail(_('invalid answer: {error}').format(error=error))
        return None


async def _resolve_temporal(store: TemporalQuestionStore, args: argparse.Namespace) -> int:
    """Resolve (or fail) one wait of `TemporalExternalEvents` in a workflow of the namespace `--temporal` names."""
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError, RPCStatusCode

    from ..temporal import fail_temporal_event, resolve_temporal_event

    gone = _(
        'no wait has this token: it was resolved already, its deadline passed, or no workflow of this namespace '
        'waits on it'
    )
    try:
        token = await _temporal_token_meant(store, args.token)
        if isinstance(token, int):
            return token
        event = await _temporal_wait(store, token)
        if event is None:
            _fail(gone)
            return EXIT_WITHDRAWN
        client = await store.connected()
        if args.fail is not None:
            sent = fail_temporal_event(client, token, args.fail)
        else:
            results = _decision(args, lambda results: _checked_against_wait(results, event.requests))
            if results is None:
                return EXIT_INVALID
            sent = resolve_temporal_event(client, token, results)
        try:
            await sent
        except WorkflowUpdateFailedError as error:
            # Refused by the workflow: decided a moment ago from elsewhere (its wait is over), or does not fit.
            if await _temporal_wait(store, token) is None:
                _fail(gone)
                return EXIT_WITHDRAWN
            _fail(_('invalid answer: {error}').format(error=_first_line(error.cause or error)))
            return EXIT_INVALID
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            _fail(gone)
            return EXIT_WITHDRAWN
        _fail(_cannot_reach_temporal(args, error))
        return EXIT_CANNOT_ASK
    except Exception as error:  # the server unreachable, or the namespace without the search attribute
        _fail(_cannot_reach_temporal(args, error))
        return EXIT_CANNOT_ASK
    print(terminal_json({'resolved': token}))
    return EXIT_ANSWERED


def _cannot_reach_temporal(args: argparse.Namespace, error: BaseException) -> str:
    return _('cannot resolve the wait in {where}: {error}').format(where=_where(args), error=_first_line(error))


async def _temporal_token_meant(store: TemporalQuestionStore, token: str) -> str | int:
    """The whole token `token` is, or begins (at least `MIN_PREFIX` characters of one listed wait's token); an exit
    code once the problem is said: `EXIT_INVALID` when it is no token, or begins several.
    """
    from ..temporal import NotATemporalTokenError
    from ..temporal._events import token_workflow_id

    try:
        token_workflow_id(token)
        return token
    except NotATemporalTokenError:
        pass
    found = [] if len(token) < MIN_PREFIX else [r for r in await store.pending_events() if r.key.startswith(token)]
    if len(found) > 1:
        return _ambiguous(token, [(record.key, record.event.name) for record in found])
    if not found:
        _fail(_('this is not a TemporalEventWaiter token: it names no Temporal workflow'))
        return EXIT_INVALID
    return found[0].key


async def _temporal_wait(store: TemporalQuestionStore, token: str) -> WaitingEvent | None:
    """The wait open under `token` in the workflow it names, or `None` when none is (`RPCError` NOT_FOUND when there
    is no such workflow).

    Read from the workflow's memo when the wait is listed there (no worker needed), else by the Query, which a
    worker answers (a wait of `TemporalExternalEvents(listed=False)`, or one that is over).
    """
    from temporalio.client import WorkflowExecutionStatus

    from ..temporal import pending_temporal_events
    from ..temporal._events import token_workflow_id
    from ..temporal._store import waiting_events

    client = await store.connected()
    handle = client.get_workflow_handle(token_workflow_id(token))
    described = await handle.describe()
    if described.status != WorkflowExecutionStatus.RUNNING:
        return None
    for record in waiting_events(described):
        if record.key == token:
            return record.event
    return next((event for event in await pending_temporal_events(handle) if event.token == token), None)


def _checked_against_wait(results: Decision, requests: DeferredToolRequests | None) -> Decision:
    """`results` checked against the calls a Temporal wait decides, as `checked_for_wait` checks a DBOS wait's; as it
    is for a wait that decides no calls (not a waiting handler's).
    """
    from .._wait_calls import WaitCalls, checked_decision

    return results if requests is None else checked_decision(results, WaitCalls.of(requests), {})


def _tokens_meant(database_url: str, token: str) -> list[str]:
    """`[token]` when a wait is open under it; else the open waits' tokens that begin with it (at least `MIN_PREFIX`
    characters): one is the token meant, several are ambiguous. `[]` when none is open (resolving says why).
    """
    from ..dbos._db import open_database
    from ..dbos._schema import EVENT_WAITS_TABLE_NAME
    from ..dbos._waits import open_wait_tokens

    database = open_database(database_url)
    try:
        if not database.has_table(EVENT_WAITS_TABLE_NAME):
            return []
        with database.connect() as conn:
            tokens = open_wait_tokens(conn)
    finally:
        database.dispose()
    if token in tokens:
        return [token]
    return [open_token for open_token in tokens if len(token) >= MIN_PREFIX and open_token.startswith(token)]


def _with_answered_by(results: Decision) -> Decision:
    """`results` with who decided each call: as the JSON says (checked: `ValueError`), else the OS user and host."""
    from .._answers import check_answered_by
    from .._receipt import os_user_at_host

    decided = [*results.approvals, *results.calls]
    for call_id, name in results.answered_by.items():
        if call_id not in decided:
            raise ValueError(f'answered_by names call {call_id!r}, which this decision does not decide')
        if (problem := check_answered_by(name)) is not None:
            raise ValueError(f'answered_by of call {call_id!r}: {problem}')
    if not decided:
        return results
    who = os_user_at_host()
    return replace(results, answered_by={call_id: who for call_id in decided} | results.answered_by)


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding='utf-8') as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        _fail(_('cannot read {path}: {error}').format(path=path, error=error))
        return None


def _dbos_source(args: argparse.Namespace) -> str | None:
    """For a command on a DBOS database (no `--temporal`): `--db` given its default, or the problem with the
    arguments (`--namespace` without `--temporal`).
    """
    if args.namespace is not None:
        return _('--namespace is a Temporal namespace: give --temporal HOST:PORT with it')
    if args.db is None:
        args.db = _DEFAULT_DB
    return None


def _open_store(args: argparse.Namespace) -> Store | str:
    """The store `--db` or `--temporal` names, or what stops it from opening."""
    if args.temporal is None:
        if (problem := _dbos_source(args)) is not None:
            return problem
        return _open_dbos_store(args.db)
    return _open_temporal_store(args)


def _run_on(
    store: _AnyStore | str, run: Callable[[_AnyStore, argparse.Namespace], Awaitable[int]], args: argparse.Namespace
) -> int:
    """`run(store, args)` in an event loop, the store closed after; or, when `store` is what stopped it from opening,
    that said (exit 4).
    """
    import anyio

    if isinstance(store, str):
        _fail(store)
        return EXIT_CANNOT_ASK
    try:
        if getattr(args, 'temporal', None) is not None and hasattr(args, 'accept_timeout'):
            return anyio.run(_patiently, run, store, args)
        return anyio.run(run, store, args)
    finally:
        store.close()


NOTICE_SECONDS = 3.0
"""How long `answer` or `resolve --temporal` waits before it says that it waits for a worker."""


async def _patiently(
    run: Callable[[_AnyStore, argparse.Namespace], Awaitable[int]], store: _AnyStore, args: argparse.Namespace
) -> int:
    """`run(store, args)`, saying so on stderr when it still waits after `NOTICE_SECONDS`, and given up (exit 8) at
    `--timeout`. A Temporal workflow takes an answer (an Update) only through a running worker of its task queue:
    with none, the server holds the answer and the command would wait, silent, until one comes back.
    """
    import anyio

    async def notice() -> None:
        await anyio.sleep(NOTICE_SECONDS)
        hint = _('start one, or give --timeout SECONDS to stop waiting') if args.accept_timeout is None else ''
        print(
            _(
                'ask-user: waiting for a worker of the workflow to accept it: Temporal takes an answer only through a '
                'running worker {hint}'
            )
            .format(hint=f'({hint})' if hint else '')
            .rstrip(),
            file=sys.stderr,
            flush=True,
        )

    code: int | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(notice)
        with anyio.move_on_after(args.accept_timeout):
            code = await run(store, args)
        group.cancel_scope.cancel()
    if code is not None:
        return code
    _fail(
        _(
            'no worker accepted it within {seconds:g} s, so this command recorded nothing; the server may still hand '
            'it to a worker that comes back: `ask-user pending --temporal` shows whether it still waits'
        ).format(seconds=args.accept_timeout)
    )
    return EXIT_NOT_ACCEPTED


def _open_temporal_store(args: argparse.Namespace) -> TemporalQuestionStore | str:
    """The store of the Temporal namespace `--temporal` and `--namespace` name, or what stops it from opening."""
    try:
        from ..temporal import DEFAULT_NAMESPACE, TemporalQuestionStore
    except ImportError as error:
        from .install import install_hint

        return _('{error}; {hint}').format(error=error, hint=install_hint('temporal'))
    setattr(args, END_AT_ONCE, True)  # the Temporal client's runtime may abort the interpreter's clean-up
    return TemporalQuestionStore(args.temporal, namespace=args.namespace or DEFAULT_NAMESPACE)


def _open_dbos_store(url: str) -> DBOSQuestionStore | str:
    try:
        from ..dbos import DBOSQuestionStore
    except ImportError as error:
        from .install import install_hint

        return _('{error}; {hint}').format(error=error, hint=install_hint('dbos'))
    try:
        # Never create: a typo in --db must be an error, not a new, empty database.
        return DBOSQuestionStore(url, create_table=False)
    except ValueError as error:
        return str(error)


def _where(args: argparse.Namespace) -> str:
    """Where the questions are, as an error names it: the database (its password hidden) or the Temporal namespace."""
    if args.temporal is None:
        return _shown(args.db)
    return _('the Temporal namespace {namespace} at {address}').format(
        namespace=args.namespace or 'default', address=args.temporal
    )


def _fail(message: str) -> None:
    print(f'ask-user: {printable(message)}', file=sys.stderr)


def run_pending(args: argparse.Namespace) -> int:
    """List the waiting questions."""
    import anyio

    from .._audience import Person
    from .approvals import approval_json, approval_lines

    try:
        who = None if args.for_name is None else Person(args.for_name, groups=args.group)
    except (TypeError, ValueError) as error:
        _fail(str(error))
        return EXIT_INVALID  # a usage error, as argparse exits
    if who is None and args.group:
        _fail(_('--group needs --for NAME: the groups are those of the person named'))
        return EXIT_INVALID  # a usage error, as argparse exits
    store = _open_store(args)
    if isinstance(store, str):
        _fail(store)
        return EXIT_CANNOT_ASK
    stop_warning: Callable[[], None] = lambda: None  # noqa: E731
    if args.temporal is None:
        from ..dbos._questions import on_unreadable_row

        # One damaged row is left out, named on stderr, and the rest listed: it does not hide every question.
        stop_warning = on_unreadable_row(
            lambda error: _fail(_('warning: {problem}; it is left out').format(problem=error))
        )

    import time

    from .._question_store import BadCursorError, PendingFilter

    now = time.time()
    where = PendingFilter(
        asked_before=None if args.older_than is None else now - args.older_than,
        asked_after=None if args.newer_than is None else now - args.newer_than,
    )

    async def list_them() -> int:
        events: Sequence[TemporalEventRecord] = ()
        approvals: Sequence[PendingApproval] = ()
        try:
            page = await store.pending_page(limit=args.limit, cursor=args.cursor, where=where, visible_to=who)
            if args.temporal is not None and args.cursor is None:
                # The other waits of the workflows too (`TemporalExternalEvents`), with the first page, unpaged as
                # Temporal lists them with their workflows: those with a call to give a result for (a deferred
                # question among them), or none of the waiting handler's. Their approvals are listed below, as DBOS's
                # are.
                waits = await cast('TemporalQuestionStore', store).pending_events(visible_to=who)
                events = [event for event in waits if where.takes(event.created_at) and _more_than_approvals(event)]
            if args.cursor is None:
                # The tool calls waiting for approval, with the first page, as the web inbox shows them: unpaged.
                listed = await store.pending_approvals(visible_to=who)
                approvals = [approval for approval in listed if where.takes(approval.created_at)]
        except BadCursorError as error:
            _fail(str(error))
            return EXIT_INVALID
        except Exception as error:  # the database is unreachable or not a DBOS database; the server unreachable
            _fail(_cannot_read_questions(args, error))
            return EXIT_CANNOT_ASK
        finally:
            store.close()
        for event in events:
            if args.json:
                print(terminal_json(_event_json(event)))
            else:
                _print_event(event)
        for record in page.records:
            if args.json:
                print(terminal_json(_pending_json(record)))
            else:
                _print_pending(record)
        for approval in approvals:
            if args.json:
                print(terminal_json(approval_json(approval)))
                continue
            lines = approval_lines(approval)
            print(lines[0])
            _print_addressing(approval.audience, approval.context)
            print('\n'.join(lines[1:]))
        if args.json:
            # The page's trailer; `next_cursor` left out on the last page, as every absent field is.
            trailer = {'total': page.total, 'total_exact': page.total_exact, 'next_cursor': page.next_cursor}
            print(terminal_json(_without_nulls(trailer)))
            return 0
        sys.stdout.flush()  # a reader that closed the pipe (`| head`) ends it here: exit 141, no count line
        if not page.records and not approvals:
            print(_('no questions are waiting'), file=sys.stderr)
        else:
            _print_count(len(page.records), page.total, page.next_cursor)
        return 0

    try:
        return anyio.run(list_them)
    finally:
        stop_warning()


def _print_count(shown: int, total: int, next_cursor: str | None) -> None:
    """The count line on stderr: how many were shown of how many wait, and the command for the next page."""
    if next_cursor is None:
        print(_('{shown} of {total} waiting questions shown').format(shown=shown, total=total), file=sys.stderr)
        return
    print(
        _('{shown} of {total} waiting questions shown; the next ones: ask-user pending --cursor {cursor}').format(
            shown=shown, total=total, cursor=next_cursor
        ),
        file=sys.stderr,
    )


def _timestamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec='seconds')


def _pending_json(record: StoredRequest | TemporalRecord) -> dict[str, Any]:
    """One line of `pending --json`: the question's key (`id`), its tool call and run, the request as the model asked
    it, whether it takes notes, and its deadline.
    """
    from .._audience import addressing_json
    from .._json import questions_to_json

    request = record.request
    line = {
        # What `answer` takes: the question's key (its run and its tool call); the tool call id alone is not unique.
        'id': record.key,
        'tool_call_id': request.id,
        'run_id': request.run_id,
        'workflow_id': record.workflow_id,
        'asked_at': _timestamp(record.created_at),
        # As the model wrote them: an option without a description has no `description`, not `null`.
        'questions': questions_to_json(request),
        'notes': request.notes,
        'deadline': None if request.deadline is None else _timestamp(request.deadline),
        # Who may answer (absent: anyone) and where it comes from, as the model's and the application's text.
        **addressing_json(request),
    }
    return _without_nulls(line)


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
    from .._audience import addressing_json
    from ..temporal._store import addressed

    event = record.event
    line: dict[str, Any] = {
        'token': event.token,
        'workflow_id': record.workflow_id,
        'opened_at': _timestamp(record.created_at),
        'name': event.name,
    }
    if event.requests is not None:
        line['calls'] = [_call_json(event.requests, call) for call in event.requests.calls]
    return line | addressing_json(addressed(event))


def _call_json(requests: DeferredToolRequests, call: ToolCallPart) -> dict[str, Any]:
    """A pending call as `pending --json` shows it: its id, its tool and its arguments (`approval_args`)."""
    return {'tool_call_id': call.tool_call_id, 'tool_name': call.tool_name, 'args': approval_args(requests, call)}


def _print_event(record: TemporalEventRecord) -> None:
    """One waiting external event as `pending` shows it to a person, every string from the model made printable."""
    from ..temporal._store import addressed

    event = record.event
    print(
        _('{token}  opened {opened}  workflow {workflow}').format(
            token=printable(event.token), opened=_timestamp(record.created_at), workflow=printable(record.workflow_id)
        )
    )
    shown = addressed(event)
    _print_addressing(shown.audience, shown.context)
    if event.requests is None:
        print('  ' + _('waits for {name} (ask-user resolve TOKEN --json FILE)').format(name=printable(event.name)))
        return
    for call in event.requests.calls:
        args = approval_args(event.requests, call)
        shown = printable(f'{call.tool_name} {terminal_json(args)}', allow_newline=False)
        print('  ' + _('result of') + f': {_clipped(shown)}  ' + _('call {id}').format(id=printable(call.tool_call_id)))


_ARGS_SHOWN = 300
"""How many characters of a pending call and its arguments `pending` shows on its line (`--json` shows them all)."""


def _clipped(text: str) -> str:
    return text if len(text) <= _ARGS_SHOWN else text[: _ARGS_SHOWN - 1] + '…'


def _without_nulls(value: Any) -> Any:
    """`value` with every absent optional field (`None`) left out of its objects, nested ones too, as the tool takes
    them: `run_id` of a request without a run, `deadline` of one without a limit, an option's `description`.
    """
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in cast('dict[str, Any]', value).items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in cast('list[Any]', value)]
    return value


def _print_pending(record: StoredRequest | TemporalRecord) -> None:
    """One waiting request as `pending` shows it to a person, every string from the model made printable."""
    request = record.request
    print(
        _('{id}  asked {asked}  workflow {workflow}').format(
            id=printable(record.key), asked=_timestamp(record.created_at), workflow=printable(record.workflow_id)
        )
    )
    if request.deadline is not None:
        print('  ' + _('waits until {deadline}').format(deadline=_timestamp(request.deadline)))
    _print_addressing(request.audience, request.context)
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


def _print_addressing(audience: tuple[str, ...] | None, context: QuestionContext | None) -> None:
    """Whom a question (or an approval) is for and where it comes from, under its first line, made printable."""
    if audience is not None:
        print('  ' + _('for {names}').format(names=', '.join(printable(name) for name in audience)))
    _print_context(context)


def _print_context(context: QuestionContext | None) -> None:
    """Where a question comes from, under its first line: each part made printable, the summary as written."""
    if context is None:
        return
    if context.title:
        print('  ' + printable(context.title, allow_newline=False))
    origin = [
        _('asked by {agent}').format(agent=printable(context.agent_name)) if context.agent_name else None,
        _('conversation {id}').format(id=printable(context.conversation_id)) if context.conversation_id else None,
    ]
    if shown := [part for part in origin if part]:
        print('  ' + ' · '.join(shown))
    if context.link:
        print('  ' + printable(context.link, allow_newline=False))
    for line in (context.summary or '').split('\n'):
        if line.strip():
            print('  | ' + printable(line, allow_newline=False))


def _cannot_read_questions(args: argparse.Namespace, error: Exception) -> str:
    return _('cannot read the questions in {database}: {error}').format(database=_where(args), error=_first_line(error))


def _read_json(file: str) -> Any:
    if file == '-':
        text = sys.stdin.read()
    else:
        with open(file, encoding='utf-8') as handle:
            text = handle.read()
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError('the JSON is nested too deeply') from None


def run_answer(args: argparse.Namespace) -> int:
    """Answer one waiting question and print what its model gets."""
    return _run_on(_open_store(args), _answer, args)


async def _answer(store: Store, args: argparse.Namespace) -> int:
    from .._answer_json import parse_answer_json
    from .._answers import ask_user_result
    from .._question_store import StoreError, UnknownRequestError
    from .._receipt import os_user_at_host
    from .approvals import answer_approval, answer_wait, approval_meant, is_wait_token

    request_id: str = args.request_id
    if is_wait_token(request_id):
        return await answer_wait(store, args)
    try:
        request = await store.get(request_id)
        if args.approve or args.deny is not None or args.edited_args is not None:
            _fail(_('{id} is a question: answer it with --json, or in the terminal menu').format(id=repr(request_id)))
            return EXIT_INVALID
    except UnknownRequestError as error:
        approval = await approval_meant(store, args, request_id)
        if isinstance(approval, int):
            return approval
        if approval is not None:
            return await answer_approval(store, args, approval)
        # Not a whole id: a unique beginning of a waiting question's, as git takes a commit's.
        try:
            found = await _waiting_with_prefix(store, request_id)
        except Exception as failure:
            _fail(_cannot_read_questions(args, failure))
            return EXIT_CANNOT_ASK
        if len(found) > 1:
            return _ambiguous(request_id, [(record.key, record.request.questions[0].header) for record in found])
        if not found:
            return _store_error(error)
        request_id, request = found[0].key, found[0].request
    except StoreError as error:
        return _store_error(error)
    except Exception as error:
        _fail(_cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    if args.json_file is not None:
        try:
            response = parse_answer_json(request, _read_json(args.json_file))
        except (OSError, UnicodeDecodeError) as error:
            _fail(_('cannot read {path}: {error}').format(path=args.json_file, error=error))
            return EXIT_INVALID
        except ValueError as error:  # json.JSONDecodeError is one
            _fail(_('invalid answer: {error}').format(error=error))
            return EXIT_INVALID
    else:
        asked = await ask_in_terminal(request)
        if isinstance(asked, int):
            return asked
        response = asked
    if response.answered_by is None:
        # Who answers here: the OS user and host; an answer given as JSON may name someone else itself.
        response = replace(response, answered_by=os_user_at_host())
    try:
        result = ask_user_result(request, response)
        await store.respond(request_id, response)
    except StoreError as error:
        return _store_error(error)
    except ValueError as error:
        _fail(_('invalid answer: {error}').format(error=error))
        return EXIT_INVALID
    except Exception as error:  # the database went away after the question was read
        _fail(
            _(
                'cannot send the answer to {database}: {error}; '
                '`ask-user pending` shows whether the question still waits'
            ).format(database=_where(args), error=_first_line(error))
        )
        return EXIT_CANNOT_ASK
    sys.stdout.write(terminal_json(result) + '\n')
    return EXIT_DECLINED if response.cancelled else EXIT_ANSWERED


async def ask_in_terminal(request: AskUserRequest) -> AskUserResponse | int:
    """`request` asked in the terminal menu; an exit code once the problem is said (no terminal, no menu extra)."""
    from .._answers import CannotAskError

    try:
        from .terminal_answerer import open_terminal_answerer
    except ImportError as error:
        from .install import install_hint

        _fail(_('{error}; {hint}, or answer with --json').format(error=error, hint=install_hint('terminal')))
        return EXIT_CANNOT_ASK
    try:
        async with open_terminal_answerer() as answerer:
            return await answerer(request)
    except CannotAskError as error:
        _fail(_('{error}; or answer with --json').format(error=error))
        return EXIT_CANNOT_ASK


MIN_PREFIX = 4
"""The shortest beginning of an id (or a token) that `answer` and `resolve` look up, as git's shortest commit id."""


async def _waiting_with_prefix(store: Store, prefix: str) -> list[StoredRequest | TemporalRecord]:
    """The waiting questions whose id starts with `prefix`; none for a prefix shorter than `MIN_PREFIX`."""
    if len(prefix) < MIN_PREFIX:
        return []
    return [record for record in await store.pending_records() if record.key.startswith(prefix)]


def _ambiguous(prefix: str, candidates: list[tuple[str, str]]) -> int:
    """Say that `prefix` begins several ids, each with what tells it apart, and return `EXIT_INVALID`: nothing sent.

    Every id and header is made printable: an id of an earlier version's row is the model's own tool call id.
    """
    _fail(
        _('{prefix!r} begins {count} ids; give more of the one you mean:').format(prefix=prefix, count=len(candidates))
    )
    for candidate, label in candidates:
        shown = f'{printable(candidate, allow_newline=False)}  {printable(label, allow_newline=False)}'
        print(f'  {shown}'.rstrip(), file=sys.stderr)
    return EXIT_INVALID


def _first_line(error: BaseException) -> str:
    # SQLAlchemy adds the statement, its parameters (the answer) and a link on further lines.
    return str(error).strip().split('\n', 1)[0]


def _store_error(error: StoreError) -> int:
    from .._question_store import AlreadyAnsweredError, UnknownRequestError, WithdrawnError

    request_id = repr(error.request_id)
    if isinstance(error, UnknownRequestError):
        _fail(_('no question is waiting under id {id}').format(id=request_id))
    elif isinstance(error, AlreadyAnsweredError):
        _fail(_('question {id} has already been answered').format(id=request_id))
    elif isinstance(error, WithdrawnError):
        _fail(_('question {id} is no longer waiting for an answer').format(id=request_id))
    else:
        _fail(str(error))
    return error.exit_code


def _shown(database_url: str) -> str:
    """The `--db` URL as an error may show it: its password hidden."""
    from ..dbos._db import shown_database_url

    return shown_database_url(database_url)
