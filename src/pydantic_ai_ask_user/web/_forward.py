"""Forwarding in the web inbox: the JSON routes and the folded Forward form of the question and approval pages.

Who may forward is who may see the item: a person it is addressed to (by name or group), or one who sees all (an
administrator, the access token). To anyone else it is unknown (404), as on every other route. The store does the
rest (`QuestionHub.forward`, `DBOSQuestionStore.forward`); a store without `forward` answers 501 (`no_forward`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pydantic_ai_ask_user._audience import Person
from pydantic_ai_ask_user._escalation import Handoff
from pydantic_ai_ask_user._history import check_handoff, handoff_json
from pydantic_ai_ask_user.store import StoreError

from ._api import error_json, store_error
from ._context import AppContext
from ._forms import FIELDS
from ._pages import Pages, language
from ._security import answered_by, person
from ._wire import BadBody, parse_json_body

__all__ = ('Forwarding',)

_Forward = Callable[..., Awaitable[Handoff]]

_MAX_NAMES_TEXT = 4000
"""The longest list of names the form's field may send; longer is refused before it is read."""


class _NoForward(Exception):
    """The store cannot forward (it has no `forward`)."""


class Forwarding:
    """The forward routes of one app."""

    def __init__(self, context: AppContext, pages: Pages) -> None:
        self.context = context
        """The store, gate and options."""
        self.pages = pages
        """The app's pages, which draw the outcome and the errors."""

    async def _check(self, kind: Literal['question', 'approval'], key: str, who: Person) -> None:
        """That `who` may see (so forward) the pending item `key`; the store error (404 for someone else's) if not."""
        if kind == 'question':
            await self.context.get(key, who)
            return
        await self.context.get_approval(key, who)

    async def _forward(
        self, request: Request, kind: Literal['question', 'approval'], to: object, note: object, add: bool
    ) -> Handoff:
        key = request.path_params['id']
        await self._check(kind, key, person(request))
        names, checked = check_handoff(to, note)
        forward = cast('_Forward | None', getattr(self.context.store, 'forward', None))
        if forward is None:
            raise _NoForward
        return await forward(key, names, note=checked, by=answered_by(request), replace=not add)

    async def question_json(self, request: Request) -> Response:
        """`POST /api/requests/<id>/forward` with `{"to": ["bob"], "note": "...", "add": false}`."""
        return await self._json(request, 'question')

    async def approval_json(self, request: Request) -> Response:
        """`POST /api/approvals/<id>/forward`, as `question_json`."""
        return await self._json(request, 'approval')

    async def _json(self, request: Request, kind: Literal['question', 'approval']) -> Response:
        try:
            if request.headers.get('content-type', '').split(';')[0].strip().lower() != 'application/json':
                raise BadBody(415, 'send the body as JSON, with "Content-Type: application/json"')
            body = parse_json_body(await request.body())
            if not isinstance(body, dict):
                raise BadBody(422, 'send {"to": ["name", ...], "note": "...", "add": false}')
            fields = cast('dict[str, Any]', body)
            if set(fields) - {'to', 'note', 'add'}:
                raise BadBody(422, 'a forward takes only "to", "note" and "add"')
            to = fields.get('to')
            if isinstance(to, str):
                to = [to]
            add = fields.get('add', False)
            if not isinstance(add, bool):
                raise BadBody(422, '"add" is true or false')
            handoff = await self._forward(request, kind, to, fields.get('note', ''), add)
        except BadBody as error:
            code = {400: 'malformed_json', 415: 'unsupported_media_type'}.get(error.status, 'invalid_forward')
            return error_json(error.status, code, str(error))
        except StoreError as error:
            return store_error(error)
        except _NoForward:
            return error_json(501, 'no_forward', 'this store cannot forward questions or approvals')
        except (ValueError, TypeError) as error:
            return error_json(422, 'invalid_forward', str(error))
        return JSONResponse({'id': request.path_params['id'], 'status': 'forwarded', 'handoff': handoff_json(handoff)})

    async def question_form(self, request: Request) -> Response:
        """`POST /requests/<id>/forward`: the Forward form of the question page."""
        return await self._form(request, 'question')

    async def approval_form(self, request: Request) -> Response:
        """`POST /approvals/<id>/forward`: the Forward form of the approval page."""
        return await self._form(request, 'approval')

    async def _form(self, request: Request, kind: Literal['question', 'approval']) -> Response:
        _ = language(request).gettext
        form = await request.form()
        if not self.context.gate.csrf_ok(request, _text(form.get(FIELDS.csrf))):
            return self.pages.status(
                request,
                403,
                _('This form has expired'),
                _('The page was not sent by this server, or it is too old. Reload it and forward again.'),
                show_inbox=True,
            )
        names_text = _text(form.get('to')) or ''
        names = [] if len(names_text) > _MAX_NAMES_TEXT else [each.strip() for each in names_text.split(',')]
        names = [each for each in names if each]
        try:
            handoff = await self._forward(
                request, kind, names, _text(form.get('note')) or '', _text(form.get('add')) == 'on'
            )
        except StoreError as error:
            return self.pages.store_error(request, error)
        except _NoForward:
            return self.pages.status(
                request, 501, _('Cannot forward'), _('This inbox cannot forward questions.'), show_inbox=True
            )
        except (ValueError, TypeError) as error:
            return self.pages.status(
                request,
                422,
                _('Not forwarded'),
                _('The forward was refused: {reason}').format(reason=error),
                show_inbox=True,
            )
        return self.pages.status(
            request,
            200,
            _('Forwarded'),
            _('It now waits for {names}.').format(names=', '.join(handoff.to_audience)),
            show_inbox=True,
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
