"""A library call and the `ask-user` command that mean the same thing do the same thing, on the same database.

Each test makes two identical SQLite files as a DBOS worker leaves them, does one thing through the library on one and
through the command on the other, and compares what each recorded, sent or refused. The rules (what an id means, how
an answer or a decision is read and checked) live in the library; the command only parses and prints.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from cli_support import run_cli_in_process

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._answer_json import parse_answer_json
from pydantic_ai_ask_user._decision import read_decision
from pydantic_ai_ask_user.dbos import (
    DBOSQuestionStore,
    NotAnEventTokenError,
    NoWaitError,
    resolve_dbos_event,
)
from pydantic_ai_ask_user.dbos._engine import transaction
from pydantic_ai_ask_user.dbos._questions import insert_pending
from pydantic_ai_ask_user.dbos._waits import open_wait_row
from pydantic_ai_ask_user.store import MIN_PREFIX, UnknownRequestError, find_waiting, read_wait_decision

pytestmark = pytest.mark.anyio


async def ask_user(*argv: str, stdin: str = '') -> tuple[int, str, str]:
    """`ask-user ARGV` in this process, in a thread of its own: the command runs its own event loop."""
    return await anyio.to_thread.run_sync(lambda: run_cli_in_process(list(argv), stdin))


WAIT_TOKEN = 'dbos1.wf-wait.abc'
"""An open wait of workflow `wf-wait`, as `DBOSEventWaiter` hands one out."""


def _request(header: str, call_id: str) -> AskUserRequest:
    arguments = {
        'questions': [{'header': header, 'question': f'{header}?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]
    }
    return AskUserRequest.from_tool_args(arguments, id=call_id, run_id=f'run-{call_id}')


QUESTIONS = [_request('Go', 'call_0'), _request('Stop', 'call_1'), _request('Wait', 'call_2')]
"""Three questions of three runs, all waiting; two models that repeat `call_0` would make the same ids."""


def _database(path: Path) -> str:
    """A SQLite file as a worker leaves it: DBOS's tables (the columns a message touches), the questions waiting, one
    open wait."""
    with sqlite3.connect(path) as conn:
        conn.execute('CREATE TABLE workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)')
        conn.execute(
            'CREATE TABLE notifications (message_uuid TEXT PRIMARY KEY, destination_uuid TEXT NOT NULL, topic TEXT, '
            'message TEXT NOT NULL, serialization TEXT)'
        )
        workflows = [f'wf-{request.id}' for request in QUESTIONS] + ['wf-wait']
        conn.executemany("INSERT INTO workflow_status VALUES (?, 'PENDING')", [(w,) for w in workflows])
    url = f'sqlite:///{path}'
    with transaction(url) as conn:
        for request in QUESTIONS:
            insert_pending(conn, request, f'wf-{request.id}')
        open_wait_row(conn, WAIT_TOKEN, 'wf-wait')
    return url


@pytest.fixture
def twins(tmp_path: Path) -> tuple[str, str]:
    """Two identical databases: one for the library, one for the command."""
    return _database(tmp_path / 'library.sqlite'), _database(tmp_path / 'command.sqlite')


def _messages(url: str) -> list[tuple[str, object]]:
    """The DBOS messages sent: each one's topic and what it says, without who sent it. A wait's decision is compared
    as the run reads it (a `DeferredToolResults`), whichever of its JSON spellings was sent."""
    with closing(sqlite3.connect(url.removeprefix('sqlite:///'))) as conn:
        rows = conn.execute('SELECT topic, message FROM notifications ORDER BY topic').fetchall()
    found: list[tuple[str, object]] = []
    for topic, message in rows:
        value = json.loads(message)
        while isinstance(value, str):  # the message as DBOS serialises it, around our JSON
            value = json.loads(value)
        if isinstance(value, dict) and isinstance(payload := value.get('payload'), dict):
            decision = read_decision(json.dumps(payload))
            value = {'payload': (decision.approvals, decision.calls, decision.metadata)}
        found.append((topic, _without_who(value)))
    return found


def _without_who(value: object) -> object:
    """`value` without `answered_by` anywhere: the command names the OS user, a library caller names whom it likes."""
    if isinstance(value, dict):
        return {key: _without_who(item) for key, item in value.items() if key != 'answered_by'}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_without_who(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


async def _state(url: str) -> list[tuple[str, str, tuple[tuple[str, tuple[str, ...]], ...]]]:
    """Each question's key, status and the answers recorded (header and labels)."""
    store = DBOSQuestionStore(url, create_table=False)
    try:
        found: list[tuple[str, str, tuple[tuple[str, tuple[str, ...]], ...]]] = []
        for request in QUESTIONS:
            record = await store.record(request.key)
            answers = () if record.response is None else tuple((a.header, a.selected) for a in record.response.answers)
            found.append((request.key, record.status, answers))
        return found
    finally:
        store.close()


async def test_pending_lists_what_the_store_pages(twins: tuple[str, str]) -> None:
    _, command = twins  # a listing changes nothing: both read one database, so the cursors (times) agree too
    store = DBOSQuestionStore(command, create_table=False)
    try:
        page = await store.pending_page(limit=2)
    finally:
        store.close()
    code, out, err = await ask_user('pending', '--json', '--limit', '2', '--db', command)
    assert code == 0, err
    *records, trailer = [json.loads(line) for line in out.splitlines()]
    assert [record['id'] for record in records] == [record.request.key for record in page.records]
    assert (trailer['total'], trailer.get('next_cursor')) == (page.total, page.next_cursor)
    assert page.next_cursor is not None


async def test_history_lists_what_the_store_pages_as_history(twins: tuple[str, str]) -> None:
    _, command = twins
    store = DBOSQuestionStore(command, create_table=False)
    try:
        for request in QUESTIONS[:2]:
            await store.respond(request.key, AskUserResponse(cancelled=True, answered_by='ann'))
        page = await store.history_page(limit=1)
    finally:
        store.close()
    code, out, err = await ask_user('history', '--json', '--limit', '1', '--db', command)
    assert code == 0, err
    *records, trailer = [json.loads(line) for line in out.splitlines()]
    assert [(record['id'], record['outcome'], record['by']) for record in records] == [
        (record.key, record.outcome, record.by) for record in page.records
    ]
    assert (trailer['total'], trailer.get('next_cursor')) == (page.total, page.next_cursor) == (2, page.next_cursor)
    assert page.next_cursor is not None


async def test_answer_by_a_unique_beginning_records_what_the_library_lookup_and_respond_record(
    twins: tuple[str, str],
) -> None:
    library, command = twins
    target = QUESTIONS[1]
    prefix = next(
        target.key[:length]
        for length in range(MIN_PREFIX, len(target.key))
        if not any(other.key.startswith(target.key[:length]) for other in QUESTIONS if other is not target)
    )
    store = DBOSQuestionStore(library, create_table=False)
    try:
        found = await find_waiting(store, prefix)
        assert [request.key for request in found.questions] == [target.key]
        (request,) = found.questions
        await store.respond(request.key, parse_answer_json(request, {'Stop': ['Yes']}))
    finally:
        store.close()
    code, out, err = await ask_user('answer', prefix, '--json', '-', '--db', command, stdin='{"Stop": ["Yes"]}')
    assert (code, json.loads(out)) == (0, {'Stop': ['Yes']}), err
    assert await _state(library) == await _state(command)
    assert _messages(library) == _messages(command) != []


async def test_a_beginning_shorter_than_the_minimum_or_of_several_ids_is_refused_by_both(
    twins: tuple[str, str],
) -> None:
    library, command = twins
    store = DBOSQuestionStore(library, create_table=False)
    try:
        assert len(await find_waiting(store, QUESTIONS[0].key[: MIN_PREFIX - 1])) == 0
        everyone = await find_waiting(store, '')
        assert len(everyone) == 0  # too short: nobody
    finally:
        store.close()
    short = QUESTIONS[0].key[: MIN_PREFIX - 1]
    code, _, err = await ask_user('answer', short, '--json', '-', '--db', command, stdin='{}')
    assert code == UnknownRequestError.exit_code, err
    assert await _state(library) == await _state(command)


async def test_an_answer_that_does_not_fit_is_refused_by_both_and_nothing_is_recorded(twins: tuple[str, str]) -> None:
    library, command = twins
    target = QUESTIONS[0]
    store = DBOSQuestionStore(library, create_table=False)
    try:
        request = await store.get(target.key)
        with pytest.raises(ValueError, match='Maybe'):
            await store.respond(request.key, parse_answer_json(request, {'Go': ['Maybe']}))
        with pytest.raises(ValueError, match='Go'):
            await store.respond(request.key, AskUserResponse(answers=()))
    finally:
        store.close()
    code, _, err = await ask_user('answer', target.key, '--json', '-', '--db', command, stdin='{"Go": ["Maybe"]}')
    assert code == 2, err
    assert 'Maybe' in err
    assert await _state(library) == await _state(command)
    assert [status for _, status, _ in await _state(command)] == ['pending', 'pending', 'pending']


async def test_resolve_sends_what_resolve_dbos_event_sends_and_refuses_what_it_refuses(twins: tuple[str, str]) -> None:
    library, command = twins
    decision = {'approvals': {'deploy': True}}
    resolve_dbos_event(WAIT_TOKEN, decision, database_url=library)
    code, out, err = await ask_user('resolve', WAIT_TOKEN, '--json', '-', '--db', command, stdin=json.dumps(decision))
    assert (code, json.loads(out)) == (0, {'resolved': WAIT_TOKEN}), err
    assert _messages(library) == _messages(command) != []
    # Resolved once: a second resolution is refused by both, and nothing more is sent.
    with pytest.raises(NoWaitError):
        resolve_dbos_event(WAIT_TOKEN, decision, database_url=library)
    code, _, err = await ask_user('resolve', WAIT_TOKEN, '--json', '-', '--db', command, stdin=json.dumps(decision))
    assert code == 7, err
    # Not a token at all: refused by both.
    with pytest.raises(NotAnEventTokenError):
        resolve_dbos_event('no-token', decision, database_url=library)
    code, _, err = await ask_user('resolve', 'no-token', '--json', '-', '--db', command, stdin=json.dumps(decision))
    assert code == 2, err
    assert _messages(library) == _messages(command)


def test_a_whole_wait_decision_is_read_by_the_library_as_the_command_reads_it() -> None:
    # `ask-user answer TOKEN --json` reads its file with `read_wait_decision`: every item, or a ValueError naming one.
    first, second = QUESTIONS[0], QUESTIONS[1]
    decisions, answers = read_wait_decision(
        {first.id: {'Go': ['Yes']}, second.key: {'Stop': ['No']}}, [], [first, second], decided_by='alice@host'
    )
    assert decisions == {}
    assert {key: response.answers[0].selected for key, response in answers.items()} == {
        first.key: ('Yes',),
        second.key: ('No',),
    }
    assert {response.answered_by for response in answers.values()} == {'alice@host'}
    with pytest.raises(ValueError, match="leaves out 'call_1'"):
        read_wait_decision({first.id: {'Go': ['Yes']}}, [], [first, second], decided_by='alice@host')
    with pytest.raises(ValueError, match="'nobody': no pending item"):
        read_wait_decision({'nobody': 'approve'}, [], [first], decided_by='alice@host')


async def test_the_tool_call_id_of_one_waiting_question_means_it_for_both(twins: tuple[str, str]) -> None:
    library, command = twins
    target = QUESTIONS[2]
    store = DBOSQuestionStore(library, create_table=False)
    try:
        found = await find_waiting(store, target.id)
        assert [request.key for request in found.questions] == [target.key]
        await store.respond(target.key, parse_answer_json(target, {'Wait': ['No']}))
    finally:
        store.close()
    code, out, err = await ask_user('answer', target.id, '--json', '-', '--db', command, stdin='{"Wait": ["No"]}')
    assert (code, json.loads(out)) == (0, {'Wait': ['No']}), err
    assert await _state(library) == await _state(command)
