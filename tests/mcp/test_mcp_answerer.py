"""`MCPElicitationAnswerer` and `run_agent_in_tool` in a real MCP server, answered by real MCP clients.

The Python `mcp` client over stdio and streamable HTTP, on a 2025 session (elicitation mid-request) and a
2026-07-28 one (input-required result and retry); the TypeScript SDK client (2025-11-25) over both too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_servers
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp_support import server_command
from mcp_types import ElicitRequestParams, ElicitResult, ErrorData

from pydantic_ai_ask_user import DECLINED

pytestmark = pytest.mark.anyio

PROTOCOLS = ['legacy', '2026-07-28']
"""`legacy`: the initialize handshake, which the Python SDK settles on 2025-11-25; then the stateless 2026-07-28."""

ROUND_ONE = {'q1': 'PostgreSQL', 'q1_own': '', 'q2': ['staging', 'production']}
ROUND_TWO = {'q1_own': 'inventory'}
EXPECTED = [{'Database': ['PostgreSQL'], 'Environments': ['staging', 'production']}, {'Name': ['inventory']}]


class Person:
    """Answers each elicitation with the next content, recording what the client was asked."""

    def __init__(self, *answers: dict[str, Any] | str) -> None:
        self.answers = list(answers)
        self.seen: list[ElicitRequestParams] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.seen.append(params)
        answer = self.answers.pop(0)
        if isinstance(answer, str):
            return ElicitResult(action=answer)  # type: ignore[arg-type]
        return ElicitResult(action='accept', content=answer)


def stdio() -> StdioServerParameters:
    command = server_command('stdio')
    return StdioServerParameters(command=command[0], args=command[1:])


@pytest.fixture(params=['memory', 'stdio', 'http'])
def target(request: pytest.FixtureRequest) -> Any:
    if request.param == 'memory':
        return mcp_servers.server
    if request.param == 'stdio':
        return stdio()
    return request.getfixturevalue('mcp_http_url')  # started only for the tests over HTTP


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_the_agent_asks_through_the_client_in_two_rounds(target: Any, mode: str) -> None:
    person = Person(ROUND_ONE, ROUND_TWO)
    async with Client(target, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool('plan', {})
    assert not result.is_error, result.content
    data = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert data['answers'] == EXPECTED
    assert (data['protocol'] == '2026-07-28') == (mode == '2026-07-28')
    # One form per call: the single choice as oneOf with titles, the multi-select as items.anyOf.
    first = person.seen[0].requested_schema  # type: ignore[union-attr]
    assert first['properties']['q1']['oneOf'] == [
        {'const': 'PostgreSQL', 'title': 'PostgreSQL'},
        {'const': 'SQLite', 'title': 'SQLite'},
    ]
    assert 'PostgreSQL: relational, the team knows it' in first['properties']['q1']['description']
    assert first['properties']['q2']['type'] == 'array'
    assert [item['const'] for item in first['properties']['q2']['items']['anyOf']] == [
        'staging',
        'production',
        'preview',
    ]
    assert first['properties']['q1_own']['type'] == 'string'


@pytest.mark.parametrize('mode', PROTOCOLS)
@pytest.mark.parametrize('action', ['decline', 'cancel'])
async def test_a_decline_or_cancel_is_the_declined_answer(mode: str, action: str) -> None:
    async with Client(mcp_servers.server, mode=mode, elicitation_callback=Person(action, action)) as client:
        result = await client.call_tool('plan', {})
    assert json.loads(result.content[0].text)['answers'] == [DECLINED, DECLINED]  # type: ignore[union-attr]


HOSTILE = [
    ({'q1': 'MySQL', 'q2': ['staging']}, "selects 'MySQL', which is not one of its options"),
    ({'q1': 'PostgreSQL', 'q2': ['staging'], 'admin': True}, "has a field 'admin' that the form did not ask for"),
    ({'q1': 'PostgreSQL', 'q2': 'staging'}, 'expected a list of option labels, got str'),
    ({'q1': ['PostgreSQL'], 'q2': ['staging']}, 'expected one option label, got list'),
    ({'q1': 'PostgreSQL', 'q1_own': 'mine', 'q2': ['staging']}, 'both an option and an own answer'),
    ({'q2': ['staging']}, 'nothing was picked'),
    ({'q1': 'SQLite', 'q2': ['staging', 'staging']}, "selects 'staging' twice"),
    ({'q1_own': 'evil\x1b]0;pwned\x07', 'q2': ['staging']}, 'contains'),
]


@pytest.mark.parametrize('mode', PROTOCOLS)
@pytest.mark.parametrize(('content', 'problem'), HOSTILE)
async def test_a_hostile_answer_from_the_client_is_refused(mode: str, content: dict[str, Any], problem: str) -> None:
    async with Client(mcp_servers.server, mode=mode, elicitation_callback=Person(content)) as client:
        result = await client.call_tool('plan', {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert problem in text
    assert '\x1b' not in text
    assert '\x07' not in text


async def test_the_answerer_without_custom_answers_requires_each_choice() -> None:
    person = Person({'q1': 'billing'})
    async with Client(mcp_servers.server, mode='legacy', elicitation_callback=person) as client:
        result = await client.call_tool('ask_once', {})
    assert json.loads(result.content[0].text)['result'] == {'Name': ['billing']}  # type: ignore[union-attr]
    schema = person.seen[0].requested_schema  # type: ignore[union-attr]
    assert schema['required'] == ['q1']
    assert set(schema['properties']) == {'q1'}


async def test_on_a_2026_session_the_answerer_says_to_take_the_input_required_path() -> None:
    async with Client(mcp_servers.server, mode='2026-07-28', elicitation_callback=Person({'q1': 'billing'})) as client:
        result = await client.call_tool('ask_once', {})
    assert result.is_error
    assert 'no back-channel' in result.content[0].text  # type: ignore[union-attr]
    assert 'run_agent_in_tool' in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize('transport', ['stdio', 'http'])
def test_the_typescript_client_answers_the_agent(
    transport: str, run_node: Callable[[dict[str, Any]], dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    config: dict[str, Any] = {'tool': 'plan', 'answers': [{'action': 'accept', 'content': ROUND_ONE}]}
    config['answers'].append({'action': 'accept', 'content': ROUND_TWO})
    if transport == 'stdio':
        command = server_command('stdio')
        config.update(transport='stdio', command=command[0], args=command[1:])
    else:
        config.update(transport='http', url=request.getfixturevalue('mcp_http_url'))
    out = run_node(config)
    data = json.loads(out['result']['content'][0]['text'])
    assert data['answers'] == EXPECTED
    assert data['protocol'] == '2025-11-25'
    assert [e['requestedSchema']['properties']['q1']['title'] for e in out['elicitations']] == ['Database', 'Name']


def test_the_typescript_client_declining_is_the_declined_answer(
    run_node: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    command = server_command('stdio')
    out = run_node(
        {
            'transport': 'stdio',
            'command': command[0],
            'args': command[1:],
            'tool': 'plan',
            'answers': [{'action': 'decline'}, {'action': 'cancel'}],
        }
    )
    assert json.loads(out['result']['content'][0]['text'])['answers'] == [DECLINED, DECLINED]


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_a_client_without_elicitation_gets_told_it_cannot_answer(mode: str) -> None:
    async with Client(mcp_servers.server, mode=mode) as client:
        result = await client.call_tool('plan', {})
    assert result.is_error
    assert 'did not declare the elicitation capability' in result.content[0].text  # type: ignore[union-attr]


NOTED_CONTENT = {'q1': 'PostgreSQL', 'q1_note': "only after tonight's backup", 'q2': ['production'], 'q2_note': ''}
NOTED_RESULT = {
    'Database': {'answer': ['PostgreSQL'], 'note': "only after tonight's backup"},
    'Environments': ['production'],
}


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_with_notes_each_question_has_a_note_field_and_the_note_reaches_the_model(mode: str) -> None:
    person = Person(NOTED_CONTENT)
    async with Client(mcp_servers.server, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool('plan_noted', {})
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text)['result'] == NOTED_RESULT  # type: ignore[union-attr]
    schema = person.seen[0].requested_schema  # type: ignore[union-attr]
    assert schema['properties']['q1_note'] == {
        'type': 'string',
        'title': 'Database: note',
        'description': 'Optional: add a note to your answer, such as a condition or a reason.',
        'maxLength': 2000,
    }
    assert 'q2_note' in schema['properties']
    # The recommendation is shown, never a default the client could submit for the person.
    assert schema['properties']['q1']['oneOf'] == [
        {'const': 'PostgreSQL', 'title': 'PostgreSQL'},
        {'const': 'SQLite', 'title': 'SQLite (recommended)'},
    ]
    assert schema['properties']['q1']['description'].endswith('Recommended: SQLite')
    assert schema['properties']['q2']['items']['anyOf'][0] == {'const': 'staging', 'title': 'staging (recommended)'}
    assert 'default' not in json.dumps(schema)


NOTE_REFUSALS = [
    (
        {'q1': 'SQLite', 'q2': ['staging'], 'q1_note': 'x' * 2001},
        'the note has 2001 characters, more than the 2000 the form allows',
    ),
    ({'q1': 'SQLite', 'q2': ['staging'], 'q1_note': 'a\x1b[2Jb'}, 'the note contains'),
    ({'q1': 'SQLite', 'q2': ['staging'], 'q2_note': 7}, 'the note is int, not a string'),
]


@pytest.mark.parametrize(('content', 'problem'), NOTE_REFUSALS)
async def test_a_note_that_breaks_the_rules_is_refused(content: dict[str, Any], problem: str) -> None:
    async with Client(mcp_servers.server, mode='legacy', elicitation_callback=Person(content)) as client:
        result = await client.call_tool('plan_noted', {})
    assert result.is_error
    assert problem in result.content[0].text  # type: ignore[union-attr]
    assert '\x1b' not in result.content[0].text  # type: ignore[union-attr]


async def test_without_notes_a_note_is_refused_as_a_field_the_form_did_not_ask_for() -> None:
    content = {**ROUND_ONE, 'q1_note': 'sneaked in'}
    async with Client(mcp_servers.server, mode='legacy', elicitation_callback=Person(content)) as client:
        result = await client.call_tool('plan', {})
    assert result.is_error
    assert "has a field 'q1_note' that the form did not ask for" in result.content[0].text  # type: ignore[union-attr]


async def test_the_answer_says_which_client_it_came_through() -> None:
    person = Person(NOTED_CONTENT)
    async with Client(mcp_servers.server, mode='legacy', elicitation_callback=person) as client:
        result = await client.call_tool('ask_noted', {})
    data = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert data['answers'][0] == {
        'header': 'Database',
        'selected': ['PostgreSQL'],
        'note': "only after tonight's backup",
    }
    assert data['answers'][1]['note'] is None
    assert data['answered_by'].startswith('mcp-client:')


def test_the_typescript_client_is_named_in_answered_by_and_its_note_reaches_the_model(
    run_node: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    command = server_command('stdio')
    base: dict[str, Any] = {'transport': 'stdio', 'command': command[0], 'args': command[1:]}
    out = run_node({**base, 'tool': 'ask_noted', 'answers': [{'action': 'accept', 'content': NOTED_CONTENT}]})
    data = json.loads(out['result']['content'][0]['text'])
    assert data['answered_by'] == 'mcp-client:ts-test-client'
    assert data['answers'][0]['note'] == "only after tonight's backup"
    out = run_node({**base, 'tool': 'plan_noted', 'answers': [{'action': 'accept', 'content': NOTED_CONTENT}]})
    assert json.loads(out['result']['content'][0]['text'])['result'] == NOTED_RESULT


@pytest.mark.parametrize(
    ('name', 'expected'),
    [('claude-code', 'mcp-client:claude-code'), (None, None), ('evil\x1b[2J', None), ('x' * 200, None), (7, None)],
)
def test_client_answered_by_takes_only_a_name_that_can_be_drawn(name: object, expected: str | None) -> None:
    from pydantic_ai_ask_user.mcp._answerer import client_answered_by

    assert client_answered_by(name) == expected
