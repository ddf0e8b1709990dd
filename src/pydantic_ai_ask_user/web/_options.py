"""`WebOptions`: what the pages and the JSON API are configured with, in one place for every constructor."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai_ask_user._signing import check_key
from pydantic_ai_ask_user.limits import MAX_CUSTOM_ANSWER_LENGTH

from ._links import SignedLoginLinks
from ._security import DEFAULT_BODY_SECONDS, DEFAULT_MAX_BODY_BYTES, Authorize

__all__ = ('WebOptions', 'DEFAULT_TITLE', 'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH', 'web_options', 'deprecated_name')

DEFAULT_TITLE = 'Questions from your agent'
"""The name the pages show in their title and header bar."""

DEFAULT_MAX_CUSTOM_ANSWER_LENGTH = MAX_CUSTOM_ANSWER_LENGTH
"""The longest custom answer, in characters, that the pages and the API accept by default: the core's limit."""

DEPRECATED_NAMES = {'max_custom_answer': 'max_custom_answer_length'}
"""Older spellings of options, still accepted with a `DeprecationWarning`: old name -> current name."""


@dataclass(frozen=True, kw_only=True)
class WebOptions:
    """How the inbox, the forms and the JSON API behave: for `WebAnswerer`, `create_app` and `AskUserApp`.

    Each of those also takes these fields as keyword arguments, applied over `options`:
    `create_app(store, title='Deploys')` is `create_app(store, WebOptions(title='Deploys'))`.
    """

    authorize: Authorize | None = None
    """Your own access check, `(starlette.requests.Request) -> bool | str` (or an async one), instead of the token.

    Return `True` to let the request in, or the person's name (a `str`) to let it in as them: their
    answers then carry it as `AskUserResponse.answered_by`. Anything else refuses it.

    `None` (the default) guards the app with a random access token made at start, which a browser
    gets through a one-time link (`AskUserApp.login_path`) and an API client sends as `Authorization: Bearer`.
    """

    access_token: str | None = None
    """The API access token to use instead of a random one; must be `None` with `authorize`."""

    login_links: SignedLoginLinks | None = None
    """Sign-in links made elsewhere with a shared key (`SignedLoginLinks`), accepted besides the app's own one-time
    links: each signs one browser in as the person it names, once, until it expires. Not with `authorize`.
    """

    answered_by: str | None = None
    """Who an answer is recorded as (`AskUserResponse.answered_by`) when the gate knows no name for the sender.

    A login link made with a name (`login_url(..., name='alice')`) records that name, and an `authorize`
    hook that returns a string records that string; an answer sent with the access token, or through a
    link made without a name, records this (by default `None`: nobody named). Never taken from the client.
    """

    title: str = DEFAULT_TITLE
    """The name the pages show in their title and header bar."""

    allow_custom_answers: bool = True
    """Whether each question has an "Other" box where the person writes their own answer."""

    max_custom_answer_length: int = DEFAULT_MAX_CUSTOM_ANSWER_LENGTH
    """The longest custom answer accepted, in characters: 1 to `MAX_CUSTOM_ANSWER_LENGTH` (2,000), the default."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """The largest request body the app reads, at least 1,024; bigger ones get 413."""

    body_seconds: float = DEFAULT_BODY_SECONDS
    """How long a client may take to send a request body, counted from its headers; slower gets 408."""

    receipt_key: bytes | str | None = field(default=None, repr=False)
    """The key the runs sign receipts with (`AskUser(receipt_key=...)`), to verify the receipts the history shows.

    With it, the History tab and `GET /api/history` check each kept receipt against the question and answer stored
    with it: verified, or (loudly) not verifying. Without it (the default) a receipt shows as signed, not checked.
    """

    def __post_init__(self) -> None:
        if self.receipt_key is not None:
            try:
                check_key(self.receipt_key)
            except (TypeError, ValueError) as error:
                raise ValueError(f'receipt_key: {error}') from None
        if not 1 <= self.max_custom_answer_length <= MAX_CUSTOM_ANSWER_LENGTH:
            # `check_custom_answer` refuses a longer answer whatever this says; say so at construction instead.
            raise ValueError(
                f'max_custom_answer_length must be at least 1 and at most {MAX_CUSTOM_ANSWER_LENGTH} '
                f'(MAX_CUSTOM_ANSWER_LENGTH), not {self.max_custom_answer_length!r}'
            )
        if self.max_body_bytes < 1024:
            raise ValueError(f'max_body_bytes must be at least 1024, not {self.max_body_bytes!r}')
        if not self.body_seconds > 0:
            raise ValueError(f'body_seconds must be more than 0, not {self.body_seconds!r}')


def web_options(options: WebOptions | None, fields: dict[str, Any], *, owner: str) -> WebOptions:
    """`options` (or the defaults) with `fields`, the keyword arguments of `owner`, applied over them.

    A `TypeError` names a keyword that is no option; an older spelling warns and is applied under its new name.
    """
    current: dict[str, Any] = {}
    for name, value in fields.items():
        if name in DEPRECATED_NAMES:
            new = DEPRECATED_NAMES[name]
            deprecated_name(f'{owner}({name}=...)', f'{owner}({new}=...)', stacklevel=4)
            if new in fields:
                raise TypeError(f'{owner}() got both {name} and {new}; pass {new} only')
            name = new
        if name not in _FIELDS:
            raise TypeError(f'{owner}() got an unexpected keyword argument {name!r}; its options are {_FIELD_LIST}')
        current[name] = value
    return replace(options or WebOptions(), **current)


def deprecated_name(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that `old` is an older spelling of `new`."""
    warnings.warn(f'{old} is deprecated; use {new}', DeprecationWarning, stacklevel=stacklevel)


_FIELDS = frozenset(WebOptions.__dataclass_fields__)
"""The names `web_options` accepts as keyword arguments."""

_FIELD_LIST = ', '.join(WebOptions.__dataclass_fields__)
"""The same, in order, for the error that names a keyword no option has."""
