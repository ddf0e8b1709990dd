"""`ask-user pending` on a SQLite file and on PostgreSQL without the store: the same output as through
`DBOSQuestionStore`, byte for byte, and nothing of pydantic's models, SQLAlchemy or DBOS imported.

Each listing is run twice in this process, once as users run it and once through the store
(`ASK_USER_PENDING_THROUGH_THE_STORE`), every page of it, and the two outputs compared; the plain reader is asked
for each page directly too, so that a listing that quietly went through the store both times fails.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import waits
from cli_support import COMMAND, run_cli_in_process
from durable_support import dbos_workflows, fresh_postgres_database

from pydantic_ai_ask_user import AskUserRequest, Person, QuestionContext
from pydantic_ai_ask_user._cli import build_parser
from pydantic_ai_ask_user._cli.pending import THROUGH_THE_STORE, pending_filter
from pydantic_ai_ask_user.dbos import NeedsTheStore, PlainPendingReader
from pydantic_ai_ask_user.dbos._connection import execute
from pydantic_ai_ask_user.dbos._engine import transaction
from pydantic_ai_ask_user.dbos._questions import insert_pending

HOSTILE_ID = 'call_\x1b[2J\u202egnp.exe\u200b\x07' + 'x' * 300
"""A tool call id as a provider may send one: an escape sequence, a bidi override, an invisible character, a bell,
and 300 characters more. Its question belongs to a run, so that its key is a digest: a cursor ending at a key of
another shape is refused (`_question_store._CURSOR_KEY`), through the store as without it."""


def _request(number: int) -> AskUserRequest:
    """Question `number`: each a different mix of what a question may hold."""
    options = [
        {'label': 'PostgreSQL', 'description': 'The production database.\nBacked up nightly.'},
        {'label': '데이터베이스'},
        {'label': f'Option {number}'},
    ]
    question = {
        'header': f'Q{number}',
        'question': f'Which one, number {number}?   (spaces   folded)' + ' long' * (number % 3) * 40,
        'options': options,
        'multi_select': number % 4 == 1,
    }
    if number % 5 == 2:
        question['recommended'] = 'PostgreSQL'
    questions = [question] + ([{**question, 'header': f'R{number}'}] if number % 6 == 3 else [])
    call_id = HOSTILE_ID if number == 7 else f'call_{number}'
    request = AskUserRequest.from_tool_args(
        {'questions': questions},
        id=call_id,
        notes=number % 3 == 0,
        run_id=None if number % 4 == 0 else f'run-\u202e{number}',
    )
    if number % 3 == 1:
        request = replace(request, deadline=2_000_000_000.0 + number)
    if number % 4 == 2:
        request = replace(request, audience=('ann',) if number % 8 == 2 else ('ops', 'zed'))
    if number % 5 == 4:
        context = QuestionContext(
            title=f'Deploy {number}',
            summary='First line\n\nSecond line',
            link='https://example.com/runs/1',
            agent_name='data-bot' if number % 2 else 'ops-bot',
            conversation_id=f'conv-{number % 3}',
        )
        request = replace(request, context=context)
    return request


REQUESTS = [_request(number) for number in range(23)]
"""Twenty-three questions: several pages at `--limit 5`, addressed and not, with and without deadlines."""


def _fill(url: str) -> str:
    """`url` as a DBOS worker leaves it: the question tables and each question's workflow, PENDING (one with a hostile
    workflow id)."""
    workflows = [f'wf-{number}' if number != 11 else 'wf-\x1b]8;;evil\x07' for number in range(len(REQUESTS))]
    dbos_workflows(url, dict.fromkeys(workflows, 'PENDING'))
    with transaction(url) as conn:  # creates the question tables, as a worker does
        for request, workflow in zip(REQUESTS, workflows, strict=True):
            insert_pending(conn, request, workflow)
    return url


def _fresh(request: pytest.FixtureRequest, folder: Path) -> str:
    """A new, empty database of the kind `request.param` names: a SQLite file in `folder`, or a database on the
    private PostgreSQL server."""
    if request.param == 'sqlite':
        return f'sqlite:///{folder / "questions.sqlite"}'
    return fresh_postgres_database(request.getfixturevalue('postgres_server'))


KINDS = ['sqlite', pytest.param('postgres', marks=pytest.mark.postgres)]
"""The databases each listing is read from: a SQLite file through `sqlite3`, PostgreSQL through psycopg."""


@pytest.fixture(scope='module', params=KINDS)
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The twenty-three questions waiting in a SQLite file or in PostgreSQL."""
    return _fill(_fresh(request, tmp_path_factory.mktemp('plain')))


LISTINGS = [
    pytest.param([], id='everyone'),
    pytest.param(['--json'], id='everyone-json'),
    pytest.param(['--limit', '5'], id='pages'),
    pytest.param(['--limit', '5', '--json'], id='pages-json'),
    pytest.param(['--for', 'ann', '--limit', '3'], id='for-ann'),
    pytest.param(['--for', 'bob', '--group', 'ops', '--json', '--limit', '4'], id='for-ops-json'),
    pytest.param(['--agent', 'data-bot'], id='agent'),
    pytest.param(['--search', 'number 1', '--limit', '2'], id='search'),
    pytest.param(['--title', 'Deploy', '--json'], id='title-json'),
    pytest.param(['--kind', 'question', '--older-than', '1'], id='kind-and-age'),
    pytest.param(['--newer-than', '1'], id='nothing-newer'),
]


def _pages(
    database: str, args: list[str], monkeypatch: pytest.MonkeyPatch, *, store: bool
) -> list[tuple[int, str, str]]:
    """Every page of `pending ARGS`, following each page's cursor: the exit code, stdout and stderr of each."""
    if store:
        monkeypatch.setenv(THROUGH_THE_STORE, '1')
    else:
        monkeypatch.delenv(THROUGH_THE_STORE, raising=False)
    pages: list[tuple[int, str, str]] = []
    cursor: list[str] = []
    while True:
        pages.append(run_cli_in_process(['pending', '--db', database, *args, *cursor]))
        code, out, err = pages[-1]
        assert code == 0, err
        if '--json' in args:
            following = json.loads(out.splitlines()[-1]).get('next_cursor')
        else:
            found = re.search(r'--cursor (\S+)$', err.strip())
            following = None if found is None else found[1]
        if following is None:
            return pages
        cursor = ['--cursor', following]


@pytest.mark.parametrize('args', LISTINGS)
def test_pending_prints_what_the_store_listing_prints_byte_for_byte(
    database: str, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _pages(database, args, monkeypatch, store=False)
    assert plain == _pages(database, args, monkeypatch, store=True)
    # The plain reader did read them: it gives every page without the store.
    parsed = build_parser().parse_args(['pending', '--db', database, *args])
    reader = PlainPendingReader.of(database)
    assert reader is not None
    who = None if parsed.for_name is None else Person(parsed.for_name, groups=parsed.group)
    where = pending_filter(parsed)
    cursor: str | None = None
    for _ in plain:
        page = reader.page(limit=parsed.limit, cursor=cursor, where=where, visible_to=who)
        cursor = page.next_cursor
    assert cursor is None


def test_the_listing_shows_hostile_ids_made_printable(database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THROUGH_THE_STORE, raising=False)
    code, out, err = run_cli_in_process(['pending', '--db', database, '--limit', '50', '--json'])
    assert code == 0, err
    for hostile in ('\x1b', '\u202e', '\x07', '\u200b'):
        assert hostile not in out
    for shown in ('call_', 'gnp.exe', 'wf-'):
        assert shown in out
    assert json.loads(out.splitlines()[-1]) == {'total': 23, 'total_exact': True}


CHILD = (
    'import json, sys\n'
    'from pydantic_ai_ask_user._cli import main\n'
    'code = main(sys.argv[1:])\n'
    'heavy = ["pydantic.main", "pydantic._internal._model_construction", "pydantic_ai_ask_user._questions",\n'
    '         "pydantic_ai_ask_user._answers", "sqlalchemy", "dbos", "pydantic_ai", "asyncio"]\n'
    'print(json.dumps({"code": code, "loaded": [name for name in heavy if name in sys.modules]}), file=sys.stderr)\n'
)
"""`ask-user ARGV`, then, on its last line of stderr, its exit code and which of the heavy modules it loaded."""


def _child(*args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    done = subprocess.run(
        [sys.executable, '-c', CHILD, *args], capture_output=True, text=True, timeout=waits.WAIT, check=False
    )
    return done, json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize('args', [pytest.param([], id='text'), pytest.param(['--json', '--for', 'ann'], id='json')])
def test_pending_imports_no_model_no_sqlalchemy_and_no_dbos(database: str, args: list[str]) -> None:
    done, found = _child('pending', '--db', database, *args)
    # psycopg imports asyncio itself (its async connections are in the same package): on PostgreSQL that one is the
    # driver's.
    driver = ['asyncio'] if database.startswith('postgresql') else []
    assert found == {'code': 0, 'loaded': driver}, done.stderr
    assert 'Q0' in done.stdout


def test_a_missing_file_is_said_before_anything_heavy(tmp_path: Path) -> None:
    missing = tmp_path / 'typo.sqlite'
    done, found = _child('pending', '--db', f'sqlite:///{missing}')
    assert found == {'code': 4, 'loaded': []}
    assert done.stderr.startswith(f'ask-user: cannot read the questions in sqlite:///{missing}: there is no SQLite')
    assert not missing.exists()


@pytest.fixture(params=KINDS)
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same questions with one row damaged: a header holding a bidi override, as no tool call may."""
    url = _fill(_fresh(request, tmp_path))
    damaged = {'questions': [{'header': 'a\u202eb', 'question': 'Q?', 'options': [{'label': 'A'}, {'label': 'B'}]}]}
    with transaction(url) as conn:
        execute(
            conn,
            'UPDATE ask_user_requests SET questions = :questions WHERE id = :id',
            {'questions': json.dumps(damaged), 'id': 'call_0'},
        )
    return url


def test_a_damaged_row_is_named_as_the_store_names_it(damaged: str) -> None:
    reader = PlainPendingReader.of(damaged)
    assert reader is not None
    with pytest.raises(NeedsTheStore):
        reader.page(limit=50, cursor=None)
    # In fresh interpreters: the store names a damaged row once a process.
    plain, found = _child('pending', '--db', damaged)
    store = subprocess.run(
        [*COMMAND, 'pending', '--db', damaged],
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
        env={**__import__('os').environ, THROUGH_THE_STORE: '1'},
        check=False,
    )
    assert found['code'] == 0
    assert (plain.stdout, plain.stderr.strip().rsplit('\n', 1)[0]) == (store.stdout, store.stderr.strip())
    assert "ask-user: warning: question 'call_0' is stored damaged" in store.stderr
    assert '\u202e' not in store.stderr
