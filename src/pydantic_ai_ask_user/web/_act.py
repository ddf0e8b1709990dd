"""One-click actions from a message (`notify.InboxLinks.action`): `GET /act?code=...` shows what the link would record
and records nothing (a mail scanner that fetches every link answers nothing); `POST /act`, from that page's form,
records it: the option picked as the answer of the person the link was made for, or their approval or denial.

Only with `WebOptions(login_links=SignedLoginLinks(key))`: the codes are signed with that key. The code is the
person's credential for this one action, as a sign-in link is for a session: it needs no session, and a session
does not change who the answer is recorded as. The item must still wait and be addressed to that person; a link
that does not read (changed, cut, another key's, expired) is refused, and so is one for an item that is someone
else's (the very page of a missing item, as everywhere).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from starlette.requests import Request
from starlette.responses import Response

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._action_codes import ActionCode
from pydantic_ai_ask_user._approvals import ApprovalDecision, PendingApproval
from pydantic_ai_ask_user._i18n import N_
from pydantic_ai_ask_user._question_store import ApprovalStore
from pydantic_ai_ask_user.store import StoreError

from ._approvals import Approvals, argument_rows
from ._context import AppContext, cookie_options
from ._forms import FIELDS
from ._pages import Pages, language
from ._security import CSRF_COOKIE, cookie_name, csrf_cookie, new_csrf_cookie

__all__ = ('Actions',)

LINK_REFUSED = (
    N_('This link does not work'),
    N_('It has expired, was changed on the way, or was not made for this inbox. Open the question from the inbox.'),
)
"""The heading and sentence of the page for a code that does not read."""


class Actions:
    """The confirmation page and the form of one-click action links."""

    def __init__(self, context: AppContext, pages: Pages, approvals: Approvals) -> None:
        self.context = context
        """The store, gate and options."""
        self.pages = pages
        """The app's pages, which draw these and their errors."""
        self.approvals = approvals
        """The approval pages, which draw what was decided."""

    async def confirm(self, request: Request) -> Response:
        """`GET /act?code=...`: what the link records, with a button that records it; nothing is recorded here."""
        code = self._read(request.query_params.get('code', ''))
        if code is None:
            return self._refused(request)
        try:
            item = await self._item(code)
        except StoreError as error:
            return self.pages.store_error(request, error)
        except _BadCode:
            return self._refused(request)
        _ = language(request).gettext
        cookie = csrf_cookie(request) or new_csrf_cookie()
        if isinstance(item, PendingApproval):
            heading = (_('Approve {tool}?') if code.act == 'approve' else _('Deny {tool}?')).format(tool=item.tool_name)
            picked = None
            rows = argument_rows(item.args)
            question = None
        else:
            assert code.question is not None
            assert code.option is not None
            heading = _('Send this answer?')
            question = item.questions[code.question]
            picked = question.options[code.option].label
            rows = []
        response = self.pages.page(
            request,
            'act.html',
            200,
            heading=heading,
            act=code.act,
            who=code.person.name,
            context=item.context,
            question=question,
            picked=picked,
            approval=item if isinstance(item, PendingApproval) else None,
            rows=rows,
            code=request.query_params.get('code', ''),
            csrf=self.context.gate.csrf_token(request, cookie),
            fields=FIELDS,
        )
        if csrf_cookie(request) != cookie:
            response.set_cookie(cookie_name(CSRF_COOKIE, request), cookie, **cookie_options(request))
        return response

    async def record(self, request: Request) -> Response:
        """`POST /act`: record what the confirmed link says, as its person; then what was recorded."""
        form = await request.form()
        _ = language(request).gettext
        csrf = form.get(FIELDS.csrf)
        if not self.context.gate.csrf_ok(request, csrf if isinstance(csrf, str) else None):
            return self.pages.status(
                request,
                403,
                _('This form has expired'),
                _('Open the link in the message again, and confirm on the page it shows.'),
                show_inbox=False,
            )
        sent = form.get('code')
        code = self._read(sent if isinstance(sent, str) else '')
        if code is None:
            return self._refused(request)
        try:
            item = await self._item(code)
            if isinstance(item, PendingApproval):
                decision = ApprovalDecision.approve() if code.act == 'approve' else ApprovalDecision.deny(None)
                decision = replace(decision, decided_by=code.person.name)
                await cast(ApprovalStore, self.context.store).decide(item.key, decision)
                return self.approvals.decided(request, item, decision)
            assert code.question is not None
            assert code.option is not None
            question = item.questions[code.question]
            label = question.options[code.option].label
            response = AskUserResponse(
                answers=(AskUserAnswer(header=question.header, selected=(label,)),), answered_by=code.person.name
            )
            await self.context.store.respond(item.key, response)
        except StoreError as error:
            return self.pages.store_error(request, error)
        except _BadCode:
            return self._refused(request)
        except ValueError as error:  # the answer does not fit (a question with more than one to answer)
            return self.pages.status(
                request,
                422,
                _('The answer was refused: {reason}').format(reason=error),
                _('Open the question from the inbox and answer it there.'),
                show_inbox=False,
            )
        summary = [(question.header, [label], None)]
        return self.pages.page(request, 'answered.html', 200, declined=False, summary=summary)

    def _read(self, code: str) -> ActionCode | None:
        links = self.context.gate.links
        if links is None or self.context.gate.authorize is not None:
            return None
        action = links.read_action(code)
        if action is None or action.person.name is None or action.act == 'open':
            return None
        return action

    async def _item(self, code: ActionCode) -> AskUserRequest | PendingApproval:
        """The waiting item `code` acts on, if it is addressed to its person and the act fits it; `StoreError` when
        it does not wait (or is someone else's: unknown), `_BadCode` when the act does not fit it.
        """
        if code.kind == 'approval':
            if code.act not in ('approve', 'deny'):
                raise _BadCode
            return await self.context.get_approval(code.key, code.person)
        if code.act != 'answer' or code.question is None or code.option is None:
            raise _BadCode
        asked = await self.context.get(code.key, code.person)
        if not 0 <= code.question < len(asked.questions):
            raise _BadCode
        if not 0 <= code.option < len(asked.questions[code.question].options):
            raise _BadCode
        return asked

    def _refused(self, request: Request) -> Response:
        _ = language(request).gettext
        heading, message = LINK_REFUSED
        return self.pages.status(request, 403, _(heading), _(message), show_inbox=False)


class _BadCode(Exception):
    """A code that reads, but whose act does not fit its item (a question index it does not have)."""
