"""`ask-user resolve TOKEN`: end one external-event wait of a DBOS run or (`--temporal`) of a Temporal workflow, with
a decision (`--json`) or a failure (`--fail`), checked against the wait before anything is sent.

On a SQLite file a DBOS wait is resolved loading neither Pydantic AI, DBOS nor SQLAlchemy: the database through
`sqlite3`, the decision read as Pydantic AI reads it (`read_decision`), the wait ended as `resolve_dbos_event` ends it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from .._decision import Decision, read_decision, with_answered_by
from .._receipt import os_user_at_host
from .._text import terminal_json
from .._wait_calls import WaitCalls, checked_decision
from ..dbos import (
    NotAQuestionDatabaseError,
    NotAWaitTokenError,
    WaitNotOpenError,
    check_sqlite_file,
    checked_for_wait,
    end_wait,
    wait_tokens_starting_with,
)
from .common import (
    MIN_PREFIX,
    ambiguous,
    cannot_read_questions,
    dbos_source,
    fail,
    first_line,
    open_temporal_store,
    read_text,
    run_on,
    shown,
    where,
)
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_INVALID, EXIT_WITHDRAWN
from .i18n import _
from .install import install_hint

if TYPE_CHECKING:
    from ..temporal import TemporalQuestionStore

__all__ = ('run_resolve',)


def run_resolve(args: argparse.Namespace) -> int:
    """Resolve (or fail) one external-event wait of a DBOS run, or (`--temporal`) of a Temporal workflow."""
    if args.temporal is not None:
        return run_on(open_temporal_store(args), _resolve_temporal, args)
    if (problem := dbos_source(args)) is not None:
        fail(problem)
        return EXIT_CANNOT_ASK
    try:
        # Never create: opening a missing SQLite file would make an empty one, and say "no wait has this token".
        try:
            check_sqlite_file(args.db)
        except NotAQuestionDatabaseError as error:
            fail(cannot_read_questions(args, error))
            return EXIT_CANNOT_ASK
        found = _tokens_meant(args.db, args.token)
        if len(found) > 1:
            return ambiguous(args.token, [(token, '') for token in found])
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
                fail(_('invalid answer: {error}').format(error=error))
                return EXIT_INVALID
        end_wait(args.token, message, args.db)
    except ImportError as error:  # PostgreSQL without its driver, or an answer's check without an extra
        fail(_('{error}; {hint}').format(error=error, hint=install_hint('dbos')))
        return EXIT_CANNOT_ASK
    except NotAWaitTokenError:
        fail(_('this is not a DBOSEventWaiter token: it names no DBOS workflow'))
        return EXIT_INVALID
    except WaitNotOpenError:
        fail(
            _('no wait has this token: it was resolved already, its deadline passed, or it is unknown to this database')
        )
        return EXIT_WITHDRAWN
    except Exception as error:
        fail(
            _('cannot reach the database {database}: {error}').format(database=shown(args.db), error=first_line(error))
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
    text = sys.stdin.read() if args.json_file == '-' else read_text(args.json_file)
    if text is None:
        return None
    try:
        results = read_decision(text)
    except (ValueError, RecursionError) as error:
        problem = first_line(error) or type(error).__name__
        fail(_('not a DeferredToolResults: {problem}').format(problem=problem))
        return None
    try:
        # Who decides here: the OS user and host, unless the JSON names who decided each call.
        return with_answered_by(checked(results), os_user_at_host())
    except ValueError as error:
        fail(_('invalid answer: {error}').format(error=error))
        return None


def _tokens_meant(database_url: str, token: str) -> list[str]:
    """`[token]` when a wait is open under it; else the open waits' tokens that begin with it (at least `MIN_PREFIX`
    characters): one is the token meant, several are ambiguous. `[]` when none is open (resolving says why).
    """
    tokens = wait_tokens_starting_with(database_url, token)
    if token in tokens:
        return [token]
    return tokens if len(token) >= MIN_PREFIX else []


async def _resolve_temporal(store: TemporalQuestionStore, args: argparse.Namespace) -> int:
    """Resolve (or fail) one wait of `TemporalExternalEvents` in a workflow of the namespace `--temporal` names."""
    # Here, not at the top: the Temporal SDK is the `temporal` extra's, and only `--temporal` needs it.
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError, RPCStatusCode

    from ..temporal import fail_temporal_event, resolve_temporal_event

    gone = _(
        'no wait has this token: it was resolved already, its deadline passed, or no workflow of this namespace '
        'waits on it'
    )
    try:
        found = await store.wait_tokens_meant(args.token, min_prefix=MIN_PREFIX)
        if len(found) > 1:
            return ambiguous(args.token, [(token, '') for token in found])
        if not found:
            fail(_('this is not a TemporalEventWaiter token: it names no Temporal workflow'))
            return EXIT_INVALID
        token = found[0]
        event = await store.open_wait(token)
        if event is None:
            fail(gone)
            return EXIT_WITHDRAWN
        client = await store.connected()
        if args.fail is not None:
            sent = fail_temporal_event(client, token, args.fail)
        else:
            requests = event.requests
            results = _decision(
                args,
                lambda results: results if requests is None else checked_decision(results, WaitCalls.of(requests), {}),
            )
            if results is None:
                return EXIT_INVALID
            sent = resolve_temporal_event(client, token, results)
        try:
            await sent
        except WorkflowUpdateFailedError as error:
            # Refused by the workflow: decided a moment ago from elsewhere (its wait is over), or does not fit.
            if await store.open_wait(token) is None:
                fail(gone)
                return EXIT_WITHDRAWN
            fail(_('invalid answer: {error}').format(error=first_line(error.cause or error)))
            return EXIT_INVALID
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            fail(gone)
            return EXIT_WITHDRAWN
        fail(_cannot_reach_temporal(args, error))
        return EXIT_CANNOT_ASK
    except Exception as error:  # the server unreachable, or the namespace without the search attribute
        fail(_cannot_reach_temporal(args, error))
        return EXIT_CANNOT_ASK
    print(terminal_json({'resolved': token}))
    return EXIT_ANSWERED


def _cannot_reach_temporal(args: argparse.Namespace, error: BaseException) -> str:
    return _('cannot resolve the wait in {where}: {error}').format(where=where(args), error=first_line(error))
