"""`elicitation_handler`: a real MCP server's forms, asked through our answerers by Pydantic AI's `MCPToolset`.

The server (tests/mcp/mcp_servers.py) runs in its own process, over stdio and streamable HTTP; on a
2025-11-25 session it sends `elicitation/create` mid-call, on a 2026-07-28 one it returns an
input-required result that FastMCP's client answers through the same handler and retries.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import mcp_servers
import pytest
import waits
from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StdioTransport
from mcp_support import server_command
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import Answerer, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.mcp import DECLINE_REASON_KEY, CannotExpressError, elicitation_handler, request_from_form
from pydantic_ai_ask_user.testing import DECLINE, Custom, ScriptedAnswerer

PROTOCOLS = ['legacy', '2026-07-28']

# Pydantic AI warns on a 2026-07-28 session that the handler "will never be called": true of server-initiated
# requests, not of input-required results, which FastMCP's client answers through the same handler (tested here).
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings('ignore:`elicitation_handler` will never be called:UserWarning'),
]


def _calls(shape: str) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        for message in messages:
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if isinstance(part, ToolReturnPart):
                        return ModelResponse(parts=[TextPart(part.model_response_str())])
        return ModelResponse(parts=[ToolCallPart('form', {'shape': shape})])

    return FunctionModel(respond)


@pytest.fixture(params=['memory', 'stdio', 'http'])
def transport(request: pytest.FixtureRequest) -> Callable[[], Any]:
    if request.param == 'memory':
        return lambda: mcp_servers.server
    if request.param == 'stdio':
        command = server_command('stdio')
        return lambda: StdioTransport(command[0], command[1:])
    url = request.getfixturevalue('mcp_http_url')  # started only for the tests over HTTP
    return lambda: url


async def _ask(transport: Callable[[], Any], mode: str, shape: str, answerer: Answerer) -> dict[str, Any]:
    client = FastMCPClient(transport(), mode=mode, elicitation_handler=elicitation_handler(answerer))
    agent = Agent(_calls(shape), toolsets=[MCPToolset(client)])
    result = await agent.run('Fill in the form.')
    return json.loads(result.output)


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_enums_multi_select_and_booleans_are_asked_and_answered(transport: Callable[[], Any], mode: str) -> None:
    answerer = ScriptedAnswerer({'Environment': 'Production', 'Regions': ['Europe', 'Americas'], 'Confirm': 'Yes'})
    got = await _ask(transport, mode, 'deploy', answerer)
    assert got['action'] == 'accept'
    # The server's own values, not the titles shown; the optional free-text note is left out.
    assert got['content'] == {'env': 'prd', 'regions': ['eu', 'us'], 'confirm': True}
    assert (got['protocol'] == '2026-07-28') == (mode == '2026-07-28')
    (request,) = answerer.requests
    assert [q.header for q in request.questions] == ['Environment', 'Regions', 'Confirm']
    assert request.questions[0].question.startswith('Form deploy\n\nWhere to deploy')
    assert [o.label for o in request.questions[0].options] == ['Staging', 'Production']
    assert request.questions[1].multi_select


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_a_person_who_declines_declines_the_elicitation(transport: Callable[[], Any], mode: str) -> None:
    got = await _ask(transport, mode, 'deploy', ScriptedAnswerer(DECLINE))
    assert got['action'] == 'decline'
    assert '_meta' not in got


@pytest.mark.parametrize('mode', PROTOCOLS)
@pytest.mark.parametrize(
    ('shape', 'reason'),
    [('age', "field 'age' cannot be asked as a question: it is a integer field"), ('many', 'has 9 options')],
)
async def test_a_form_we_cannot_express_is_declined_with_the_reason(
    transport: Callable[[], Any], mode: str, shape: str, reason: str
) -> None:
    answerer = ScriptedAnswerer()
    got = await _ask(transport, mode, shape, answerer)
    assert got['action'] == 'decline'
    assert reason in got['_meta'][DECLINE_REASON_KEY]
    assert answerer.requests == []  # nobody was asked a question that could not be answered faithfully


async def test_free_text_with_suggestions_takes_a_pick_or_the_persons_own_words(transport: Callable[[], Any]) -> None:
    got = await _ask(transport, 'legacy', 'name', ScriptedAnswerer({'Name': 'billing'}))
    assert got['content'] == {'name': 'billing'}
    got = await _ask(transport, 'legacy', 'name', ScriptedAnswerer({'Name': Custom('inventory')}))
    assert got['content'] == {'name': 'inventory'}


async def test_an_answer_the_schema_refuses_is_declined_not_sent(transport: Callable[[], Any]) -> None:
    # maxLength 20: the person's own words are validated against the server's schema before they go back.
    got = await _ask(transport, 'legacy', 'name', ScriptedAnswerer({'Name': Custom('x' * 21)}))
    assert got['action'] == 'decline'
    assert 'is too long' in got['_meta'][DECLINE_REASON_KEY]


async def test_own_words_for_an_options_only_field_are_declined(transport: Callable[[], Any]) -> None:
    answerer = ScriptedAnswerer({'Environment': Custom('the moon'), 'Regions': ['Europe'], 'Confirm': 'No'})
    got = await _ask(transport, 'legacy', 'deploy', answerer)
    assert got['action'] == 'decline'
    assert "answered 'env' in their own words" in got['_meta'][DECLINE_REASON_KEY]


HOSTILE_FORMS: list[tuple[dict[str, Any], str]] = [
    ({'type': 'object', 'properties': {}}, 'asks for nothing'),
    ({'properties': {'a': {'type': 'string', 'title': 'A\x1b[2J', 'enum': ['x', 'y']}}}, 'cannot be asked'),
    ({'properties': {'a': {'type': 'string', 'enum': ['x', 'x']}}}, "two options shown as 'x'"),
    ({'properties': {'a': {'type': 'string', 'enum': ['x', 1]}}}, 'not a string'),
    (
        {'properties': {'a': {'type': 'array', 'minItems': 2, 'items': {'enum': ['x', 'y', 'z']}}}, 'required': ['a']},
        'takes 2 to 3 of its 3 options',
    ),
    ({'properties': {'a': {'type': 'string', 'format': 'email'}}, 'required': ['a']}, 'with a format'),
    ({'properties': {'a': 'not a schema'}, 'required': ['a']}, 'not an object'),
    ({'properties': {f'f{i}': {'type': 'boolean'} for i in range(11)}}, 'at most 10 questions'),
    # From an attacker's review: schemas that made the handler crash (some only after the person answered),
    # and a suggestion whose tail a cut label would hide while the pick sends it.
    ({'properties': {'a': {'type': 'boolean'}}, 'required': [{}]}, 'not one ask-user can check'),
    ({'properties': {'a': {'type': 'boolean'}}, '$ref': 'https://example.invalid/x'}, 'not one ask-user can check'),
    ({'properties': {'a': {'type': 'boolean'}}, 'propertyNames': {'pattern': '('}}, 'not one ask-user can check'),
    (
        {
            'properties': {
                'a': {
                    'type': 'string',
                    'default': 'I agree' + ' ' * 50 + 'and I authorise a transfer',
                    'examples': ['no'],
                }
            }
        },
        'longer than a label shows whole',
    ),
    ({'properties': {'a': {'type': 'string', 'default': ' yes', 'examples': ['no']}}}, 'spaces around it'),
    ({'properties': {'a': {'type': 'string', 'enum': ['x' * 51, 'y']}}}, 'longer than a label shows whole'),
]


@pytest.mark.parametrize(('schema', 'problem'), HOSTILE_FORMS)
def test_forms_that_cannot_be_asked_say_why(schema: dict[str, Any], problem: str) -> None:
    with pytest.raises(CannotExpressError) as caught:
        request_from_form('message', schema)
    assert problem in str(caught.value)
    assert '\x1b' not in str(caught.value)


def test_long_titles_and_texts_are_cut_to_the_limits() -> None:
    schema = {'properties': {'a': {'type': 'boolean', 'title': 'T' * 40, 'description': 'd' * 600}}}
    mapping = request_from_form('', schema)
    question = mapping.request.questions[0]
    assert question.header == 'T' * 24 + '…'
    assert len(question.question) == 500
    assert isinstance(mapping.request, AskUserRequest)


def _answer_the_hostile_pattern(answer: str) -> dict[str, Any]:
    """What the server got when a person answered its `redos` form with `answer`, from a client in its own process."""
    command = [sys.executable, str(Path(__file__).with_name('hostile_pattern_client.py')), answer]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=waits.WAIT)
    except subprocess.TimeoutExpired:
        raise AssertionError("the client's event loop stopped: the server's pattern blocked it") from None
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_catastrophic_pattern_is_matched_in_linear_time_and_the_event_loop_keeps_running() -> None:
    # `^(a+)+$` against 'a' * 63 + '!' takes 2**63 steps on Python's `re`: the client would never answer.
    hostile = _answer_the_hostile_pattern('a' * 63 + '!')
    assert hostile['ticks_after_answer'] >= 3
    assert hostile['result']['action'] == 'decline'
    assert 'does not match' in hostile['result']['_meta'][DECLINE_REASON_KEY]
    # The same pattern still takes what it matches.
    fitting = _answer_the_hostile_pattern('a' * 63)
    assert fitting['result']['action'] == 'accept'
    assert fitting['result']['content'] == {'name': 'a' * 63}


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_a_pattern_a_linear_engine_cannot_run_is_refused_with_the_reason(
    transport: Callable[[], Any], mode: str
) -> None:
    answerer = ScriptedAnswerer()
    got = await _ask(transport, mode, 'backreference', answerer)
    assert got['action'] == 'decline'
    reason = got['_meta'][DECLINE_REASON_KEY]
    assert "its pattern '^(\\\\w+) \\\\1$' is not one ask-user runs (backreferences are not supported)" in reason
    assert answerer.requests == []  # refused before anyone was asked


@pytest.mark.parametrize(
    ('schema', 'problem'),
    [
        ({'properties': {'a': {'type': 'boolean'}}, 'allOf': [{'pattern': '(?=x)x'}]}, 'look-around'),
        ({'properties': {'a': {'type': 'boolean'}}, '$defs': {'d': {'pattern': 'a{1000}{1000}'}}}, 'size limit'),
        ({'properties': {'a': {'type': 'boolean'}}, 'patternProperties': {'^(a+)+$': {}}}, 'patternProperties'),
    ],
)
def test_patterns_are_refused_wherever_they_are_in_the_schema(schema: dict[str, Any], problem: str) -> None:
    with pytest.raises(CannotExpressError, match='not one ask-user can check') as caught:
        request_from_form('message', schema)
    assert problem in str(caught.value)


def test_a_mapping_built_by_hand_does_not_run_a_pattern_on_re_either() -> None:
    schema = {'properties': {'a': {'type': 'boolean'}}, 'additionalProperties': False}
    mapping = request_from_form('', schema)
    hostile = replace(mapping, schema={**schema, 'patternProperties': {'^(a+)+$': {}}})
    with pytest.raises(CannotExpressError, match='patternProperties'):
        hostile.content(AskUserResponse(answers=(AskUserAnswer(header='a', selected=('Yes',)),)))
