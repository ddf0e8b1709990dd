"""`WebAnswerer`: an `Answerer` whose questions a person answers in a browser."""

from __future__ import annotations

from typing import Any

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse

from ._app import AskUserApp, create_app
from ._hub import QuestionHub
from ._options import WebOptions, deprecated_name, web_options

__all__ = ('WebAnswerer',)


class WebAnswerer:
    """Publishes each request to an in-process hub and waits until a person answers it in a browser.

    Serve `.app` (an ASGI app; mount it under any prefix of a Starlette or FastAPI application, or run
    it with `serve`), give the person a link from `login_url`, and pass the answerer to
    `AskUser(answerer=...)`. The run waits inside the tool call until the form is submitted; cancelling
    the run or a timeout withdraws the question, and the page says it is no longer waiting.

    `options` (a `WebOptions`) says how the pages and the API behave; its fields may also be given as
    keyword arguments: `WebAnswerer(title='Deploys')`. `hub` is where the requests wait (a new
    `QuestionHub()` by default).
    """

    def __init__(self, options: WebOptions | None = None, *, hub: QuestionHub | None = None, **fields: Any) -> None:
        self.options = web_options(options, fields, owner='WebAnswerer')
        """How the pages and the API behave."""
        self.hub = hub if hub is not None else QuestionHub()
        """Where this answerer's requests wait; its `QuestionStore` side backs the pages and the API."""
        self.app: AskUserApp = create_app(self.hub, self.options)
        """The inbox, the forms and the JSON API over `hub`, as an ASGI app."""

    def __repr__(self) -> str:
        return f'WebAnswerer({self.options!r}, hub={self.hub!r})'

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
        """Show `request` in the inbox and wait for the person's answer (or their decline)."""
        return await self.hub.ask(request)

    def login_url(self, base_url: str, request_id: str | None = None, *, name: str | None = None) -> str:
        """A one-time link for a person: `base_url` is where `app` is served (`http://127.0.0.1:8000/ask/`).

        The link signs the browser in and opens the inbox, or the form of `request_id`. `name` is who
        the link is for: the answers sent from the browser that opens it carry it as `answered_by`.
        """
        return base_url.rstrip('/') + '/' + self.app.login_path(request_id, name=name)
