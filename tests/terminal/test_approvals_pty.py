"""`ask-user answer APPROVAL_ID` in a real pseudo-terminal: a tool approval shown in the menu and decided there
(approve, deny with a reason typed, or JSON arguments typed, checked against the tool's schema)."""

from __future__ import annotations

import json
import shlex
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from pydantic_ai_ask_user.store import PendingApproval

from ._screen import ASK_USER, UP, Screen

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


def test_typed_arguments_are_checked_and_typed_words_deny(spawn: Spawn, database: str, tmp_path: Path) -> None:
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
    # Words are a reason to deny with: the model is told them.
    screen = answer(spawn, database, tmp_path)
    screen.wait_for('Run deploy_to')
    screen.send(UP)
    screen.wait_for('Type my own answer:')
    screen.send('not on a Friday\r')
    code, out, err = outcome(screen, tmp_path)
    assert code == 1, err
    assert json.loads(out)['decision'] == 'denied'
    [message] = sent(database)
    assert message['payload']['approvals'] == {'call_0': {'kind': 'tool-denied', 'message': 'not on a Friday'}}  # type: ignore[index]
