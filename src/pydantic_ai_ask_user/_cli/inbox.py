"""The arguments of `ask-user pending`, `answer` and `resolve`: the questions (and approvals) waiting in a DBOS
database, or in Temporal workflows (`--temporal ADDRESS`, see `pydantic_ai_ask_user.temporal.TemporalQuestionStore`),
from the command line. Each runs in a module of its own (`pending`, `answer`, `resolve`), loaded when it runs.

`pending --temporal` lists the approvals of `TemporalExternalEvents` beside the questions, from the same listing
of the namespace (a line with a `token` where a question's has an `id`): a person looking for what waits for them
should not have to know which kind it is. `resolve --temporal` resolves one, checked before it is sent exactly as
`resolve --db` checks a DBOS wait's decision.

Exit codes of `answer`: 0 answered, 1 declined, 2 invalid JSON or answer, 4 no way to ask here (no
terminal, a missing extra, the database or the Temporal server unreachable, missing or not a question
database, a namespace without the search attribute `AskUserQuestions`), 5 no question under that id,
6 already answered, 7 no longer waiting (its run timed out or was cancelled), 8 not accepted in time, 9 an id
that means several items. `pending` exits 0, or 4.
None creates a database or a table: a typo in `--db` is an error (exit 4), not an empty list.

`inbox` serves the web inbox over the same store (`inbox_serve`, then `inbox_web` once the web extra is found), and
`inbox link NAME` prints a sign-in link for it (`inbox_keys`): the two share a key file.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .._search import check_search_value
from .arguments import command, later, port
from .i18n import _

__all__ = ('register', 'DEFAULT_PENDING_LIMIT', 'DEFAULT_INBOX_PORT', 'MAX_LINK_SECONDS')

_DB_HELP = (
    'the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB (default: sqlite:///ask_user.sqlite)'
)


_TEMPORAL_HELP = (
    'the questions (TemporalAnswerer) and approvals (TemporalExternalEvents) waiting in Temporal workflows, on this '
    'Temporal server, instead'
)

DEFAULT_INBOX_PORT = 8770
"""The port `ask-user inbox` serves on unless `--port` says: fixed, so its links name the same address each time."""

MAX_LINK_SECONDS = 30 * 24 * 3600
"""The longest a sign-in link may work: 30 days."""

DEFAULT_PENDING_LIMIT = 10
"""How many questions `ask-user pending` prints unless `--limit` says: about a screenful (each takes a few lines)."""


def _page_size(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text[:6]) <= 500:
        raise argparse.ArgumentTypeError(_('give a whole number from 1 to 500, not {text!r}').format(text=text[:20]))
    return int(text)


def _search_value(name: str) -> Callable[[str], str]:
    """The argparse type of a search option: one line of printable text, at most `MAX_SEARCH_LENGTH` characters."""

    def check(text: str) -> str:
        try:
            value = check_search_value(name, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        if value is None:
            raise argparse.ArgumentTypeError(_('{option} takes a non-empty value').format(option=name))
        return value

    return check


def _add_search(parser: argparse.ArgumentParser, kind_help: str) -> None:
    """The search options `pending` and `history` share (`_search`): each narrows the listing, never widens it."""
    parser.add_argument(
        '--agent', type=_search_value('--agent'), metavar='NAME', help='only the items of the agent NAME (exactly)'
    )
    parser.add_argument(
        '--title', type=_search_value('--title'), metavar='TEXT', help='only items whose title holds TEXT (any case)'
    )
    parser.add_argument(
        '--conversation',
        type=_search_value('--conversation'),
        metavar='ID',
        help='only the items of the conversation ID (exactly)',
    )
    parser.add_argument(
        '--addressee',
        type=_search_value('--addressee'),
        metavar='NAME',
        help='only items addressed to the name or group NAME',
    )
    parser.add_argument('--kind', choices=('question', 'approval'), help=kind_help)
    parser.add_argument(
        '--search',
        type=_search_value('--search'),
        metavar='TEXT',
        help=(
            'only items whose text holds TEXT (any case): the questions, options, title and summary, or the tool '
            'name and arguments'
        ),
    )


def _seconds(text: str) -> float:
    try:
        seconds = float(text[:30])
    except ValueError:
        seconds = -1.0
    if not (seconds >= 0 and seconds != float('inf')):
        raise argparse.ArgumentTypeError(_('give a number of seconds, 0 or more, not {text!r}').format(text=text[:20]))
    return seconds


def _link_seconds(text: str) -> float:
    seconds = _seconds(text)
    if not 0 < seconds <= MAX_LINK_SECONDS:
        raise argparse.ArgumentTypeError(
            _('give a number of seconds, more than 0 and at most {most}, not {text!r}').format(
                most=MAX_LINK_SECONDS, text=text[:20]
            )
        )
    return seconds


def _connections(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text[:7]) <= 1_000_000:
        raise argparse.ArgumentTypeError(
            _('give a whole number from 1 to 1000000, not {text!r}').format(text=text[:20])
        )
    return int(text)


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
    """Add `pending`, `history`, `answer`, `forward` and `resolve` to the `ask-user` command line."""
    pending = command(
        subparsers,
        'pending',
        later('pending', 'run_pending'),
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
    _add_search(pending, 'only questions, or only tool approvals')

    history = command(
        subparsers,
        'history',
        later('history', 'run_history'),
        summary='list the questions and approvals that finished in a DBOS database or in Temporal',
        description=(
            'List the questions answered, declined or withdrawn and the tool approvals decided or withdrawn in the '
            'database, across all workflows, the latest first, a page at a time: with the outcome, who answered or '
            'decided, when, and what (the answers; the arguments, the edited ones, the reason or the reply). History '
            'ends where the finished items are pruned (a week after they finished, by default). A line on stderr '
            'says how many there are in all and how to see the next page (--cursor); with --json the last line is '
            '{"total": N, "next_cursor": ...}. Administrative access, as pending: --for only narrows the list to what '
            'NAME may see (addressed to NAME or a --group, or to anyone, or answered by NAME). With --temporal, read '
            'from the event histories of the workflows, a page of workflows at a time, in the order Temporal lists '
            'them (running ones first, then the most recently closed). A signed receipt kept with an answer is shown, '
            'verified with the key in the environment variable ASK_USER_RECEIPT_KEY (never an option: ps shows '
            'options), or said to be not checked without it.'
        ),
    )
    _add_source(history, 'the Temporal server whose workflows to read the history of')
    history.add_argument('--json', action='store_true', help='print one JSON object per line instead of text')
    history.add_argument(
        '--for',
        metavar='NAME',
        dest='for_name',
        help=(
            'only what NAME may see: addressed to NAME (or to one of the --group names), unaddressed, or answered '
            'or decided by NAME. A filter, not access control'
        ),
    )
    history.add_argument(
        '--group', metavar='NAME', action='append', default=[], help='with --for: a group NAME belongs to (repeat)'
    )
    history.add_argument(
        '--limit',
        type=_page_size,
        default=DEFAULT_PENDING_LIMIT,
        metavar='N',
        help=f'show at most N items, 1 to 500 (default: {DEFAULT_PENDING_LIMIT})',
    )
    history.add_argument('--cursor', metavar='CURSOR', help='start after the page that printed this cursor')
    _add_search(history, 'only questions, or only tool approvals')

    answer = command(
        subparsers,
        'answer',
        later('answer', 'run_answer'),
        summary='answer a waiting question in the terminal menu, or from JSON',
        description=(
            'Answer the question ID in the terminal menu, or with --json from FILE or stdin: either '
            '{"answers": [{"header": ..., "selected": [...]} or {"header": ..., "custom_answer": ...}], '
            '"cancelled": false}, {"cancelled": true} to decline, or the shape the model gets, '
            '{"HEADER": ["LABEL", ...]} (labels match ignoring case and width) or {"HEADER": {"custom": "TEXT"}} '
            'for your own words. '
            'A tool approval (an id that pending shows with a tool name) is decided with --approve, --deny [REASON], '
            '--args JSON (approve with these arguments), --respond TEXT (do not run it: the model gets TEXT '
            'instead), --ignore (dismiss it: the model is told so), or --json holding "approve", {"deny": "REASON"}, '
            '{"args": {...}}, {"respond": "TEXT"} or "ignore". '
            "With a wait's token instead of an id, --json decides every item of the wait at once "
            '(all or nothing): {"CALL_ID": decision or answer, ...}. '
            'Exit codes: 0 answered or approved, 1 declined, denied, responded to or ignored (the call did not '
            'run), 2 invalid answer, 4 cannot ask here, '
            '5 unknown id, 6 already answered, 7 no longer waiting, 8 --timeout ran out before a Temporal worker '
            'accepted the answer, 9 the id means several waiting items (each is listed). ID may also be a tool call '
            'id, or the beginning (4 characters or more) of an id.'
        ),
    )
    # The id `pending` shows is the question's key (its run and its call), not the bare tool call id.
    answer.add_argument(
        'item',
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
    given.add_argument(
        '--respond',
        metavar='TEXT',
        help='do not run the tool call ID: give the model TEXT instead, as what came back',
    )
    given.add_argument(
        '--ignore', action='store_true', help='dismiss the tool call ID: it does not run, and the model is told so'
    )

    forward = command(
        subparsers,
        'forward',
        later('forward', 'run_forward'),
        summary='hand a waiting question or approval on to other people or groups, with a note',
        description=(
            'Hand the waiting question or tool approval ID on to the people or groups --to names: they alone may '
            'answer it now (with --add, they as well as those before). The run waiting for it is not told: it gets '
            'its one answer, from whoever answers. The hand-off (who, when, from whom to whom, the note) is kept '
            'with the item and in its history. Prints the hand-off as JSON. Administrative access, as answer. '
            'On Temporal, an approval is forwarded with the other approvals of its wait. Exit codes: 0 forwarded, '
            '2 a bad name or note, 4 cannot reach the store, 5 unknown id, 6 already answered, 7 no longer waiting, '
            '9 the id means several waiting items.'
        ),
    )
    forward.add_argument('item', metavar='ID', help="the id `ask-user pending` shows (a question's or an approval's)")
    forward.add_argument(
        '--to',
        metavar='NAME',
        action='append',
        required=True,
        help='a person or group (team:oncall) to hand it to (repeat for several)',
    )
    forward.add_argument('--note', metavar='TEXT', default='', help='a note for them (kept in the history)')
    forward.add_argument('--add', action='store_true', help='add them to whom it is addressed instead of replacing')
    _add_source(forward)

    resolve = command(
        subparsers,
        'resolve',
        later('resolve', 'run_resolve'),
        summary='resolve a HandleDeferredToolCalls wait (an approval) of a DBOS run or a Temporal workflow from here',
        description=(
            'End the wait of TOKEN, handed out by DBOSExternalEvents (or, with --temporal, TemporalExternalEvents) '
            "to HandleDeferredToolCalls's ask, with --json FILE|- "
            '(the DeferredToolResults deciding every pending call and nothing else, e.g. {"approvals": '
            '{"CALL_ID": true}, "calls": {"CALL_ID": {"Database": ["SQLite"]}}}) or --fail REASON (every pending '
            'approval is denied with REASON). Exit codes: 0 resolved, 2 invalid JSON, not a token, a call left '
            'out or not pending, or an answer that does not fit its question (nothing is sent), 4 cannot reach '
            'the database or the Temporal server, or a missing extra, 7 no run waits on this token any more, '
            '8 --timeout ran out before a Temporal worker accepted the decision, 9 the beginning of a token that '
            'several open waits share (each is listed).'
        ),
    )
    resolve.add_argument('token', metavar='TOKEN', help='the token HandleDeferredToolCalls handed to your ask function')
    _add_source(resolve, 'the waits of Temporal workflows (TemporalExternalEvents), on this Temporal server, instead')
    _add_accept_timeout(resolve)
    decision = resolve.add_mutually_exclusive_group(required=True)
    decision.add_argument('--json', metavar='FILE|-', dest='json_file', help='the DeferredToolResults as JSON')
    decision.add_argument('--fail', metavar='REASON', help='end the wait without results, for this reason')

    _register_inbox(subparsers)


_KEY_FILE_HELP = (
    'the file holding the key that signs the sign-in links, and the address the links name; shared by ask-user '
    'inbox and ask-user inbox link (default: a file per --db or --temporal under ~/.config/ask-user/inbox, made '
    'with mode 0600)'
)
"""The help of `--key-file`, which `inbox` and `inbox link` both take."""


def _register_inbox(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `inbox` and its `inbox link` to the `ask-user` command line."""
    inbox = command(
        subparsers,
        'inbox',
        later('inbox_serve', 'run_inbox'),
        summary='serve the team inbox in a browser, over a DBOS database or Temporal workflows',
        description=(
            'Serve the web inbox over the questions and tool approvals waiting in a DBOS database (--db) or in the '
            'workflows of a Temporal namespace (--temporal), until Ctrl-C or SIGTERM: the pages, the JSON API, the '
            'event stream and the approvals, each person seeing only what is addressed to them. People sign in with '
            'one-time links that ask-user inbox link NAME prints, or through your own --authorize hook. Without '
            '--authorize, on a loopback address, an administrator link is printed at start; on any other address give'
            ' --url, the address people open. With --notify, a Notifier you make tells people of what waits for them '
            '(by e-mail, Slack, ...) beside the inbox. With the environment variable ASK_USER_RECEIPT_KEY set to the '
            'key the runs sign receipts with, the History tab verifies each kept receipt. Needs the web extra and the '
            'dbos or temporal extra. Exit '
            'codes: 0 stopped, 2 invalid arguments, or a --authorize or --notify function that cannot be loaded or '
            'fails, 4 the store cannot be read, the address cannot be served or an extra is missing. Creates no '
            'database or table.'
        ),
    )
    _add_source(inbox, 'the questions and approvals waiting in Temporal workflows, on this Temporal server, instead')
    inbox.add_argument('--host', default='127.0.0.1', help='the address to serve on (default: %(default)s)')
    inbox.add_argument(
        '--port', type=port, default=DEFAULT_INBOX_PORT, help='the port (default: %(default)s; 0: any free one)'
    )
    inbox.add_argument(
        '--url',
        metavar='URL',
        help=(
            'the address people open, which the sign-in links name (https://inbox.example.com/ behind a proxy); '
            'default: http://HOST:PORT/'
        ),
    )
    inbox.add_argument('--title', help="the name in each page's title and header bar")
    inbox.add_argument('--key-file', metavar='FILE', help=_KEY_FILE_HELP)
    inbox.add_argument(
        '--authorize',
        metavar='MODULE:FUNCTION',
        help=(
            'your own sign-in instead of links: FUNCTION(request) of MODULE returns a Person, a name, True or False '
            '(the Authorize hook of create_app), imported from --app-dir'
        ),
    )
    inbox.add_argument(
        '--notify',
        metavar='MODULE:FUNCTION',
        help=(
            'tell people where they are while the inbox serves: FUNCTION(store, links) of MODULE returns a Notifier '
            '(with EmailChannel, say); links (an InboxLinks) name --url and sign with the inbox key. A channel '
            'people answer on is served at notify/NAME under the inbox'
        ),
    )
    inbox.add_argument(
        '--app-dir',
        metavar='DIR',
        default='.',
        help=(
            'with --authorize or --notify: the directory MODULE is imported from, first (default: the current '
            'directory)'
        ),
    )
    inbox.add_argument(
        '--forwarded-allow-ips',
        metavar='IPS',
        help=(
            'the proxies (comma-separated addresses, * for any) whose X-Forwarded-Proto and X-Forwarded-For are '
            'believed, so that behind one that ends HTTPS the cookies are Secure (default: 127.0.0.1)'
        ),
    )
    inbox.add_argument(
        '--max-connections',
        type=_connections,
        metavar='N',
        default=512,
        help='how many connections at once, at most (default: %(default)s; each open page holds one)',
    )
    inbox.add_argument(
        '--max-connections-per-ip',
        type=_connections,
        metavar='N',
        default=128,
        help='how many one client address may hold (default: %(default)s; behind a proxy, everyone has its address)',
    )
    inbox.add_argument(
        '--open',
        action='store_true',
        help="open the administrator's link in a browser on this machine (without --authorize, on a loopback address)",
    )
    actions = inbox.add_subparsers(dest='inbox_action', metavar='ACTION')
    link = actions.add_parser(
        'link',
        help='print a one-time sign-in link for a person',
        description=(
            'Print a link that signs one browser in to the inbox ask-user inbox serves (the same --db or '
            '--temporal, or --key-file) as NAME, with the groups given, or with --admin as someone who sees every '
            "item. Each link works once, until it expires; the server remembers the links used (in the key file's "
            '.used file beside it). Exit codes: 0 printed, 2 invalid arguments, 4 no key file or no address '
            'known yet (start ask-user inbox first, or give --url).'
        ),
    )
    link.set_defaults(func=later('inbox_keys', 'run_link'))
    link.add_argument('name', metavar='NAME', help='who the link signs in: the name their questions are addressed to')
    link.add_argument(
        '--group',
        metavar='GROUP',
        action='append',
        default=[],
        help='a group NAME belongs to, whose items they see too (repeat for several)',
    )
    link.add_argument('--admin', action='store_true', help='sign in someone who sees and may answer every item')
    link.add_argument(
        '--expires-in',
        type=_link_seconds,
        metavar='SECONDS',
        default=24 * 3600.0,
        help='how long the link works, unused (default: a day, 86400)',
    )
    _add_source(link, 'the inbox serving the Temporal workflows of this Temporal server')
    link.add_argument('--key-file', metavar='FILE', help=_KEY_FILE_HELP)
    link.add_argument(
        '--url', metavar='URL', help='the address of the inbox (default: the one ask-user inbox recorded)'
    )
