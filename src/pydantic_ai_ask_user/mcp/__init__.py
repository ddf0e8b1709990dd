"""MCP both ways: ask through an MCP client's elicitation, answer an MCP server's elicitation, `ask-user mcp`.

Needs the `mcp` extra: `pip install 'pydantic-ai-ask-user[mcp]'`. Each name is imported on first use, so
that `ask-user` (whose `ask-user mcp` runs in `_cli/mcp_server.py`) does not load the MCP SDK to start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _module_names

if TYPE_CHECKING:
    from ._answerer import (
        ClientCannotElicitError,
        MCPElicitationAnswerer,
        NoBackChannelAskError,
        can_elicit_directly,
        client_answered_by,
        run_agent_in_tool,
    )
    from ._form import CUSTOM_FIELD_SUFFIX, NOTE_FIELD_SUFFIX, ElicitationForm, RefusedAnswerError, elicitation_form
    from ._handler import DECLINE_REASON_KEY, CannotExpressError, FormMapping, elicitation_handler, request_from_form
    from ._http import (
        DEFAULT_MAX_BODY_BYTES,
        DEFAULT_MAX_SESSIONS,
        DEFAULT_SESSION_IDLE_SECONDS,
        LOOPBACK_HOSTS,
        ask_user_http_app,
    )
    from ._server import DEFAULT_MAX_WAITING_PER_SESSION, SERVER_NAME, TOOL_INPUT_SCHEMA, ask_user_server
    from ._token import TOKEN_VARIABLE, check_token, new_token

__all__ = (
    'MCPElicitationAnswerer',
    'run_agent_in_tool',
    'can_elicit_directly',
    'client_answered_by',
    'NoBackChannelAskError',
    'ClientCannotElicitError',
    'RefusedAnswerError',
    'ElicitationForm',
    'elicitation_form',
    'CUSTOM_FIELD_SUFFIX',
    'NOTE_FIELD_SUFFIX',
    'elicitation_handler',
    'request_from_form',
    'FormMapping',
    'CannotExpressError',
    'DECLINE_REASON_KEY',
    'ask_user_server',
    'TOOL_INPUT_SCHEMA',
    'SERVER_NAME',
    'DEFAULT_MAX_WAITING_PER_SESSION',
    'ask_user_http_app',
    'LOOPBACK_HOSTS',
    'DEFAULT_MAX_SESSIONS',
    'DEFAULT_SESSION_IDLE_SECONDS',
    'DEFAULT_MAX_BODY_BYTES',
    'TOKEN_VARIABLE',
    'new_token',
    'check_token',
)

_MODULE_OF = {
    'MCPElicitationAnswerer': '_answerer',
    'run_agent_in_tool': '_answerer',
    'can_elicit_directly': '_answerer',
    'client_answered_by': '_answerer',
    'NoBackChannelAskError': '_answerer',
    'ClientCannotElicitError': '_answerer',
    'RefusedAnswerError': '_form',
    'ElicitationForm': '_form',
    'elicitation_form': '_form',
    'CUSTOM_FIELD_SUFFIX': '_form',
    'NOTE_FIELD_SUFFIX': '_form',
    'elicitation_handler': '_handler',
    'request_from_form': '_handler',
    'FormMapping': '_handler',
    'CannotExpressError': '_handler',
    'DECLINE_REASON_KEY': '_handler',
    'ask_user_server': '_server',
    'TOOL_INPUT_SCHEMA': '_server',
    'SERVER_NAME': '_server',
    'DEFAULT_MAX_WAITING_PER_SESSION': '_server',
    'ask_user_http_app': '_http',
    'LOOPBACK_HOSTS': '_http',
    'DEFAULT_MAX_SESSIONS': '_http',
    'DEFAULT_SESSION_IDLE_SECONDS': '_http',
    'DEFAULT_MAX_BODY_BYTES': '_http',
    'TOKEN_VARIABLE': '_token',
    'new_token': '_token',
    'check_token': '_token',
}
"""The private module each public name lives in."""


__getattr__ = _module_names.lazy_names(__name__, globals(), _MODULE_OF)
"""Load each public name on first use, with the module that defines it (PEP 562)."""


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
