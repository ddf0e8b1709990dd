"""What the commands over a store share (`pending`, `answer`, `resolve`): opening the store `--db` or `--temporal`
names, running on it, reading what the person gives, and saying a problem in one line.

Loaded when one of those commands runs, never when the command line is built (`inbox` registers them by name). It
imports neither the question models nor a store at its top, so that `ask-user pending` on a SQLite file prints with
it without them: the DBOS store is loaded when `open_store` opens one (the `dbos` package loads each name on first
use), the Temporal store only when `--temporal` asks for it, as it loads the Temporal SDK.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import anyio

from .. import dbos
from .._audience import Person, QuestionContext
from .._question_store import AlreadyAnsweredError, ApprovalStore, StoreError, UnknownRequestError, WithdrawnError
from .._signing import check_key
from .._text import printable
from .arguments import END_AT_ONCE
from .exit_codes import EXIT_AMBIGUOUS, EXIT_CANNOT_ASK, EXIT_NOT_ACCEPTED
from .i18n import _
from .install import install_hint

if TYPE_CHECKING:
    from .._answers import AskUserRequest, AskUserResponse
    from ..temporal import TemporalQuestionStore

__all__ = (
    'Store',
    'DEFAULT_DB',
    'MIN_PREFIX',
    'NOTICE_SECONDS',
    'ARGS_SHOWN',
    'fail',
    'first_line',
    'read_text',
    'read_json',
    'timestamp',
    'without_nulls',
    'clipped',
    'where',
    'shown',
    'cannot_read_questions',
    'ambiguous',
    'store_error',
    'dbos_source',
    'open_store',
    'open_temporal_store',
    'run_on',
    'ask_in_terminal',
    'print_addressing',
    'person_asked_for',
    'next_page_command',
    'RECEIPT_KEY_VARIABLE',
    'receipt_key',
)

DEFAULT_DB = 'sqlite:///ask_user.sqlite'
"""The DBOS database `--db` names when neither it nor `--temporal` is given."""

RECEIPT_KEY_VARIABLE = 'ASK_USER_RECEIPT_KEY'
"""The environment variable `history` and `inbox` read the receipt key from (the runs' `AskUser(receipt_key=...)`):
an environment variable, as the webhook key, never an option, which `ps` would show to every user of the machine."""

MIN_PREFIX = 4
"""The shortest beginning of an id (or a token) that `answer` and `resolve` look up, as git's shortest commit id."""

NOTICE_SECONDS = 3.0
"""How long `answer` or `resolve --temporal` waits before it says that it waits for a worker."""

ARGS_SHOWN = 300
"""How many characters of a pending call and its arguments `pending` shows on its line (`--json` shows them all)."""


class Store(ApprovalStore, Protocol):
    """Where the commands find the questions and approvals: a DBOS database's store or a Temporal namespace's, through
    the store contract only, and closed when the command ends.
    """

    def close(self) -> None:
        """Let go of the store's connections."""
        ...


_AnyStore = TypeVar('_AnyStore', bound='Store')
"""A store `run_on` runs a command on: a DBOS database's, or a Temporal namespace's."""


def fail(message: str) -> None:
    """Say `message` on stderr, as `ask-user: ...`, every character of it printable."""
    print(f'ask-user: {printable(message)}', file=sys.stderr)


def first_line(error: BaseException) -> str:
    """The first line of `error`: SQLAlchemy adds the statement, its parameters (the answer) and a link on further
    lines.
    """
    return str(error).strip().split('\n', 1)[0]


def read_text(path: str) -> str | None:
    """The text of the file `path`; `None` once the problem is said."""
    try:
        with open(path, encoding='utf-8') as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        fail(_('cannot read {path}: {error}').format(path=path, error=error))
        return None


def read_json(file: str) -> Any:
    """The JSON in `file` (`-`: stdin); `OSError`, `UnicodeDecodeError` or `ValueError` when it cannot be read."""
    if file == '-':
        text = sys.stdin.read()
    else:
        with open(file, encoding='utf-8') as handle:
            text = handle.read()
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError('the JSON is nested too deeply') from None


def timestamp(seconds: float) -> str:
    """A moment as the commands print it: ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec='seconds')


def without_nulls(value: Any) -> Any:
    """`value` with every absent optional field (`None`) left out of its objects, nested ones too, as the tool takes
    them: `run_id` of a request without a run, `deadline` of one without a limit, an option's `description`.
    """
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in cast('dict[str, Any]', value).items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in cast('list[Any]', value)]
    return value


def clipped(text: str) -> str:
    """`text` cut to `ARGS_SHOWN` characters, an ellipsis marking the cut."""
    return text if len(text) <= ARGS_SHOWN else text[: ARGS_SHOWN - 1] + '…'


def shown(database_url: str) -> str:
    """The `--db` URL as an error may show it: its password hidden."""
    return dbos.shown_database_url(database_url)


def where(args: argparse.Namespace) -> str:
    """Where the questions are, as an error names it: the database (its password hidden) or the Temporal namespace."""
    if args.temporal is None:
        return shown(args.db)
    return _('the Temporal namespace {namespace} at {address}').format(
        namespace=args.namespace or 'default', address=args.temporal
    )


def cannot_read_questions(args: argparse.Namespace, error: Exception) -> str:
    """The problem of a store that cannot be read, as a command says it."""
    return _('cannot read the questions in {database}: {error}').format(database=where(args), error=first_line(error))


def ambiguous(prefix: str, candidates: list[tuple[str, str]]) -> int:
    """Say that `prefix` means several ids, each with what tells it apart, and return `EXIT_AMBIGUOUS`: nothing sent.

    Every id and header is made printable: an id of an earlier version's row is the model's own tool call id.
    """
    fail(
        _('{prefix!r} means {count} waiting items; give the whole id of the one you mean:').format(
            prefix=prefix, count=len(candidates)
        )
    )
    for candidate, label in candidates:
        line = f'{printable(candidate, allow_newline=False)}  {printable(label, allow_newline=False)}'
        print(f'  {line}'.rstrip(), file=sys.stderr)
    return EXIT_AMBIGUOUS


def store_error(error: StoreError) -> int:
    """Say why the question cannot be answered; the exit code of that."""
    key = repr(error.request_id)
    if isinstance(error, UnknownRequestError):
        fail(_('no question is waiting under id {id}').format(id=key))
    elif isinstance(error, AlreadyAnsweredError):
        fail(_('question {id} has already been answered').format(id=key))
    elif isinstance(error, WithdrawnError):
        fail(_('question {id} is no longer waiting for an answer').format(id=key))
    else:
        fail(str(error))
    return error.exit_code


def dbos_source(args: argparse.Namespace) -> str | None:
    """For a command on a DBOS database (no `--temporal`): `--db` given its default, or the problem with the
    arguments (`--namespace` without `--temporal`).
    """
    if args.namespace is not None:
        return _('--namespace is a Temporal namespace: give --temporal HOST:PORT with it')
    if args.db is None:
        args.db = DEFAULT_DB
    return None


def open_store(args: argparse.Namespace) -> Store | str:
    """The store `--db` or `--temporal` names, or what stops it from opening."""
    if args.temporal is not None:
        return open_temporal_store(args)
    if (problem := dbos_source(args)) is not None:
        return problem
    try:
        # Never create: a typo in --db must be an error, not a new, empty database. Unpooled: one command's few
        # statements need no pool, and psycopg alone starts without SQLAlchemy.
        return dbos.DBOSQuestionStore(args.db, create_table=False, pooled=False)
    except ValueError as error:
        return str(error)


def open_temporal_store(args: argparse.Namespace) -> TemporalQuestionStore | str:
    """The store of the Temporal namespace `--temporal` and `--namespace` name, or what stops it from opening."""
    try:
        # Here, not at the top: the Temporal SDK is the `temporal` extra's, and only `--temporal` needs it.
        from ..temporal import DEFAULT_NAMESPACE, TemporalQuestionStore
    except ImportError as error:
        return _('{error}; {hint}').format(error=error, hint=install_hint('temporal'))
    setattr(args, END_AT_ONCE, True)  # the Temporal client's runtime may abort the interpreter's clean-up
    return TemporalQuestionStore(args.temporal, namespace=args.namespace or DEFAULT_NAMESPACE)


def run_on(
    store: _AnyStore | str, run: Callable[[_AnyStore, argparse.Namespace], Awaitable[int]], args: argparse.Namespace
) -> int:
    """`run(store, args)` in an event loop, the store closed after; or, when `store` is what stopped it from opening,
    that said (exit 4).
    """
    if isinstance(store, str):
        fail(store)
        return EXIT_CANNOT_ASK
    try:
        if getattr(args, 'temporal', None) is not None and hasattr(args, 'accept_timeout'):
            return anyio.run(_patiently, run, store, args)
        return anyio.run(run, store, args)
    finally:
        store.close()


async def _patiently(
    run: Callable[[_AnyStore, argparse.Namespace], Awaitable[int]], store: _AnyStore, args: argparse.Namespace
) -> int:
    """`run(store, args)`, saying so on stderr when it still waits after `NOTICE_SECONDS`, and given up (exit 8) at
    `--timeout`. A Temporal workflow takes an answer (an Update) only through a running worker of its task queue:
    with none, the server holds the answer and the command would wait, silent, until one comes back.
    """

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
    fail(
        _(
            'no worker accepted it within {seconds:g} s, so this command recorded nothing; the server may still hand '
            'it to a worker that comes back: `ask-user pending --temporal` shows whether it still waits'
        ).format(seconds=args.accept_timeout)
    )
    return EXIT_NOT_ACCEPTED


async def ask_in_terminal(request: AskUserRequest) -> AskUserResponse | int:
    """`request` asked in the terminal menu; an exit code once the problem is said (no terminal, no menu extra)."""
    try:
        # Here, not at the top: the menu is the `terminal` extra's, and an answer given as JSON does not need it.
        # It names the error the menu raises when it cannot ask, so that this module loads no question model.
        from .terminal_answerer import CannotAskError, open_terminal_answerer
    except ImportError as error:
        fail(_('{error}; {hint}, or answer with --json').format(error=error, hint=install_hint('terminal')))
        return EXIT_CANNOT_ASK
    try:
        async with open_terminal_answerer() as answerer:
            return await answerer(request)
    except CannotAskError as error:
        fail(_('{error}; or answer with --json').format(error=error))
        return EXIT_CANNOT_ASK


def print_addressing(audience: tuple[str, ...] | None, context: QuestionContext | None) -> None:
    """Whom a question (or an approval) is for and where it comes from, under its first line, made printable."""
    if audience is not None:
        print('  ' + _('for {names}').format(names=', '.join(printable(name) for name in audience)))
    if context is None:
        return
    if context.title:
        print('  ' + printable(context.title, allow_newline=False))
    origin = [
        _('asked by {agent}').format(agent=printable(context.agent_name)) if context.agent_name else None,
        _('conversation {id}').format(id=printable(context.conversation_id)) if context.conversation_id else None,
    ]
    if parts := [part for part in origin if part]:
        print('  ' + ' · '.join(parts))
    if context.link:
        print('  ' + printable(context.link, allow_newline=False))
    for line in (context.summary or '').split('\n'):
        if line.strip():
            print('  | ' + printable(line, allow_newline=False))


def person_asked_for(args: argparse.Namespace) -> Person | str | None:
    """Whom `--for NAME` (with each `--group NAME`) narrows a listing to (`None`: everyone), or the usage error."""
    try:
        who = None if args.for_name is None else Person(args.for_name, groups=args.group)
    except (TypeError, ValueError) as error:
        return str(error)
    if who is None and args.group:
        return _('--group needs --for NAME: the groups are those of the person named')
    return who


def search_options(args: argparse.Namespace) -> list[str]:
    """The search options of this run (`--agent`, `--title`, `--conversation`, `--addressee`, `--kind`, `--search`)
    as words, to repeat them in the next page's command.
    """
    words: list[str] = []
    for option, value in (
        ('--agent', args.agent),
        ('--title', args.title),
        ('--conversation', args.conversation),
        ('--addressee', args.addressee),
        ('--kind', args.kind),
        ('--search', args.search),
    ):
        if value is not None:
            words += [option, value]
    return words


def next_page_command(
    args: argparse.Namespace, command: str, cursor: str | None, *, default_limit: int, options: list[str]
) -> str | None:
    """The command that lists the next page: `command` with this run's options again (so that it can be pasted),
    `options` (the command's own, as words) and `cursor`; `None` on the last page.

    A database URL's password is not repeated: the command shows where to put it back (`***`).
    """
    if cursor is None:
        return None
    words = ['ask-user', command]
    if args.temporal is not None:
        words += ['--temporal', args.temporal, *(['--namespace', args.namespace] if args.namespace else [])]
    elif args.db != DEFAULT_DB:
        words += ['--db', shown(args.db)]
    if args.for_name is not None:
        words += ['--for', args.for_name, *(word for group in args.group for word in ('--group', group))]
    if args.limit != default_limit:
        words += ['--limit', str(args.limit)]
    return shlex.join([*words, *options, '--cursor', cursor])


def receipt_key(environ: Mapping[str, str]) -> bytes | None:
    """The key `$ASK_USER_RECEIPT_KEY` holds (UTF-8 encoded, as `AskUser` encodes a `str` key), `None` when it is unset
    or empty; `ValueError` saying so when it is too short to be a signing key (never echoing it).
    """
    text = environ.get(RECEIPT_KEY_VARIABLE, '')
    if not text:
        return None
    try:
        return check_key(text)
    except ValueError as error:
        raise ValueError(f'${RECEIPT_KEY_VARIABLE}: {error}') from None
