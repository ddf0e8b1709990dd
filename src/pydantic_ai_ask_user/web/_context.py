"""What the pages and the JSON API share: the store, the gate, the options, and whether the server has finished."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, cast

from starlette.requests import Request

from pydantic_ai_ask_user import AskUserRequest, Person
from pydantic_ai_ask_user._approvals import PendingApproval
from pydantic_ai_ask_user._audience import audience_includes
from pydantic_ai_ask_user._escalation import Handoff
from pydantic_ai_ask_user._history import handoff_json
from pydantic_ai_ask_user._i18n import N_
from pydantic_ai_ask_user._question_store import EVERYTHING, ApprovalStore, PendingFilter, PendingPage, page_approvals
from pydantic_ai_ask_user._text import printable
from pydantic_ai_ask_user.store import DEFAULT_PAGE_SIZE, QuestionStore, StoreError, UnknownRequestError, addressed_to

from ._options import WebOptions
from ._security import Gate, wants_json

__all__ = (
    'handoffs_of',
    'pending_handoffs',
    'AppContext',
    'DEFAULT_LOGIN_HELP',
    'ID',
    'base_path',
    'is_api',
    'unreachable',
    'log_unreachable',
    'cookie_options',
    'approval_store',
    'approvals_for',
)

DEFAULT_LOGIN_HELP = N_('Ask whoever gave you the link for a new one, or use the browser you signed in with.')
"""What the sign-in pages tell a person whose link did not work; `ask-user ask --web` says how to get a new one."""

ID = re.compile(r'[A-Za-z0-9_.:-]{1,200}')
"""What a request id in a path may look like; anything else is unknown without asking the store."""

_UNREACHABLE_ERRORS = frozenset({'OperationalError', 'InterfaceError', 'DisconnectionError'})
"""DB-API (PEP 249) and SQLAlchemy errors for a database that cannot be reached: connection lost, not found."""

_log = logging.getLogger('pydantic_ai_ask_user.web')


def seen_by(who: Person, error: StoreError, key: str) -> StoreError:
    """`error` of the item `key` (a question or an approval) as `who` may be told it: when it says the item was
    someone else's (answered, decided or withdrawn, `StoreError.audience_known`), the very error of a missing one
    (`UnknownRequestError`), never one that says it exists.
    """
    if error.audience_known and not audience_includes(error.audience, who):
        return UnknownRequestError(key)
    return error


class AppContext:
    """One app's store, gate and options, and its state: what the sign-in pages say, whether it has finished."""

    def __init__(self, store: QuestionStore, options: WebOptions) -> None:
        self.store = store
        """Where the questions wait."""
        self.options = options
        """How the pages and the API behave."""
        self.gate = Gate(
            authorize=options.authorize,
            access_token=options.access_token,
            default_name=options.answered_by,
            links=options.login_links,
        )
        """Who may see and answer the questions."""
        self.login_help = DEFAULT_LOGIN_HELP
        """What the sign-in pages tell a person whose link did not work, or who has none: how to get one."""
        self.finished = False
        """Whether the app was told the server has finished: every page says so."""
        self.finish_waiters: set[Callable[[], None]] = set()
        """What ends each open event stream when the server finishes (its subscription's `end`, or an event's `set`)."""

    async def get(self, request_id: str, who: Person) -> AskUserRequest:
        """The pending request `request_id` if `who` may see it; a `StoreError` when it is not waiting.

        A request addressed to someone else is unknown (`UnknownRequestError`, the very error of a missing one,
        never one that says it exists), whether it waits, was answered or was withdrawn; so is an odd id.
        """
        self.check_id(request_id)
        try:
            request = await self.store.get(request_id)
        except StoreError as error:
            raise seen_by(who, error, request_id) from None
        if not addressed_to(request, who):
            raise UnknownRequestError(request_id)
        return request

    async def get_approval(self, key: str, who: Person) -> PendingApproval:
        """The pending approval `key` if `who` may see it, as `get` finds a question: someone else's, an odd key, or
        any key over a store without approvals is unknown (404).
        """
        self.check_id(key)
        store = approval_store(self)
        if store is None:
            raise UnknownRequestError(key)
        try:
            approval = await store.get_approval(key)
        except StoreError as error:
            raise seen_by(who, error, key) from None
        if not audience_includes(approval.audience, who):
            raise UnknownRequestError(key)
        return approval

    @staticmethod
    def check_id(request_id: str) -> None:
        """`UnknownRequestError` for an id no store could hold, without asking the store."""
        if not ID.fullmatch(request_id):
            raise UnknownRequestError(request_id[:200])


def base_path(request: Request) -> str:
    """The path the app is mounted at, ending in `/`: links stay inside the mount."""
    root = request.scope.get('root_path', '')
    return root.rstrip('/') + '/'


def is_api(request: Request) -> bool:
    """Whether `request` is for the JSON API (or asks for JSON): it gets JSON errors, not pages."""
    return wants_json(request.scope)


def unreachable(error: BaseException) -> bool:
    """Whether `error` (or what it was raised from) says the store's database or service cannot be reached.

    A network error (`OSError`) or a DB-API `OperationalError` / `InterfaceError` (PEP 249: a lost
    connection, a database that cannot be opened). Anything else is a failure of the app: a 500.
    """
    current: BaseException | None = error
    for _ in range(10):
        if current is None:
            break
        if isinstance(current, OSError) or any(cls.__name__ in _UNREACHABLE_ERRORS for cls in type(current).__mro__):
            return True
        current = current.__cause__
    return False


def log_unreachable(request: Request, error: Exception) -> None:
    """Log, without the person or client seeing it, why the store could not be reached."""
    where = printable(f'{request.method} {request.url.path}', allow_newline=False)
    reason = printable(f'{type(error).__name__}: {error}', allow_newline=False)[:500]
    _log.warning('the question store cannot be reached (%s): %s', where, reason)


def cookie_options(request: Request) -> dict[str, Any]:
    """How the app sets its cookies: HTTP only, same site, secure over HTTPS, and scoped to the app's path."""
    return {
        'httponly': True,
        'samesite': 'strict',
        'secure': request.scope.get('scheme') == 'https',
        'path': base_path(request),
    }


def approval_store(context: AppContext) -> ApprovalStore | None:
    """The app's store as an `ApprovalStore`; `None` when it holds no approvals."""
    store = context.store
    return store if isinstance(store, ApprovalStore) else None


async def approvals_for(
    context: AppContext,
    who: Person,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    where: PendingFilter = EVERYTHING,
) -> PendingPage[PendingApproval]:
    """A page of the approvals waiting for `who`, the oldest first (none over a store without approvals); filtered by
    the store and again here (a store that filters loosely shows nobody another's approval: its page is short by it).
    `BadCursorError` for a cursor the store did not write.
    """
    store = approval_store(context)
    if store is None:
        return PendingPage([], None, 0)
    page = await page_approvals(store, limit=limit, cursor=cursor, visible_to=who, where=where)
    return replace(page, records=[a for a in page.records if audience_includes(a.audience, who)])


async def pending_handoffs(store: object, key: str) -> Sequence[Handoff]:
    """The hand-offs of the pending item `key`, the oldest first, where its store keeps them (`handoffs`: the hub,
    DBOS); none otherwise.
    """
    read = cast('Callable[[str], Awaitable[Sequence[Handoff]]] | None', getattr(store, 'handoffs', None))
    return () if read is None else await read(key)


async def handoffs_of(store: object, key: str) -> list[dict[str, Any]]:
    """`pending_handoffs` as the API shows them (`handoff_json`)."""
    return [handoff_json(each) for each in await pending_handoffs(store, key)]
