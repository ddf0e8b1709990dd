"""`ask-user answer APPROVAL_ID` in a real pseudo-terminal: a tool approval shown in the menu and decided there
(approve, deny, ignore, a reply typed, or JSON arguments typed, checked against the tool's schema)."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from pydantic_ai_ask_user.store import PendingApproval

from ._screen import ASK_USER, DOWN, UP, Screen

pytestmark = pytest.mark.pty

Spawn = Callable[..., Screen]

TOKEN = 'dbos1.abc.wf-wait'
"""The token of the one open wait, of workflow `wf-wait`."""

APPROVAL = PendingApproval(
    token=TOKEN,
    tool_call_id='call_0',
    tool_name='deploy_to',
    args={'env': 'production', 'note': 'ship \x1b[2J it'},
    parameters={
        'type': 'object',
        'properties': {'env': {'enum': ['staging', 'production']}, 'note': {'type': 'string'}},
        'required': ['env'],
    },
    workflow_id='wf-wait',
)


@pytest.fixture
def database(tmp_path: Path) -> str:
    """A SQLite file as a DBOS worker leaves it, with one open wait holding one approval, its workflow PENDING."""
    from pydantic_ai_ask_user.dbos._approvals import insert_approval
    from pydantic_ai_ask_user.dbos._engine import transaction
    from pydantic_ai_ask_user.dbos._waits import open_wait_row

    path = tmp_path / 'questions.sqlite'
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute('CREATE TABLE workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)')
        conn.execute(
            'CREATE TABLE notifications (message_uuid TEXT PRIMARY KEY, destination_uuid TEXT NOT NULL, topic TEXT, '
            'message TEXT NOT NULL, serialization TEXT)'
        )
        conn.execute("INSERT INTO workflow_status VALUES ('wf-wait', 'PENDING')")
    url = f'sqlite:///{path}'
    with transaction(url) as conn:
        open_wait_row(conn, TOKEN, 'wf-wait')
        insert_approval(conn, APPROVAL)
    return url


def answer(spawn: Spawn, database: str, folder: Path) -> Screen:
    """Run `out=$(ask-user answer KEY --db URL)` in a pty, leaving the exit code, stdout and stderr in files."""
    script = (
        f'out=$({shlex.quote(ASK_USER)} answer {APPROVAL.key} --db {shlex.quote(database)} 2>{folder}/err); '
        f'echo $? > {folder}/code; printf %s "$out" > {folder}/out'
    )
    return spawn(script)


def outcome(screen: Screen, folder: Path) -> tuple[int, str, str]:
    assert screen.finish() == 0, screen.text
    return int((folder / 'code').read_text()), (folder / 'out').read_text(), (folder / 'err').read_text()


def sent(database: str) -> list[dict[str, object]]:
    """The resolutions sent to the waiting workflow."""
    with closing(sqlite3.connect(database.removeprefix('sqlite:///'))) as conn:
        rows = conn.execute('SELECT message FROM notifications').fetchall()
    return [json.loads(json.loads(message)) for (message,) in rows]


def test_the_menu_shows_the_call_escaped_and_enter_approves_it(spawn: Spawn, database: str, tmp_path: Path) -> None:
    screen = answer(spawn, database, tmp_path)
    screen.wait_for('Run deploy_to')
    assert 'production' in screen.text
    # The model's escape sequence is drawn as text, not run: the screen was not cleared under the question.
    assert 'ship' in screen.text
    assert 'Run deploy_to' in screen.text
    screen.send('\r')
    code, out, err = outcome(screen, tmp_path)
    assert code == 0, err
    assert json.loads(out) == {'id': APPROVAL.key, 'tool_call_id': 'call_0', 'decision': 'approved'}
    [message] = sent(database)
    assert message['payload']['approvals'] == {'call_0': True}  # type: ignore[index]


def test_typed_arguments_are_checked_and_typed_words_are_a_reply(spawn: Spawn, database: str, tmp_path: Path) -> None:
    # Arguments that do not fit the tool's schema: refused with exit 2, saying why; nothing is sent.
    screen = answer(spawn, database, tmp_path)
    screen.wait_for('Run deploy_to')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('{"env": "moon"}\r')
    code, out, err = outcome(screen, tmp_path)
    assert (code, out) == (2, '')
    assert "at env: 'moon' is not one of ['staging', 'production']" in err
    assert sent(database) == []
    # Words are a reply (respond): the call does not run, and the model is given them instead.
    screen = answer(spawn, database, tmp_path)
    screen.wait_for('Run deploy_to')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('not on a Friday\r')
    code, out, err = outcome(screen, tmp_path)
    assert code == 1, err
    assert json.loads(out) == {
        'id': APPROVAL.key,
        'tool_call_id': 'call_0',
        'decision': 'responded',
        'response': 'not on a Friday',
    }
    [message] = sent(database)
    assert message['payload']['approvals'] == {  # type: ignore[index]
        'call_0': {
            'kind': 'tool-denied',
            'message': 'The tool call was not run. Instead, the person replied: not on a Friday',
        }
    }


def test_ignore_dismisses_the_call_and_the_model_is_told_so(spawn: Spawn, database: str, tmp_path: Path) -> None:
    screen = answer(spawn, database, tmp_path)
    screen.wait_for('Run deploy_to')
    assert 'Ignore' in screen.text
    assert 'Deny' in screen.text
    screen.send(DOWN)
    screen.send(DOWN)
    screen.wait_for('Dismiss it')
    screen.send('\r')
    code, out, err = outcome(screen, tmp_path)
    assert code == 1, err
    assert json.loads(out) == {'id': APPROVAL.key, 'tool_call_id': 'call_0', 'decision': 'ignored'}
    [message] = sent(database)
    assert message['payload']['approvals'] == {  # type: ignore[index]
        'call_0': {
            'kind': 'tool-denied',
            'message': 'A person dismissed this tool call without running it. Do not try it again unless they ask.',
        }
    }


@pytest.mark.parametrize(
    ('flags', 'shown', 'told'),
    [
        (
            ('--respond', 'Use the staging cluster first.'),
            {'decision': 'responded', 'response': 'Use the staging cluster first.'},
            'The tool call was not run. Instead, the person replied: Use the staging cluster first.',
        ),
        (
            ('--ignore',),
            {'decision': 'ignored'},
            'A person dismissed this tool call without running it. Do not try it again unless they ask.',
        ),
    ],
)
def test_respond_and_ignore_from_the_command_line(
    database: str, flags: tuple[str, ...], shown: dict[str, str], told: str
) -> None:
    done = subprocess.run(
        [ASK_USER, 'answer', APPROVAL.key, '--db', database, *flags], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stderr  # the call did not run, as with a denial
    assert json.loads(done.stdout) == {'id': APPROVAL.key, 'tool_call_id': 'call_0', **shown}
    [message] = sent(database)
    assert message['payload']['approvals'] == {'call_0': {'kind': 'tool-denied', 'message': told}}  # type: ignore[index]


def test_a_reply_that_cannot_be_shown_is_refused_and_nothing_is_sent(database: str) -> None:
    done = subprocess.run(
        [ASK_USER, 'answer', APPROVAL.key, '--db', database, '--respond', 'ok\x1b[2J'],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert 'a reply holds' in done.stderr
    assert '\x1b' not in done.stderr
    assert sent(database) == []
