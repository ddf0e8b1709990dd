"""MCP both ways: ask through an MCP client's elicitation, answer an MCP server's elicitation, `ask-user mcp`.

Needs the `mcp` extra: `pip install 'pydantic-ai-ask-user[mcp]'`.
"""

from ._answerer import (
    ClientCannotElicitError,
    MCPElicitationAnswerer,
    NoBackChannelAskError,
    can_elicit_directly,
    run_agent_in_tool,
)
from ._form import CUSTOM_FIELD_SUFFIX, ElicitationForm, RefusedAnswerError, elicitation_form
from ._handler import DECLINE_REASON_KEY, CannotExpressError, FormMapping, elicitation_handler, request_from_form
from ._server import SERVER_NAME, TOOL_INPUT_SCHEMA, ask_user_server

__all__ = (
    'MCPElicitationAnswerer',
    'run_agent_in_tool',
    'can_elicit_directly',
    'NoBackChannelAskError',
    'ClientCannotElicitError',
    'RefusedAnswerError',
    'ElicitationForm',
    'elicitation_form',
    'CUSTOM_FIELD_SUFFIX',
    'elicitation_handler',
    'request_from_form',
    'FormMapping',
    'CannotExpressError',
    'DECLINE_REASON_KEY',
    'ask_user_server',
    'TOOL_INPUT_SCHEMA',
    'SERVER_NAME',
)
