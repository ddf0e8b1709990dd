"""The arguments a pending tool call is shown with to whoever decides it. Imports nothing at run time: `ask-user
pending` shows them, and its start must stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.messages import ToolCallPart

__all__ = ('approval_args',)


def approval_args(requests: DeferredToolRequests, call: ToolCallPart) -> dict[str, Any]:
    """The arguments to show whoever approves `call`: those its tool will receive, when Pydantic AI records them.

    From 2.78, `DeferredToolRequests.validated_args` holds each call's arguments once validated against the
    tool's schema (values coerced, unknown keys dropped, defaults filled, a validation hook's rewrite applied):
    what the tool runs with, so what an approver must see. Before, or where a call has none (a streamed run that
    ended on it), the model's arguments.
    """
    validated: dict[str, dict[str, Any]] = getattr(requests, 'validated_args', None) or {}
    args = validated.get(call.tool_call_id)
    return dict(args) if args is not None else call.args_as_dict()
