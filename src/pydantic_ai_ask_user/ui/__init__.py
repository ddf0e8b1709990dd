"""Questions in the frontends people already build on: AG-UI (`ui.ag_ui`) and the Vercel AI SDK (`ui.vercel_ai`).

Each subpackage is a thin subclass of Pydantic AI's own adapter and event stream, behind its extra
(`pydantic-ai-ask-user[ag-ui]`, `pydantic-ai-ask-user[vercel-ai]`). This package itself imports neither.
"""

from ._answers import ANSWERED_EVENT_NAME, REQUESTED_EVENT_NAME

__all__ = ('REQUESTED_EVENT_NAME', 'ANSWERED_EVENT_NAME')
