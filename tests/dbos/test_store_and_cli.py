"""The answerer, the store and the command line, with DBOS launched in this process on a SQLite file."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pexpect
import pytest
import waits
from ask_user_support import make_request
from cli_support import run_cli_in_process
from dbos import DBOS
from test_answered_by_and_notes import ALICE, noted_request
from waits import wait_until
from worker_support import dbos_launched

from pydantic_ai_ask_user import DECLINED, AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.dbos import DBOSAnswerer, DBOSQuestionStore
from pydantic_ai_ask_user.receipts import os_user_at_host
from pydantic_ai_ask_user.store import (
    AlreadyAnsweredError,
    HistoryFilter,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
    record_receipt,
)
from pydantic_ai_ask_user.testing import CONFORMANCE_SCENARIOS, ConformanceScenario, run_conformance

pytestmark = pytest.mark.anyio

WAIT = waits.WAIT


@pytest.fixture(scope='module')
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """DBOS launched in this process on a fresh SQLite file; yields the database URL."""
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "questions.sqlite"}'
    with dbos_launched(url, 'ask-user-store-tests', 'store-tests-1'):
        yield url


@pytest.fixture
def answerer(launched: str) -> DBOSAnswerer:
    return DBOSAnswerer(launched, recheck_seconds=30)


@pytest.fixture
async def store(launched: str) -> Any:
    async with DBOSQuestionStore(launched, events_poll_seconds=0.05) as opened:
        yield opened


async def shown(store: DBOSQuestionStore, request_id: str) -> None:
    async def present() -> bool:
        return request_id in {request.id for request in await store.pending()}

    await wait_until(present, f'request {request_id} to be pending')


def database_question(header: str = 'Database') -> AskUserRequest:
    options = (QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite', description='A file.'))
    return AskUserRequest(questions=(Question(header=header, question='Which database?', options=options),))


def pick(label: str, header: str = 'Database') -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header=header, selected=(label,)),))


@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda scenario: scenario.name)
async def test_the_durable_answerer_passes_the_conformance_kit(
    scenario: ConformanceScenario, answerer: DBOSAnswerer, store: DBOSQuestionStore
) -> None:
    async def driver(request: AskUserRequest, response: AskUserResponse | None) -> None:
        await shown(store, request.id)
        if response is not None:
            await store.respond(request.id, response)

    await run_conformance(scenario, answerer, driver)


async def test_a_cancelled_wait_withdraws_the_question_and_refuses_a_late_answer(
    answerer: DBOSAnswerer, store: DBOSQuestionStore
) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        group.cancel_scope.cancel()
    with pytest.raises(WithdrawnError):
        await store.get(request.id)
    with pytest.raises(WithdrawnError):
        await store.respond(request.id, pick('SQLite'))


async def test_an_invalid_response_is_refused_and_the_question_keeps_waiting(
    answerer: DBOSAnswerer, store: DBOSQuestionStore
) -> None:
    request = database_question()
    got: list[AskUserResponse] = []
    async with anyio.create_task_group() as group:

        async def ask() -> None:
            got.append(await answerer(request))

        group.start_soon(ask)
        await shown(store, request.id)
        with pytest.raises(ValueError, match='not one of its options'):
            await store.respond(request.id, pick('MySQL'))
        assert (await store.get(request.id)).questions == request.questions
        await store.respond(request.id, pick('PostgreSQL'))
    assert got == [pick('PostgreSQL')]


async def test_a_second_answer_is_refused_as_already_answered(answerer: DBOSAnswerer, store: DBOSQuestionStore) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        await store.respond(request.id, AskUserResponse(cancelled=True))
    with pytest.raises(AlreadyAnsweredError):
        await store.respond(request.id, pick('SQLite'))
    with pytest.raises(AlreadyAnsweredError):
        await store.get(request.id)


async def test_an_unknown_id_is_refused_as_unknown(store: DBOSQuestionStore) -> None:
    with pytest.raises(UnknownRequestError):
        await store.get('no-such-request')
    with pytest.raises(UnknownRequestError):
        await store.respond('no-such-request', pick('SQLite'))


async def test_events_report_a_question_asked_and_then_answered(
    answerer: DBOSAnswerer, store: DBOSQuestionStore
) -> None:
    request = database_question()
    seen: list[StoreEvent] = []

    async def watch() -> None:
        async for event in store.events():
            if event.request_id == request.id:
                seen.append(event)
                if event.kind == 'answered':
                    return

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await anyio.sleep(0.2)
            group.start_soon(answerer, request)
            await shown(store, request.id)
            await store.respond(request.id, pick('SQLite'))
    assert [event.kind for event in seen] == ['requested', 'answered']
    assert seen[0].request == AskUserRequest(questions=request.questions, id=request.id)


async def test_every_iteration_of_the_events_shares_one_poll_and_gets_every_event(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An inbox with many open pages: one read of the table per poll, whatever the number of pages.
    reads = 0
    read_changes = store._read_log  # pyright: ignore[reportPrivateUsage]

    def counted(gaps: Any, high: int) -> Any:
        nonlocal reads
        reads += 1
        return read_changes(gaps, high)

    monkeypatch.setattr(store, '_read_log', counted)
    request = database_question()
    pages = 20
    seen: dict[int, list[str]] = {page: [] for page in range(pages)}

    async def watch(page: int) -> None:
        # Closed on leaving, as a page's stream is when it ends: an async generator left to the garbage collector
        # would give its subscription up only when collected.
        async with contextlib.aclosing(store.events()) as events:
            async for event in events:
                if event.request_id == request.id:
                    seen[page].append(event.kind)
                    if event.kind == 'answered':
                        return

    started = time.monotonic()
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            for page in range(pages):
                group.start_soon(watch, page)
            while len(store._feed._subscribers) < pages:  # pyright: ignore[reportPrivateUsage]
                await anyio.sleep(0.01)
            group.start_soon(answerer, request)
            await shown(store, request.id)
            await store.respond(request.id, pick('SQLite'))
    elapsed = time.monotonic() - started
    assert seen == {page: ['requested', 'answered'] for page in range(pages)}
    # The first iteration's baseline, then at most one read per poll period (a poll waits out its period).
    assert reads <= 2 + elapsed / store.events_poll_seconds, (reads, elapsed)
    assert not store._feed._subscribers  # pyright: ignore[reportPrivateUsage]


async def test_pending_lists_each_waiting_question_with_its_id_and_options(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str
) -> None:
    request = database_question('Evil\x1b[2J') if False else database_question('Target')
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        code, out, _ = await anyio.to_thread.run_sync(run_cli_in_process, ['pending', '--db', launched])
        json_code, json_out, _ = await anyio.to_thread.run_sync(
            run_cli_in_process, ['pending', '--db', launched, '--json']
        )
        group.cancel_scope.cancel()
    assert (code, json_code) == (0, 0)
    assert f'{request.id}  asked ' in out
    # Each option's description under its label.
    assert '  [Target] Which database? (pick one)\n    - PostgreSQL\n    - SQLite\n        A file.\n' in out
    *lines, trailer = map(json.loads, json_out.splitlines())
    listed = {item['id']: item for item in lines}
    assert trailer == {'total': 1, 'total_exact': True}  # no next page: no `next_cursor`
    # An absent optional field is left out, never null: no description, no deadline, no run.
    assert listed[request.id]['questions'][0]['options'] == [
        {'label': 'PostgreSQL'},
        {'label': 'SQLite', 'description': 'A file.'},
    ]
    assert 'null' not in json_out
    assert {'deadline', 'run_id'}.isdisjoint(listed[request.id])
    # One JSON style across commands: compact, as the model gets its result.
    assert all(
        line == json.dumps(json.loads(line), separators=(',', ':'), ensure_ascii=False)
        for line in json_out.splitlines()
    )


async def test_answer_takes_a_unique_beginning_of_the_id_and_lists_the_candidates_of_an_ambiguous_one(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str
) -> None:
    stamp = time.time_ns()
    # Ids as an earlier version stored them (the tool call id, the model's own text) may hold anything.
    first = replace(database_question('First'), id=f'pre{stamp}-a-\x1b]0;pwned\x07')
    second = replace(database_question('Second'), id=f'pre{stamp}-b-\x1b]0;pwned\x07')
    got: list[AskUserResponse] = []

    async def ask(request: AskUserRequest) -> None:
        got.append(await answerer(request))

    async with anyio.create_task_group() as group:
        group.start_soon(ask, first)
        group.start_soon(ask, second)
        await shown(store, first.id)
        await shown(store, second.id)
        answer = json.dumps({'First': ['SQLite']})
        argv = ['answer', '--db', launched, f'pre{stamp}', '--json', '-']
        ambiguous = await anyio.to_thread.run_sync(run_cli_in_process, argv, answer)
        assert len(await store.pending()) >= 2  # nothing was sent
        short = await anyio.to_thread.run_sync(
            run_cli_in_process, ['answer', '--db', launched, 'pre', '--json', '-'], answer
        )
        argv = ['answer', '--db', launched, f'pre{stamp}-a', '--json', '-']
        unique = await anyio.to_thread.run_sync(run_cli_in_process, argv, answer)
        await store.respond(second.id, pick('SQLite', 'Second'))
    code, out, err = ambiguous
    assert (code, out) == (9, '')  # EXIT_AMBIGUOUS: nothing done
    assert err.splitlines()[0] == (
        f"ask-user: 'pre{stamp}' means 2 waiting items; give the whole id of the one you mean:"
    )
    assert '  pre' in err
    assert '  First' in err
    assert '  Second' in err
    assert '\x1b' not in err
    assert '\x07' not in err
    assert short[0] == 5  # shorter than 4 characters: only a whole id
    assert unique[0] == 0, unique[2]
    assert json.loads(unique[1]) == {'First': ['SQLite']}
    assert sorted(response.answers[0].header for response in got) == ['First', 'Second']


async def test_pending_into_a_closed_pipe_exits_141_without_a_word(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str
) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        read, write = os.pipe()
        os.close(read)
        try:
            argv = [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'pending', '--db', launched]
            env = {key: value for key, value in os.environ.items() if key != 'PYTHONUNBUFFERED'}
            done = await anyio.run_process(argv, stdout=write, check=False, env=env)
        finally:
            os.close(write)
        group.cancel_scope.cancel()
    assert (done.returncode, done.stderr) == (141, b'')


@pytest.mark.parametrize(
    ('answer', 'expected', 'code'),
    [
        ({'Database': ['SQLite']}, {'Database': ['SQLite']}, 0),
        ({'Database': ['postgresql']}, {'Database': ['PostgreSQL']}, 0),
        ({'Database': {'custom': 'Oracle, sadly'}}, {'Database': ['Oracle, sadly']}, 0),
        ({'answers': [{'header': 'Database', 'selected': ['PostgreSQL']}]}, {'Database': ['PostgreSQL']}, 0),
        ({'cancelled': True}, DECLINED, 1),
    ],
    ids=['model-shape', 'model-shape-folded', 'model-shape-custom', 'response-shape', 'declined'],
)
async def test_answer_from_json_on_stdin_reaches_the_waiting_run_and_prints_what_the_model_gets(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str, answer: Any, expected: Any, code: int
) -> None:
    request = database_question()
    got: list[AskUserResponse] = []

    async def ask() -> None:
        got.append(await answerer(request))

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await shown(store, request.id)
        argv = ['answer', '--db', launched, request.id, '--json', '-']
        result = await anyio.to_thread.run_sync(run_cli_in_process, argv, json.dumps(answer))
    assert result[0] == code, result[2]
    assert json.loads(result[1]) == expected
    assert [response.cancelled for response in got] == [code == 1]


async def test_answer_exits_2_on_an_invalid_answer_and_leaves_the_question_waiting(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str
) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        argv = ['answer', '--db', launched, request.id, '--json', '-']
        bad_label = await anyio.to_thread.run_sync(
            run_cli_in_process, argv, json.dumps({'Database': ['SQLite', 'PostgreSQL']})
        )
        bad_json = await anyio.to_thread.run_sync(run_cli_in_process, argv, '{not json')
        await store.get(request.id)
        group.cancel_scope.cancel()
    assert bad_label[0] == 2
    assert 'single-select' in bad_label[2]
    assert bad_json[0] == 2
    assert 'invalid answer' in bad_json[2]


@pytest.mark.parametrize(
    ('answer', 'problem'),
    [
        (
            json.dumps({'Database': ['postgres']}),
            "invalid answer: the answer to 'Database' picks 'postgres', which is not one of its options "
            "('PostgreSQL', 'SQLite'); to answer in your own words, "
            'write {"Database": {"custom": "your own words"}}',
        ),
        (
            json.dumps({'Database': {'custom': 'y' * 20_000_000}}),
            "invalid answer: the answer to 'Database': the custom answer is 20000000 characters long; "
            'at most 2000 are allowed',
        ),
        ('[' * 100_000 + ']' * 100_000, 'invalid answer: the JSON is nested too deeply'),
    ],
    ids=['label-typo', 'custom-20-mb', 'nested-100000-deep'],
)
async def test_answer_exits_2_with_one_line_on_input_that_cannot_be_an_answer(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str, answer: str, problem: str
) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        argv = ['answer', '--db', launched, request.id, '--json', '-']
        code, out, err = await anyio.to_thread.run_sync(run_cli_in_process, argv, answer)
        await store.get(request.id)  # still waiting: nothing was sent
        group.cancel_scope.cancel()
    assert (code, out, err) == (2, '', f'ask-user: {problem}\n')


async def test_answer_exits_5_6_and_7_for_an_unknown_an_answered_and_a_withdrawn_question(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str
) -> None:
    answered, withdrawn = database_question(), database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, answered)
        await shown(store, answered.id)
        await store.respond(answered.id, pick('SQLite'))
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, withdrawn)
        await shown(store, withdrawn.id)
        group.cancel_scope.cancel()
    answer = json.dumps({'Database': ['SQLite']})
    codes = [
        (await anyio.to_thread.run_sync(run_cli_in_process, ['answer', '--db', launched, rid, '--json', '-'], answer))[
            0
        ]
        for rid in ('no-such-id', answered.id, withdrawn.id)
    ]
    assert codes == [5, 6, 7]


async def test_answer_without_json_or_terminal_exits_4_and_suggests_json(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str, tmp_path: Path
) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await shown(store, request.id)
        # A new session has no controlling terminal, as in CI; the menu cannot be drawn.
        process = await anyio.run_process(
            [sys.executable, '-m', 'pydantic_ai_ask_user._cli', 'answer', '--db', launched, request.id],
            check=False,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        await store.get(request.id)
        group.cancel_scope.cancel()
    assert process.returncode == 4
    assert b'--json' in process.stderr


def test_pending_on_an_unreachable_database_exits_4_with_a_message() -> None:
    code, _, err = run_cli_in_process(['pending', '--db', 'postgresql://nobody@127.0.0.1:1/none'])
    assert code == 4
    assert err.startswith('ask-user: cannot read the questions')
    assert 'Traceback' not in err


@pytest.mark.pty
async def test_answer_in_the_terminal_menu_sends_the_pick_to_the_waiting_run(
    answerer: DBOSAnswerer, store: DBOSQuestionStore, launched: str, tmp_path: Path
) -> None:
    request = database_question()
    got: list[AskUserResponse] = []

    async def ask() -> None:
        got.append(await answerer(request))

    def answer_in_a_pty() -> tuple[int | None, str]:
        argv = ['-m', 'pydantic_ai_ask_user._cli', 'answer', '--db', launched, request.id]
        child = pexpect.spawn(sys.executable, argv, cwd=str(tmp_path), timeout=WAIT, encoding='utf-8')
        child.setwinsize(24, 100)
        child.expect('Which database')
        child.send('2')
        child.expect('SQLite')
        child.send('\r')
        child.expect(pexpect.EOF)
        child.close()
        return child.exitstatus, child.before or ''

    with anyio.fail_after(WAIT * 2):
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await shown(store, request.id)
            code, screen = await anyio.to_thread.run_sync(answer_in_a_pty)
    assert code == 0, screen
    # Who answered in the terminal is the OS user and host of `ask-user answer`, recorded with the answer.
    assert got == [replace(pick('SQLite'), answered_by=os_user_at_host())]
    assert (await store.record(request.id)).answered_by == os_user_at_host()


# --- Inside a DBOS run: an ordinary answerer runs in a step; durable timeouts ---

_asked: list[str] = []


async def _plain_answerer(request: AskUserRequest) -> AskUserResponse:
    _asked.append(request.id)
    if request.questions[0].header == 'Slow':
        await anyio.sleep_forever()
    return pick('SQLite', request.questions[0].header)


def _dbos_agent(timeout: float | None) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.dbos import DBOSDurability
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from pydantic_ai_ask_user import TOOL_NAME, AskUser

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(json.dumps(returns[0].content))])
        prompt = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
        question = {'header': prompt, 'question': 'Which?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}
        return ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [question]})])

    name = 'plain_in_dbos' if timeout is None else 'plain_in_dbos_timeout'
    return Agent(
        FunctionModel(model),
        name=name,
        capabilities=[DBOSDurability(), AskUser(answerer=_plain_answerer, timeout=timeout)],
    )


_plain_agent = _dbos_agent(None)
_timed_agent = _dbos_agent(0.3)


@DBOS.workflow(name='store_tests.plain')
async def _plain_workflow(header: str) -> str:
    return (await _plain_agent.run(header)).output


@DBOS.workflow(name='store_tests.timed')
async def _timed_workflow(header: str) -> str:
    return (await _timed_agent.run(header)).output


async def test_an_ordinary_answerer_in_a_dbos_run_is_called_in_a_step_that_records_its_answer(launched: str) -> None:
    _asked.clear()
    handle = await DBOS.start_workflow_async(_plain_workflow, 'Database')
    assert json.loads(await handle.get_result()) == {'Database': ['SQLite']}
    assert len(_asked) == 1
    steps = [step['function_name'] for step in await DBOS.list_workflow_steps_async(handle.workflow_id)]
    assert 'ask_user.answer' in steps
    assert 'ask_user.deadline' not in steps  # no timeout, nothing to record


async def test_a_timeout_in_a_dbos_run_is_recorded_and_tells_the_model(launched: str) -> None:
    from pydantic_ai_ask_user import TIMED_OUT

    _asked.clear()
    handle = await DBOS.start_workflow_async(_timed_workflow, 'Slow')
    assert json.loads(await handle.get_result()) == TIMED_OUT
    steps = [step['function_name'] for step in await DBOS.list_workflow_steps_async(handle.workflow_id)]
    assert steps.index('ask_user.deadline') < steps.index('ask_user.answer')


async def test_a_durable_timeout_outside_a_workflow_withdraws_the_question(
    answerer: DBOSAnswerer, store: DBOSQuestionStore
) -> None:
    request = database_question()
    assert await answerer.ask_durably(request, timeout=0.5) is None
    with pytest.raises(WithdrawnError):
        await store.respond(request.id, pick('SQLite'))


async def test_an_answer_recorded_before_the_deadline_is_returned(
    answerer: DBOSAnswerer, store: DBOSQuestionStore
) -> None:
    request = database_question()
    async with anyio.create_task_group() as group:
        got: list[AskUserResponse | None] = []

        async def ask() -> None:
            got.append(await answerer.ask_durably(request, timeout=30))

        group.start_soon(ask)
        await shown(store, request.id)
        await store.respond(request.id, pick('PostgreSQL'))
    assert got == [pick('PostgreSQL')]


def test_a_bad_timeout_is_refused(answerer: DBOSAnswerer) -> None:
    with pytest.raises(ValueError, match='positive number of seconds'):
        anyio.run(lambda: answerer.ask_durably(database_question(), timeout=0))


# --- A RequestInput wait answered in place by `ask` ---

_tokens: list[str] = []


def _answered_in_place_agent() -> tuple[Any, Any]:
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext
    from pydantic_ai.durable_exec.dbos import DBOSDurability
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from pydantic_ai_ask_user.dbos import DBOSExternalEvents
    from pydantic_ai_ask_user.deferred import waiting_handler

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(str(returns[0].content))])
        return ModelResponse(parts=[ToolCallPart('deploy', {}, tool_call_id='deploy-1')])

    async def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> DeferredToolResults:
        _tokens.append(token)
        return DeferredToolResults(approvals={'deploy-1': True})

    events = DBOSExternalEvents()
    agent = Agent(
        FunctionModel(model), name='answered_in_place', capabilities=[DBOSDurability(), events, waiting_handler(ask)]
    )

    @agent.tool_plain(requires_approval=True)
    def deploy() -> str:
        return 'deployed'

    return agent, events


_in_place_agent, _in_place_events = _answered_in_place_agent()


@DBOS.workflow(name='store_tests.answered_in_place')
async def _answered_in_place_workflow(task: str) -> str:
    return (await _in_place_agent.run(task)).output


async def test_a_wait_answered_in_place_by_ask_takes_no_later_resolution(launched: str) -> None:
    from pydantic_ai_ask_user.dbos import NoWaitError, resolve_dbos_event

    _in_place_events.database_url = launched
    _tokens.clear()
    handle = await DBOS.start_workflow_async(_answered_in_place_workflow, 'ship it')
    assert await handle.get_result() == 'deployed'
    (token,) = _tokens
    with pytest.raises(NoWaitError):
        await anyio.to_thread.run_sync(
            lambda: resolve_dbos_event(token, {'approvals': {'deploy-1': False}}, database_url=launched)
        )


# --- A receipt signed in a DBOS run, kept in a step of its own ---

RECEIPT_KEY = b'the key the runs sign receipts with'

_receipt_answerer = DBOSAnswerer(recheck_seconds=30)
"""The answerer of `_receipt_agent`: its database is the module's (`launched`), set by the test."""


def _receipt_agent() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.dbos import DBOSDurability
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from pydantic_ai_ask_user import TOOL_NAME, AskUser

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(json.dumps(returns[0].content))])
        question = {
            'header': 'Receipt',
            'question': 'Which?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
        }
        return ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [question]})])

    capability = AskUser(answerer=_receipt_answerer, receipt_key=RECEIPT_KEY)
    return Agent(FunctionModel(model), name='receipt_in_dbos', capabilities=[DBOSDurability(), capability])


_receipting_agent = _receipt_agent()


@DBOS.workflow(name='store_tests.receipt')
async def _receipt_workflow(task: str) -> str:
    return (await _receipting_agent.run(task)).output


async def test_a_receipt_signed_in_a_dbos_run_is_kept_in_a_step_and_verifies_in_the_history(
    launched: str, store: DBOSQuestionStore
) -> None:
    _receipt_answerer.database_url = launched
    handle = await DBOS.start_workflow_async(_receipt_workflow, 'sign it')

    async def asked() -> AskUserRequest | None:
        return next((each for each in await store.pending() if each.questions[0].header == 'Receipt'), None)

    request: AskUserRequest = await wait_until(asked, 'the question to wait')
    await store.respond(request.key, replace(pick('SQLite', 'Receipt'), answered_by='alice'))
    assert json.loads(await handle.get_result()) == {'Receipt': ['SQLite']}
    steps = [step['function_name'] for step in await DBOS.list_workflow_steps_async(handle.workflow_id)]
    assert steps.count('ask_user.keep_receipt') == 1
    page = await store.history_page(limit=500, where=HistoryFilter(kind='question'))
    [record] = [each for each in page.records if each.key == request.key]
    status = record_receipt(record, RECEIPT_KEY)
    assert status is not None
    assert status.receipt is not None
    assert (status.check, status.receipt.answered_by, status.receipt.run_id) == ('verified', 'alice', request.run_id)
    _receipt_answerer.close()


# --- Who answered, notes and recommended options, through the answerer, the store and the command line ---


async def _answer_while_asking(answerer: Any, store: DBOSQuestionStore, request: AskUserRequest, answer: Any) -> Any:
    got: list[AskUserResponse] = []

    async def ask() -> None:
        got.append(await answerer(request))

    result: Any = None
    with anyio.fail_after(WAIT * 2):
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await shown(store, request.id)
            try:
                result = await answer()
            except BaseException:
                group.cancel_scope.cancel()
                raise
    return got[0], result


async def test_the_answerer_returns_who_answered_and_the_store_records_it(
    answerer: Any, store: DBOSQuestionStore
) -> None:
    request = make_request(id=f'who-{time.time_ns()}')

    async def answer() -> None:
        await store.respond(request.id, ALICE)

    got, _ = await _answer_while_asking(answerer, store, request, answer)
    assert got == ALICE
    assert got.answered_by == 'alice@laptop'
    assert (await store.record(request.id)).answered_by == 'alice@laptop'


async def test_notes_and_the_recommended_option_travel_through_the_store_and_the_command_line(
    answerer: Any, store: DBOSQuestionStore, launched: str
) -> None:
    request = noted_request(f'noted-{time.time_ns()}')

    async def answer() -> Any:
        [waiting] = [stored for stored in await store.pending() if stored.id == request.id]
        assert (waiting.notes, waiting.questions[0].recommended) == (True, 'SQLite')
        listed = await anyio.to_thread.run_sync(run_cli_in_process, ['pending', '--db', launched, '--json'])
        text = await anyio.to_thread.run_sync(run_cli_in_process, ['pending', '--db', launched])
        noted = {'Database': {'answer': ['sqlite'], 'note': 'only after the backup'}}
        argv = ['answer', '--db', launched, request.id, '--json', '-']
        return listed, text, await anyio.to_thread.run_sync(run_cli_in_process, argv, json.dumps(noted))

    got, (listed, text, done) = await _answer_while_asking(answerer, store, request, answer)
    [line] = [item for item in map(json.loads, listed[1].splitlines()) if item.get('id') == request.id]
    assert line['notes'] is True
    assert line['deadline'] == '2033-05-18T03:33:20+00:00'
    assert line['questions'][0]['recommended'] == 'SQLite'
    assert '    - SQLite (recommended)\n' in text[1]
    assert '  a note may go with each answer\n' in text[1]
    assert done[0] == 0, done[2]
    assert json.loads(done[1]) == {'Database': {'answer': ['SQLite'], 'note': 'only after the backup'}}
    assert got == AskUserResponse(
        answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='only after the backup'),),
        answered_by=os_user_at_host(),
    )
    assert (await store.record(request.id)).answered_by == os_user_at_host()


async def test_a_note_on_a_question_that_takes_none_is_refused_and_it_keeps_waiting(
    answerer: Any, store: DBOSQuestionStore, launched: str
) -> None:
    request = make_request(id=f'plain-{time.time_ns()}')

    async def answer() -> Any:
        noted = {'answers': [{'header': 'Database', 'selected': ['SQLite'], 'note': 'hm'}]}
        argv = ['answer', '--db', launched, request.id, '--json', '-']
        refused = await anyio.to_thread.run_sync(run_cli_in_process, argv, json.dumps(noted))
        assert request.id in {stored.id for stored in await store.pending()}
        named = {'answers': [{'header': 'Database', 'selected': ['SQLite']}], 'answered_by': 'bob (via chat)'}
        return refused, await anyio.to_thread.run_sync(run_cli_in_process, argv, json.dumps(named))

    got, (refused, done) = await _answer_while_asking(answerer, store, request, answer)
    assert refused[0] == 2
    assert 'note' in refused[2]
    assert done[0] == 0, done[2]
    assert got.answered_by == 'bob (via chat)'  # an answer given as JSON may name who gave it
