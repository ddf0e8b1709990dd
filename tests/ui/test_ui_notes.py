"""Notes, recommended options, the deadline and who answered, over AG-UI and the Vercel AI data stream.

With the real JavaScript clients against `noted_app.py`, and in process for what a client cannot see
(`DeferredToolResults.answered_by`, the `answered_by` hook).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import RunAgentInput
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from test_ui_adapters import (
    CALL,
    QUESTION,
    USER,
    Model,
    agui_body,
    app_for,
    deferred_agent,
    sse,
    vercel_answer,
    vercel_user,
)
from ui_support import Served, run_driver

from pydantic_ai_ask_user import TIMED_OUT, TOOL_NAME, WITHDRAWN, AskUser, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.testing import ScriptedAnswerer, WithNote
from pydantic_ai_ask_user.ui.ag_ui import AskUserAGUIAdapter
from pydantic_ai_ask_user.ui.vercel_ai import AskUserVercelAIAdapter

pytestmark = pytest.mark.anyio

NOTED = {'answers': [{'header': 'Region', 'selected': ['US'], 'note': 'after the freeze'}], 'cancelled': False}
"""An answer with a note, in the response JSON shape a client sends."""

NOTED_RESULT = '{"Region":{"answer":["US"],"note":"after the freeze"}}'
"""What the model got for it (`asking_model` echoes it; the clients drop the JSON spaces)."""


# --- The real clients ---


def test_ag_ui_the_interrupt_says_notes_and_a_note_reaches_the_model(node_clients: Path, noted_app: Served) -> None:
    seen = run_driver(node_clients, 'agui_client.mjs', f'{noted_app.base}agent', 'resume', NOTED)
    interrupt = seen['interrupt']
    assert interrupt['metadata']['notes'] is True
    assert 'deadline' not in interrupt['metadata']  # deferred: nothing waits, so no deadline
    assert interrupt['metadata']['questions'][0]['recommended'] == 'EU'
    assert interrupt['responseSchema']['$defs']['AnswerJSON']['properties']['note']
    assert seen['second']['error'] is None
    assert seen['text'] == NOTED_RESULT


def test_ag_ui_a_note_that_breaks_the_rules_is_refused(node_clients: Path, noted_app: Served) -> None:
    bad = {'answers': [{'header': 'Region', 'selected': ['US'], 'note': 'x\x1b[2J'}]}
    seen = run_driver(node_clients, 'agui_client.mjs', f'{noted_app.base}agent', 'resume', bad)
    assert 'the note contains U+001B' in seen['second']['error']
    assert seen['text'] is None


def test_ag_ui_live_the_requested_event_carries_notes_and_the_deadline(node_clients: Path, noted_app: Served) -> None:
    before = time.time()
    seen = run_driver(node_clients, 'agui_client.mjs', f'{noted_app.base}agent-live', 'resume', None)
    requested = next(e['value'] for e in seen['first']['custom'] if e['name'] == 'ask_user_requested')
    assert requested['notes'] is True
    assert before + 600 - 60 < requested['deadline'] <= time.time() + 600
    answered = next(e['value'] for e in seen['first']['custom'] if e['name'] == 'ask_user_answered')
    assert answered['response']['answers'][0]['note'] == 'after the freeze'


def test_vercel_the_requested_part_says_notes_and_a_note_reaches_the_model(
    node_clients: Path, noted_app: Served
) -> None:
    seen = run_driver(node_clients, 'vercel_client.mjs', f'{noted_app.base}chat', 'output', NOTED)
    requested = next(part for part in seen['data'] if part['type'] == 'data-ask-user-requested')
    assert requested['data']['notes'] is True
    assert requested['data']['questions'][0]['recommended'] == 'EU'
    assert seen['secondErrors'] == []
    assert seen['text'] == NOTED_RESULT


def test_vercel_live_the_requested_part_carries_the_deadline(node_clients: Path, noted_app: Served) -> None:
    before = time.time()
    seen = run_driver(node_clients, 'vercel_client.mjs', f'{noted_app.base}chat-live', 'output', None)
    requested = next(part for part in seen['data'] if part['type'] == 'data-ask-user-requested')
    assert requested['data']['notes'] is True
    assert before + 600 - 60 < requested['data']['deadline'] <= time.time() + 600


def test_without_notes_a_note_from_either_client_is_refused(
    node_clients: Path, ag_ui_app: Served, vercel_ai_app: Served
) -> None:
    note = {'answers': [{'header': 'Region', 'selected': ['EU'], 'note': 'sneaked in'}]}
    seen = run_driver(node_clients, 'agui_client.mjs', f'{ag_ui_app.base}agent', 'resume', note)
    assert 'notes' not in seen['interrupt']['metadata']
    assert 'takes none (notes need AskUser(notes=True))' in seen['second']['error']
    assert seen['text'] is None
    seen = run_driver(node_clients, 'vercel_client.mjs', f'{vercel_ai_app.base}chat', 'output', note)
    assert 'takes none (notes need AskUser(notes=True))' in seen['secondErrors'][0]
    assert not seen['text']


# --- In process ---


def noted_agent(model: Model) -> Agent[None, Any]:
    return Agent(
        model.model, capabilities=[AskUser(answerer=None, notes=True)], output_type=[str, DeferredToolRequests]
    )


async def test_ag_ui_a_note_in_a_tool_message_and_in_a_replay_is_taken_with_notes() -> None:
    model = Model()
    tool = {'id': 't1', 'role': 'tool', 'toolCallId': 'call-1', 'content': json.dumps(NOTED)}
    async with app_for(noted_agent(model), AskUserAGUIAdapter) as client:
        events = sse((await client.post('/', json=agui_body([USER, CALL, tool]))).text)
    text = ''.join(e.get('delta', '') for e in events if e['type'] == 'TEXT_MESSAGE_CONTENT')
    assert json.loads(text) == {'Region': {'answer': ['US'], 'note': 'after the freeze'}}


async def test_the_notes_of_an_askuser_passed_for_the_run_count_too() -> None:
    model = Model()
    agent = Agent(model.model, output_type=[str, DeferredToolRequests])
    run_ask_user = [AskUser(answerer=None, notes=True)]
    async with app_for(agent, AskUserAGUIAdapter, capabilities=run_ask_user) as client:
        first = sse((await client.post('/', json=agui_body([USER]))).text)
        (interrupt,) = first[-1]['outcome']['interrupts']
        assert interrupt['metadata']['notes'] is True
        entry = {'interruptId': interrupt['id'], 'status': 'resolved', 'payload': NOTED}
        second = sse((await client.post('/', json=agui_body([USER, CALL], resume=[entry]))).text)
    assert second[-1]['type'] == 'RUN_FINISHED'
    body = {'id': 'c', 'trigger': 'submit-message', 'messages': [vercel_user(), vercel_answer(NOTED)]}
    async with app_for(agent, AskUserVercelAIAdapter, sdk_version=6, capabilities=run_ask_user) as client:
        chunks = sse((await client.post('/', json=body)).text)
    assert [c for c in chunks if c['type'] == 'error'] == []


async def test_live_results_with_a_note_are_shown_in_the_response_shape_and_accepted_back() -> None:
    model = Model()
    answerer = ScriptedAnswerer(default=WithNote('US', 'after the freeze'))
    agent = Agent(model.model, capabilities=[AskUser(answerer=answerer, notes=True)])
    async with app_for(agent, AskUserAGUIAdapter) as client:
        events = sse((await client.post('/', json=agui_body([USER]))).text)
        result = next(e for e in events if e['type'] == 'TOOL_CALL_RESULT')
        assert json.loads(result['content']) == NOTED
        replay = [USER, CALL, {'id': 't1', 'role': 'tool', 'toolCallId': 'call-1', 'content': result['content']}]
        again = sse(
            (await client.post('/', json=agui_body([*replay, {'id': 'u2', 'role': 'user', 'content': '?'}]))).text
        )
    assert again[-1]['type'] == 'RUN_FINISHED'


def adapter(payload: Any, **options: Any) -> AskUserAGUIAdapter[None, Any]:
    entry = {'interruptId': 'ask-user-call-1', 'status': 'resolved', 'payload': payload}
    run_input = RunAgentInput.model_validate(
        {**agui_body([USER, CALL], resume=[entry]), 'state': None, 'tools': [], 'context': [], 'forwardedProps': None}
    )
    return AskUserAGUIAdapter(agent=deferred_agent(Model()), run_input=run_input, **options)


CLAIM = {'answers': [{'header': 'Region', 'selected': ['EU']}], 'answered_by': 'the CEO'}


def test_ag_ui_a_client_claim_of_who_answered_is_dropped_without_a_hook() -> None:
    results = adapter(CLAIM).deferred_tool_results
    assert results is not None
    assert results.calls == {'call-1': {'Region': ['EU']}}
    assert results.answered_by == {}


def test_ag_ui_the_answered_by_hook_names_who_answered_and_sees_the_claim() -> None:
    seen: list[tuple[AskUserRequest, AskUserResponse]] = []

    def hook(request: AskUserRequest, response: AskUserResponse) -> str:
        seen.append((request, response))
        return 'alice@example.com'

    results = adapter(CLAIM, answered_by=hook).deferred_tool_results
    assert results is not None
    assert results.answered_by == {'call-1': 'alice@example.com'}
    assert results.calls == {'call-1': {'Region': ['EU']}}
    ((request, response),) = seen
    assert request.id == 'call-1'
    assert response.answered_by == 'the CEO'  # the claim, for the hook to judge
    declined = adapter({'answers': [], 'cancelled': True}, answered_by=hook)
    assert declined.deferred_tool_results is not None
    assert declined.deferred_tool_results.answered_by == {'call-1': 'alice@example.com'}
    # An abandoned interrupt (status "cancelled") was answered by nobody: the hook is not asked.
    withdrawn = adapter(None, answered_by=hook)
    withdrawn.run_input.resume[0].status = 'cancelled'  # type: ignore[index]
    assert withdrawn.deferred_tool_results is not None
    assert withdrawn.deferred_tool_results.calls == {'call-1': WITHDRAWN}
    assert withdrawn.deferred_tool_results.answered_by == {}
    assert len(seen) == 2


@pytest.mark.parametrize('named', ['', 'two\nlines', 'x' * 201])
def test_ag_ui_a_hook_naming_nobody_drawable_is_a_user_error(named: str) -> None:
    with pytest.raises(UserError, match="the answered_by hook named who answered 'call-1', but"):
        _ = adapter(CLAIM, answered_by=lambda request, response: named).deferred_tool_results


async def test_ag_ui_the_hook_goes_through_dispatch_request_and_the_run_goes_on() -> None:
    model = Model()
    entry = {'interruptId': 'ask-user-call-1', 'status': 'resolved', 'payload': CLAIM}
    async with app_for(deferred_agent(model), AskUserAGUIAdapter, answered_by=lambda r, s: 'alice') as client:
        events = sse((await client.post('/', json=agui_body([USER, CALL], resume=[entry]))).text)
    assert events[-1]['type'] == 'RUN_FINISHED'
    text = ''.join(e.get('delta', '') for e in events if e['type'] == 'TEXT_MESSAGE_CONTENT')
    assert json.loads(text) == {'Region': ['EU']}  # who answered never reaches the model


def test_ag_ui_a_resume_entry_with_the_timed_out_sentence_is_taken_as_shown() -> None:
    results = adapter(TIMED_OUT, answered_by=lambda request, response: 'never asked').deferred_tool_results
    assert results is not None
    assert results.calls == {'call-1': TIMED_OUT}
    assert results.answered_by == {}


async def test_ag_ui_live_in_process_the_requested_event_carries_the_deadline() -> None:
    model = Model()
    answerer = ScriptedAnswerer(default=0)
    agent = Agent(model.model, capabilities=[AskUser(answerer=answerer, timeout=600)])
    before = time.time()
    async with app_for(agent, AskUserAGUIAdapter) as client:
        events = sse((await client.post('/', json=agui_body([USER]))).text)
    requested = next(e['value'] for e in events if e['type'] == 'CUSTOM' and e['name'] == 'ask_user_requested')
    assert 'notes' not in requested
    assert before + 600 <= requested['deadline'] <= time.time() + 600


def test_a_result_with_a_note_it_cannot_read_is_shown_as_it_is() -> None:
    odd = {'Region': {'answer': ['EU'], 'note': 5}}
    messages: list[ModelMessage] = [
        ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [QUESTION]}, tool_call_id='call-1')]),
        ModelRequest(parts=[ToolReturnPart(TOOL_NAME, odd, tool_call_id='call-1')]),
    ]
    tool = next(m for m in AskUserAGUIAdapter.dump_messages(messages) if m.role == 'tool')
    assert json.loads(tool.content) == odd
