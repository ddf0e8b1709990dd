"""Answer an agent's questions in a browser: `WebAnswerer`, its pages and JSON API, and a standalone server.

Needs the `web` extra: `pip install 'pydantic-ai-ask-user[web]'`.
"""

from ._answerer import WebAnswerer
from ._app import DEFAULT_TITLE, AskUserApp, create_app
from ._hub import DEFAULT_REMEMBER_FINISHED, HubRecord, QuestionHub
from ._security import (
    CONTENT_SECURITY_POLICY,
    CSRF_COOKIE,
    DEFAULT_BODY_SECONDS,
    DEFAULT_MAX_BODY_BYTES,
    SESSION_COOKIE,
    TOKEN_HEADER,
    Authorize,
)
from ._serve import ServerLimits, serve
from ._wire import DEFAULT_MAX_CUSTOM_ANSWER

__all__ = (
    'WebAnswerer',
    'QuestionHub',
    'HubRecord',
    'AskUserApp',
    'create_app',
    'serve',
    'ServerLimits',
    'Authorize',
    'DEFAULT_TITLE',
    'DEFAULT_REMEMBER_FINISHED',
    'DEFAULT_MAX_BODY_BYTES',
    'DEFAULT_BODY_SECONDS',
    'DEFAULT_MAX_CUSTOM_ANSWER',
    'CONTENT_SECURITY_POLICY',
    'SESSION_COOKIE',
    'CSRF_COOKIE',
    'TOKEN_HEADER',
)
