"""`SlackChannel`: tells people on Slack with buttons and records what they click (the one module with slack_sdk).

Messages go out through slack_sdk's `WebClient` (in a worker thread: no aiohttp), Slack's interaction payloads come in
on a Starlette endpoint that verifies Slack's signature with slack_sdk's `SignatureVerifier`.
"""

from __future__ import annotations

import inspect
import json
import logging
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import anyio
import anyio.to_thread
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web import WebClient
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from pydantic_ai_ask_user._answers import MAX_CUSTOM_ANSWER_LENGTH, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._approvals import ApprovalDecision
from pydantic_ai_ask_user._audience import Person, addressed_to, audience_includes
from pydantic_ai_ask_user._question_store import (
    AlreadyAnsweredError,
    ApprovalStore,
    QuestionStore,
    StoreError,
    WithdrawnError,
)
from pydantic_ai_ask_user._text import printable

from ._items import Finished, ItemKind, Recipient, WaitingItem
from ._ledger import LedgerEntry
from ._links import InboxLinks
from ._notifier import DeliveryRefused
from ._slack_blocks import (
    ANSWER_CALLBACK,
    DENY_CALLBACK,
    PREFIX,
    Block,
    Drawing,
    answer_modal,
    cut,
    deny_modal,
    finished_blocks,
    finished_text,
    lone_finished_blocks,
    message_blocks,
    mrkdwn_escape,
    notice_modal,
    read_actions_block_id,
)

__all__ = ('SlackChannel', 'SlackPeople', 'REFUSING_ERRORS', 'MAX_PAYLOAD_BYTES')

logger = logging.getLogger('pydantic_ai_ask_user.notify')
"""Where failed Slack calls made after answering Slack are logged."""

REFUSING_ERRORS = frozenset(
    {
        'invalid_auth',
        'not_authed',
        'account_inactive',
        'token_revoked',
        'token_expired',
        'no_permission',
        'missing_scope',
        'channel_not_found',
        'user_not_found',
        'is_archived',
        'cannot_dm_bot',
        'invalid_blocks',
        'msg_too_long',
    }
)
"""Slack API errors that retrying cannot mend: `send` raises `DeliveryRefused` for them (others are retried)."""

MAX_PAYLOAD_BYTES = 512 * 1024
"""The largest request the endpoint reads; a larger one is refused with 413 before its signature is checked."""

_REPLAY_SECONDS = 5 * 60
"""How long a signature is remembered, so the same request sent again is refused: what the verifier accepts."""

_MAX_REMEMBERED = 10_000
"""How many signatures and messages are remembered at most."""

SlackPeople = Callable[[str], Person | Awaitable[Person | None] | None] | Mapping[str, Person | Recipient]
"""Who a Slack user is: a function of the Slack user id (sync or async) giving a `Person` or `None`, or a mapping."""


class SlackChannel:
    """Tells people on Slack: a direct message per item (or a digest) with buttons they answer with.

    - **Messages.** A question with one single-select question gets a button per option (a select menu for more
      than 5), and "Other…" for the person's own words; several questions, multi-select or notes get "Answer…",
      which opens a modal. An approval shows the tool and its arguments, with Approve and "Deny…" (a modal asks
      for an optional reason). Every message links to the item in the inbox (`InboxLinks.page`).
    - **Answers.** `endpoint(store)` is the Interactivity Request URL: it verifies Slack's signature and timestamp
      (slack_sdk's `SignatureVerifier`), finds who clicked through `person_for`, checks they are addressed
      (`addressed_to`) and records the answer through the store (`check_response`) or the decision.
    - **Finished.** Once an item is answered anywhere, its message is updated in place ("Answered by alice").

    `person_for` is required: the endpoint knows only the Slack user id of whoever clicked. Give a function of the
    user id (sync or async) that returns a `Person` (or `None` for someone unknown), or a mapping of user ids to
    `Person`s or `Recipient`s (`SlackChannel.people(directory.people)` makes one from a `StaticDirectory`).
    `base_url` is the Web API's (tests point it at a local server).
    """

    def __init__(
        self,
        *,
        token: str,
        signing_secret: str,
        person_for: SlackPeople,
        base_url: str = 'https://slack.com/api/',
        language: str = 'en',
        allow_custom_answers: bool = True,
        timeout: int = 10,
        max_payload_bytes: int = MAX_PAYLOAD_BYTES,
    ) -> None:
        if not token.strip() or not signing_secret.strip():
            raise ValueError('SlackChannel needs the bot token and the signing secret of your Slack app')
        if max_payload_bytes < 1024:
            raise ValueError('max_payload_bytes must be at least 1024')
        self._client = WebClient(token=token, base_url=base_url, timeout=timeout)
        self._verifier = SignatureVerifier(signing_secret)
        self._person_for = person_for
        self.drawing = Drawing(language=language, allow_custom_answers=allow_custom_answers)
        """The language of the channel's own words, and whether questions take the person's own words."""
        self.max_payload_bytes = max_payload_bytes
        """The largest interaction payload the endpoint reads."""
        self._messages: OrderedDict[str, list[Block]] = OrderedDict()
        self._seen: dict[str, float] = {}
        self._updating: anyio.Lock | None = None

    def __repr__(self) -> str:
        return f'SlackChannel(base_url={self._client.base_url!r})'

    @property
    def name(self) -> str:
        """`slack`: what `Recipient.channels` names it, and where `ask-user inbox --notify` mounts its endpoint."""
        return 'slack'

    @staticmethod
    def people(recipients: Sequence[Recipient]) -> dict[str, Person]:
        """A `person_for` mapping from recipients (a `StaticDirectory`'s `people`): each Slack user id to its person."""
        return {r.slack_user: r.person for r in recipients if r.slack_user is not None}

    def reaches(self, recipient: Recipient) -> bool:
        """Whether `recipient` has a Slack user id."""
        return recipient.slack_user is not None

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        """Send `recipient` a direct message about `items`; `<channel>:<ts>` of the message for each item.

        A digest's references end in `#<n>`, the item's place in it, so its update leaves the other items be.
        """
        if recipient.slack_user is None:
            raise DeliveryRefused(f'{recipient.name} has no Slack user id')
        drawing = replace(self.drawing, language=recipient.language or self.drawing.language)
        blocks, text = message_blocks(recipient, items, links, drawing)
        posted = await self._call('chat.postMessage', channel=recipient.slack_user, text=text, blocks=blocks)
        channel, ts = str(posted.get('channel', '')), str(posted.get('ts', ''))
        if not channel or not ts:
            raise RuntimeError('Slack answered chat.postMessage without a channel and a timestamp')
        self._remember(f'{channel}:{ts}', blocks)
        if len(items) == 1:
            return {items[0].key: f'{channel}:{ts}'}
        return {item.key: f'{channel}:{ts}#{n}' for n, item in enumerate(items)}

    async def finished(self, entry: LedgerEntry, finished: Finished) -> None:
        """Replace the buttons of `entry.ref`'s item with how it finished ("Answered by alice")."""
        if entry.ref is None:
            return
        message, _, place = entry.ref.partition('#')
        channel, _, ts = message.partition(':')
        n = int(place) if place.isdigit() else 0
        status = finished_text(finished, self.drawing)
        fallback = None if place else lone_finished_blocks(finished.headline, status)
        if not await self._update_item(channel, ts, n, status, fallback):
            # A digest this process did not send or see: a reply under it, rather than lose its other items.
            text = mrkdwn_escape(f'{finished.headline}: {status}' if finished.headline else status)
            await self._call('chat.postMessage', channel=channel, thread_ts=ts, text=text)

    def endpoint(self, store: QuestionStore) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        """The ASGI app Slack's Interactivity Request URL points at, recording answers and decisions in `store`.

        It takes Slack's POSTs (`payload=` form), refuses any whose signature or timestamp is not Slack's (401),
        or larger than `max_payload_bytes` (413), and handles button clicks, selects and modal submissions. It
        answers at any path: mount it with `Route('/notify/slack', endpoint)` (a `Mount` answers a POST to the path
        without its trailing slash with a redirect, which Slack does not follow).
        """
        return _Endpoint(self, store)

    # Calling Slack.

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        def call() -> dict[str, Any]:
            try:
                response = cast('Any', self._client).api_call(method, json=params)
            except SlackApiError as error:
                data = cast('object', cast('Any', error.response).data)
                code = str(cast('dict[str, Any]', data).get('error', '')) if isinstance(data, dict) else ''
                if code in REFUSING_ERRORS:
                    raise DeliveryRefused(f'Slack refused {method}: {code}') from None
                raise
            return cast('dict[str, Any]', response.data)

        return await anyio.to_thread.run_sync(call)

    async def _update_item(self, channel: str, ts: str, n: int, status: str, fallback: list[Block] | None) -> bool:
        """Replace the `n`-th item of message `channel:ts` with `status` (the message as last seen, else `fallback`);
        `False` when there is neither. One update at a time, so that two items finishing at once both show.
        """
        if self._updating is None:
            self._updating = anyio.Lock()
        async with self._updating:
            known = self._messages.get(f'{channel}:{ts}')
            blocks = finished_blocks(known, n, status) if known is not None else fallback
            if blocks is None:
                return False
            self._remember(f'{channel}:{ts}', blocks)
            await self._call('chat.update', channel=channel, ts=ts, blocks=blocks, text=mrkdwn_escape(status))
        return True

    def _remember(self, message: str, blocks: list[Block]) -> None:
        self._messages[message] = blocks
        self._messages.move_to_end(message)
        while len(self._messages) > _MAX_REMEMBERED:
            self._messages.popitem(last=False)

    async def _after(self, calls: list[Callable[[], Awaitable[None]]]) -> None:
        """Run the Slack calls that follow an interaction, after Slack got its answer: failures are only logged."""
        for call in calls:
            try:
                await call()
            except Exception as error:
                logger.warning('a Slack call after an interaction failed: %s', printable(str(error))[:500])

    # Receiving.

    async def _handle(self, request: Request, store: QuestionStore) -> Response:
        if request.method != 'POST':
            return PlainTextResponse('POST only', status_code=405, headers={'Allow': 'POST'})
        body = await self._body(request)
        if body is None:
            return PlainTextResponse('too large', status_code=413)
        if not self._verified(body, request.headers):
            return PlainTextResponse('not signed by Slack', status_code=401)
        try:
            form = urllib.parse.parse_qs(body.decode('utf-8'), strict_parsing=False)
            payload = json.loads(form['payload'][0])
        except (UnicodeDecodeError, KeyError, IndexError, ValueError):
            return PlainTextResponse('no payload', status_code=400)
        if not isinstance(payload, dict):
            return PlainTextResponse('no payload', status_code=400)
        payload = cast('dict[str, Any]', payload)
        kind = payload.get('type')
        try:
            if kind == 'block_actions':
                return await self._block_actions(payload, store)
            if kind == 'view_submission':
                return await self._view_submission(payload, store)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return PlainTextResponse('malformed payload', status_code=400)
        return Response(status_code=200)

    async def _body(self, request: Request) -> bytes | None:
        length = request.headers.get('content-length', '')
        if length.isdigit() and int(length) > self.max_payload_bytes:
            return None
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > self.max_payload_bytes:
                    return None
                chunks.append(chunk)
        except ClientDisconnect:
            return b''
        return b''.join(chunks)

    def _verified(self, body: bytes, headers: Mapping[str, str]) -> bool:
        try:
            valid = self._verifier.is_valid_request(body, dict(headers))
        except (ValueError, TypeError):  # a timestamp that is not a number
            return False
        if not valid:
            return False
        now = time.time()
        for signature, until in list(self._seen.items()):
            if until < now or len(self._seen) > _MAX_REMEMBERED:
                del self._seen[signature]
        signature = headers.get('x-slack-signature', '')
        if signature in self._seen:  # the very request again: Slack sends each once
            return False
        self._seen[signature] = now + _REPLAY_SECONDS
        return True

    async def _person(self, user_id: object) -> Person | None:
        if not isinstance(user_id, str) or not user_id:
            return None
        hook = self._person_for
        if isinstance(hook, Mapping):
            found = cast('Mapping[str, Person | Recipient]', hook).get(user_id)
            person = found.person if isinstance(found, Recipient) else found
        else:
            try:
                result = hook(user_id)
                person = await result if inspect.isawaitable(result) else result
            except Exception:  # your directory failed: this click is refused as from someone unknown, and logged
                logger.exception('person_for raised for the Slack user %s; the click is refused', printable(user_id))
                return None
        if person is None or not person.name:
            return None
        return person

    def _refused(self, error: StoreError) -> tuple[str, str]:
        """What to tell a person whose click came too late, and the outcome to draw on the message."""
        _ = self.drawing.gettext
        if isinstance(error, AlreadyAnsweredError):
            return _('This has been answered already.'), 'finished'
        if isinstance(error, WithdrawnError):
            return _('This is no longer waiting.'), 'withdrawn'
        return _('Nothing is waiting here any more.'), 'withdrawn'

    async def _block_actions(self, payload: dict[str, Any], store: QuestionStore) -> Response:
        _ = self.drawing.gettext
        action = cast('dict[str, Any]', payload['actions'][0])
        action_id = str(action.get('action_id', ''))
        found = read_actions_block_id(str(action.get('block_id', '')))
        if found is None or not action_id.startswith(f'{PREFIX}:') or action_id == f'{PREFIX}:link':
            return Response(status_code=200)  # a link button, or not this channel's
        n, letter, key = found
        user_id = str(payload['user']['id'])
        container = cast('dict[str, Any]', payload.get('container') or {})
        where = cast('dict[str, Any]', payload.get('channel') or {})
        channel = str(container.get('channel_id') or where.get('id') or '')
        message = cast('dict[str, Any]', payload.get('message') or {})
        ts = str(container.get('message_ts') or message.get('ts') or '')
        raw_blocks = message.get('blocks')
        if channel and ts and isinstance(raw_blocks, list):
            self._remember(f'{channel}:{ts}', cast('list[Block]', raw_blocks))
        kind: ItemKind = 'approval' if letter == 'a' else 'question'

        def tell(text: str) -> Callable[[], Awaitable[None]]:
            async def call() -> None:
                await self._call('chat.postEphemeral', channel=channel, user=user_id, text=mrkdwn_escape(text))

            return call

        def update(outcome: str, by: str | None) -> Callable[[], Awaitable[None]]:
            async def call() -> None:
                await self._finish_item(channel, ts, n, Finished(kind, key, outcome, by))

            return call

        def answer(calls: list[Callable[[], Awaitable[None]]]) -> Response:
            return Response(status_code=200, background=BackgroundTask(self._after, calls))

        person = await self._person(user_id)
        if person is None:
            return answer([tell(_('Your Slack account is not linked to anyone this inbox knows.'))])
        metadata = json.dumps({'k': key, 'c': channel, 't': ts, 'n': n}, separators=(',', ':'))
        trigger = str(payload.get('trigger_id', ''))
        try:
            if kind == 'approval':
                if not isinstance(store, ApprovalStore):
                    return Response(status_code=200)
                approval = await store.get_approval(key)
                if not addressed_to(approval, person):
                    return answer([tell(_('This is not addressed to you.'))])
                if action_id == f'{PREFIX}:deny':
                    view = deny_modal(approval, metadata, self.drawing)
                    return answer([self._open(trigger, view)])
                if action_id != f'{PREFIX}:approve':
                    return Response(status_code=200)
                await store.decide(key, ApprovalDecision.approve(decided_by=person.name))
                return answer([update('approved', person.name)])
            request = await store.get(key)
            if not addressed_to(request, person):
                return answer([tell(_('This is not addressed to you.'))])
            if action_id == f'{PREFIX}:open':
                return answer([self._open(trigger, answer_modal(request, metadata, self.drawing))])
            if action_id == f'{PREFIX}:select':
                value = str(action['selected_option']['value'])
            elif action_id.startswith(f'{PREFIX}:answer:'):
                value = str(action.get('value', ''))
            else:
                return Response(status_code=200)
            response = _picked(request, value, person)
            if response is None:
                return answer([tell(_('That is not one of the options.'))])
            try:
                await store.respond(key, response)
            except ValueError as error:
                return answer([tell(_('The answer was not taken: {reason}').format(reason=printable(str(error))))])
            return answer([update('answered', person.name)])
        except StoreError as error:
            text, outcome = self._refused(error)
            if not audience_includes(error.audience, person):
                text = _('Nothing is waiting here any more.')
            return answer([tell(text), update(outcome, None)])

    def _open(self, trigger: str, view: Block) -> Callable[[], Awaitable[None]]:
        async def call() -> None:
            await self._call('views.open', trigger_id=trigger, view=view)

        return call

    async def _finish_item(self, channel: str, ts: str, n: int, finished: Finished) -> None:
        if channel and ts:
            await self._update_item(channel, ts, n, finished_text(finished, self.drawing), None)

    async def _view_submission(self, payload: dict[str, Any], store: QuestionStore) -> Response:
        _ = self.drawing.gettext
        view = cast('dict[str, Any]', payload['view'])
        callback = view.get('callback_id')
        if callback not in (ANSWER_CALLBACK, DENY_CALLBACK):
            return Response(status_code=200)
        metadata = cast('dict[str, Any]', json.loads(str(view.get('private_metadata', ''))))
        key, channel, ts, n = str(metadata['k']), str(metadata['c']), str(metadata['t']), int(metadata['n'])
        values = cast('dict[str, dict[str, Any]]', view.get('state', {}).get('values', {}))
        person = await self._person(payload['user']['id'])

        def notice(text: str) -> Response:
            return JSONResponse({'response_action': 'update', 'view': notice_modal(text, self.drawing)})

        if person is None:
            return notice(_('Your Slack account is not linked to anyone this inbox knows.'))
        kind: ItemKind = 'approval' if callback == DENY_CALLBACK else 'question'
        try:
            if kind == 'approval':
                if not isinstance(store, ApprovalStore):
                    return Response(status_code=200)
                approval = await store.get_approval(key)
                if not addressed_to(approval, person):
                    return notice(_('This is not addressed to you.'))
                reason = _text_value(values, 'reason', 'reason')
                try:
                    await store.decide(key, ApprovalDecision(False, reason=reason, decided_by=person.name))
                except ValueError as error:
                    return _errors({'reason': printable(str(error))})
                outcome = 'denied'
            else:
                request = await store.get(key)
                if not addressed_to(request, person):
                    return notice(_('This is not addressed to you.'))
                response = self._from_view(request, values, person)
                if isinstance(response, dict):
                    return _errors(response)
                try:
                    await store.respond(key, response)
                except ValueError as error:
                    return _errors({'q0': printable(str(error))})
                outcome = 'answered'
        except StoreError as error:
            text, outcome = self._refused(error)
            if not audience_includes(error.audience, person):
                return notice(_('Nothing is waiting here any more.'))
            finished = Finished(kind, key, outcome)
            return JSONResponse(
                {'response_action': 'update', 'view': notice_modal(text, self.drawing)},
                background=BackgroundTask(self._after, [lambda: self._finish_item(channel, ts, n, finished)]),
            )
        finished = Finished(kind, key, outcome, person.name)
        update = BackgroundTask(self._after, [lambda: self._finish_item(channel, ts, n, finished)])
        return Response(status_code=200, background=update)

    def _from_view(
        self, request: AskUserRequest, values: dict[str, dict[str, Any]], person: Person
    ) -> AskUserResponse | dict[str, str]:
        """The response a submitted answer modal gives, or the errors to show by block id."""
        _ = self.drawing.gettext
        answers: list[AskUserAnswer] = []
        errors: dict[str, str] = {}
        for i, question in enumerate(request.questions):
            state = cast('dict[str, Any]', values.get(f'q{i}', {}).get('choice') or {})
            chosen = [state['selected_option']] if state.get('selected_option') else state.get('selected_options') or []
            indices = [str(option.get('value', '')) for option in cast('list[dict[str, Any]]', chosen)]
            if not all(index.isdigit() and int(index) < len(question.options) for index in indices):
                errors[f'q{i}'] = _('That is not one of the options.')
                continue
            picked = [question.options[int(index)].label for index in indices]
            other = _text_value(values, f'q{i}-other', 'other') if self.drawing.allow_custom_answers else None
            note = _text_value(values, f'q{i}-note', 'note') if request.notes else None
            if other is not None and picked:
                errors[f'q{i}-other'] = _('Pick an option or write your own answer, not both.')
            elif other is None and not picked:
                errors[f'q{i}'] = _('Pick an option or write your own answer.')
            elif other is not None and len(other) > MAX_CUSTOM_ANSWER_LENGTH:
                errors[f'q{i}-other'] = _('That is too long.')
            else:
                answers.append(
                    AskUserAnswer(header=question.header, selected=tuple(picked), custom_answer=other, note=note)
                )
        if errors:
            return errors
        return AskUserResponse(answers=tuple(answers), answered_by=person.name)


class _Endpoint:
    """The ASGI app of `SlackChannel.endpoint`: an object, not a function, so a Starlette `Route` serves it as one."""

    def __init__(self, channel: SlackChannel, store: QuestionStore) -> None:
        self._channel = channel
        self._store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] == 'lifespan':
            await _lifespan(receive, send)
            return
        if scope['type'] != 'http':
            return
        response = await self._channel._handle(Request(scope, receive), self._store)  # pyright: ignore[reportPrivateUsage]
        await response(scope, receive, send)


def _picked(request: AskUserRequest, value: str, person: Person) -> AskUserResponse | None:
    """The response a button or a select's `<question>:<option>` value gives, or `None` for one that is not."""
    question_index, _, option_index = value.partition(':')
    if not question_index.isdigit() or not option_index.isdigit():
        return None
    q, o = int(question_index), int(option_index)
    if q >= len(request.questions) or o >= len(request.questions[q].options):
        return None
    question = request.questions[q]
    answer = AskUserAnswer(header=question.header, selected=(question.options[o].label,))
    return AskUserResponse(answers=(answer,), answered_by=person.name)


def _text_value(values: dict[str, dict[str, Any]], block_id: str, action_id: str) -> str | None:
    state = cast('dict[str, Any]', values.get(block_id, {}).get(action_id) or {})
    value = state.get('value')
    if not isinstance(value, str) or not value.strip():
        return None
    return value


def _errors(errors: dict[str, str]) -> Response:
    return JSONResponse({'response_action': 'errors', 'errors': {k: cut(v, 2000) for k, v in errors.items()}})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message['type'] == 'lifespan.startup':
            await send({'type': 'lifespan.startup.complete'})
        elif message['type'] == 'lifespan.shutdown':
            await send({'type': 'lifespan.shutdown.complete'})
            return
