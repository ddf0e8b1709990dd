"""`waiting_handler(ask)`: the capability that hands deferred calls and a resume token to `ask` and waits, in the
spelling of the installed Pydantic AI (`HandleDeferredToolCalls` from 2.78, `RequestInput` before)."""

from __future__ import annotations

import warnings
from datetime import timedelta
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user._deferred_handlers import HANDLERS_TAKE_TOKENS, REQUEST_INPUT, takes_token, waits_for_people
from pydantic_ai_ask_user.deferred import waiting_handler

pytestmark = pytest.mark.anyio


async def approve_in_place(ctx: RunContext[Any], requests: DeferredToolRequests, token: str) -> DeferredToolResults:
    return DeferredToolResults(approvals={call.tool_call_id: True for call in requests.approvals})


def test_it_is_the_installed_pydantic_ai_s_own_spelling_and_warns_of_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        handler = waiting_handler(approve_in_place, timeout=timedelta(seconds=5), name='approve_deploy')
    expected = HandleDeferredToolCalls if HANDLERS_TAKE_TOKENS else REQUEST_INPUT
    assert type(handler) is expected
    assert waits_for_people(handler)
    assert handler.name == 'approve_deploy'


def test_an_ask_that_takes_no_token_is_refused_saying_what_it_must_take() -> None:
    async def no_token(ctx: RunContext[Any], requests: DeferredToolRequests) -> None: ...

    assert not takes_token(no_token)
    with pytest.raises(UserError, match=r'needs an `ask` that takes `\(ctx, requests, token\)`'):
        waiting_handler(no_token)


def test_a_handler_that_answers_in_place_does_not_wait_for_people() -> None:
    async def in_place(ctx: RunContext[Any], requests: DeferredToolRequests) -> None: ...

    assert not waits_for_people(HandleDeferredToolCalls(in_place))
    assert not takes_token(len)  # a builtin without a signature to read


async def test_a_run_s_approval_is_decided_by_the_ask_it_was_handed_to() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart('done')])
        return ModelResponse(parts=[ToolCallPart('deploy', {}, 'call_0')])

    deployed: list[str] = []
    agent = Agent(FunctionModel(model), capabilities=[waiting_handler(approve_in_place)])

    @agent.tool_plain(requires_approval=True)
    def deploy() -> str:
        deployed.append('production')
        return 'deployed'

    assert (await agent.run('ship it')).output == 'done'
    assert deployed == ['production']
