"""Our questions as an MCP form and back, and `ask_user_server` in process: shapes, checks, refusals."""

from __future__ import annotations

import argparse
import json
import re
import time
from typing import Any

import anyio
import httpx
import pytest
import waits
from mcp import Client
from mcp_support import http_client
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition
from pydantic import TypeAdapter

from pydantic_ai_ask_user import (
    DECLINED,
    TIMED_OUT,
    TOOL_NAME,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    CannotAskError,
)
from pydantic_ai_ask_user._cli.arguments import port as _port
from pydantic_ai_ask_user._cli.arguments import seconds as _seconds
from pydantic_ai_ask_user._cli.mcp_server import run
from pydantic_ai_ask_user.mcp import RefusedAnswerError, ask_user_server, elicitation_form
from pydantic_ai_ask_user.testing import Custom, ScriptedAnswerer

pytestmark = pytest.mark.anyio

REQUEST = AskUserRequest.from_tool_args(
    {
        'questions': [
            {
                'header': 'Database',
                'question': 'Which database?',
                'options': [{'label': 'PostgreSQL', 'description': 'relational'}, {'label': 'SQLite'}],
            },
            {
                'header': 'Environments',
                'question': 'Where?',
                'options': [{'label': 'staging'}, {'label': 'production'}],
                'multi_select': True,
            },
        ]
    }
)


@pytest.mark.parametrize('custom', [True, False])
def test_every_field_is_a_valid_primitive_schema_of_the_spec(custom: bool) -> None:
    form = elicitation_form(REQUEST, allow_custom_answers=custom)
    adapter = TypeAdapter[Any](PrimitiveSchemaDefinition)
    for field in form.schema['properties'].values():
        adapter.validate_python(field)
    assert form.schema.get('required', []) == ([] if custom else ['q1', 'q2'])
    assert form.message == 'Please answer 2 questions: Database, Environments'


def test_the_own_answer_field_is_limited_and_the_limit_is_checked() -> None:
    form = elicitation_form(REQUEST, max_custom_answer_length=100)
    assert form.schema['properties']['q1_own']['maxLength'] == 100
    # A client that ignores the schema's maxLength is refused when the form comes back.
    assert form.read('accept', {'q1_own': 'x' * 100, 'q2': ['staging']}).answers[0].custom_answer == 'x' * 100
    with pytest.raises(RefusedAnswerError, match='101 characters, more than the 100 the form allows'):
        form.read('accept', {'q1_own': 'x' * 101, 'q2': ['staging']})
    with pytest.raises(ValueError, match='max_custom_answer_length must be 1 to 2000'):
        elicitation_form(REQUEST, max_custom_answer_length=5000)


def test_the_note_field_is_held_to_the_same_limit_as_the_own_answer() -> None:
    noted = AskUserRequest(questions=REQUEST.questions, notes=True)
    form = elicitation_form(noted, max_custom_answer_length=100)
    assert form.schema['properties']['q1_note']['maxLength'] == 100
    read = form.read('accept', {'q1': 'SQLite', 'q1_note': 'x' * 100, 'q2': ['staging']})
    assert read.answers[0].note == 'x' * 100
    with pytest.raises(RefusedAnswerError, match='the note has 101 characters, more than the 100 the form allows'):
        form.read('accept', {'q1': 'SQLite', 'q1_note': 'x' * 101, 'q2': ['staging']})


def test_a_form_reads_back_into_a_checked_response() -> None:
    form = elicitation_form(REQUEST)
    response = form.read('accept', {'q1_own': 'DuckDB', 'q2': ['production'], 'q1': ''})
    assert response.answers[0].custom_answer == 'DuckDB'
    assert response.answers[1].selected == ('production',)
    assert form.read('cancel', None) == AskUserResponse(cancelled=True)


@pytest.mark.parametrize(
    ('action', 'content', 'problem'),
    [
        ('explode', None, "the elicitation action is 'explode'"),
        ('accept', None, 'accepted without content'),
        ('accept', {'q1': 'SQLite', 'q2': ['staging'], 'q1_own': 7}, 'the own answer is int'),
    ],
)
def test_what_does_not_fit_is_refused_as_a_value_error(action: str, content: Any, problem: str) -> None:
    with pytest.raises(RefusedAnswerError, match=problem) as caught:
        elicitation_form(REQUEST).read(action, content)
    assert isinstance(caught.value, ValueError)


async def test_the_server_answers_with_what_a_pydantic_ai_model_gets() -> None:
    answerer = ScriptedAnswerer({'Database': 'SQLite', 'Environments': ['staging', 1]}, {'Database': Custom('Duck')})
    arguments = {'questions': [json.loads(q.model_dump_json(exclude_none=True)) for q in REQUEST.questions]}
    async with Client(ask_user_server(answerer)) as client:
        first = await client.call_tool(TOOL_NAME, arguments)
        arguments['questions'] = arguments['questions'][:1]
        second = await client.call_tool(TOOL_NAME, arguments)
    assert json.loads(first.content[0].text) == {'Database': ['SQLite'], 'Environments': ['staging', 'production']}  # type: ignore[union-attr]
    assert json.loads(second.content[0].text) == {'Database': ['Duck']}  # type: ignore[union-attr]


def test_a_form_has_note_fields_only_for_a_request_that_takes_notes() -> None:
    assert not any(key.endswith('_note') for key in elicitation_form(REQUEST).schema['properties'])
    noted = AskUserRequest(questions=REQUEST.questions, notes=True)
    form = elicitation_form(noted, allow_custom_answers=False)
    adapter = TypeAdapter[Any](PrimitiveSchemaDefinition)
    for field in form.schema['properties'].values():
        adapter.validate_python(field)
    assert form.schema['required'] == ['q1', 'q2']  # a note is never required
    response = form.read('accept', {'q1': 'SQLite', 'q1_note': 'for now', 'q2': ['staging'], 'q2_note': '  '})
    assert [answer.note for answer in response.answers] == ['for now', None]


async def test_the_server_with_notes_and_recommendations_takes_them_and_gives_a_deadline() -> None:
    question = {**json.loads(REQUEST.questions[0].model_dump_json(exclude_none=True)), 'recommended': 'SQLite'}
    seen: list[AskUserRequest] = []

    def answer(request: AskUserRequest) -> AskUserResponse:
        seen.append(request)
        return AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='for now'),))

    server = ask_user_server(ScriptedAnswerer(answer), timeout=600, notes=True, recommended_options=True)
    before = time.time()
    async with Client(server) as client:
        result = await client.call_tool(TOOL_NAME, {'questions': [question]})
    assert json.loads(result.content[0].text) == {'Database': {'answer': ['SQLite'], 'note': 'for now'}}  # type: ignore[union-attr]
    (request,) = seen
    assert request.notes is True
    assert request.questions[0].recommended == 'SQLite'
    assert request.deadline is not None
    assert before + 600 <= request.deadline <= time.time() + 600


async def test_the_server_says_declined_timed_out_and_cannot_ask() -> None:
    arguments = {'questions': [json.loads(REQUEST.questions[0].model_dump_json(exclude_none=True))]}

    async def declines(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(cancelled=True)

    async def never(request: AskUserRequest) -> AskUserResponse:
        await anyio.sleep_forever()
        raise AssertionError

    async def cannot(request: AskUserRequest) -> AskUserResponse:
        raise CannotAskError('no terminal\x1b[2J here')

    async with Client(ask_user_server(declines)) as client:
        assert (await client.call_tool(TOOL_NAME, arguments)).content[0].text == DECLINED  # type: ignore[union-attr]
    async with Client(ask_user_server(never, timeout=0.2)) as client:
        assert (await client.call_tool(TOOL_NAME, arguments)).content[0].text == TIMED_OUT  # type: ignore[union-attr]
    async with Client(ask_user_server(cannot)) as client:
        result = await client.call_tool(TOOL_NAME, arguments)
        unknown = await client.call_tool('other', {})
    assert result.is_error
    assert result.content[0].text.startswith('Cannot ask the user here: no terminal')  # type: ignore[union-attr]
    assert '\x1b' not in result.content[0].text  # type: ignore[union-attr]
    assert unknown.is_error
    assert "Unknown tool 'other'" in unknown.content[0].text  # type: ignore[union-attr]


def test_the_command_checks_its_numbers() -> None:
    assert _port('0') == 0
    assert _seconds('1.5') == 1.5
    for bad in ('x', '70000', '-1'):
        with pytest.raises(argparse.ArgumentTypeError, match='is not a port number'):
            _port(bad)
    with pytest.raises(argparse.ArgumentTypeError, match='is not a number of seconds'):
        _seconds('soon')
    with pytest.raises(argparse.ArgumentTypeError, match='positive'):
        _seconds('0')


def test_the_command_without_a_terminal_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(db=None, web=False, tty='/nonexistent/tty', timeout=None, http=False)
    assert run(args) == 4
    assert capsys.readouterr().err.startswith('ask-user: ')


async def test_the_command_serves_http_and_the_web_inbox_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    from pydantic_ai_ask_user._cli import build_parser
    from pydantic_ai_ask_user._cli.mcp_server import _serve

    args = build_parser().parse_args(['mcp', '--http', '--port', '0', '--web', '--timeout', '60'])
    arguments = {'questions': [json.loads(REQUEST.questions[0].model_dump_json(exclude_none=True))]}
    err = ''

    async def wait_for(pattern: str) -> str:
        nonlocal err
        with anyio.fail_after(waits.WAIT):
            while not (found := re.search(pattern, err)):
                await anyio.sleep(0.05)
                err += capsys.readouterr().err
        return found.group(1)

    async with anyio.create_task_group() as group:
        group.start_soon(_serve, args)
        url = await wait_for(r'MCP endpoint \(streamable HTTP\): (\S+)')
        token = await wait_for(r'MCP bearer token \(.*\): (\S+)')
        async with http_client(url, token) as client, anyio.create_task_group() as asking:
            results: list[Any] = []

            async def call() -> None:
                results.append(await client.call_tool(TOOL_NAME, arguments))

            asking.start_soon(call)
            link = await wait_for(r'a question is waiting; .*: (http://\S+)')
            async with httpx.AsyncClient(follow_redirects=True, timeout=waits.WAIT) as browser:
                page = await browser.get(link)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None
                await browser.post(str(page.url), data={'csrf': csrf.group(1), 'action': 'answer', 'q0': '1'})
        group.cancel_scope.cancel()
    assert json.loads(results[0].content[0].text) == {'Database': ['SQLite']}
    assert 'question inbox (the link works once): http://' in err
