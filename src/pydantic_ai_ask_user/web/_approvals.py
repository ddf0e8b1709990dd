"""Tool approvals in the web inbox: listed beside the questions, a page per approval (the tool and its arguments,
escaped, as a table with the JSON on demand), its forms (the four actions: approve, or approve with edited
arguments; reply to the agent instead; ignore; and deny, with a reason), and the JSON API. After a decision the page
says what was decided and echoes what runs: the tool and the arguments it runs with, and whether they were edited.

Over any store that holds approvals (`ApprovalStore`: `DBOSQuestionStore`, `TemporalQuestionStore`, and the
in-process hub, which holds those of `WebAnswerer.request_input`); over a store without them every approval address
is a 404. Listed a page at a time (`page_approvals`), kept live on the inbox by the event stream's `approval_*`
events. Addressed like questions: an approval addressed to someone else is indistinguishable from a missing one
(404), on every route. A refused decision (arguments that do not fit the tool's schema, a reason that cannot be
shown) is the page again with the reason as a message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

from pydantic_core import from_json
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pydantic_ai_ask_user._approvals import ApprovalDecision, PendingApproval, read_decision_value
from pydantic_ai_ask_user._audience import Person
from pydantic_ai_ask_user._escalation import Handoff
from pydantic_ai_ask_user._question_store import ApprovalStore
from pydantic_ai_ask_user.store import (
    BadCursorError,
    StoreError,
)

from ._api import error_json, store_error
from ._context import AppContext, approvals_for, cookie_options, handoffs_of, pending_handoffs
from ._forms import FIELDS
from ._pages import Pages, language
from ._rows import BadPaging, paging_from_query
from ._security import CSRF_COOKIE, answered_by, cookie_name, csrf_cookie, new_csrf_cookie, person
from ._wire import BadBody, approval_json, parse_json_body

__all__ = ('Approvals',)

MAX_ARGS_TEXT = 100_000
"""The longest edited arguments (JSON text) a form may send; longer is refused before it is read."""

MAX_SHOWN_VALUE = 500
"""The most characters of one argument's value the table shows; the whole is in the JSON under it."""


def argument_rows(args: dict[str, Any]) -> list[tuple[str, str]]:
    """The arguments as rows of a table for a person to read: each name, and its value as text (a string as it is,
    anything else as compact JSON), cut at `MAX_SHOWN_VALUE`. Drawn escaped, as everything the model wrote.
    """
    rows: list[tuple[str, str]] = []
    for name, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        if len(shown) > MAX_SHOWN_VALUE:
            shown = shown[: MAX_SHOWN_VALUE - 1] + '…'
        rows.append((name, shown))
    return rows


class Approvals:
    """The approval pages and endpoints of one app."""

    def __init__(self, context: AppContext, pages: Pages) -> None:
        self.context = context
        """The store, gate and options."""
        self.pages = pages
        """The app's pages, which draw these and their errors."""

    async def _get(self, key: str, who: Person) -> PendingApproval:
        """The pending approval `key` if `who` may see it; someone else's, or an odd key, is unknown (404)."""
        return await self.context.get_approval(key, who)

    async def page(self, request: Request) -> Response:
        """`GET /approvals/<id>`: the tool call, its arguments, and the forms that decide it."""
        try:
            approval = await self._get(request.path_params['id'], person(request))
        except StoreError as error:
            return self.pages.store_error(request, error)
        return self._form(request, approval, 200, handoffs=await pending_handoffs(self.context.store, approval.key))

    async def submit(self, request: Request) -> Response:
        """`POST /approvals/<id>`: approve, approve with edited arguments, reply instead, ignore, or deny (with a
        reason); then a page that says what was decided and what runs.
        """
        _ = language(request).gettext
        form = await request.form()
        if not self.context.gate.csrf_ok(request, _field(form.get(FIELDS.csrf))):
            return self.pages.status(
                request,
                403,
                _('This form has expired'),
                _('The page was not sent by this server, or it is too old. Reload it and decide again.'),
                show_inbox=True,
            )
        action = _field(form.get('action'))
        try:
            approval = await self._get(request.path_params['id'], person(request))
        except StoreError as error:
            return self.pages.store_error(request, error)
        edited = _field(form.get('args')) or ''
        reason = (_field(form.get('reason')) or '').strip()
        reply = (_field(form.get('response')) or '').strip()
        try:
            if action == 'approve':
                decision = ApprovalDecision.approve()
            elif action == 'deny':
                decision = ApprovalDecision.deny(reason or None)
            elif action == 'edit':
                decision = ApprovalDecision.edit(_edited_args(edited))
            elif action == 'respond':
                if not reply:
                    raise ValueError(_('write the reply to give the agent first'))
                decision = ApprovalDecision.respond(reply)
            elif action == 'ignore':
                decision = ApprovalDecision.ignore()
            else:
                raise ValueError(_('choose an action: approve, approve with other arguments, reply, deny or ignore'))
            decision = replace(decision, decided_by=answered_by(request))
            await cast(ApprovalStore, self.context.store).decide(approval.key, decision)
        except StoreError as error:
            return self.pages.store_error(request, error)
        except ValueError as error:
            message = _('The decision was refused: {reason}').format(reason=error)
            return self._form(
                request, approval, 422, error=message, edited=edited, reason=reason, response=reply, opened=action or ''
            )
        return self.decided(request, approval, decision)

    def decided(self, request: Request, approval: PendingApproval, decision: ApprovalDecision) -> Response:
        """The page after a decision: what was decided, and what runs (the tool and its arguments, edited or not)
        or what the agent is told instead.
        """
        _ = language(request).gettext
        headings = {
            'approved': _('Approved: {tool} runs'),
            'edited': _('Approved with your arguments: {tool} runs'),
            'denied': _('Denied: {tool} does not run'),
            'responded': _('Replied: {tool} does not run'),
            'ignored': _('Ignored: {tool} does not run'),
        }
        described = decision.describe()
        runs_with = decision.override_args if decision.override_args is not None else approval.args
        return self.pages.page(
            request,
            'decided.html',
            200,
            heading=headings[described].format(tool=approval.tool_name),
            decided=described,
            approval=approval,
            rows=argument_rows(runs_with) if decision.approved else [],
            told=None if decision.approved else cast(dict[str, Any], decision.result())['message'],
        )

    def _form(
        self,
        request: Request,
        approval: PendingApproval,
        status: int,
        *,
        error: str | None = None,
        handoffs: Sequence[Handoff] = (),
        **given: str,
    ) -> Response:
        cookie = csrf_cookie(request) or new_csrf_cookie()
        response = self.pages.page(
            request,
            'approval.html',
            status,
            approval=approval,
            request=approval,
            context=approval.context,
            args_text=approval.args_text(),
            rows=argument_rows(approval.args),
            edited=given.get('edited') or approval.args_text(),
            reason=given.get('reason', ''),
            response=given.get('response', ''),
            opened=given.get('opened', ''),
            form_error=error,
            csrf=self.context.gate.csrf_token(request, cookie),
            fields=FIELDS,
            handoffs=handoffs,
        )
        if csrf_cookie(request) != cookie:
            response.set_cookie(cookie_name(CSRF_COOKIE, request), cookie, **cookie_options(request))
        return response

    async def list_json(self, request: Request) -> Response:
        """`GET /api/approvals[?limit=N&cursor=C]`: a page of the approvals waiting for the caller, the oldest first,
        narrowed by `agent=`, `title=`, `conversation=`, `addressee=`, `kind=`, `q=` (free text) and the ages,
        with `next_cursor` (`null` on the last page) and `total` (theirs only, as every listing), as
        `/api/requests` pages the questions. A bad `limit` is a 400 `bad_query`, a foreign cursor a 400 `bad_cursor`.
        """
        try:
            limit, cursor, where = paging_from_query(request.query_params, now=time.time())
            page = await approvals_for(self.context, person(request), limit=limit, cursor=cursor, where=where)
        except BadPaging as error:
            return error_json(400, 'bad_query', str(error))
        except BadCursorError as error:
            return error_json(400, 'bad_cursor', str(error))
        return JSONResponse(
            {
                'approvals': [approval_json(approval) for approval in page.records],
                'next_cursor': page.next_cursor,
                'total': page.total,
            }
        )

    async def get_json(self, request: Request) -> Response:
        """`GET /api/approvals/<id>`: one waiting approval."""
        try:
            data = approval_json(await self._get(request.path_params['id'], person(request)))
            if handoffs := await handoffs_of(self.context.store, request.path_params['id']):
                data['handoffs'] = handoffs
            return JSONResponse(data)
        except StoreError as error:
            return store_error(error)

    async def decide_json(self, request: Request) -> Response:
        """`POST /api/approvals/<id>/decide` with `"approve"`, `{"deny": "REASON"}`, `{"args": {...}}`,
        `{"respond": "TEXT"}` or `"ignore"`; answers with the id and what was decided (`status`).
        """
        try:
            if request.headers.get('content-type', '').split(';')[0].strip() != 'application/json':
                raise BadBody(415, 'send the decision as application/json')
            decision = read_decision_value(parse_json_body(await request.body()))
        except BadBody as error:
            return error_json(error.status, 'invalid_body', str(error))
        except ValueError as error:
            return error_json(422, 'invalid_decision', str(error))
        try:
            approval = await self._get(request.path_params['id'], person(request))
            decision = replace(decision, decided_by=answered_by(request))
            await cast(ApprovalStore, self.context.store).decide(approval.key, decision)
        except StoreError as error:
            return store_error(error)
        except ValueError as error:
            return error_json(422, 'invalid_decision', str(error))
        return JSONResponse({'id': approval.key, 'status': decision.describe()})


def _field(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _edited_args(text: str) -> dict[str, Any]:
    """The arguments a person typed, as a JSON object; `ValueError` saying what is wrong."""
    if len(text) > MAX_ARGS_TEXT:
        raise ValueError(f'the arguments are longer than {MAX_ARGS_TEXT} characters')
    try:
        value = from_json(text)
    except ValueError as error:
        raise ValueError(f'the arguments are not JSON: {error}') from None
    if not isinstance(value, dict):
        raise ValueError('the arguments must be a JSON object, {"name": value, ...}')
    return cast(dict[str, Any], value)
