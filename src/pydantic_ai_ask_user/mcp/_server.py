"""`ask_user_question` as an MCP tool, for agents that are not Pydantic AI: our schema, limits and validation."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar
from weakref import WeakKeyDictionary

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import ValidationError

from .._answers import (
    TIMED_OUT,
    TOOL_NAME,
    WITHDRAWN,
    Answerer,
    AskUserRequest,
    CannotAskError,
    ask_user_result,
    format_validation_error,
)
from .._capability import INSTRUCTIONS, AskUser
from .._text import printable

__all__ = ('ask_user_server', 'TOOL_INPUT_SCHEMA', 'SERVER_NAME', 'DEFAULT_MAX_WAITING_PER_SESSION')

SERVER_NAME = 'ask-user'
"""The name the server gives itself; hosts show it next to the tool."""

DEFAULT_MAX_WAITING_PER_SESSION: Final = 4
"""How many of one session's calls may wait for the person at once; one more gets a tool error saying so."""

DISCONNECT_POLL_SECONDS: Final = 0.5
"""How often a waiting call over HTTP checks that its client is still connected."""

T = TypeVar('T')


def _ask_user_tool(*, notes: bool, recommended_options: bool) -> Any:
    """`AskUser`'s own `ask_user_question` tool with these options: its schema, description and validator."""
    toolset: Any = AskUser(None, notes=notes, recommended_options=recommended_options).get_toolset()
    return toolset.tools[TOOL_NAME]


TOOL_INPUT_SCHEMA: dict[str, Any] = _ask_user_tool(
    notes=False, recommended_options=False
).tool_def.parameters_json_schema
"""The input schema of the MCP tool with every option off: exactly the schema of `AskUser()`'s tool."""


def _text(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type='text', text=text)], is_error=error)


def ask_user_server(
    answerer: Answerer,
    *,
    timeout: float | None = None,
    name: str = SERVER_NAME,
    notes: bool = False,
    recommended_options: bool = False,
    max_waiting_per_session: int = DEFAULT_MAX_WAITING_PER_SESSION,
) -> Server[Any]:
    """An MCP server with one tool, `ask_user_question`, whose questions `answerer` puts to a person.

    The tool is `AskUser`'s own, with the same options: the same input schema (`TOOL_INPUT_SCHEMA` with every
    option off), description and validation, and the server carries the same instructions. `notes=True` lets
    the person add a note to each answer and `recommended_options=True` lets the model recommend an option,
    as with `AskUser`; with a `timeout`, each request carries its `deadline`. Arguments that break a rule get a tool
    error listing each problem (`questions.0.header: ...`), for the host's model to fix and call again.
    The result is what a Pydantic AI model gets (`ask_user_result`): a JSON object mapping each header to
    the labels picked (or the one answer typed instead), or the `DECLINED` or `TIMED_OUT` sentence. When
    the answerer cannot reach a person (`CannotAskError`), the call fails with that reason.
    At most `max_waiting_per_session` calls of one client session wait at once; another gets a tool error.
    Over HTTP, a call whose client disconnects is cancelled, so its question is withdrawn from the person.
    Serve it over stdio (`run`) or with `ask_user_http_app` (see `ask-user mcp`).
    """
    ask_user_tool = _ask_user_tool(notes=notes, recommended_options=recommended_options)
    definition = ask_user_tool.tool_def
    validator = ask_user_tool.function_schema.validator
    tool = Tool(
        name=TOOL_NAME,
        title='Ask the user',
        description=definition.description,
        input_schema=definition.parameters_json_schema,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=False),
    )

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[tool])

    waiting: WeakKeyDictionary[object, int] = WeakKeyDictionary()

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        # The client's connection (one per session); `ctx.session` is made afresh for each request, and the
        # SDK gives no public view of the connection from it.
        connection: object = getattr(ctx.session, '_connection', ctx.session)
        if waiting.get(connection, 0) >= max_waiting_per_session:
            return _text(
                f'This session already has {max_waiting_per_session} questions waiting for the user; '
                'wait for their answers before asking more.',
                error=True,
            )
        waiting[connection] = waiting.get(connection, 0) + 1
        try:
            result = await _while_connected(ctx, lambda: ask(params))
            return _text(WITHDRAWN, error=True) if result is None else result  # None: nobody left to tell
        finally:
            waiting[connection] -= 1

    async def ask(params: CallToolRequestParams) -> CallToolResult:
        if params.name != TOOL_NAME:
            return _text(f'Unknown tool {printable(repr(params.name))}; this server has only {TOOL_NAME}.', error=True)
        try:
            # The tool's own validator: with recommended_options off, a call that recommends is refused as there.
            arguments = validator.validate_python(params.arguments or {})
        except ValidationError as error:
            problems = '\n'.join(f'- {printable(line)}' for line in format_validation_error(error))
            return _text(f'Invalid arguments for {TOOL_NAME}; fix them and call it again:\n{problems}', error=True)
        deadline = None if timeout is None else time.time() + timeout
        request = AskUserRequest(questions=arguments['questions'], notes=notes, deadline=deadline)
        try:
            with anyio.move_on_after(timeout):
                response = await answerer(request)
                result = ask_user_result(request, response)
                return _text(result if isinstance(result, str) else json.dumps(result, ensure_ascii=False))
        except CannotAskError as error:
            return _text(f'Cannot ask the user here: {printable(str(error))}', error=True)
        return _text(TIMED_OUT)

    return Server(name, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


async def _while_connected(ctx: ServerRequestContext[Any], wait: Callable[[], Awaitable[T]]) -> T | None:
    """`wait()`, cancelled (`None`) when the HTTP client whose request it serves disconnects.

    A host that crashed or closed its connection sends no `notifications/cancelled`, and the 2025-era
    transport keeps serving the call for a stream nobody reads: the question would wait for the person
    until the session expired. Over stdio there is no request, and the host's exit ends the server.
    """
    request = ctx.request
    is_disconnected: Callable[[], Awaitable[bool]] | None = getattr(request, 'is_disconnected', None)
    if is_disconnected is None:
        return await wait()
    done: list[T] = []
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while not await is_disconnected():
                await anyio.sleep(DISCONNECT_POLL_SECONDS)
            group.cancel_scope.cancel()

        group.start_soon(watch)
        done.append(await wait())
        group.cancel_scope.cancel()
    return done[0] if done else None
