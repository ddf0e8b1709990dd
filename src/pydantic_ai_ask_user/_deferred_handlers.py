"""Pydantic AI's two spellings of a handler that waits for people.

A handler that hands a resume token to whoever will answer, and waits, is `RequestInput(ask)` on Pydantic AI
2.68–2.77 and `HandleDeferredToolCalls(ask)` from 2.78 on, which passes the token to a handler whose third
positional parameter is required (and deprecates `RequestInput`, which it keeps as a subclass). Every `ask` this
package builds takes the token, so it works with either; this module tells the two apart for the checks that
depend on them, without naming the deprecated class where a type checker would flag it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic_ai import capabilities as _capabilities
from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls
from pydantic_ai.exceptions import UserError

__all__ = (
    'REQUEST_INPUT',
    'HANDLERS_TAKE_TOKENS',
    'waits_for_people',
    'takes_token',
    'waiting_handler',
    'DEFAULT_WAIT_NAME',
)

REQUEST_INPUT: type[AbstractCapability[Any]] | None = getattr(_capabilities, 'RequestInput', None)
"""Pydantic AI's `RequestInput` class (deprecated in 2.78, a `HandleDeferredToolCalls` there), `None` once removed.

Read by name, so that referring to it (as an ordering does) is not a use of a deprecated class.
"""

DEFAULT_WAIT_NAME = 'deferred_tool_calls'
"""The name Pydantic AI gives a waiting handler's wait unless told otherwise (both spellings)."""

HANDLERS_TAKE_TOKENS: bool = 'timeout' in {field.name for field in dataclasses.fields(HandleDeferredToolCalls)}
"""Whether this Pydantic AI's `HandleDeferredToolCalls` hands a resume token to a handler that takes one (2.78 on).

Told by the feature (its `timeout`, which only a waiting handler has), not by the version number.
"""


def waits_for_people(capability: AbstractCapability[Any]) -> bool:
    """Whether `capability` opens a wait for an external event for the calls left pending: a `RequestInput`, or a
    `HandleDeferredToolCalls` whose handler takes a resume token (2.78 on; it then orders itself innermost).
    """
    if REQUEST_INPUT is not None and isinstance(capability, REQUEST_INPUT):
        return True
    if not (HANDLERS_TAKE_TOKENS and isinstance(capability, HandleDeferredToolCalls)):
        return False
    ordering = capability.get_ordering()
    return ordering is not None and ordering.position == 'innermost'


def takes_token(handler: Callable[..., Any]) -> bool:
    """Whether `handler` has a third required positional parameter, for the resume token (as 2.78 tells them)."""
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [
        parameter
        for parameter in parameters
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 3 and positional[2].default is inspect.Parameter.empty


def waiting_handler(
    ask: Callable[..., Any], *, timeout: timedelta | None = None, name: str = DEFAULT_WAIT_NAME
) -> AbstractCapability[Any]:
    """The capability that hands the run's deferred calls and a resume token to `ask`, and waits for the decision.

    `HandleDeferredToolCalls(ask, timeout=..., name=...)` on Pydantic AI 2.78 and later, `RequestInput(ask,
    timeout=..., name=...)` on 2.68–2.77: for code that must run on both. Code for one version writes that one's
    own spelling. `ask` takes `(ctx, requests, token)`, as every `ask` this package builds does.
    """
    if not takes_token(ask):
        raise UserError('`waiting_handler(ask)` needs an `ask` that takes `(ctx, requests, token)`.')
    build: Any = HandleDeferredToolCalls if HANDLERS_TAKE_TOKENS else REQUEST_INPUT
    return build(ask, timeout=timeout, name=name)
