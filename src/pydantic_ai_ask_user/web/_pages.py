"""The pages a person sees: the inbox, the sign-in link, one form per request, and what each leads to."""

from __future__ import annotations

from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from pydantic_ai_ask_user import AlreadyAnsweredError, AskUserRequest, AskUserResponse, StoreError, ask_user_result

from ._context import ID, AppContext, base_path
from ._forms import FIELDS, Entered, read_form
from ._rows import inbox_rows
from ._security import CSRF_COOKIE, SESSION_COOKIE, cookie_name, csrf_cookie, new_csrf_cookie
from ._templates import render

__all__ = ('Pages', 'FINISHED', 'FAVICON', 'favicon')

FINISHED = 'This server has finished; you can close this tab.'
"""What the pages say once `AskUserApp.finish` was called (the `finished` event of the stream)."""

NOT_SENT = 'It was answered in another tab or by someone else, so your answer was not sent.'
"""What the page of a form sent after another answer adds to `AlreadyAnsweredError.page_text`."""

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
        """`GET /`: the waiting questions."""
        rows = await inbox_rows(self.context.store)
        return self.page(request, 'inbox.html', 200, rows=rows, finished=FINISHED if self.context.finished else None)

    async def login(self, request: Request) -> Response:
        """`GET /login?code=...[&next=requests/<id>]`: redeem a one-time link, set the session cookie, redirect."""
        gate = self.context.gate
        code = request.query_params.get('code', '')
        if gate.authorize is not None or not gate.redeem(code):
            return self.status(
                request,
                403,
                'This link does not work',
                'Each sign-in link works once. ' + self.context.login_help,
                show_inbox=False,
            )
        target = request.query_params.get('next', '')
        if not (target == '' or (target.startswith('requests/') and ID.fullmatch(target[len('requests/') :]))):
            target = ''
        response = RedirectResponse(base_path(request) + target, status_code=303)
        session_name = cookie_name(SESSION_COOKIE, request)
        session = gate.new_session(replacing=request.cookies.get(session_name))
        response.set_cookie(session_name, session, **_cookie_options(request))
        if csrf_cookie(request) is None:
            # Kept when the browser has one: a form already open in another tab carries a token made from it.
            response.set_cookie(cookie_name(CSRF_COOKIE, request), new_csrf_cookie(), **_cookie_options(request))
        return response

    async def form(self, request: Request) -> Response:
        """`GET /requests/<id>`: the form of one waiting request."""
        try:
            asked = await self.context.get(request.path_params['id'])
        except StoreError as error:
            return self.store_error(request, error)
        return self.form_page(request, asked, [Entered() for _ in asked.questions], 200)

    async def submit(self, request: Request) -> Response:
        """`POST /requests/<id>`: answer or decline; the form again with its errors when the answer does not fit."""
        request_id = request.path_params['id']
        options = self.context.options
        form = await request.form()
        if not self.context.gate.csrf_ok(request, _str(form.get(FIELDS.csrf))):
            return self.status(
                request,
                403,
                'This form has expired',
                'The page was not sent by this server, or it is too old. Reload the question and answer again.',
                show_inbox=True,
            )
        fields = {key: [value for value in form.getlist(key) if isinstance(value, str)] for key in form}
        try:
            asked = await self.context.get(request_id)
            if _str(form.get(FIELDS.action)) == FIELDS.decline:
                await self.context.store.respond(request_id, AskUserResponse(cancelled=True))
                return self.page(request, 'answered.html', 200, declined=True, summary={})
            result = read_form(
                asked,
                fields,
                allow_custom_answers=options.allow_custom_answers,
                max_custom_answer_length=options.max_custom_answer_length,
            )
            if result.response is None:
                return self.form_page(request, asked, result.entered, 422)
            try:
                await self.context.store.respond(request_id, result.response)
            except ValueError as error:
                return self.form_page(
                    request, asked, result.entered, 422, form_error=f'The answer was refused: {error}'
                )
        except AlreadyAnsweredError as error:
            # Another tab (or person) won the race: say so, and give back what this one wrote.
            written = FIELDS.written(fields, boxes=_MAX_WRITTEN, length=options.max_custom_answer_length)
            return self.store_error(request, error, extra=NOT_SENT, written=written)
        except StoreError as error:
            return self.store_error(request, error)
        summary = ask_user_result(asked, result.response)
        return self.page(request, 'answered.html', 200, declined=False, summary=summary)

    def form_page(
        self,
        request: Request,
        asked: AskUserRequest,
        entered: list[Entered],
        status: int,
        *,
        form_error: str | None = None,
    ) -> Response:
        """The form of `asked`, showing what was `entered` and what is wrong with it."""
        cookie = csrf_cookie(request) or new_csrf_cookie()
        response = self.page(
            request,
            'form.html',
            status,
            request=asked,
            entered=entered,
            has_errors=form_error is not None or any(entry.error for entry in entered),
            form_error=form_error,
            csrf=self.context.gate.csrf_token(cookie),
            finished_text=FINISHED,
            fields=FIELDS,
            allow_custom=self.context.options.allow_custom_answers,
            max_custom=self.context.options.max_custom_answer_length,
        )
        if csrf_cookie(request) != cookie:
            response.set_cookie(cookie_name(CSRF_COOKIE, request), cookie, **_cookie_options(request))
        return response

    def store_error(self, request: Request, error: StoreError, *, extra: str = '', **context: Any) -> Response:
        """The page for a request the store cannot take an answer for: from the error's own status, heading, text."""
        message = f'{error.page_text} {extra}' if extra else error.page_text
        return self.status(request, error.http_status, error.heading, message, show_inbox=True, **context)

    def refused(self, request: Request, verdict: Literal['unauthenticated', 'forbidden']) -> Response:
        """The page for a browser that is not signed in (401) or may not see the questions (403)."""
        heading = 'Not signed in' if verdict == 'unauthenticated' else 'No access'
        if self.context.gate.authorize is None:
            message = (
                'Open the link that was printed when the question server started; it signs this browser in. '
                + self.context.login_help
            )
        else:
            message = 'You are not allowed to see these questions.'
        return self.status(request, 401 if verdict == 'unauthenticated' else 403, heading, message, show_inbox=False)

    def unreachable(self, request: Request) -> Response:
        """The page for a store whose database cannot be reached (503)."""
        return self.status(
            request,
            503,
            'The question store cannot be reached',
            'This server cannot reach the database the questions are kept in, so it can neither show them '
            'nor take answers right now. Reload the page in a moment.',
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
        """Draw `template` with the app's title and mount path."""
        context.setdefault('written', [])
        html = render(template, base=base_path(request), title=self.context.options.title, status=status, **context)
        return HTMLResponse(html, status_code=status)


async def favicon(request: Request) -> Response:
    """`GET /favicon.ico`: the tab icon, without signing in."""
    return Response(FAVICON, media_type='image/svg+xml')


def _cookie_options(request: Request) -> dict[str, Any]:
    return {
        'httponly': True,
        'samesite': 'strict',
        'secure': request.scope.get('scheme') == 'https',
        'path': base_path(request),
    }


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
