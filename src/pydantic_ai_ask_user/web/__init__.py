"""Answer an agent's questions in a browser: `WebAnswerer`, its pages and JSON API, and a standalone server.

Needs the `web` extra: `pip install 'pydantic-ai-ask-user[web]'`.
"""

from .. import _module_names
from .._asgi import DEFAULT_BODY_LIMIT_BYTES, DEFAULT_BODY_LIMIT_SECONDS, BodyLimit
from ._answerer import WebAnswerer
from ._app import AskUserApp, create_app
from ._links import DEFAULT_LINK_SECONDS, SignedLoginLinks
from ._options import DEFAULT_MAX_CUSTOM_ANSWER_LENGTH, DEFAULT_TITLE, WebOptions
from ._options import deprecated_name as _deprecated_name
from ._security import (
    CONTENT_SECURITY_POLICY,
    CSRF_COOKIE,
    DEFAULT_BODY_SECONDS,
    DEFAULT_MAX_BODY_BYTES,
    SESSION_COOKIE,
    TOKEN_HEADER,
    Authorize,
)
from ._serve import ServerLimits, listens_everywhere, reachable_host, serve

__all__ = (
    'WebAnswerer',
    'WebOptions',
    'AskUserApp',
    'create_app',
    'serve',
    'ServerLimits',
    'reachable_host',
    'listens_everywhere',
    'SignedLoginLinks',
    'DEFAULT_LINK_SECONDS',
    'BodyLimit',
    'DEFAULT_BODY_LIMIT_BYTES',
    'DEFAULT_BODY_LIMIT_SECONDS',
    'Authorize',
    'DEFAULT_TITLE',
    'DEFAULT_MAX_BODY_BYTES',
    'DEFAULT_BODY_SECONDS',
    'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH',
    'CONTENT_SECURITY_POLICY',
    'SESSION_COOKIE',
    'CSRF_COOKIE',
    'TOKEN_HEADER',
)


__getattr__ = _module_names.renamed_names(
    __name__,
    {
        'DEFAULT_MAX_CUSTOM_ANSWER': (
            DEFAULT_MAX_CUSTOM_ANSWER_LENGTH,
            _deprecated_name,
            (f'{__name__}.DEFAULT_MAX_CUSTOM_ANSWER', 'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH'),
        )
    },
)
"""The older names of this module, still importable with a `DeprecationWarning`."""
