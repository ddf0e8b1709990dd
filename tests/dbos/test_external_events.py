"""`RequestInput` in a DBOS run: a tool approval and an AskUser answer, waited for durably, resolved from elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import waits
from cli_support import run_cli_in_process
from durable_support import WAIT_SECONDS, RequestInputWorker, pending_of, pick
from pydantic_ai import DeferredToolResults
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ToolCallPart
from waits import wait_for

from pydantic_ai_ask_user import TIMED_OUT, TOOL_NAME, AskUserAnswer, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.dbos import (
    DBOSQuestionStore,
    InvalidDecisionError,
    NoWaitError,
    fail_dbos_event,
    resolve_dbos_event,
)
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.receipts import os_user_at_host
from pydantic_ai_ask_user.store import WithdrawnError

pytestmark = pytest.mark.anyio


async def test_an_approval_and_a_question_survive_kill_9_and_are_resolved_from_another_process(
    request_input_worker: RequestInputWorker, database_url: str, tmp_path: Path
) -> None:
    worker = request_input_worker
    token_file = tmp_path / 'token.json'
    worker.start()
    first = await worker.pending_calls()
    worker.kill()
    assert first['approvals'] == ['deploy-1']
    (question,) = first['calls']
    assert question['kind'] == 'question'

    token_file.unlink()
    worker.start(resume=True)
    # The recovered run waits on the token it recorded: `ask` is not called again, no second token.
    request = AskUserRequest.from_tool_call(ToolCallPart(TOOL_NAME, question['args'], tool_call_id=question['id']))
    answer = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
    results = DeferredToolResults(approvals={'deploy-1': True}, calls={request.id: ask_user_result(request, answer)})
    await anyio.to_thread.run_sync(lambda: resolve_dbos_event(first['token'], results, database_url=database_url))
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    # `ask` ran once; if the kill landed between it and DBOS recording it, it ran again with the same token.
    assert not token_file.exists() or json.loads(token_file.read_text())['token'] == first['token']
    assert worker.output() == {
        'ask_user_question': {'Database': ['SQLite']},
        'deploy': 'deployed',
    }
    assert worker.lines('deployed.txt') == ['deployed']
    assert worker.lines('calls.txt') == ['ask', 'final']
    # The run is over: its token resolves nothing any more.
    with pytest.raises(UserError, match='No wait has this token'):
        await anyio.to_thread.run_sync(lambda: fail_dbos_event(first['token'], 'too late', database_url=database_url))


def _cli_process(*args: str, stdin: str = '') -> subprocess.CompletedProcess[str]:
    """`ask-user ARGS` as the program, in a process of its own."""
    command = [sys.executable, '-m', 'pydantic_ai_ask_user._cli', *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=WAIT_SECONDS)


def _cli(*args: str, stdin: str = '') -> subprocess.CompletedProcess[str]:
    """`ask-user ARGS` run in this process: what it prints and its exit code are the command's, without the ~2 s
    of CPU a new process spends importing Pydantic AI. The tests of the command as a program (`--fail`, a token's
    beginning, `answer` after a kill -9) run it in a process of its own (`_cli_process`).
    """
    code, out, err = run_cli_in_process(list(args), stdin)
    return subprocess.CompletedProcess(['ask-user', *args], code, out, err)


async def test_a_failed_event_denies_the_approval_and_tells_the_model(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.start()
    token = (await worker.pending_calls())['token']
    failed = await anyio.to_thread.run_sync(
        lambda: _cli_process('resolve', token, '--db', database_url, '--fail', 'nobody is on call')
    )
    assert failed.returncode == 0, failed.stderr
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    output = worker.output()
    assert 'nobody is on call' in output['deploy']
    assert 'nobody is on call' in json.dumps(output['ask_user_question'])
    assert worker.lines('deployed.txt') == []


async def test_ask_user_resolve_takes_the_beginning_of_a_token_as_git_takes_a_commit_id(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.start()
    token = (await worker.pending_calls())['token']
    too_short = await anyio.to_thread.run_sync(
        lambda: _cli_process('resolve', token[:3], '--db', database_url, '--fail', 'x')
    )
    assert too_short.returncode == 2  # not a token, and too short to be the beginning of one
    assert worker.running()
    done = await anyio.to_thread.run_sync(
        lambda: _cli_process('resolve', token[:12], '--db', database_url, '--fail', 'nobody is on call')
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"resolved":"' + token + '"}\n'  # the whole token it resolved, compact as all JSON
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert 'nobody is on call' in worker.output()['deploy']


async def test_ask_user_resolve_checks_the_decision_before_it_reaches_the_run(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.start()
    pending = await worker.pending_calls()
    token, question_id = pending['token'], pending['calls'][0]['id']
    bad = await anyio.to_thread.run_sync(
        lambda: _cli('resolve', token, '--db', database_url, '--json', '-', stdin='{"approvals": 3}')
    )
    assert bad.returncode == 2
    assert 'not a DeferredToolResults' in bad.stderr
    assert worker.running()  # the run still waits
    decision = {'approvals': {'deploy-1': False}, 'calls': {question_id: {'Database': ['PostgreSQL']}}}
    for answered_by, problem in [
        ({question_id: 'root\x1b]0;pwned\x07'}, f"answered_by of call '{question_id}'"),
        ({'not-a-call': 'mallory'}, "answered_by names call 'not-a-call', which this decision does not decide"),
    ]:
        claimed = json.dumps({**decision, 'answered_by': answered_by})
        refused = await anyio.to_thread.run_sync(
            lambda claimed=claimed: _cli('resolve', token, '--db', database_url, '--json', '-', stdin=claimed)
        )
        assert refused.returncode == 2, refused.stderr
        assert f'invalid answer: {problem}' in refused.stderr
        assert '\x1b' not in refused.stderr
    assert worker.running()  # the run still waits
    good = await anyio.to_thread.run_sync(
        lambda: _cli('resolve', token, '--db', database_url, '--json', '-', stdin=json.dumps(decision))
    )
    assert good.returncode == 0, good.stderr
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    output = worker.output()
    assert output['ask_user_question'] == {'Database': ['PostgreSQL']}
    assert worker.lines('deployed.txt') == []
    again = await anyio.to_thread.run_sync(lambda: _cli('resolve', token, '--db', database_url, '--fail', 'late'))
    assert again.returncode == 7
    assert 'no wait has this token' in again.stderr
    not_a_token = await anyio.to_thread.run_sync(lambda: _cli('resolve', 'abc', '--db', database_url, '--fail', 'x'))
    assert not_a_token.returncode == 2


def test_a_token_that_is_not_ours_is_refused_with_a_clear_error() -> None:
    with pytest.raises(UserError, match='not a DBOSEventWaiter token'):
        resolve_dbos_event('abc', {'approvals': {}}, database_url='sqlite:///unused.sqlite')


# --- AskUser questions of a RequestInput wait, answered in the inbox or with `ask-user answer` ---


async def test_questions_of_a_request_input_wait_are_answered_through_the_store_and_the_cli_across_kill_9(
    request_input_worker: RequestInputWorker, database_url: str, tmp_path: Path
) -> None:
    worker = request_input_worker
    worker.inbox = True
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        records = await pending_of(store, 2, worker)
        assert sorted(record.request.id for record in records) == ['q-1', 'q-2']
        assert {record.workflow_id for record in records} == {'ri-0'}
        # Each is stored and answered under its key (its run and its call), not under the bare call id.
        key = {record.request.id: record.key for record in records}
        assert len(set(key.values())) == 2
        assert not set(key.values()) & {'q-1', 'q-2'}
        await store.respond(key['q-1'], pick('SQLite'))
        worker.kill()
        worker.start(resume=True)
        # One question answered is not a decision yet: the recovered run still waits for the other.
        assert [record.request.id for record in await store.pending_records()] == ['q-2']
    answer = tmp_path / 'cache.json'
    answer.write_text(json.dumps({'Cache': ['postgresql']}))  # a label, whatever its case
    done = await anyio.to_thread.run_sync(
        lambda: _cli_process('answer', '--db', database_url, key['q-2'], '--json', str(answer))
    )
    assert done.returncode == 0, done.stderr
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output() == {
        'q-1': {'Database': ['SQLite']},
        'q-2': {'Cache': ['PostgreSQL']},
    }
    assert worker.lines('calls.txt') == ['ask', 'final']
    # Who answered reaches the run: the store's caller named nobody for q-1, `ask-user answer` the OS user for q-2.
    assert set(worker.lines('answered_by.txt')) == {json.dumps({'q-2': os_user_at_host()})}


async def test_at_the_deadline_open_questions_are_withdrawn_and_the_answers_given_in_time_are_used(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.inbox, worker.timeout = True, 8.0
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        key = {record.request.id: record.key for record in await pending_of(store, 2, worker)}
        await store.respond(key['q-1'], pick('PostgreSQL'))
        await anyio.to_thread.run_sync(worker.wait_succeeded)
        cache = AskUserResponse(answers=(AskUserAnswer(header='Cache', selected=('SQLite',)),))
        with pytest.raises(WithdrawnError):
            await store.respond(key['q-2'], cache)
        assert await store.pending() == []
    assert worker.output() == {'q-1': {'Database': ['PostgreSQL']}, 'q-2': TIMED_OUT}


async def test_a_worker_killed_after_ask_published_before_dbos_recorded_it_waits_on_the_same_token(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.inbox = worker.crash_after_ask = True
    worker.start()
    await anyio.to_thread.run_sync(worker.wait_crashed)
    worker.crash_after_ask = False
    worker.start(resume=True)
    await anyio.to_thread.run_sync(lambda: wait_for(lambda: len(worker.lines('tokens.txt')) == 2, 'ask to run again'))
    first, second = worker.lines('tokens.txt')
    assert first == second  # the retried ask got the token it published under
    async with DBOSQuestionStore(database_url) as store:
        key = {record.request.id: record.key for record in await pending_of(store, 2, worker)}
        await store.respond(key['q-1'], pick('SQLite'))
        cache = AskUserResponse(answers=(AskUserAnswer(header='Cache', selected=('PostgreSQL',)),))
        await store.respond(key['q-2'], cache)
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output() == {
        'q-1': {'Database': ['SQLite']},
        'q-2': {'Cache': ['PostgreSQL']},
    }


async def test_a_resolution_after_the_deadline_or_a_second_or_a_forged_one_is_refused_not_reported_as_taken(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.timeout = waits.scaled(5.0)
    worker.start()
    token = (await worker.pending_calls())['token']
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    output = worker.output()
    assert 'No decision on this tool call arrived' in output['deploy']
    assert worker.lines('deployed.txt') == []
    late = await anyio.to_thread.run_sync(lambda: _cli('resolve', token, '--db', database_url, '--fail', 'late'))
    assert late.returncode == 7, late.stderr
    forged = token.replace(token[len('dbos1.') : len('dbos1.') + 4], 'AAAA', 1)
    with pytest.raises(NoWaitError):
        await anyio.to_thread.run_sync(
            lambda: resolve_dbos_event(forged, {'approvals': {'deploy-1': True}}, database_url=database_url)
        )


async def test_ask_user_resolve_checks_answers_to_questions_of_the_table_and_matches_their_labels(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.inbox = True
    worker.start()
    async with DBOSQuestionStore(database_url) as store:
        await pending_of(store, 2, worker)
    # The worker writes the token once `ask` has published the questions: after they are pending, not with them.
    [token] = await anyio.to_thread.run_sync(lambda: wait_for(lambda: worker.lines('tokens.txt'), 'the token'))
    resolve = ('resolve', token, '--db', database_url, '--json', '-')
    misfit = {'calls': {'q-1': {'Database': ['Oracle']}, 'q-2': {'Cache': ['SQLite']}}}
    bad = await anyio.to_thread.run_sync(lambda: _cli(*resolve, stdin=json.dumps(misfit)))
    assert bad.returncode == 2
    assert "call 'q-1'" in bad.stderr
    assert "not one of its options ('PostgreSQL', 'SQLite')" in bad.stderr
    assert worker.running()  # nothing reached the run
    folded = {'calls': {'q-1': {'Database': ['sqlite']}, 'q-2': {'Cache': {'custom': 'Redis'}}}}
    good = await anyio.to_thread.run_sync(lambda: _cli(*resolve, stdin=json.dumps(folded)))
    assert good.returncode == 0, good.stderr
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output() == {'q-1': {'Database': ['SQLite']}, 'q-2': {'Cache': ['Redis']}}


async def _refused_then_resolved(
    worker: RequestInputWorker, refusals: list[tuple[dict[str, object], list[str]]], decision_of: object
) -> dict[str, object]:
    """Send each refused decision (checking the exit code and that stderr says each expected thing), then the
    good one; return what the run's model got. `decision_of(question_id)` makes the good decision."""
    worker.start()
    pending = await worker.pending_calls()
    token, question_id = pending['token'], pending['calls'][0]['id']
    resolve = ('resolve', token, '--db', worker.database_url, '--json', '-')
    for decision, expected in refusals:
        text = json.dumps(decision).replace('QUESTION', question_id)
        refused = await anyio.to_thread.run_sync(lambda text=text: _cli(*resolve, stdin=text))
        assert refused.returncode == 2, (decision, refused.stderr)
        for said in expected:
            assert said.replace('QUESTION', question_id) in refused.stderr, refused.stderr
        assert '\x1b' not in refused.stderr
        assert worker.running()  # nothing reached the run: it still waits
    good = json.dumps(decision_of(question_id))  # type: ignore[operator]
    resolved = await anyio.to_thread.run_sync(lambda: _cli(*resolve, stdin=good))
    # Exit 0, not 7: none of the refused decisions claimed the wait.
    assert resolved.returncode == 0, resolved.stderr
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    return worker.output()


ALL_PENDING = 'the decision must decide every pending call and nothing else: '


async def test_ask_user_resolve_refuses_a_decision_that_does_not_decide_exactly_the_pending_calls(
    request_input_worker: RequestInputWorker,
) -> None:
    answer = {'Database': ['SQLite']}
    refusals: list[tuple[dict[str, object], list[str]]] = [
        # A call left out: the run would go on without its result, and fail.
        ({'approvals': {'deploy-1': True}}, [ALL_PENDING + "it leaves out 'QUESTION', which the run waits for"]),
        # A call that is not pending (here, hostile): the run would refuse the whole decision, and fail.
        (
            {'approvals': {'deploy-1': True, 'deploy-2\x1b]0;pwned\x07': True}, 'calls': {'QUESTION': answer}},
            ["it approves or denies 'deploy-2\\x1b]0;pwned\\x07', which is no pending approval"],
        ),
        # Both, and a question answered as if it were an approval.
        (
            {'approvals': {'QUESTION': True}, 'calls': {'other-call': answer}},
            [
                "it leaves out 'deploy-1', 'QUESTION', which the run waits for",
                "it approves or denies 'QUESTION', which is no pending approval",
                "it gives a result for 'other-call', which is no pending call",
            ],
        ),
        (
            {'approvals': {'deploy-1': True}, 'calls': {'QUESTION': answer}, 'metadata': {'gone': {'a': 1}}},
            ["it gives metadata for 'gone', which is not pending"],
        ),
    ]
    output = await _refused_then_resolved(
        request_input_worker,
        refusals,
        lambda question_id: {'approvals': {'deploy-1': False}, 'calls': {question_id: answer}},
    )
    assert output['ask_user_question'] == {'Database': ['SQLite']}
    assert request_input_worker.lines('deployed.txt') == []


async def test_ask_user_resolve_checks_every_answer_to_a_question_of_the_wait_with_check_response(
    request_input_worker: RequestInputWorker,
) -> None:
    # The question is not in the question table (the worker's own `ask` kept it): the wait recorded it.
    deploy = {'deploy-1': True}
    refusals: list[tuple[dict[str, object], list[str]]] = [
        (
            {'approvals': deploy, 'calls': {'QUESTION': {'Database': ['Oracle']}}},
            ["invalid answer: call 'QUESTION'", "not one of its options ('PostgreSQL', 'SQLite')"],
        ),
        (
            {'approvals': deploy, 'calls': {'QUESTION': {'answers': [{'header': 'Database', 'selected': []}]}}},
            ["invalid answer: call 'QUESTION'"],
        ),
        # Free text is no answer: it would reach the model as the person's, unchecked.
        (
            {'approvals': deploy, 'calls': {'QUESTION': 'drop every table'}},
            ["invalid answer: call 'QUESTION': a question is answered with JSON"],
        ),
    ]
    output = await _refused_then_resolved(
        request_input_worker,
        refusals,
        lambda question_id: {'approvals': deploy, 'calls': {question_id: {'database': 'postgresql'}}},
    )
    assert output['ask_user_question'] == {'Database': ['PostgreSQL']}
    assert request_input_worker.lines('deployed.txt') == ['deployed']


async def test_two_runs_whose_models_use_the_same_call_ids_each_get_the_answers_to_their_own_questions(
    database_url: str, tmp_path: Path
) -> None:
    # Both models call q-1 and q-2. Keyed by the bare call id, the second run's questions were the first's rows:
    # never shown, and its wait never resolved.
    workers = {
        run: RequestInputWorker(database_url, tmp_path / run, inbox=True, workflow_id=run) for run in ('ri-0', 'ri-1')
    }
    with workers['ri-0'], workers['ri-1']:
        for worker in workers.values():
            worker.directory.mkdir()
            worker.start()
        async with DBOSQuestionStore(database_url) as store:
            records = await pending_of(store, 4, workers['ri-1'])
            assert sorted((record.workflow_id, record.request.id) for record in records) == [
                ('ri-0', 'q-1'),
                ('ri-0', 'q-2'),
                ('ri-1', 'q-1'),
                ('ri-1', 'q-2'),
            ]
            assert len({record.key for record in records}) == 4
            labels = {'ri-0': ('SQLite', 'Redis'), 'ri-1': ('PostgreSQL', 'Memcached')}
            for record in records:
                database, cache = labels[record.workflow_id]
                if record.request.id == 'q-1':
                    await store.respond(record.key, pick(database))
                else:
                    custom = AskUserAnswer(header='Cache', custom_answer=cache)
                    await store.respond(record.key, AskUserResponse(answers=(custom,)))
        for worker in workers.values():
            await anyio.to_thread.run_sync(worker.wait_succeeded)
    for run, (database, cache) in labels.items():
        assert workers[run].output() == {
            'q-1': {'Database': [database]},
            'q-2': {'Cache': [cache]},
        }


async def test_resolve_dbos_event_checks_the_decision_as_ask_user_resolve_does_and_sends_nothing_that_does_not_fit(
    request_input_worker: RequestInputWorker, database_url: str
) -> None:
    worker = request_input_worker
    worker.start()
    pending = await worker.pending_calls()
    token, question_id = pending['token'], pending['calls'][0]['id']
    refusals = [
        (DeferredToolResults(approvals={'deploy-1': True}), f"it leaves out '{question_id}', which the run waits for"),
        (
            {'approvals': {'deploy-1': True}, 'calls': {question_id: {'Database': ['Oracle']}}},
            f"call '{question_id}': ",
        ),
        ({'approvals': {'deploy-1': True}, 'calls': {question_id: 'free text'}}, 'not with text of your own'),
        ({'approvals': 'yes'}, 'not a DeferredToolResults'),
    ]
    for payload, said in refusals:
        with pytest.raises(InvalidDecisionError) as refused:
            await anyio.to_thread.run_sync(
                lambda payload=payload: resolve_dbos_event(token, payload, database_url=database_url)
            )
        assert said in str(refused.value)
        assert worker.running()  # nothing reached the run: it still waits
    decision = DeferredToolResults(approvals={'deploy-1': False}, calls={question_id: {'Database': ['sqlite']}})
    await anyio.to_thread.run_sync(lambda: resolve_dbos_event(token, decision, database_url=database_url))
    await anyio.to_thread.run_sync(worker.wait_succeeded)
    assert worker.output()['ask_user_question'] == {'Database': ['SQLite']}  # labels matched, as the command does
