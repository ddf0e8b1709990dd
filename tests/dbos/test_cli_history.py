"""`ask-user history` on a DBOS database (SQLite and PostgreSQL), as a program: what finished, the latest first, a page
at a time, as text and as JSON, narrowed with `--for` and `--kind`; the errors and their exit codes.

Beside `test_cli_paging.py` (`ask-user pending`), for the database fixtures; each command runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from ask_user_support import make_request
from cli_support import run_cli_process
from durable_support import dbos_workflows
from inbox_support import ask_user, inbox

from pydantic_ai_ask_user import AskUserAnswer, AskUserResponse
from pydantic_ai_ask_user.dbos._approvals import claim_approval, insert_approval
from pydantic_ai_ask_user.dbos._encoding import encode_response
from pydantic_ai_ask_user.dbos._engine import shared_engine
from pydantic_ai_ask_user.dbos._questions import claim_answer, insert_pending, keep_receipt, withdraw_pending
from pydantic_ai_ask_user.dbos._waits import open_wait_row
from pydantic_ai_ask_user.receipts import receipt_to_json, sign_receipt
from pydantic_ai_ask_user.store import ApprovalDecision, PendingApproval

HOSTILE = 'Sure\x1b[2J\x07'
"""A custom answer with a terminal escape and a bell: printed made printable, never as they are."""

RECEIPT_KEY = 'the key the runs sign receipts with'
"""The key of the runs' `AskUser(receipt_key=...)`, which `history` is given in `$ASK_USER_RECEIPT_KEY`."""


@pytest.fixture
def url(database_url: str) -> str:
    """Five answered questions (the last for alice, in words with an escape), one withdrawn, one edited approval."""
    dbos_workflows(database_url, {'wf': 'PENDING'})
    with shared_engine(database_url).begin() as conn:
        for index in range(5):
            audience = ('alice',) if index == 4 else None
            insert_pending(conn, replace(make_request(id=f'q{index}'), audience=audience), 'wf')
            answer = AskUserAnswer(header='Database', custom_answer=HOSTILE if index == 4 else None, selected=())
            if index != 4:
                answer = AskUserAnswer(header='Database', selected=('SQLite',))
            by = 'alice' if index == 4 else 'bob'
            assert claim_answer(conn, f'q{index}', encode_response(AskUserResponse(answers=(answer,))), by)
            if index in (2, 3):  # q3's receipt as the run kept it; q2's changed since, naming someone else (hostile)
                request = make_request(id=f'q{index}')
                receipt = sign_receipt(request, AskUserResponse(answers=(answer,), answered_by=by), key=RECEIPT_KEY)
                kept = receipt_to_json(receipt) | ({'answered_by': HOSTILE} if index == 2 else {})
                assert keep_receipt(conn, f'q{index}', json.dumps(kept)) is not None
        insert_pending(conn, make_request(id='gone'), 'wf')
        assert withdraw_pending(conn, ['gone']) == 1
        schema = {'type': 'object', 'properties': {'env': {'type': 'string'}}}
        approval = PendingApproval('w1', 'call_0', 'deploy', {'env': 'prod'}, workflow_id='wf', parameters=schema)
        open_wait_row(conn, 'w1', 'wf')
        insert_approval(conn, approval)
        assert claim_approval(conn, approval, ApprovalDecision.edit({'env': 'staging'}, decided_by='ann'))
    return database_url


def test_history_prints_the_latest_first_and_how_to_see_more(url: str) -> None:
    done = run_cli_process('history', '--db', url, '--limit', '3')
    assert done.returncode == 0, done.stderr
    firsts = [line.split()[:2] for line in done.stdout.splitlines() if not line.startswith(' ')]
    assert firsts[0][1] == 'approved'  # the approval, edited: "approved with edited arguments by ann"
    assert [first[0] for first in firsts[1:]] == ['gone', 'q4']
    assert 'approved with edited arguments by ann' in done.stdout
    assert 'ran with: {"env":"staging"}' in done.stdout
    assert 'withdrawn' in done.stdout
    assert '-> Sure\ufffd[2J\ufffd' in done.stdout  # the escape and the bell made printable
    assert '\x1b' not in done.stdout
    assert done.stderr.startswith('3 of 7 finished items shown; the next ones: ask-user history --db ')
    command = shlex.split(done.stderr.split('the next ones: ', 1)[1])
    assert command[command.index('--limit') + 1] == '3'
    following = run_cli_process(*command[1:])
    assert following.returncode == 0, following.stderr
    keys = [line.split()[0] for line in following.stdout.splitlines() if not line.startswith(' ')]
    assert keys == ['q3', 'q2', 'q1']
    # Without the key ($ASK_USER_RECEIPT_KEY), a kept receipt is signed, not checked.
    assert '  receipt: signed, not checked (no key: set ASK_USER_RECEIPT_KEY)  signed for bob at ' in following.stdout


def test_history_json_pages_with_a_trailer_and_narrows_by_person_and_kind(url: str) -> None:
    records: list[dict[str, object]] = []
    cursor: str | None = None
    while True:
        argv = ['history', '--db', url, '--json', '--limit', '4']
        done = run_cli_process(*argv, *(['--cursor', cursor] if cursor else []))
        assert done.returncode == 0, done.stderr
        *lines, trailer = map(json.loads, done.stdout.splitlines())
        assert trailer['total'] == 7
        records += lines
        if (cursor := trailer.get('next_cursor')) is None:
            break
    assert [record['id'] for record in records if record['kind'] == 'question'] == [
        'gone',
        'q4',
        'q3',
        'q2',
        'q1',
        'q0',
    ]
    approval = records[0]
    assert (approval['kind'], approval['outcome'], approval['by'], approval['tool_name']) == (
        'approval',
        'edited',
        'ann',
        'deploy',
    )
    assert approval['decision'] == {'approved': True, 'override_args': {'env': 'staging'}}
    gone = records[1]
    assert (gone['outcome'], 'by' in gone, 'response' in gone) == ('withdrawn', False, False)
    assert isinstance(gone['finished_at'], str)
    assert str(gone['finished_at']).endswith('+00:00')

    def ids(*argv: str) -> list[str]:
        done = run_cli_process('history', '--db', url, '--json', *argv)
        assert done.returncode == 0, done.stderr
        return [line['id'] for line in map(json.loads, done.stdout.splitlines()[:-1])]

    assert ids('--kind', 'question', '--limit', '2') == ['gone', 'q4']
    assert len(ids('--kind', 'approval')) == 1
    # Alice: hers (addressed to her, answered by her) and everyone's, never what was only bob's or ann's... which here
    # were all unaddressed, so she sees them too; a person in a group sees the same.
    assert ids('--for', 'alice')[1:3] == ['gone', 'q4']
    assert 'q4' not in ids('--for', 'carol')


@pytest.mark.parametrize(
    ('argv', 'code', 'message'),
    [
        (['--cursor', 'nope'], 2, 'not one this server gave out'),
        (['--limit', '0'], 2, '1 to 500'),
        (['--kind', 'other'], 2, 'invalid choice'),
    ],
)
def test_history_refuses_what_it_cannot_use(url: str, argv: list[str], code: int, message: str) -> None:
    done = run_cli_process('history', '--db', url, *argv)
    assert (done.returncode, done.stdout) == (code, '')
    assert message in done.stderr


def test_history_given_the_key_verifies_each_kept_receipt_and_says_loudly_which_does_not(url: str) -> None:
    keyed = {'ASK_USER_RECEIPT_KEY': RECEIPT_KEY}
    done = run_cli_process('history', '--db', url, '--kind', 'question', env=keyed)
    assert done.returncode == 0, done.stderr
    items = {block.split()[0]: block for block in done.stdout.split('\n') if block and not block.startswith(' ')}
    assert set(items) == {'gone', 'q4', 'q3', 'q2', 'q1', 'q0'}
    blocks = done.stdout.split('\nq')
    q3 = next(block for block in blocks if block.startswith('3 '))
    q2 = next(block for block in blocks if block.startswith('2 '))
    assert '  receipt: signed by the run, verified  signed for bob at ' in q3
    assert '  RECEIPT DOES NOT VERIFY: the signature does not match: wrong key, or who or when was changed' in q2
    assert 'signed for Sure\ufffd[2J\ufffd at' in q2  # the changed name drawn printable
    assert '\x1b' not in done.stdout
    assert done.stdout.count('receipt') + done.stdout.count('RECEIPT') == 2  # the other items have none: nothing said
    listed = run_cli_process('history', '--db', url, '--json', '--kind', 'question', env=keyed)
    lines = [json.loads(line) for line in listed.stdout.splitlines()[:-1]]
    checks = {line['id']: (line.get('receipt_check'), line.get('receipt_problem')) for line in lines}
    assert checks == {
        'gone': (None, None),
        'q4': (None, None),
        'q3': ('verified', None),
        'q2': ('not_verified', 'the signature does not match: wrong key, or who or when was changed'),
        'q1': (None, None),
        'q0': (None, None),
    }
    assert (lines[2]['receipt']['answered_by'], lines[3]['receipt']['answered_by']) == ('bob', HOSTILE)
    short = run_cli_process('history', '--db', url, env={'ASK_USER_RECEIPT_KEY': 'too short'})
    assert (short.returncode, short.stdout) == (2, '')
    assert '$ASK_USER_RECEIPT_KEY: a signing key must be at least 16 bytes' in short.stderr
    assert 'too short' not in short.stderr


@pytest.mark.anyio
async def test_the_inbox_given_the_key_verifies_the_receipts_its_history_shows(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / 'hooks').mkdir()
    (tmp_path / 'hooks' / 'admin_auth.py').write_text(
        'from pydantic_ai_ask_user import Person\n'
        'def check(request):\n'
        '    return Person("admin", sees_all=True) if request.headers.get("x-user") == "admin" else False\n'
    )
    hooks = ['--authorize', 'admin_auth:check', '--app-dir', str(tmp_path / 'hooks')]
    monkeypatch.setenv('ASK_USER_RECEIPT_KEY', 'too short')
    refused = ask_user(tmp_path, 'inbox', '--db', url, *hooks)
    assert refused.returncode == 2
    assert '$ASK_USER_RECEIPT_KEY: a signing key must be at least 16 bytes' in refused.stderr
    assert 'too short' not in refused.stderr  # the key itself is never echoed
    monkeypatch.setenv('ASK_USER_RECEIPT_KEY', RECEIPT_KEY)
    async with inbox(tmp_path, '--db', url, *hooks) as served, httpx.AsyncClient() as client:
        reply = await client.get(served.base + 'api/history?kind=question', headers={'x-user': 'admin'})
        page = await client.get(served.base + 'history?kind=question', headers={'x-user': 'admin'})
    assert reply.status_code == 200, reply.text
    checks = {item['id']: item.get('receipt_check') for item in reply.json()['history']}
    assert (checks['q3'], checks['q2'], checks['q1']) == ('verified', 'not_verified', None)
    assert 'Signed by the run, verified' in page.text
    assert 'role="alert">Receipt does not verify' in page.text
