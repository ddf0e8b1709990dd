"""`ask-user mcp`: the real command, reached by real MCP clients, answered in a real pty and a real Chromium."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import waits
from ask_user_support import free_port
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_support import http_client, stop, wait_for_port
from playwright.async_api import async_playwright, expect

from pydantic_ai_ask_user import TIMED_OUT, TOOL_NAME, AskUser
from pydantic_ai_ask_user._capability import INSTRUCTIONS, TOOL_DESCRIPTION

pytestmark = pytest.mark.anyio

COMMAND = [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'mcp']
PROTOCOLS = ['legacy', '2026-07-28']
CHROMIUM = shutil.which('chromium') or '/usr/bin/chromium'
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking']

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite', 'description': 'A local file.'}],
        }
    ]
}


class Served:
    """`ask-user mcp` in a subprocess, its stderr read line by line as it comes."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [*COMMAND, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.url: str | None = None
        self.token = ''
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in iter(self.process.stderr.readline, ''):
            self.lines.put(line)
        self.lines.put('')

    def wait_line(self, pattern: str) -> re.Match[str]:
        seen: list[str] = []
        while True:
            line = self.lines.get(timeout=waits.WAIT)
            if not line:
                raise AssertionError(
                    f'ask-user mcp closed stderr (exit {self.process.poll()}) without {pattern!r}: {seen}'
                )
            seen.append(line)
            if found := re.search(pattern, line):
                return found

    def endpoint(self) -> str:
        """The MCP URL, once it listens; the token it printed once, after it, is then in `self.token`."""
        if self.url is None:
            self.url = self.wait_line(r'MCP endpoint \(streamable HTTP\): (http://\S+)').group(1)
            self.token = self.wait_line(r'MCP bearer token \(send "Authorization: Bearer <token>"; .*\): (\S+)$')[1]
        return self.url

    def client(
        self, mode: str = 'legacy', *, token: str | None = None, headers: dict[str, str] | None = None
    ) -> Client:
        """The Python MCP client over HTTP, sending the printed token (or `token`) and any other `headers`."""
        return http_client(self.endpoint(), token or self.token, mode=mode, headers=headers)

    def question_link(self) -> str:
        return self.wait_line(r'a question is waiting; .*: (http://\S+)').group(1)


@pytest.fixture
def serve() -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(*args: str) -> Served:
        served = Served(*args)
        started.append(served)
        return served

    yield start
    for served in started:
        stop(served.process)


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], *args])


def _tool_definition(**options: Any) -> Any:
    toolset: Any = AskUser(None, **options).get_toolset()
    return toolset.tools[TOOL_NAME].tool_def


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_the_tool_has_our_exact_schema_description_and_instructions(mode: str) -> None:
    async with Client(stdio('--web'), mode=mode) as client:
        (tool,) = (await client.list_tools()).tools
        assert tool.name == TOOL_NAME
        assert tool.description == TOOL_DESCRIPTION
        # Exactly the default tool's schema: `recommended` is not in it, as it is not in AskUser()'s.
        assert tool.input_schema == _tool_definition().parameters_json_schema
        assert 'recommended' not in json.dumps(tool.input_schema)
        if mode == 'legacy':
            assert client.instructions == INSTRUCTIONS
        recommending = {'questions': [{**QUESTIONS['questions'][0], 'recommended': 'SQLite'}]}
        refused = await client.call_tool(TOOL_NAME, recommending)
    assert refused.is_error
    assert 'questions.0.recommended: Extra inputs are not permitted' in refused.content[0].text  # type: ignore[union-attr]


async def test_notes_and_recommended_serve_the_tool_of_askuser_with_those_options() -> None:
    async with Client(stdio('--web', '--notes', '--recommended'), mode='legacy') as client:
        (tool,) = (await client.list_tools()).tools
    definition = _tool_definition(notes=True, recommended_options=True)
    assert tool.description == definition.description != TOOL_DESCRIPTION
    assert tool.input_schema == definition.parameters_json_schema
    assert 'recommended' in json.dumps(tool.input_schema)


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_invalid_arguments_get_an_error_naming_each_problem(mode: str) -> None:
    bad = {'questions': [{'header': 'H\x1b[31m', 'question': 'q', 'options': [{'label': 'a'}, {'label': 'A'}]}]}
    async with Client(stdio('--web'), mode=mode) as client:
        result = await client.call_tool(TOOL_NAME, bad)
        unknown = await client.call_tool('rm_rf', {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f'Invalid arguments for {TOOL_NAME}; fix them and call it again:')
    assert 'questions.0.header' in text
    assert "option label 'A' is the same as 'a'" in text
    assert '\x1b' not in text
    assert unknown.is_error


def _answer_form(link: str, data: dict[str, str]) -> None:
    with httpx.Client(follow_redirects=True, timeout=waits.WAIT) as client:
        page = client.get(link)
        assert page.status_code == 200
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
        assert client.post(str(page.url), data={'csrf': csrf.group(1), **data}).status_code == 200


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_over_http_the_web_inbox_answers_and_the_host_gets_our_result(
    mode: str, serve: Callable[..., Served]
) -> None:
    served = serve('--http', '--port', '0', '--web')
    async with served.client(mode) as client, anyio.create_task_group() as group:
        results: list[Any] = []

        async def call() -> None:
            results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

        group.start_soon(call)
        link = await anyio.to_thread.run_sync(served.question_link)
        await anyio.to_thread.run_sync(_answer_form, link, {'action': 'answer', 'q0': 'other', 'q0-text': 'DuckDB'})
    assert json.loads(results[0].content[0].text) == {'Database': ['DuckDB']}


async def test_chromium_answers_a_question_a_host_asked_over_http(serve: Callable[..., Served]) -> None:
    served = serve('--http', '--port', '0', '--web')
    client_of_host = served.client()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            async with client_of_host as client, anyio.create_task_group() as group:
                results: list[Any] = []

                async def call() -> None:
                    results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

                group.start_soon(call)
                link = await anyio.to_thread.run_sync(served.question_link)
                page = await browser.new_page()
                page.set_default_timeout(waits.WAIT * 1000)
                await page.goto(link)
                await expect(page.get_by_text('A local file.')).to_be_visible()
                await page.get_by_label('SQLite', exact=True).check()
                await page.get_by_role('button', name='Submit').click()
                await expect(page.locator('#confirmation')).to_contain_text('your answer was sent')
        finally:
            await browser.close()
    assert json.loads(results[0].content[0].text) == {'Database': ['SQLite']}


async def test_a_declined_question_is_the_declined_sentence(serve: Callable[..., Served]) -> None:
    served = serve('--http', '--port', '0', '--web')
    async with served.client() as client, anyio.create_task_group() as group:
        results: list[Any] = []

        async def call() -> None:
            results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

        group.start_soon(call)
        link = await anyio.to_thread.run_sync(served.question_link)
        await anyio.to_thread.run_sync(_answer_form, link, {'action': 'decline'})
    assert not results[0].is_error
    assert results[0].content[0].text.startswith('The user declined to answer.')


async def test_the_timeout_gives_the_timed_out_sentence() -> None:
    async with Client(stdio('--web', '--timeout', '1')) as client:
        result = await client.call_tool(TOOL_NAME, QUESTIONS)
    assert result.content[0].text == TIMED_OUT  # type: ignore[union-attr]


def test_the_typescript_client_gets_the_answer_over_http(
    serve: Callable[..., Served], node_client: Path, tmp_path: Path
) -> None:
    served = serve('--http', '--port', '0', '--web')
    url = served.endpoint()
    config = {'transport': 'http', 'url': url, 'token': served.token, 'tool': TOOL_NAME, 'arguments': QUESTIONS}
    node = shutil.which('node')
    assert node is not None
    config['answers'] = []
    client = subprocess.Popen([node, str(node_client), json.dumps(config)], stdout=subprocess.PIPE, text=True)
    try:
        _answer_form(served.question_link(), {'action': 'answer', 'q0': '0'})
        out, _ = client.communicate(timeout=waits.WAIT)
    finally:
        stop(client)
    data = json.loads(out.strip().splitlines()[-1])
    assert data['tools'][0]['inputSchema'] == _tool_definition().parameters_json_schema
    assert json.loads(data['result']['content'][0]['text']) == {'Database': ['PostgreSQL']}


def test_without_a_terminal_it_says_so_and_exits_4() -> None:
    done = subprocess.run(
        [*COMMAND, '--tty', '/nonexistent/tty'],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
    )
    assert done.returncode == 4
    assert done.stderr.startswith('ask-user: ')
    assert done.stdout == ''


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', 'pydantic_ai_ask_user._cli', *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
    )


async def test_with_db_the_question_waits_in_the_durable_store_and_ask_user_answer_answers_it(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "questions.sqlite"}'
    results: list[Any] = []
    async with Client(stdio('--db', url)) as client, anyio.create_task_group() as group:

        async def call() -> None:
            results.append(await client.call_tool(TOOL_NAME, QUESTIONS))

        group.start_soon(call)
        with anyio.fail_after(waits.WAIT):
            while True:
                pending = await anyio.to_thread.run_sync(lambda: _cli('pending', '--db', url, '--json'))
                # One line per waiting question, then the page's total.
                lines = [json.loads(line) for line in pending.stdout.splitlines()][:-1]
                if lines:
                    break
                await anyio.sleep(0.2)
        (waiting,) = lines
        answer = json.dumps({'Database': ['SQLite']})
        done = await anyio.to_thread.run_sync(
            lambda: _cli('answer', waiting['id'], '--db', url, '--json', '-', stdin=answer)
        )
        assert done.returncode == 0, done.stderr
    assert json.loads(results[0].content[0].text) == {'Database': ['SQLite']}


def test_ask_user_starts_without_loading_the_mcp_sdk() -> None:
    code = (
        'import sys\n'
        'from pydantic_ai_ask_user._cli import build_parser\n'
        'build_parser().parse_args(["mcp", "--web"])\n'
        'print(sorted(k for k in sys.modules if k.partition(".")[0] in {"mcp", "mcp_types", "fastmcp"}))\n'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=waits.WAIT, check=True)
    assert done.stdout.strip() == '[]'


def test_without_the_mcp_extra_it_says_how_to_install_it_and_exits_4() -> None:
    code = (
        'import sys\n'
        'sys.modules["mcp"] = None  # as if the extra were not installed\n'
        'from pydantic_ai_ask_user._cli import main\n'
        'sys.exit(main(["mcp", "--web"]))\n'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=waits.WAIT)
    assert done.returncode == 4, done.stderr
    # The hint every command gives, for where this ask-user came from (a clone here), not the registry's name.
    from pydantic_ai_ask_user._cli.install import install_hint

    assert done.stderr.rstrip('\n').endswith(install_hint('mcp'))


# Over HTTP, safe by default: the token, the Host and Origin checks, a client that leaves, the limits.


async def _refused(client: Client) -> None:
    """`client` gets nothing: listing the tools fails (a 2026-07-28 client sends nothing before its first call)."""

    async def use() -> None:
        with anyio.fail_after(waits.WAIT):
            async with client:
                await client.list_tools()

    with pytest.raises(Exception) as raised:  # noqa: PT011  (checked below: the server's refusal)
        await use()
    leaves: list[BaseException] = [raised.value]
    while groups := [leaf for leaf in leaves if isinstance(leaf, BaseExceptionGroup)]:
        leaves = [*(leaf for leaf in leaves if leaf not in groups), *(e for g in groups for e in g.exceptions)]
    # The SDK reports an HTTP error status as "Server returned an error response" (a 2025 session) or raises it.
    assert all(isinstance(leaf, (MCPError, httpx2.HTTPStatusError)) for leaf in leaves), leaves


def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    """A bare `initialize` POST with `headers`, as any program that reached the port could send it."""
    body = {
        'jsonrpc': '2.0',
        'id': 1,
        'method': 'initialize',
        'params': {'protocolVersion': '2025-11-25', 'capabilities': {}, 'clientInfo': {'name': 'x', 'version': '1'}},
    }
    accept = {'accept': 'application/json, text/event-stream'}
    return httpx.post(url, json=body, headers={**accept, **headers}, timeout=waits.WAIT)


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_without_the_token_the_python_client_cannot_connect_and_with_it_can(
    mode: str, serve: Callable[..., Served]
) -> None:
    served = serve('--http', '--port', '0', '--web')
    url = served.endpoint()
    assert re.fullmatch(r'[A-Za-z0-9_-]{43}', served.token)
    await _refused(http_client(url, None, mode=mode))
    await _refused(http_client(url, 'not-the-token-of-this-server', mode=mode))
    async with served.client(mode) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == [TOOL_NAME]
    missing = await anyio.to_thread.run_sync(_post, url, {})
    assert missing.status_code == 401
    assert missing.headers['www-authenticate'] == 'Bearer realm="ask-user"'
    wrong = await anyio.to_thread.run_sync(_post, url, {'authorization': 'Bearer x' * 3})
    assert wrong.status_code == 401
    assert wrong.headers['www-authenticate'] == 'Bearer realm="ask-user", error="invalid_token"'
    assert wrong.json()['error'] == 'invalid_token'
    right = await anyio.to_thread.run_sync(_post, url, {'authorization': f'Bearer {served.token}'})
    assert right.status_code == 200
    # Printed once, at start, and never again: not in any later line.
    served.process.terminate()
    rest = ''.join(iter(lambda: served.lines.get(timeout=waits.WAIT), ''))
    assert served.token not in rest


@pytest.mark.parametrize('mode', PROTOCOLS)
async def test_a_foreign_origin_is_refused_with_403_even_with_the_token(
    mode: str, serve: Callable[..., Served]
) -> None:
    served = serve('--http', '--port', '0', '--web', '--allow-origin', 'https://app.example.com')
    url = served.endpoint()
    await _refused(served.client(mode, headers={'origin': 'http://evil.example'}))
    port = httpx.URL(url).port
    for origin, status in [
        ('http://evil.example', 403),
        ('http://127.0.0.1.evil.example', 403),
        (f'http://localhost:{port}', 200),
        ('https://app.example.com', 200),
        ('https://app.example.com:8443', 403),
    ]:
        response = await anyio.to_thread.run_sync(
            _post, url, {'authorization': f'Bearer {served.token}', 'origin': origin}
        )
        assert response.status_code == status, origin
    async with served.client(mode, headers={'origin': 'https://app.example.com'}) as client:
        assert (await client.list_tools()).tools


async def test_on_every_interface_the_host_is_still_checked_against_the_allow_list(
    serve: Callable[..., Served],
) -> None:
    served = serve('--http', '--host', '0.0.0.0', '--port', '0', '--web', '--allow-host', 'mcp.example.com')
    url = served.endpoint().replace('0.0.0.0', '127.0.0.1')
    auth = {'authorization': f'Bearer {served.token}'}
    port = httpx.URL(url).port
    for host, status in [
        ('evil.example', 421),
        (f'evil.example:{port}', 421),
        (f'rebound.evil.example:{port}', 421),
        (f'127.0.0.1:{port}', 200),
        (f'localhost:{port}', 200),
        ('mcp.example.com', 200),
        (f'MCP.Example.com:{port}', 200),  # host names are case-insensitive
    ]:
        response = await anyio.to_thread.run_sync(_post, url, {**auth, 'host': host})
        assert response.status_code == status, host
    await _refused(served.client(headers={'host': f'evil.example:{port}'}))


async def test_the_token_may_come_from_the_environment_and_is_then_never_printed() -> None:
    token = 'a-token-of-my-own-1234567890'
    port = free_port()
    process = subprocess.Popen(
        [*COMMAND, '--http', '--port', str(port), '--web'],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, 'ASK_USER_MCP_TOKEN': token},
    )
    try:
        wait_for_port(port, process)
        async with http_client(f'http://127.0.0.1:{port}/mcp', token) as client:
            assert (await client.list_tools()).tools
    finally:
        stop(process)
    assert process.stderr is not None
    err = process.stderr.read()
    assert 'MCP endpoint' in err
    assert token not in err
    assert 'MCP bearer token' not in err


@pytest.mark.parametrize('where', ['argument', 'environment'])
def test_a_weak_token_is_refused_with_exit_2_without_echoing_it(where: str) -> None:
    weak = 'hunter2'
    args = ['--token', weak] if where == 'argument' else []
    done = subprocess.run(
        [*COMMAND, '--http', '--port', '0', '--web', *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
        env={**os.environ, 'ASK_USER_MCP_TOKEN': weak} if where == 'environment' else None,
    )
    assert done.returncode == 2
    assert 'the token must be 16 to 512 characters' in done.stderr
    assert weak not in done.stderr


def _inbox(link: str) -> Callable[[], list[Any]]:
    """Sign in with the inbox link; a function listing the questions waiting there."""
    client = httpx.Client(follow_redirects=True, timeout=waits.WAIT)
    page = client.get(link)
    assert page.status_code == 200
    api = str(page.url.join('api/requests'))
    return lambda: client.get(api).json()['requests']


async def test_the_question_of_a_client_that_disconnects_is_withdrawn(
    serve: Callable[..., Served], node_client: Path
) -> None:
    served = serve('--http', '--port', '0', '--web')
    waiting = _inbox(served.wait_line(r'question inbox \(the link works once\): (http://\S+)')[1])
    url = served.endpoint()
    config = {'transport': 'http', 'url': url, 'token': served.token, 'tool': TOOL_NAME, 'arguments': QUESTIONS}
    node = shutil.which('node')
    assert node is not None
    host = subprocess.Popen([node, str(node_client), json.dumps({**config, 'answers': []})])
    try:
        await anyio.to_thread.run_sync(served.question_link)
        assert len(await anyio.to_thread.run_sync(waiting)) == 1
    finally:
        host.kill()  # a crash: no DELETE, no notifications/cancelled, the sockets just close
        host.wait()
    with anyio.fail_after(waits.WAIT):
        while await anyio.to_thread.run_sync(waiting):
            await anyio.sleep(0.1)
