"""The pages a person sees: the inbox, the sign-in link, one form per request, and what each leads to."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, check_response
from pydantic_ai_ask_user._escalation import Handoff
from pydantic_ai_ask_user._i18n import N_, Translator, negotiate_http, translator
from pydantic_ai_ask_user.store import AlreadyAnsweredError, BadCursorError, StoreError, count_pending

from ._context import ID, AppContext, approvals_for, base_path, cookie_options, pending_handoffs
from ._forms import FIELDS, Entered, read_form
from ._rows import BadPaging, deadline_iso, inbox_page, paging_from_query, search_link, search_query, time_left
from ._security import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    Redeemed,
    answered_by,
    cookie_name,
    csrf_cookie,
    new_csrf_cookie,
    person,
)
from ._templates import render

__all__ = ('Pages', 'FINISHED', 'FAVICON', 'favicon')

FINISHED = N_('This server has finished; you can close this tab.')
"""What the pages say once `AskUserApp.finish` was called (the `finished` event of the stream)."""

NOT_SENT = N_('It was answered in another tab or by someone else, so your answer was not sent.')
"""What the page of a form sent after another answer adds to `AlreadyAnsweredError.page_text`."""

STORE_TEXTS = (
    N_('No such question'),
    N_('No question is waiting at this address.'),
    N_('Already answered'),
    N_('This question has been answered already.'),
    N_('This question is no longer waiting'),
    N_('The agent stopped waiting for an answer (it timed out or its run was cancelled).'),
)
"""The headings and sentences of the store's errors (`StoreError.heading`, `.page_text`), for the catalogs."""

FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    b'<rect width="32" height="32" rx="7" fill="#2358c4"/>'
    b'<path d="M11.5 12a4.5 4.5 0 1 1 6.6 4c-1.3.7-2.1 1.5-2.1 2.8v.7" fill="none" stroke="#fff" '
    b'stroke-width="3" stroke-linecap="round"/>'
    b'<circle cx="16" cy="24.5" r="2" fill="#fff"/></svg>'
)
"""The tab icon, a question mark, served at `/favicon.ico` so that no browser gets a 404 for it."""

_MAX_WRITTEN = 20
"""How many "Other" boxes a page that refused an answer gives back what was written in, at most."""


class Pages:
    """The HTML endpoints of one app, drawn with its title and options."""

    def __init__(self, context: AppContext) -> None:
        self.context = context
        """The store, gate and options the pages are drawn from."""

    async def inbox(self, request: Request) -> Response:
        """`GET /[?cursor=C&limit=N]`: the first page of the waiting questions (or the page after `cursor`).

        The page script loads the following pages as the person scrolls, and keeps the loaded rows current from the
        event stream; without it, a "More questions" link leads to the next page.
        """
        _ = language(request).gettext
        who = person(request)
        try:
            limit, cursor, where = paging_from_query(request.query_params, now=time.time())
            page = await inbox_page(self.context.store, who, limit=limit, cursor=cursor, where=where)
            # The tool calls waiting for approval, above the questions, paged alike (`?approval_cursor=`).
            approval_cursor = request.query_params.get('approval_cursor') or None
            approvals = await approvals_for(self.context, who, limit=limit, cursor=approval_cursor, where=where)
        except (BadPaging, BadCursorError):
            return self.status(
                request,
                400,
                _('This page of questions does not exist'),
                _('The address of the page was changed or is too old. Start again from the first page.'),
                show_inbox=True,
            )
        return self.page(
            request,
            'inbox.html',
            200,
            rows=page.rows,
            # The tab title counts both kinds, as the page lists both: "(3)" is 2 questions and an approval.
            waiting=page.total + approvals.total,
            questions_waiting=page.total,
            next_cursor=page.next_cursor,
            limit=limit,
            approvals=approvals.records,
            approvals_waiting=approvals.total,
            approvals_cursor=approvals.next_cursor,
            finished=_(FINISHED) if self.context.finished else None,
            live=live_texts(request),
            search=search_query(where),
            search_link=search_link(where),
            search_action='',
            # With a filter the page is not kept current (`inbox.js` adds no arriving rows): a reload searches again.
            filtered=where.searching,
        )

    async def login(self, request: Request) -> Response:
        """`GET /login?code=...[&next=requests/<id> or approvals/<id>]`: redeem a one-time link, set the session
        cookie, redirect.

        Only a navigation the person started (typed, pasted, opened from another program: `Sec-Fetch-Site:
        none`, or, for the app's own links, a client that sends no such header) signs in at once, and only when it
        replaces no other identity. A navigation another page started, or a link for someone other than the browser
        is signed in as, gets a page asking "Sign in?", whose form posts the code back with a CSRF token: a page on
        another site cannot sign the person in as someone else (login CSRF). A signed link (`SignedLoginLinks`, as
        mailed) fetched without `Sec-Fetch-Site` (a mail scanner) gets that page too, and stays unused.
        """
        gate = self.context.gate
        code = request.query_params.get('code', '')
        found = None if gate.authorize is not None else gate.peek(code)
        if found is None:
            return self._link_refused(request)
        target = _login_target(request.query_params.get('next', ''))
        current = gate.identity(request)
        # A signed link may have been mailed: a mail scanner that fetches it (and sends no `Sec-Fetch-Site`, as
        # browsers do) gets the page that asks, and leaves the link unused for the person.
        fetch_site = request.headers.get('sec-fetch-site')
        started_here = fetch_site == 'none' or (fetch_site is None and not gate.signed(code))
        if started_here and (current is None or current == found):
            redeemed = gate.redeem(code)
            return self._link_refused(request) if redeemed is None else self._signed_in(request, redeemed, target)
        _ = language(request).gettext
        cookie = csrf_cookie(request) or new_csrf_cookie()
        if found.name is None:
            message = _('This link signs this browser in to the questions of {title}.').format(
                title=self.context.options.title
            )
        else:
            message = _('This link signs this browser in as {name}.').format(name=found.name)
        if current is None:
            replaced = None
        elif current.name is None:
            replaced = _('This browser is signed in already; signing in again replaces that.')
        else:
            replaced = _('This browser is signed in as {name} now; signing in replaces that.').format(name=current.name)
        response = self.page(
            request,
            'login.html',
            200,
            message=message,
            current=replaced,
            code=code,
            target=target,
            csrf=gate.csrf_token(request, cookie),
        )
        if csrf_cookie(request) != cookie:
            response.set_cookie(cookie_name(CSRF_COOKIE, request), cookie, **cookie_options(request))
        return response

    async def confirm_login(self, request: Request) -> Response:
        """`POST /login`: the person confirmed "Sign in?" on the page `login` drew; the form carries the code."""
        gate = self.context.gate
        form = await request.form()
        _ = language(request).gettext
        if gate.authorize is not None or not gate.csrf_ok(request, _str(form.get(FIELDS.csrf))):
            return self.status(
                request,
                403,
                _('This form has expired'),
                _('Open the sign-in link again, and sign in on the page it shows.'),
                show_inbox=False,
            )
        redeemed = gate.redeem(_str(form.get('code')) or '')
        if redeemed is None:
            return self._link_refused(request)
        return self._signed_in(request, redeemed, _login_target(_str(form.get('next')) or ''))

    def _link_refused(self, request: Request) -> Response:
        _ = language(request).gettext
        return self.status(
            request,
            403,
            _('This link does not work'),
            _('Each sign-in link works once.') + ' ' + _(self.context.login_help),
            show_inbox=False,
        )

    def _signed_in(self, request: Request, redeemed: Redeemed, target: str) -> Response:
        """A fresh session for the browser, as the one the link was for, and a redirect to `target`."""
        response = RedirectResponse(base_path(request) + target, status_code=303)
        session_name = cookie_name(SESSION_COOKIE, request)
        session = self.context.gate.new_session(replacing=request.cookies.get(session_name), who=redeemed)
        response.set_cookie(session_name, session, **cookie_options(request))
        if csrf_cookie(request) is None:
            # Kept when the browser has one: a form already open in another tab carries a token made from it.
            response.set_cookie(cookie_name(CSRF_COOKIE, request), new_csrf_cookie(), **cookie_options(request))
        return response

    async def form(self, request: Request) -> Response:
        """`GET /requests/<id>`: the form of one waiting request."""
        try:
            asked = await self.context.get(request.path_params['id'], person(request))
        except StoreError as error:
            return self.store_error(request, error)
        return self.form_page(
            request,
            asked,
            [Entered() for _ in asked.questions],
            200,
            waiting=await self._waiting(request),
            handoffs=await pending_handoffs(self.context.store, asked.key),
        )

    async def submit(self, request: Request) -> Response:
        """`POST /requests/<id>`: answer or decline; the form again with its errors when the answer does not fit."""
        request_id = request.path_params['id']
        options = self.context.options
        form = await request.form()
        t = language(request)
        _ = t.gettext
        if not self.context.gate.csrf_ok(request, _str(form.get(FIELDS.csrf))):
            return self.status(
                request,
                403,
                _('This form has expired'),
                _('The page was not sent by this server, or it is too old. Reload the question and answer again.'),
                show_inbox=True,
            )
        fields = {key: [value for value in form.getlist(key) if isinstance(value, str)] for key in form}
        try:
            asked = await self.context.get(request_id, person(request))
            if _str(form.get(FIELDS.action)) == FIELDS.decline:
                await self.context.store.respond(
                    request_id, AskUserResponse(cancelled=True, answered_by=answered_by(request))
                )
                return self.page(request, 'answered.html', 200, declined=True, summary=[])
            result = read_form(
                asked,
                fields,
                allow_custom_answers=options.allow_custom_answers,
                max_custom_answer_length=options.max_custom_answer_length,
                answered_by=answered_by(request),
                language=t,
            )
            if result.response is None:
                return self.form_page(request, asked, result.entered, 422, waiting=await self._waiting(request))
            try:
                await self.context.store.respond(request_id, result.response)
            except ValueError as error:
                return self.form_page(
                    request,
                    asked,
                    result.entered,
                    422,
                    form_error=_('The answer was refused: {reason}').format(reason=error),
                    waiting=await self._waiting(request),
                )
        except AlreadyAnsweredError as error:
            # Another tab (or person) won the race: say so, and give back what this one wrote.
            written = FIELDS.written(fields, boxes=_MAX_WRITTEN, length=options.max_custom_answer_length)
            return self.store_error(request, error, extra=_(NOT_SENT), written=written)
        except StoreError as error:
            return self.store_error(request, error)
        return self.page(request, 'answered.html', 200, declined=False, summary=_summary(asked, result.response))

    def form_page(
        self,
        request: Request,
        asked: AskUserRequest,
        entered: list[Entered],
        status: int,
        *,
        form_error: str | None = None,
        waiting: int = 1,
        handoffs: Sequence[Handoff] = (),
    ) -> Response:
        """The form of `asked`, showing what was `entered` and what is wrong with it; `waiting` questions in all."""
        cookie = csrf_cookie(request) or new_csrf_cookie()
        _ = language(request).gettext
        response = self.page(
            request,
            'form.html',
            status,
            request=asked,
            entered=entered,
            has_errors=form_error is not None or any(entry.errors for entry in entered),
            form_error=form_error,
            csrf=self.context.gate.csrf_token(request, cookie),
            finished_text=_(FINISHED),
            fields=FIELDS,
            allow_custom=self.context.options.allow_custom_answers,
            max_custom=self.context.options.max_custom_answer_length,
            focus=_focus(asked),
            deadline=asked.deadline,
            deadline_iso=deadline_iso(asked.deadline),
            time_left=time_left(asked.deadline, time.time()),
            waiting=waiting,
            live=live_texts(request),
            handoffs=handoffs,
        )
        if csrf_cookie(request) != cookie:
            response.set_cookie(cookie_name(CSRF_COOKIE, request), cookie, **cookie_options(request))
        return response

    def store_error(self, request: Request, error: StoreError, *, extra: str = '', **context: Any) -> Response:
        """The page for a request the store cannot take an answer for: from the error's own status, heading, text."""
        _ = language(request).gettext
        message = f'{_(error.page_text)} {extra}' if extra else _(error.page_text)
        return self.status(request, error.http_status, _(error.heading), message, show_inbox=True, **context)

    def refused(self, request: Request, verdict: Literal['unauthenticated', 'forbidden']) -> Response:
        """The page for a browser that is not signed in (401) or may not see the questions (403)."""
        _ = language(request).gettext
        heading = _('Not signed in') if verdict == 'unauthenticated' else _('No access')
        if self.context.gate.authorize is None:
            message = (
                _('Open the link that was printed when the question server started; it signs this browser in.')
                + ' '
                + _(self.context.login_help)
            )
        else:
            message = _('You are not allowed to see these questions.')
        return self.status(request, 401 if verdict == 'unauthenticated' else 403, heading, message, show_inbox=False)

    def unreachable(self, request: Request) -> Response:
        """The page for a store whose database cannot be reached (503)."""
        _ = language(request).gettext
        return self.status(
            request,
            503,
            _('The question store cannot be reached'),
            _(
                'This server cannot reach the database the questions are kept in, so it can neither show them '
                'nor take answers right now. Reload the page in a moment.'
            ),
            show_inbox=False,
        )

    def status(
        self, request: Request, status: int, heading: str, message: str, *, show_inbox: bool, **context: Any
    ) -> Response:
        """A page with a heading and a sentence, and the HTTP `status`."""
        return self.page(
            request, 'status.html', status, heading=heading, message=message, show_inbox=show_inbox, **context
        )

    def page(self, request: Request, template: str, status: int, /, **context: Any) -> Response:
        """Draw `template` with the app's title and mount path, in the language the browser asks for."""
        context.setdefault('written', [])
        context.setdefault('waiting', None)
        t = language(request)
        html = render(
            template,
            base=base_path(request),
            title=self.context.options.title,
            status=status,
            lang=t.language,
            _=t.gettext,
            ngettext=t.ngettext,
            translator=t,
            **context,
        )
        return HTMLResponse(
            html, status_code=status, headers={'content-language': t.language, 'vary': 'Accept-Language'}
        )

    async def _waiting(self, request: Request) -> int:
        """How many questions and approvals are waiting for the person, for the tab title: counted, never listed (a
        page of one approval carries their total).
        """
        who = person(request)
        approvals = await approvals_for(self.context, who, limit=1)
        return await count_pending(self.context.store, visible_to=who) + approvals.total


def language(request: Request) -> Translator:
    """The catalog of the language `request`'s browser asks for (`Accept-Language`), English when there is none."""
    return translator(negotiate_http(request.headers.get('accept-language')))


def live_texts(request: Request) -> dict[str, Any]:
    """What the page scripts (`live.js`, `inbox.js`) say, in the page's language, with where they fetch from.

    Drawn into the page as a JSON data block (never run as script); a plural is its one and other forms,
    which covers English and Korean (one form).
    """
    t = language(request)
    _ = t.gettext

    def plural(singular: str, plural: str) -> list[str]:
        return [t.ngettext(singular, plural, 1), t.ngettext(singular, plural, 2)]

    return {
        'api': base_path(request) + 'api/requests',
        'more': _('More questions'),
        'loading': _('Loading more questions…'),
        'waiting': plural('{count} question waiting', '{count} questions waiting'),
        'events': base_path(request) + 'api/events',
        'base': base_path(request),
        'just_now': _('just now'),
        'minutes': plural('{count} minute ago', '{count} minutes ago'),
        'hours': plural('{count} hour ago', '{count} hours ago'),
        'days': plural('{count} day ago', '{count} days ago'),
        'asked': _('asked {when}'),
        'questions': plural('{count} question', '{count} questions'),
        'run': _('run'),
        'time_left': _('Time left:'),
        'time_up': _('Time is up'),
        'finished': _(FINISHED),
        'live': _('New questions appear here as they are asked.'),
        'lost': _('Lost the connection to the server; trying again…'),
        'unreachable': _('The question store cannot be reached; trying again…'),
        'notify_title': _('A question is waiting for you'),
        'notify_on': _('Notifications are on'),
        'notify_blocked': _('Notifications are blocked in this browser'),
        'approval': _('approval'),
        'more_approvals': _('More tool calls'),
        'approvals_api': base_path(request) + 'api/approvals',
    }


def _focus(asked: AskUserRequest) -> tuple[int, int]:
    """The option that takes the focus: the first question's recommended option, else its first one."""
    question = asked.questions[0]
    for index, option in enumerate(question.options):
        if option.label == question.recommended:
            return (0, index)
    return (0, 0)


def _summary(asked: AskUserRequest, response: AskUserResponse) -> list[tuple[str, list[str], str | None]]:
    """What the person sent, per question: its header, the labels or their own words, and their note."""
    check_response(asked, response)
    by_header = {answer.header: answer for answer in response.answers}
    summary: list[tuple[str, list[str], str | None]] = []
    for question in asked.questions:
        answer = by_header[question.header]
        picked = [answer.custom_answer] if answer.custom_answer is not None else list(answer.selected)
        summary.append((question.header, picked, answer.note))
    return summary


async def favicon(request: Request) -> Response:
    """`GET /favicon.ico`: the tab icon, without signing in."""
    return Response(FAVICON, media_type='image/svg+xml')


def _login_target(target: str) -> str:
    """Where a login goes next: a request's form (`requests/<id>`), an approval's page (`approvals/<id>`), or else
    the inbox.
    """
    for prefix in ('requests/', 'approvals/'):
        if target.startswith(prefix) and ID.fullmatch(target[len(prefix) :]):
            return target
    return ''


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
