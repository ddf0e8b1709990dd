"""The JSON API a custom frontend uses: list, read, answer and decline requests, and follow them as they change."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any, Literal, cast

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pydantic_ai_ask_user import AskUserResponse, Person
from pydantic_ai_ask_user._audience import audience_includes
from pydantic_ai_ask_user.store import BadCursorError, StoreError, StoreEvent, addressed_to

from ._context import AppContext, handoffs_of, log_unreachable, unreachable
from ._rows import BadPaging, InboxRow, inbox_page, paging_from_query
from ._security import answered_by, person
from ._stopping import server_stopping
from ._wire import BadBody, event_json, event_name, parse_json_body, parse_response, request_json

__all__ = ('Api', 'refused', 'store_unreachable', 'store_error', 'error_json')


class Api:
    """The JSON endpoints of one app; every error is `{"error": <code>, "message": <what went wrong>}`.

    The `<id>` in each path, and the `id` of each request and event, is the question's `AskUserRequest.key`
    (its run and its tool call); the tool call id the model gave is `tool_call_id` (see `request_json`).
    """

    def __init__(self, context: AppContext) -> None:
        self.context = context
        """The store, gate and options the API serves."""

    async def list(self, request: Request) -> Response:
        """`GET /api/requests[?limit=N&cursor=C&older_than=S&newer_than=S]`: a page of the requests waiting for the
        person asking (the audience: nobody else's, in the page or in `total`), narrowed by the search parameters
        `agent=`, `title=`, `conversation=`, `addressee=`, `kind=` (`question` or `approval`) and `q=` (free text).

        The nearest deadline first (none last), then the oldest, each with when and by which run it was asked;
        `next_cursor` (`null` on the last page) is passed back as `cursor` for the next page, and `total` says how
        many wait (`total_exact` is false where the store can only count waiting runs). `limit` is 1 to 500 (50 when
        not given); `older_than` / `newer_than` keep the requests asked more / less than that many seconds ago.
        A `limit` or age that is not one is a 400 `bad_query`, a cursor this server did not give a 400 `bad_cursor`.
        """
        try:
            limit, cursor, where = paging_from_query(request.query_params, now=time.time())
            page = await inbox_page(self.context.store, person(request), limit=limit, cursor=cursor, where=where)
        except BadPaging as error:
            return error_json(400, 'bad_query', str(error))
        except BadCursorError as error:
            return error_json(400, 'bad_cursor', str(error))
        return JSONResponse(
            {
                'requests': [_row_json(row) for row in page.rows],
                'next_cursor': page.next_cursor,
                'total': page.total,
                'total_exact': page.total_exact,
            }
        )

    async def get(self, request: Request) -> Response:
        """`GET /api/requests/<id>`: one waiting request."""
        try:
            data = request_json(await self.context.get(request.path_params['id'], person(request)))
            if handoffs := await handoffs_of(self.context.store, request.path_params['id']):
                data['handoffs'] = handoffs
            return JSONResponse(data)
        except StoreError as error:
            return store_error(error)

    async def answer(self, request: Request) -> Response:
        """`POST /api/requests/<id>/answer`: answer with `{"answers": [...]}`."""
        try:
            _require_json(request)
            response = parse_response(
                parse_json_body(await request.body()),
                max_custom_answer_length=self.context.options.max_custom_answer_length,
            )
        except BadBody as error:
            return _bad_body(error)
        return await self._respond(request, replace(response, answered_by=answered_by(request)))

    async def decline(self, request: Request) -> Response:
        """`POST /api/requests/<id>/decline`: decline, with no body or `{}`."""
        try:
            # A browser's cookie comes with a plain cross-site form too; only the token in a header cannot.
            if not self.context.gate.sent_token(request):
                _require_json(request)
            body = await request.body()
            if body.strip():
                _require_json(request)
                value = parse_json_body(body)
                if value not in ({}, None):
                    raise BadBody(422, 'a decline takes no fields; send {} or nothing')
        except BadBody as error:
            return _bad_body(error)
        declined = AskUserResponse(cancelled=True, answered_by=answered_by(request))
        return await self._respond(request, declined)

    async def events(self, request: Request) -> Response:
        """`GET /api/events`: Server-Sent Events as requests arrive, are answered or withdrawn, and `finished`."""
        finished = ServerSentEvent(data='{}', event='finished')
        context = self.context
        if server_stopping():  # the pages stop reconnecting, and uvicorn gets to the lifespan's end (`_stopping`)
            return Response(finished.encode(), media_type='text/event-stream', headers={'connection': 'close'})
        if context.finished:
            return EventSourceResponse(_once(finished), headers={'cache-control': 'no-store'})
        # From where the page's last stream stopped (`Last-Event-ID`, the `id:` of the last event it got), where the
        # store can resume (`events_after`); from now on otherwise.
        resume: Callable[[str | None], AsyncIterator[StoreEvent]] | None = getattr(context.store, 'events_after', None)
        last_id = request.headers.get('last-event-id')
        events = context.store.events() if resume is None else resume(last_id or None)
        # Nothing read up front: each event says whom it is about (its question's or approval's audience), and is
        # passed on by the rule the listing uses, so a stream costs the same however many questions wait.
        shown = _Shown(person(request))
        # A hub subscription is ended in place when the server finishes: each event then costs this stream one
        # wake-up. Any other store's events are raced against the finish, a task group per event.
        end: object = getattr(events, 'end', None)
        finish = anyio.Event()
        ender: Callable[[], None] = cast('Callable[[], None]', end) if callable(end) else finish.set
        context.finish_waiters.add(ender)
        if context.finished:  # finished while this stream was being opened
            ender()

        async def stream() -> AsyncIterator[ServerSentEvent]:
            try:
                while (event := await _next_event(events, finish, ended_in_place=ender is not finish.set)) is not None:
                    if shown.passes(event):
                        yield ServerSentEvent(
                            data=json.dumps(event_json(event)), event=event_name(event), id=event.position
                        )
                if context.finished:
                    yield finished
            except Exception as error:
                if not unreachable(error):
                    raise
                log_unreachable(request, error)  # the stream ends; the page reconnects and tries again
            finally:
                context.finish_waiters.discard(ender)
                close = getattr(events, 'aclose', None)
                if close is not None:
                    await close()

        return EventSourceResponse(stream(), ping=15, headers={'cache-control': 'no-store'})

    async def _respond(self, request: Request, response: AskUserResponse) -> Response:
        request_id = request.path_params['id']
        who = person(request)
        try:
            self.context.check_id(request_id)
            if not who.sees_all:
                await self.context.get(request_id, who)  # someone else's question is unknown, as the list says
            # The store looks the request up and checks the response against it.
            await self.context.store.respond(request_id, response)
        except StoreError as error:
            return store_error(error)
        except ValueError as error:
            return error_json(422, 'invalid_answer', str(error))
        return JSONResponse({'id': request_id, 'status': 'declined' if response.cancelled else 'answered'})


class _Shown:
    """Which events of the store one person's event stream passes on: those about the questions they may see.

    Decided from the event alone, as the listing decides (`addressed_to`, `audience_includes`): every event of a
    store that passes them carries its question or approval, so the stream holds no list of keys and never names
    a question of someone else's, not even by its id. An event without its item (one a store could not tell)
    goes only to a person who sees all.
    """

    def __init__(self, who: Person) -> None:
        self.who = who

    def passes(self, event: StoreEvent) -> bool:
        """Whether `event` may go to this person."""
        if self.who.sees_all:
            return True
        if event.item == 'approval':
            return event.approval is not None and audience_includes(event.approval.audience, self.who)
        return event.request is not None and addressed_to(event.request, self.who)


def refused(verdict: Literal['unauthenticated', 'forbidden']) -> Response:
    """401 for a client that sent no credentials, 403 for credentials that do not give access."""
    if verdict == 'unauthenticated':
        return error_json(401, 'unauthorized', 'send the access token as "Authorization: Bearer <token>"')
    return error_json(403, 'forbidden', 'these credentials do not give access to the questions')


def store_unreachable() -> Response:
    """503 for a store whose database cannot be reached."""
    return error_json(503, 'store_unavailable', 'the question store cannot be reached; try again later')


def store_error(error: StoreError) -> Response:
    """The error's own status and code, from the one table on `StoreError`."""
    return error_json(error.http_status, error.code, str(error))


def error_json(status: int, code: str, message: str) -> Response:
    """`{"error": code, "message": message}` with HTTP `status`."""
    return JSONResponse({'error': code, 'message': message}, status_code=status)


async def _once(event: ServerSentEvent) -> AsyncIterator[ServerSentEvent]:
    yield event


async def _next_event(
    events: AsyncIterator[StoreEvent], finished: anyio.Event, *, ended_in_place: bool = False
) -> StoreEvent | None:
    """The store's next event, or `None` when its iteration ends or `finished` is set first.

    `ended_in_place`: the iteration itself ends when the server finishes, so no race is needed.
    """
    if finished.is_set():
        return None
    if ended_in_place:
        return await anext(events, None)
    got: list[StoreEvent] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def take() -> None:
            try:
                got.append(await anext(events))
            except StopAsyncIteration:
                pass
            except Exception as error:  # raised below, rather than wrapped in the task group's ExceptionGroup
                failed.append(error)
            group.cancel_scope.cancel()

        async def watch() -> None:
            await finished.wait()
            group.cancel_scope.cancel()

        group.start_soon(take)
        group.start_soon(watch)
    if failed:
        raise failed[0]
    return got[0] if got else None


def _row_json(row: InboxRow) -> dict[str, Any]:
    return {**request_json(row.request), 'asked_at': row.asked_at, 'run': row.workflow_id}


def _require_json(request: Request) -> None:
    # A JSON content type cannot be sent cross-site without a CORS preflight, which this app never grants.
    kind = request.headers.get('content-type', '').split(';')[0].strip().lower()
    if kind != 'application/json':
        raise BadBody(415, 'send the body as JSON, with "Content-Type: application/json"')


def _bad_body(error: BadBody) -> Response:
    code = {400: 'malformed_json', 415: 'unsupported_media_type'}.get(error.status, 'invalid_answer')
    return error_json(error.status, code, str(error))
