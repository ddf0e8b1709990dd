"""A question belongs to its run, with DBOS launched in this process: on SQLite, then on PostgreSQL.

The models number their tool calls from `call_0` in every run, as providers that restart their ids per run do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import anyio
import pytest
from ask_user_support import Watch
from dbos import DBOS, SetWorkflowID
from durable_support import fresh_postgres_database
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from waits import wait_until
from worker_support import dbos_launched, streamed

from pydantic_ai_ask_user import (
    TOOL_NAME,
    WITHDRAWN,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserResponse,
    DifferentQuestionsError,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user.dbos import DBOSAnswerer, DBOSQuestionStore, StoredRequest

pytestmark = pytest.mark.anyio


@pytest.fixture(scope='module', params=['sqlite', pytest.param('postgres', marks=pytest.mark.postgres)])
def launched(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """DBOS launched in this process on a fresh database; yields its URL."""
    if request.param == 'sqlite':
        url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "identity.sqlite"}'
    else:
        url = fresh_postgres_database(request.getfixturevalue('postgres_server'))
    with dbos_launched(url, 'ask-user-identity-tests', 'identity-tests-1'):
        yield url


@pytest.fixture
async def store(launched: str) -> Any:
    async with DBOSQuestionStore(launched, events_poll_seconds=0.05) as opened:
        yield opened


def _question(header: str) -> dict[str, Any]:
    return {'header': header, 'question': f'{header}?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}


def _numbered_model(questions: int) -> FunctionModel:
    """Asks `questions` questions one after another, calling them `call_0`, `call_1`, ... in every run.

    The output is the JSON of what each call got back, by call id.
    """

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = {p.tool_call_id: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
        if len(returns) == questions:
            return ModelResponse(parts=[TextPart(json.dumps(returns, sort_keys=True))])
        header = f'Database {len(returns)}'
        call = ToolCallPart(TOOL_NAME, {'questions': [_question(header)]}, tool_call_id=f'call_{len(returns)}')
        return ModelResponse(parts=[call])

    # The same turns, streamed: a run with an event listener (`Watch`) streams its model responses.
    return FunctionModel(model, stream_function=streamed(model))


def _pick(stored: StoredRequest, label: str) -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header=stored.request.questions[0].header, selected=(label,)),))


async def _one_pending(store: DBOSQuestionStore, *, besides: Sequence[str] = ()) -> StoredRequest:
    async def found() -> StoredRequest | None:
        fresh = [record for record in await store.pending_records() if record.key not in besides]
        return fresh[0] if fresh else None

    return await wait_until(found, 'a question to be pending')


# --- Plain runs, outside any workflow: `DBOSAnswerer` waits in a workflow of its own ---


async def test_a_second_plain_run_repeating_call_0_is_asked_its_own_question(
    launched: str, store: DBOSQuestionStore
) -> None:
    # Before, the second run's wait re-attached to the first's finished workflow, `ask-user-call_0`, and its model
    # got the first run's answer in milliseconds, without anyone seeing the question.
    watch = Watch()
    agent = Agent(
        _numbered_model(1), capabilities=[AskUser(answerer=DBOSAnswerer(launched, recheck_seconds=30)), watch]
    )
    outputs: list[str] = []
    keys: list[str] = []
    for label in ('SQLite', 'PostgreSQL'):
        async with anyio.create_task_group() as group:

            async def run() -> None:
                outputs.append((await agent.run('migrate')).output)

            group.start_soon(run)
            runs_before = len(outputs)

            async def asked_or_done(runs_before: int = runs_before) -> StoredRequest | bool:
                if len(outputs) > runs_before:
                    return True
                fresh = [record for record in await store.pending_records() if record.key not in keys]
                return fresh[0] if fresh else False

            record = await wait_until(asked_or_done, 'the question, or the run to end')
            assert isinstance(record, StoredRequest), f'the run ended without asking anyone: {outputs[-1]}'
            assert record.request.id == 'call_0'
            keys.append(record.key)
            await store.respond(record.key, _pick(record, label))
    assert [json.loads(output) for output in outputs] == [
        {'call_0': {'Database 0': ['SQLite']}},
        {'call_0': {'Database 0': ['PostgreSQL']}},
    ]
    requested = [event.request for event in watch.events if not isinstance(event, AskUserAnsweredEvent)]
    assert [request.key for request in requested] == keys
    assert keys[0] != keys[1]


async def test_the_same_key_asked_again_gets_its_answer_once_and_other_questions_under_it_are_refused(
    launched: str, store: DBOSQuestionStore
) -> None:
    answerer = DBOSAnswerer(launched, recheck_seconds=30)
    options = (QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite'))
    asked = AskUserRequest(
        questions=(Question(header='Database', question='Which?', options=options),), id='call_0', run_id='run-a'
    )
    got: list[AskUserResponse] = []
    async with anyio.create_task_group() as group:

        async def ask() -> None:
            got.append(await answerer(asked))

        group.start_soon(ask)
        record = await _one_pending(store)
        await store.respond(record.key, _pick(record, 'SQLite'))
    # The same question under the same key: asked once, its answer remembered.
    assert await answerer(asked) == got[0]
    # Other questions under that key (the run id given twice, say) are refused, never given that answer, which
    # before they were.
    other = AskUserRequest(
        questions=(Question(header='Delete', question='Drop the production database?', options=options),),
        id='call_0',
        run_id='run-a',
    )
    with pytest.raises(DifferentQuestionsError, match="asks 'Delete', but what is stored under that key asks"):
        await answerer(other)
    assert record.key == asked.key


async def test_a_cancelled_wait_workflow_tells_the_model_the_question_was_withdrawn(
    launched: str, store: DBOSQuestionStore
) -> None:
    # Before, cancelling `DBOSAnswerer`'s own wait workflow failed the run with DBOS's error. A cancel does not wake
    # the wait; its next recheck finds it, so the test rechecks every second instead of every 30.
    watch = Watch()
    agent = Agent(_numbered_model(1), capabilities=[AskUser(answerer=DBOSAnswerer(launched, recheck_seconds=1)), watch])
    outputs: list[str] = []
    async with anyio.create_task_group() as group:

        async def run() -> None:
            outputs.append((await agent.run('migrate')).output)

        group.start_soon(run)
        record = await _one_pending(store)
        await DBOS.cancel_workflow_async(f'ask-user-{record.key}')
    assert json.loads(outputs[0]) == {'call_0': WITHDRAWN}
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert (answered.withdrawn, answered.failed, answered.response.cancelled) == (True, False, True)
    assert (await store.record(record.key)).status == 'withdrawn'


# --- Inside DBOS workflows ---

_answerers: dict[str, DBOSAnswerer] = {}


def _answerer() -> DBOSAnswerer:
    return _answerers['current']


class _Delegating:
    """`DBOSAnswerer` of the database this module launched, chosen when the test runs (the agents are built at import)."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        return await _answerer()(request)

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        return await _answerer().ask_durably(request, timeout=timeout)


_asking_twice = Agent(
    _numbered_model(2), name='identity_two_questions', capabilities=[DBOSDurability(), AskUser(answerer=_Delegating())]
)
_asking_once = Agent(
    _numbered_model(1), name='identity_one_question', capabilities=[DBOSDurability(), AskUser(answerer=_Delegating())]
)


@DBOS.workflow(name='identity_tests.two_questions')
async def _two_questions_workflow() -> str:
    return (await _asking_twice.run('migrate')).output


@DBOS.workflow(name='identity_tests.two_runs')
async def _two_runs_workflow() -> list[str]:
    # Two agent runs in one workflow: each has its own run id, derived from the workflow and its place in it.
    return [(await _asking_once.run('first')).output, (await _asking_once.run('second')).output]


@pytest.fixture
def current_answerer(launched: str) -> Iterator[None]:
    _answerers['current'] = DBOSAnswerer(launched, recheck_seconds=30)
    try:
        yield
    finally:
        _answerers.pop('current').close()


async def _answer_until_done(
    store: DBOSQuestionStore, handles: dict[str, Any], label: Any
) -> tuple[dict[str, Any], list[StoredRequest]]:
    """Answer every question the workflows of `handles` ask, with `label(record)`, until they all finish."""
    answered: list[StoredRequest] = []
    results: dict[str, Any] = {}

    async def collect(name: str, handle: Any) -> None:
        results[name] = await handle.get_result()

    async with anyio.create_task_group() as group:
        for name, handle in handles.items():
            group.start_soon(collect, name, handle)

        async def progress() -> bool:
            for record in await store.pending_records():
                await store.respond(record.key, _pick(record, label(record)))
                answered.append(record)
            return len(results) == len(handles)

        await wait_until(progress, 'the workflows to finish')
    return results, answered


async def test_workflows_whose_models_number_their_calls_from_call_0_each_ask_all_their_own_questions(
    launched: str, store: DBOSQuestionStore, current_answerer: None
) -> None:
    # Before, the second workflow failed at its first question: "request id 'call_0' is already waiting in
    # workflow ...", even once the first workflow's question was answered.
    labels = {'wf-a': 'SQLite', 'wf-b': 'PostgreSQL'}
    handles: dict[str, Any] = {}
    for workflow_id in labels:
        with SetWorkflowID(f'{workflow_id}-{launched[-8:]}'):
            handles[workflow_id] = await DBOS.start_workflow_async(_two_questions_workflow)
    results, answered = await _answer_until_done(store, handles, lambda record: labels[record.workflow_id[:4]])
    assert len(answered) == 4
    assert len({record.key for record in answered}) == 4
    assert sorted(record.request.id for record in answered) == ['call_0', 'call_0', 'call_1', 'call_1']
    for workflow_id, label in labels.items():
        assert json.loads(results[workflow_id]) == {
            'call_0': {'Database 0': [label]},
            'call_1': {'Database 1': [label]},
        }


async def test_two_runs_in_one_workflow_repeating_call_0_are_each_asked(
    launched: str, store: DBOSQuestionStore, current_answerer: None
) -> None:
    # Before, the second run re-attached to the first run's answered row (same call id, same workflow) and its
    # model got the first run's answer without anyone being asked.
    handle = await DBOS.start_workflow_async(_two_runs_workflow)
    labels = iter(['SQLite', 'PostgreSQL'])
    results, answered = await _answer_until_done(store, {'run': handle}, lambda record: next(labels))
    assert [json.loads(output) for output in results['run']] == [
        {'call_0': {'Database 0': ['SQLite']}},
        {'call_0': {'Database 0': ['PostgreSQL']}},
    ]
    assert [record.request.id for record in answered] == ['call_0', 'call_0']
    assert answered[0].request.run_id != answered[1].request.run_id
