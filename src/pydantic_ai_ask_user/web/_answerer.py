"""`WebAnswerer`: an `Answerer` whose questions a person answers in a browser."""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse, QuestionWithdrawn
from pydantic_ai_ask_user._audience import AudienceSetting, ContextSetting
from pydantic_ai_ask_user._escalation import EscalationSetting, check_escalation
from pydantic_ai_ask_user._module_names import LazyModule
from pydantic_ai_ask_user._receipt import AnswerReceipt
from pydantic_ai_ask_user._text import printable
from pydantic_ai_ask_user._webhooks import WebhookNotifier

from ..hub import QuestionHub
from ._app import AskUserApp, create_app
from ._options import WebOptions, deprecated_name, web_options

if TYPE_CHECKING:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, RunContext
    from pydantic_ai import tools as _tools
else:
    # Read by `typing.get_type_hints` (`request_input`), imported only then: `ask-user ask --web` loads this module
    # without Pydantic AI.
    _tools = LazyModule('pydantic_ai.tools')

__all__ = ('WebAnswerer',)

_log = logging.getLogger('pydantic_ai_ask_user.notify')


class WebAnswerer:
    """Publishes each request to an in-process hub and waits until a person answers it in a browser.

    Serve `.app` (an ASGI app; mount it under any prefix of a Starlette or FastAPI application, or run
    it with `serve`), give the person a link from `login_url`, and pass the answerer to
    `AskUser(answerer=...)`. The run waits inside the tool call until the form is submitted; cancelling
    the run or a timeout withdraws the question, and the page says it is no longer waiting. As the
    server shuts down, `close()` withdraws every open question, and each waiting run's model is told so.

    `options` (a `WebOptions`) says how the pages and the API behave; its fields may also be given as
    keyword arguments: `WebAnswerer(title='Deploys')`. `hub` is where the requests wait (a new
    `QuestionHub()` by default).

    `notify` (a `WebhookNotifier`) sends a signed `question_waiting` webhook as each question starts
    waiting, beside the wait (never delaying or failing it); its `link` is the question's page on
    this server, `<base_url>requests/<key>` (a link that needs the browser signed in; it grants nothing
    itself). `base_url` is where `app` is served, absolute (`https://ask.example.com/ask/`); set it
    here or later (`web.base_url = url`, once `serve` has said the port).
    """

    def __init__(
        self,
        options: WebOptions | None = None,
        *,
        hub: QuestionHub | None = None,
        notify: WebhookNotifier | None = None,
        base_url: str | None = None,
        **fields: Any,
    ) -> None:
        self.options = web_options(options, fields, owner='WebAnswerer')
        """How the pages and the API behave."""
        self.hub = hub if hub is not None else QuestionHub()
        """Where this answerer's requests wait; its `QuestionStore` side backs the pages and the API."""
        self.app: AskUserApp = create_app(self.hub, self.options)
        """The inbox, the forms and the JSON API over `hub`, as an ASGI app."""
        self.notify = notify
        """Where a `question_waiting` webhook goes as each question starts waiting; `None`: nowhere."""
        self.base_url = base_url
        """Where `app` is served, absolute: the start of the link in each webhook."""
        self._sending: set[asyncio.Task[bool]] = set()
        self._closed: str | None = None

    def __repr__(self) -> str:
        notify = '' if self.notify is None else f', notify={self.notify!r}'
        return f'WebAnswerer({self.options!r}, hub={self.hub!r}{notify})'

    @property
    def access_token(self) -> str | None:
        """The API access token (random unless given); `None` with `authorize`."""
        return self.app.access_token

    @property
    def max_custom_answer(self) -> int:
        """Deprecated: `options.max_custom_answer_length`."""
        deprecated_name('WebAnswerer.max_custom_answer', 'WebAnswerer.options.max_custom_answer_length')
        return self.options.max_custom_answer_length

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Show `request` in the inbox and wait for the person's answer (or their decline).

        After `close()`, raises `QuestionWithdrawn` at once: nobody is left to answer.
        """
        if self._closed is not None:
            raise QuestionWithdrawn(self._closed)
        if self.notify is None:
            return await self.hub.ask(request)
        waiting = [True]
        self._notify(self.notify, request, waiting)
        try:
            return await self.hub.ask(request)
        finally:
            waiting[0] = False

    async def keep_receipt(self, request: AskUserRequest, receipt: AnswerReceipt, /) -> AnswerReceipt:
        """Keep the run's signed receipt of the answer to `request` with the finished question in the hub, whose
        history shows it (a `ReceiptKeeper`: `AskUser(receipt_key=...)` calls it); returns the one kept.
        """
        return await self.hub.keep_receipt(request, receipt)

    def request_input(
        self,
        *,
        timeout: float | None = None,
        notes: bool = False,
        audience: AudienceSetting = None,
        context: ContextSetting = None,
        escalate: EscalationSetting = None,
    ) -> Callable[[_tools.RunContext[Any], _tools.DeferredToolRequests, str], Awaitable[_tools.DeferredToolResults]]:
        """A waiting handler's `ask` that shows a run's tool approvals (and its deferred AskUser questions) in this
        answerer's inbox and returns once a person has decided every one:
        `HandleDeferredToolCalls(web.request_input())`.

        Each approval gets a page (`/approvals/<key>`) where it is approved, denied with a reason, or approved with
        edited arguments checked against the tool's parameters JSON schema; it is listed, live, on the inbox of the
        people it is addressed to: `audience` and `context` (as `AskUser`'s: a value or a function of the run), else
        those of the wait's first AskUser question, else anyone's. The run goes on when every item of the wait is
        decided; after `timeout` seconds, each undecided approval is denied (`TIMED_OUT_DENIAL`) and each unanswered
        question is `TIMED_OUT`, and the decisions made in time stand. `close()` ends every open wait the same way.
        Pass `notes=True` when the agent's `AskUser` has `notes=True` (the deferred calls do not say so).
        `escalate` (as `AskUser(escalate=...)`: one `Escalation` or several; a `ValueError` here if they do not
        check) forwards each approval still undecided `after` seconds after its wait opened.

        A wait that also needs the result of another tool is refused with a `UserError`.
        """
        from pydantic import TypeAdapter
        from pydantic_ai import DeferredToolResults

        from .._request_input import wait_items, wait_results

        adapter = TypeAdapter(DeferredToolResults)
        steps = check_escalation(escalate, 'request_input(escalate=...)')

        async def ask(ctx: RunContext[Any], requests: DeferredToolRequests, token: str) -> DeferredToolResults:
            questions, approvals = wait_items(
                ctx,
                requests,
                token,
                owner='WebAnswerer.request_input',
                notes=notes,
                audience=audience,
                context=context,
                escalate=steps,
            )
            if self._closed is not None:
                answers = [(request, None) for request in questions]
                decisions = [(approval, None) for approval in approvals]
            else:
                answers, decisions = await self.hub.ask_wait(token, questions, approvals, timeout=timeout)
            return adapter.validate_python(wait_results(answers, decisions))

        return ask

    @property
    def closed(self) -> bool:
        """Whether `close()` was called: questions are withdrawn, not shown."""
        return self._closed is not None

    def close(self, reason: str = 'the server is shutting down') -> int:
        """Withdraw every open question (and tool approval) and every later one, as the server shuts down; returns
        how many were open.

        Call it when your application stops (a FastAPI or Starlette lifespan's shutdown). Each run waiting on
        a question gets `QuestionWithdrawn(reason)` from this answerer, so `AskUser` gives its model `WITHDRAWN`
        (nobody answered, nobody declined) and the run goes on at once, instead of holding the shutdown until
        `AskUser(timeout=...)` runs out and then telling the model `TIMED_OUT`. A question asked after it is
        withdrawn at once, so a model that asks again cannot hold the shutdown either. Open pages are told
        the server has finished (`AskUserApp.finish`). Calling it again does nothing more.
        """
        if self._closed is None:
            self._closed = reason
        self.app.finish()
        return self.hub.withdraw_all(self._closed)

    def question_url(self, request_id: str) -> str | None:
        """The absolute link to the page of a question on this server, from `base_url`; `None` without one.

        `request_id` is the question's `AskUserRequest.key` (its run and its tool call), as every URL of the app.
        """
        if self.base_url is None:
            return None
        return self.base_url.rstrip('/') + '/requests/' + urllib.parse.quote(request_id, safe='')

    def _notify(self, notifier: WebhookNotifier, request: AskUserRequest, waiting: list[bool]) -> None:
        link = self.question_url(request.key)
        if link is None:
            _log.warning(
                'no webhook for request %s: WebAnswerer.base_url is not set, so there is no link to send',
                printable(request.key, allow_newline=False),
            )
            return
        task = asyncio.create_task(
            notifier.notify(request, link=link, deadline=request.deadline, still_waiting=lambda: waiting[0])
        )
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def wait_sent(self) -> None:
        """Wait until every webhook started so far is delivered or given up (for tests and shutdown)."""
        while self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def login_url(
        self, base_url: str, request_id: str | None = None, *, name: str | None = None, groups: Collection[str] = ()
    ) -> str:
        """A one-time link for a person: `base_url` is where `app` is served (`http://127.0.0.1:8000/ask/`).

        The link signs the browser in and opens the inbox, or the form of `request_id`: a request's `key`
        (not its tool call id, which another run may repeat). `name` is who the link is for: the answers
        sent from the browser that opens it carry it as `answered_by`, and it sees the questions addressed to
        `name` or one of `groups` (`AskUser(audience=...)`), and the unaddressed ones.
        """
        return base_url.rstrip('/') + '/' + self.app.login_path(request_id, name=name, groups=groups)
