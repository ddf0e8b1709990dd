"""Questions in the frontends people already build on: AG-UI (`ui.ag_ui`) and the Vercel AI SDK (`ui.vercel_ai`).

Each subpackage is a thin subclass of Pydantic AI's own adapter and event stream, behind its extra
(`pydantic-ai-ask-user[ag-ui]`, `pydantic-ai-ask-user[vercel-ai]`). This package itself imports neither.
`BodyLimit` bounds the request bodies of the endpoint that serves them (plain ASGI: no extra needed).
"""

from .._asgi import DEFAULT_BODY_LIMIT_BYTES, DEFAULT_BODY_LIMIT_SECONDS, BodyLimit
from ._answers import ANSWERED_EVENT_NAME, REQUESTED_EVENT_NAME

__all__ = (
    'REQUESTED_EVENT_NAME',
    'ANSWERED_EVENT_NAME',
    'BodyLimit',
    'DEFAULT_BODY_LIMIT_BYTES',
    'DEFAULT_BODY_LIMIT_SECONDS',
)
