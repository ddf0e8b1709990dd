"""The durable SQL, one named function each, against a real SQLite file through each of its two ways (SQLAlchemy, as
the DBOS side runs it, and the standard library's `sqlite3`, as `DBOSQuestionStore` and `ask-user` do): the same
text, the same rows; and the one encoding of each shape."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from ask_user_support import make_request

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, Person, QuestionContext, QuestionWithdrawn
from pydantic_ai_ask_user.dbos._db import open_database
from pydantic_ai_ask_user.dbos._encoding import (
    WITHDRAWN_MESSAGE,
    answer_message,
    decode_message,
    decode_request,
    encode_request,
    encode_response,
)
from pydantic_ai_ask_user.dbos._engine import shared_engine, transaction
from pydantic_ai_ask_user.dbos._questions import (
    changes_since,
    claim_answer,
    count_pending_rows,
    insert_pending,
    publication,
    request_status,
    select_pending_page,
    select_requests,
    status_and_response,
    withdraw_pending,
)
from pydantic_ai_ask_user.dbos._sqlite import SqliteDatabase
from pydantic_ai_ask_user.dbos._waits import (
    claim_wait,
    expire_wait,
    insert_event_request,
    open_wait_row,
    token_requests,
)
from pydantic_ai_ask_user.json import response_to_json
from pydantic_ai_ask_user.store import PendingFilter

ANSWER = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f'sqlite:///{tmp_path / "questions.sqlite"}'


Begin = Callable[[], AbstractContextManager[Any]]
"""A transaction on the test's database, through one of the two ways."""


@pytest.fixture(params=['sqlalchemy', 'sqlite3'])
def begin(request: pytest.FixtureRequest, url: str) -> Begin:
    """Transactions through SQLAlchemy (`transaction`), or through `sqlite3` (`SqliteDatabase.begin`), on the same file,
    its tables created by SQLAlchemy as a worker creates them.
    """
    shared_engine(url)
    if request.param == 'sqlalchemy':
        return lambda: transaction(url)
    database = open_database(url)
    assert isinstance(database, SqliteDatabase)
    return database.begin


@pytest.mark.parametrize(
    'response',
    [
        pytest.param(ANSWER, id='selected'),
        pytest.param(AskUserResponse(answers=(AskUserAnswer(header='Database', custom_answer='Ça\nva'),)), id='custom'),
        pytest.param(AskUserResponse(cancelled=True), id='declined'),
    ],
)
def test_a_response_is_encoded_once_and_its_message_carries_that_encoding(response: AskUserResponse) -> None:
    encoded = encode_response(response)
    message = answer_message(encoded)
    assert json.loads(message) == {'response': response_to_json(response)}
    assert encoded in message  # written around, not encoded again
    assert decode_message(message) == response


def test_the_withdrawal_message_reads_as_withdrawn_never_as_declined() -> None:
    # It used to read as `AskUserResponse(cancelled=True)`, which the model was told was the person's decline.
    with pytest.raises(QuestionWithdrawn):
        decode_message(WITHDRAWN_MESSAGE)


def test_a_request_round_trips_through_its_encoding() -> None:
    request = make_request('Database', 'Région', id='call-7')
    assert decode_request(encode_request(request), 'call-7') == request


def test_one_engine_per_url_with_its_tables(url: str) -> None:
    assert shared_engine(url) is shared_engine(url)
    with transaction(url) as conn:
        assert select_requests(conn) == []


def test_a_request_is_claimed_once_and_reads_back_in_every_shape(begin: Begin) -> None:
    request = make_request(id='r1')
    with begin() as conn:
        insert_pending(conn, request, 'wf-1')
        insert_pending(conn, make_request('Other', id='r1'), 'wf-2')  # a replay keeps the first row
        workflow_id, status, created_at, questions = publication(conn, 'r1')
        assert questions == encode_request(request)
        assert (workflow_id, status) == ('wf-1', 'pending')
        assert claim_answer(conn, 'r1', encode_response(ANSWER))
        assert not claim_answer(conn, 'r1', encode_response(AskUserResponse(cancelled=True)))
        assert status_and_response(conn, 'r1') == ('answered', encode_response(ANSWER))
        assert request_status(conn, 'r1') == 'answered'
        assert request_status(conn, 'nobody') is None
        assert changes_since(conn, created_at - 1) == [('r1', 'answered', created_at)]
        assert changes_since(conn, created_at + 3600) == []
        [stored] = select_requests(conn, request_id='r1')
    assert (stored.request, stored.response, stored.status, stored.workflow_id) == (request, ANSWER, 'answered', 'wf-1')


def test_withdrawing_touches_only_pending_requests(begin: Begin) -> None:
    with begin() as conn:
        for request_id in ('a', 'b', 'c'):
            insert_pending(conn, make_request(id=request_id), 'wf')
        claim_answer(conn, 'b', encode_response(ANSWER))
        assert withdraw_pending(conn, ['a', 'b', 'missing']) == 1
        assert withdraw_pending(conn, ['a']) == 0
        assert [stored.status for stored in select_requests(conn, request_ids=['a', 'b', 'c'])] == [
            'withdrawn',
            'answered',
            'pending',
        ]


def test_a_wait_is_claimed_or_expired_once_and_its_questions_withdrawn_by_token(begin: Begin) -> None:
    with begin() as conn:
        for request_id in ('q1', 'q2'):
            insert_pending(conn, make_request(id=request_id), 'wf')
            insert_event_request(conn, request_id, 'tok')
        open_wait_row(conn, 'tok', 'wf')
        open_wait_row(conn, 'tok', 'wf')  # idempotent
        claim_answer(conn, 'q1', encode_response(ANSWER))
        assert expire_wait(conn, 'tok')
        assert not claim_wait(conn, 'tok')
        assert withdraw_pending(conn, token='tok') == 1
        assert {stored.request.id: stored.status for stored in token_requests(conn, 'tok')} == {
            'q1': 'answered',
            'q2': 'withdrawn',
        }
        open_wait_row(conn, 'other', 'wf')
        assert claim_wait(conn, 'other')
        assert not expire_wait(conn, 'other')


def test_a_request_decoded_before_is_not_decoded_again(begin: Begin) -> None:
    with begin() as conn:
        insert_pending(conn, make_request(id='seen'), 'wf')
        insert_pending(conn, make_request('Other', id='new'), 'wf')
        earlier = make_request(id='seen')
        decoded = {'seen': earlier}
        stored = {item.request.id: item.request for item in select_requests(conn, decoded=decoded)}
    assert stored['seen'] is earlier
    assert decoded == {'seen': earlier, 'new': stored['new']}
    assert stored['new'] == make_request('Other', id='new')


def test_a_request_of_a_run_is_stored_under_its_key_and_reads_back_with_its_tool_call_and_run(begin: Begin) -> None:
    first, second = (replace(make_request(id='call_0'), run_id=run) for run in ('run-1', 'run-2'))
    with begin() as conn:
        insert_pending(conn, first, 'wf-1')
        insert_pending(conn, second, 'wf-2')  # the same tool call id in another run: another question
        insert_pending(conn, make_request(id='call_0'), 'wf-3')  # and a request of no run, keyed by its id
        stored = {item.key: item for item in select_requests(conn)}
    assert stored.keys() == {first.key, second.key, 'call_0'}
    assert len({first.key, second.key, 'call_0'}) == 3
    for request in (first, second):
        read = stored[request.key].request
        assert (read.id, read.run_id, read.key, read) == ('call_0', request.run_id, request.key, request)
    assert (stored['call_0'].request.id, stored['call_0'].request.run_id) == ('call_0', None)


def test_a_person_reads_only_the_rows_addressed_to_them_with_who_and_where(begin: Begin) -> None:
    # The audience prefilter is SQL text (`LIKE ... ESCAPE`) both ways run; wildcards in a name match nothing else.
    context = QuestionContext(title='Refund', agent_name='support-bot')
    rows = {
        'alice': replace(make_request(id='alice'), audience=('alice',), context=context),
        'team': replace(make_request(id='team'), audience=('bob', 'team:support')),
        'wild': replace(make_request(id='wild'), audience=('a%', 'b_b', 'c/d')),
        'anyone': make_request(id='anyone'),
    }
    with begin() as conn:
        for request in rows.values():
            insert_pending(conn, request, 'wf')

        def seen(person: Person | None) -> set[str]:
            return {item.key for item in select_requests(conn, status='pending', visible_to=person)}

        assert seen(Person('alice')) == {'alice', 'anyone'}
        assert seen(Person('sam', groups=['team:support'])) == {'team', 'anyone'}
        assert seen(Person('ab')) == seen(Person('bob_')) == seen(Person('c')) == {'anyone'}
        assert seen(Person('c/d')) == {'wild', 'anyone'}
        assert seen(Person()) == {'anyone'}
        assert seen(Person('x', sees_all=True)) == seen(None) == set(rows)
        [read] = select_requests(conn, request_id='alice')
    assert (read.request.audience, read.request.context) == (('alice',), context)


def test_a_persons_page_and_count_are_the_same_sql_both_ways(begin: Begin) -> None:
    # Keyset paging with the audience, through SQLAlchemy and through sqlite3: deadline order, then age, then key.
    with begin() as conn:
        for index, audience in enumerate([('alice',), ('bob',), None, ('alice', 'bob'), ('bob',)]):
            request = replace(make_request(id=f'q{index}'), audience=audience, deadline=2e9 - index)
            insert_pending(conn, request, 'wf')
        alice = Person('alice')
        first = select_pending_page(conn, after=None, limit=2, visible_to=alice)
        last = first[-1]
        rest = select_pending_page(
            conn, after=(last.request.deadline or 0, last.created_at, last.key), limit=9, visible_to=alice
        )
        assert [row.key for row in first + rest] == ['q3', 'q2', 'q0']
        assert count_pending_rows(conn, visible_to=alice) == 3
        assert count_pending_rows(conn) == 5
        assert count_pending_rows(conn, PendingFilter(asked_before=0), visible_to=alice) == 0


def test_a_claim_given_the_workflow_succeeds_only_while_that_workflow_waits(url: str, begin: Begin) -> None:
    with sqlite3.connect(url.removeprefix('sqlite:///')) as dbos:
        # The two columns of DBOS's own table that the claim reads.
        dbos.execute('CREATE TABLE workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)')
        dbos.execute("INSERT INTO workflow_status VALUES ('wf-live', 'PENDING'), ('wf-gone', 'CANCELLED')")
    dbos.close()
    with begin() as conn:
        insert_pending(conn, make_request(id='live'), 'wf-live')
        insert_pending(conn, make_request(id='ended'), 'wf-gone')
        insert_pending(conn, make_request(id='deleted'), 'wf-deleted')
        answer = encode_response(ANSWER)
        assert claim_answer(conn, 'live', answer, workflow_id='wf-live')
        assert not claim_answer(conn, 'ended', answer, workflow_id='wf-gone')
        assert not claim_answer(conn, 'deleted', answer, workflow_id='wf-deleted')
        assert [request_status(conn, key) for key in ('live', 'ended', 'deleted')] == ['answered', 'pending', 'pending']
