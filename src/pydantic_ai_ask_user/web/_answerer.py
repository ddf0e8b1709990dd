"""`WebAnswerer`: an `Answerer` whose questions a person answers in a browser."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse

from ._app import DEFAULT_TITLE, AskUserApp, create_app
from ._hub import QuestionHub
from ._security import DEFAULT_MAX_BODY_BYTES, Authorize
from ._wire import DEFAULT_MAX_CUSTOM_ANSWER

__all__ = ('WebAnswerer',)


@dataclass
class WebAnswerer:
    """Publishes each request to an in-process hub and waits until a person answers it in a browser.

    Serve `.app` (an ASGI app; mount it under any prefix of a Starlette or FastAPI application, or run
    it with `serve`), give the person a link from `login_url`, and pass the answerer to
    `AskUser(answerer=...)`. The run waits inside the tool call until the form is submitted; cancelling
    the run or a timeout withdraws the question, and the page says it is no longer waiting.
    """

    _: KW_ONLY

    authorize: Authorize | None = None
    """Your own access check, `(starlette.requests.Request) -> bool` (or an async one), instead of the token.

    `None` (the default) guards the app with a random access token made at start, which a browser
    gets through a one-time link from `login_url` and an API client sends as `Authorization: Bearer`.
    """

    access_token: str | None = None
    """The API access token to use instead of a random one; must be `None` with `authorize`."""

    title: str = DEFAULT_TITLE
    """The name the pages show in their title and header bar."""

    allow_custom_answers: bool = True
    """Whether each question has an "Other" box where the person writes their own answer."""

    max_custom_answer: int = DEFAULT_MAX_CUSTOM_ANSWER
    """The longest custom answer accepted, in characters: at most `MAX_CUSTOM_ANSWER_LENGTH` (2,000), the default."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """The largest request body the app reads; bigger ones get 413."""

    hub: QuestionHub = field(default_factory=QuestionHub)
    """Where this answerer's requests wait; its `QuestionStore` side backs the pages and the API."""

    app: AskUserApp = field(init=False, repr=False)
    """The inbox, the forms and the JSON API over `hub`, as an ASGI app."""

    def __post_init__(self) -> None:
        if self.max_custom_answer > DEFAULT_MAX_CUSTOM_ANSWER:
            # `check_custom_answer` refuses a longer answer whatever this says; say so at construction instead.
            raise ValueError(
                f'WebAnswerer.max_custom_answer must be at most {DEFAULT_MAX_CUSTOM_ANSWER} '
                f'(MAX_CUSTOM_ANSWER_LENGTH), not {self.max_custom_answer!r}'
            )
        self.app = create_app(
            self.hub,
            authorize=self.authorize,
            access_token=self.access_token,
            title=self.title,
            allow_custom_answers=self.allow_custom_answers,
            max_custom_answer=self.max_custom_answer,
            max_body_bytes=self.max_body_bytes,
        )
        self.access_token = self.app.access_token

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Show `request` in the inbox and wait for the person's answer (or their decline)."""
        return await self.hub.ask(request)

    def login_url(self, base_url: str, request_id: str | None = None) -> str:
        """A one-time link for a person: `base_url` is where `app` is served (`http://127.0.0.1:8000/ask/`).

        The link signs the browser in and opens the inbox, or the form of `request_id`.
        """
        return base_url.rstrip('/') + '/' + self.app.login_path(request_id)
