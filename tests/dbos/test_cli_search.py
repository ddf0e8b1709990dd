"""`ask-user pending` and `ask-user history` with the search options, as a program, on SQLite and PostgreSQL: each
narrows the listing, the next page's command repeats them (and can be pasted), and a bad value is a usage error.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

import pytest
from ask_user_support import make_request
from cli_support import run_cli_process
from durable_support import dbos_workflows

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse, QuestionContext
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))


@pytest.fixture
def url(database_url: str) -> str:
    """Six questions of two agents, three of each, the first two of each answered."""
    dbos_workflows(database_url, {'wf': 'PENDING'})
    with shared_engine(database_url).begin() as conn:
        for index in range(6):
            agent = 'refunds' if index % 2 else 'deploys'
            context = QuestionContext(agent_name=agent, title=f'Item {index} of {agent}', conversation_id='c1')
            insert_pending(conn, replace(make_request(id=f'q{index}'), context=context), 'wf')
            if index < 4:
                assert claim_answer(conn, f'q{index}', encode_response(PICK), 'bob')
        for index in range(6, 9):
            context = QuestionContext(agent_name='refunds', title=f"Item {index} it's", conversation_id='c2')
            insert_pending(conn, replace(make_request(id=f'q{index}'), context=context), 'wf')
    return database_url


def _ids(stdout: str) -> list[str]:
    return [line['id'] for line in map(json.loads, stdout.splitlines()) if 'id' in line]


def test_pending_narrowed_and_paged_with_the_options_repeated(url: str) -> None:
    done = run_cli_process('pending', '--db', url, '--json', '--agent', 'refunds')
    assert done.returncode == 0, done.stderr
    assert sorted(_ids(done.stdout)) == ['q5', 'q6', 'q7', 'q8']
    done = run_cli_process('pending', '--db', url, '--json', '--search', "IT'S", '--conversation', 'c2')
    assert sorted(_ids(done.stdout)) == ['q6', 'q7', 'q8']
    first = run_cli_process('pending', '--db', url, '--agent', 'refunds', '--title', "it's", '--limit', '2')
    assert first.returncode == 0, first.stderr
    command = first.stderr.split('the next ones: ', 1)[1].strip()
    words = shlex.split(command)
    assert words[:2] == ['ask-user', 'pending']
    assert words[words.index('--agent') : words.index('--agent') + 4] == ['--agent', 'refunds', '--title', "it's"]
    following = run_cli_process(*words[1:], '--json')
    assert following.returncode == 0, following.stderr
    assert len(_ids(following.stdout)) == 1
    assert json.loads(following.stdout.splitlines()[-1])['total'] == 3


def test_history_narrowed(url: str) -> None:
    done = run_cli_process('history', '--db', url, '--json', '--agent', 'deploys', '--kind', 'question')
    assert done.returncode == 0, done.stderr
    assert sorted(_ids(done.stdout)) == ['q0', 'q2']
    done = run_cli_process('history', '--db', url, '--json', '--search', 'item 3')
    assert _ids(done.stdout) == ['q3']


def test_a_bad_search_value_is_a_usage_error(url: str) -> None:
    done = run_cli_process('pending', '--db', url, '--agent', 'a\x1b[2Jb')
    assert done.returncode == 2
    assert '\x1b' not in done.stderr
    done = run_cli_process('history', '--db', url, '--search', 'x' * 201)
    assert done.returncode == 2
    assert 'at most 200' in done.stderr
