"""What each `ask-user` command imports: only what it needs, so that it starts in tenths of a second.

Each runs in a fresh interpreter that records its imported modules as it exits. `ask` in a terminal is
checked in a real pty once the menu is drawn (tests/terminal/test_startup_pty.py).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from cli_support import imported, run_recording
from inline_snapshot import snapshot

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user._cli import main

QUESTIONS = {'questions': [{'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]}


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / 'modules.json'


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(QUESTIONS), encoding='utf-8')
    return path


@pytest.mark.parametrize(
    'args',
    [
        pytest.param(['--help'], id='help'),
        pytest.param(['ask', '--help'], id='ask-help'),
        pytest.param(['pending', '--help'], id='pending-help'),
        pytest.param(['demo', '--help'], id='demo-help'),
    ],
)
def test_help_imports_no_heavy_library(record: Path, args: list[str]) -> None:
    done, heavy = run_recording(record, *args)
    assert done.returncode == 0, done.stderr
    assert heavy == set()
    # Not even the question models: the package root and the commands load them when a command runs.
    assert 'pydantic' not in imported(record)


def test_ask_on_invalid_input_imports_no_heavy_library(record: Path) -> None:
    done, heavy = run_recording(record, 'ask', '-', stdin='{"questions": []}')
    assert done.returncode == 2
    assert heavy == set()


def test_ask_in_the_terminal_loads_the_menu_and_nothing_else(record: Path, questions: Path) -> None:
    # No terminal here: it gets as far as opening one, so the menu's library is loaded and refuses.
    done, heavy = run_recording(record, 'ask', str(questions))
    assert done.returncode == 4
    assert heavy == {'prompt_toolkit'}


def test_ask_web_loads_the_web_server_but_not_pydantic_ai_or_dbos(record: Path, questions: Path) -> None:
    # An address that cannot be served: the web front end is loaded, then the command says why it cannot ask.
    done, heavy = run_recording(record, 'ask', '--web', '--host', '256.1.1.1', str(questions))
    assert done.returncode == 4, done.stderr
    assert heavy == {'starlette', 'uvicorn'}


def test_answer_with_a_bad_answer_file_loads_neither_the_menu_nor_the_web(record: Path, tmp_path: Path) -> None:
    done, heavy = run_recording(record, 'answer', 'abc', '--db', f'sqlite:///{tmp_path / "none.sqlite"}')
    assert done.returncode == 4
    assert heavy.isdisjoint({'prompt_toolkit', 'starlette', 'uvicorn', 'mcp'})


WAIT_TOKEN = 'dbos1.abc.wf-wait'
"""The token of the one open `RequestInput` wait in `question_database`, of workflow `wf-wait`."""


@pytest.fixture
def question_database(tmp_path: Path) -> str:
    """A SQLite file as a DBOS worker leaves it: DBOS's `workflow_status` and `notifications` tables (their columns
    that a message touches), the question tables, one question waiting (`Go`, workflow `wf-ask`) and one open
    `RequestInput` wait (`WAIT_TOKEN`, workflow `wf-wait`), both workflows PENDING.
    """
    import sqlite3

    from pydantic_ai_ask_user.dbos._engine import transaction
    from pydantic_ai_ask_user.dbos._questions import insert_pending
    from pydantic_ai_ask_user.dbos._waits import open_wait_row

    path = tmp_path / 'questions.sqlite'
    with sqlite3.connect(path) as conn:
        conn.execute('CREATE TABLE workflow_status (workflow_uuid TEXT PRIMARY KEY, status TEXT)')
        conn.execute(
            'CREATE TABLE notifications (message_uuid TEXT PRIMARY KEY, destination_uuid TEXT NOT NULL, topic TEXT, '
            'message TEXT NOT NULL, serialization TEXT)'
        )
        conn.executemany("INSERT INTO workflow_status VALUES (?, 'PENDING')", [('wf-ask',), ('wf-wait',)])
    url = f'sqlite:///{path}'
    with transaction(url) as conn:  # creates the question tables, as a worker does
        insert_pending(conn, AskUserRequest.from_tool_args(QUESTIONS, id='call-1'), 'wf-ask')
        open_wait_row(conn, WAIT_TOKEN, 'wf-wait')
    return url


def _messages(database_url: str) -> list[tuple[str, str]]:
    """The DBOS messages sent so far: each one's workflow and topic."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(database_url.removeprefix('sqlite:///'))) as conn:
        return conn.execute('SELECT destination_uuid, topic FROM notifications ORDER BY topic').fetchall()


@pytest.mark.parametrize(
    'args',
    [
        pytest.param(['pending'], id='pending'),
        pytest.param(['pending', '--json'], id='pending-json'),
        pytest.param(['answer', 'abcdef', '--json', '-'], id='answer-unknown-id'),
    ],
)
def test_pending_and_answer_read_the_question_table_with_the_standard_library_only(
    record: Path, question_database: str, args: list[str]
) -> None:
    # On SQLite they read (and write) the question table through sqlite3 and send DBOS its message with SQL:
    # no DBOS, no Pydantic AI, no SQLAlchemy.
    done, heavy = run_recording(record, *args, '--db', question_database, stdin='{"Go": ["Yes"]}')
    assert done.returncode == (5 if args[0] == 'answer' else 0), done.stderr
    assert heavy == set()
    if args[0] == 'pending':
        assert 'call-1' in done.stdout


def test_answer_records_and_sends_an_answer_with_the_standard_library_only(
    record: Path, question_database: str
) -> None:
    done, heavy = run_recording(
        record, 'answer', 'call-1', '--db', question_database, '--json', '-', stdin='{"Go": ["Yes"]}'
    )
    assert (done.returncode, done.stdout) == (0, '{"Go":["Yes"]}\n'), done.stderr
    assert heavy == set()
    assert _messages(question_database) == [('wf-ask', 'ask_user:call-1')]


@pytest.mark.parametrize(
    'decision',
    [
        pytest.param(['--json', '-'], id='json'),
        pytest.param(['--fail', 'no'], id='fail'),
    ],
)
def test_resolve_ends_a_wait_with_the_standard_library_only(
    record: Path, question_database: str, decision: list[str]
) -> None:
    # A decision of plain values is checked as Pydantic AI checks it, without importing it (tests/cli/test_cli_decision.py).
    done, heavy = run_recording(
        record, 'resolve', WAIT_TOKEN, '--db', question_database, *decision, stdin='{"approvals": {"deploy": true}}'
    )
    assert done.returncode == 0, done.stderr
    assert heavy == set()
    assert _messages(question_database) == [('wf-wait', 'external_event:abc')]


def test_resolve_of_a_token_without_a_wait_loads_nothing_heavy(record: Path, question_database: str) -> None:
    done, heavy = run_recording(record, 'resolve', 'dbos1.xyz.none', '--db', question_database, '--fail', 'no')
    assert done.returncode == 7, done.stderr  # no wait has this token
    assert heavy == set()


def test_resolve_reads_a_tool_result_object_with_pydantic_ai_but_not_dbos(record: Path, question_database: str) -> None:
    # A `ToolReturn` object is Pydantic AI's to read: the decision is validated by it, as before.
    decision = '{"calls": {"c": {"kind": "tool-return", "return_value": 1}}}'
    done, heavy = run_recording(record, 'resolve', WAIT_TOKEN, '--db', question_database, '--json', '-', stdin=decision)
    assert done.returncode == 0, done.stderr
    assert heavy == {'pydantic_ai'}


def test_inbox_link_and_a_bad_authorize_load_no_web_server_and_no_database(record: Path, tmp_path: Path) -> None:
    # A link is signed with the standard library: printing one loads no web server, and a hook that cannot be
    # loaded is said before Starlette or uvicorn is imported.
    key = tmp_path / 'key.json'
    key.write_text(json.dumps({'key': 'k' * 32, 'url': 'http://127.0.0.1:8770/'}), encoding='utf-8')
    done, heavy = run_recording(record, 'inbox', 'link', 'alice', '--key-file', str(key))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('http://127.0.0.1:8770/login?code=')
    assert heavy == set()
    done, heavy = run_recording(record, 'inbox', '--authorize', 'nothing-here', '--db', f'sqlite:///{key}')
    assert done.returncode == 2, done.stderr
    assert heavy == set()


def test_the_command_list_reads_as_documented(record: Path) -> None:
    done, _ = run_recording(record, '--help')
    assert done.stdout == snapshot("""\
usage: ask-user [-h] [--version] COMMAND ...

Ask a person structured multiple-choice questions, for agents and scripts.

positional arguments:
  COMMAND
    demo      run an agent that asks you two clarifying questions
    ask       ask the questions of a JSON file in the terminal or a browser, print the answers as
              JSON
    pending   list the questions waiting for an answer in a DBOS database or in Temporal workflows
    history   list the questions and approvals that finished in a DBOS database or in Temporal
    answer    answer a waiting question in the terminal menu, or from JSON
    forward   hand a waiting question or approval on to other people or groups, with a note
    resolve   resolve a HandleDeferredToolCalls wait (an approval) of a DBOS run or a Temporal
              workflow from here
    inbox     serve the team inbox in a browser, over a DBOS database or Temporal workflows
    mcp       serve ask_user_question to an MCP host (Claude Code, Cursor, ...) over stdio or HTTP

options:
  -h, --help  show this help message and exit
  --version   show the version of ask-user and exit
""")


@pytest.mark.parametrize(
    'command',
    [
        pytest.param('ask', id='ask'),
        pytest.param('pending', id='pending'),
        pytest.param('answer', id='answer'),
        pytest.param('resolve', id='resolve'),
        pytest.param('demo', id='demo'),
        pytest.param('inbox', id='inbox'),
        pytest.param('inbox link', id='inbox-link'),
    ],
)
def test_each_command_help_reads_as_documented(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('COLUMNS', '100')
    with pytest.raises(SystemExit) as exited:
        main([*command.split(), '--help'])
    assert exited.value.code == 0
    assert capsys.readouterr().out == HELP[command]


HELP = {
    'ask': snapshot("""\
usage: ask-user ask [-h] [--timeout SECONDS] [--notes] [--web] [--host HOST] [--port PORT]
                    [--open] [--notify-url URL] [--bell] [--notify-desktop]
                    [FILE|-]

Read the arguments of an ask_user_question call ({"questions": [...]}, a question may name its
"recommended" label) from FILE or stdin, ask them, and print on stdout the JSON the model would
get. Exit codes: 0 answered, 1 declined, 2 invalid input, 3 timed out, 4 no terminal or browser to
ask in.

positional arguments:
  FILE|-             the question file (default: stdin)

options:
  -h, --help         show this help message and exit
  --timeout SECONDS  give up after this many seconds
  --notes            let the person add a note to each answer
  --web              ask in a browser instead of the terminal
  --host HOST        with --web: the address to serve on
  --port PORT        with --web: the port (default: any free one)
  --open             with --web: open the page in a browser
  --notify-url URL   with --web: POST a signed webhook there (key: $ASK_USER_WEBHOOK_KEY)
  --bell             in the terminal: ring the bell when the question opens
  --notify-desktop   in the terminal: a desktop notification when the question opens (OSC 9 and
                     OSC 777)
"""),
    'pending': snapshot("""\
usage: ask-user pending [-h] [--db URL | --temporal HOST:PORT] [--namespace NAME] [--json]
                        [--for NAME] [--group NAME] [--limit N] [--cursor CURSOR]
                        [--older-than SECONDS] [--newer-than SECONDS] [--agent NAME]
                        [--title TEXT] [--conversation ID] [--addressee NAME]
                        [--kind {question,approval}] [--search TEXT]

List the questions waiting in the database (or, with --temporal, in the running workflows of the
Temporal namespace), across all workflows, a page at a time: the nearest deadline first, questions
without one last, oldest first among equals; with who each is for and where it comes from. A line
on stderr says how many wait in all and how to see the next page (--cursor); with --json the last
line is {"total": N, "next_cursor": ...}. This is administrative access: whoever can read the
database or reach the Temporal server sees every question, whoever it is addressed to; --for only
narrows the list.

options:
  -h, --help            show this help message and exit
  --db URL              the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB
                        (default: sqlite:///ask_user.sqlite)
  --temporal HOST:PORT  the questions (TemporalAnswerer) and approvals (TemporalExternalEvents)
                        waiting in Temporal workflows, on this Temporal server, instead
  --namespace NAME      the Temporal namespace (default: default)
  --json                print one JSON object per line instead of text
  --for NAME            only the questions NAME may answer: those addressed to NAME (or to one of
                        the --group names) and the unaddressed ones. A filter, not access control
  --group NAME          with --for: a group NAME belongs to (repeat for several)
  --limit N             show at most N questions, 1 to 500 (default: 10)
  --cursor CURSOR       start after the page that printed this cursor
  --older-than SECONDS  only questions asked more than SECONDS ago
  --newer-than SECONDS  only questions asked less than SECONDS ago
  --agent NAME          only the items of the agent NAME (exactly)
  --title TEXT          only items whose title holds TEXT (any case)
  --conversation ID     only the items of the conversation ID (exactly)
  --addressee NAME      only items addressed to the name or group NAME
  --kind {question,approval}
                        only questions, or only tool approvals
  --search TEXT         only items whose text holds TEXT (any case): the questions, options, title
                        and summary, or the tool name and arguments
"""),
    'answer': snapshot("""\
usage: ask-user answer [-h] [--db URL | --temporal HOST:PORT] [--namespace NAME]
                       [--timeout SECONDS] [--json FILE|- | --approve | --deny [REASON] | --args
                       JSON | --respond TEXT | --ignore]
                       ID

Answer the question ID in the terminal menu, or with --json from FILE or stdin: either {"answers":
[{"header": ..., "selected": [...]} or {"header": ..., "custom_answer": ...}], "cancelled":
false}, {"cancelled": true} to decline, or the shape the model gets, {"HEADER": ["LABEL", ...]}
(labels match ignoring case and width) or {"HEADER": {"custom": "TEXT"}} for your own words. A
tool approval (an id that pending shows with a tool name) is decided with --approve, --deny
[REASON], --args JSON (approve with these arguments), --respond TEXT (do not run it: the model
gets TEXT instead), --ignore (dismiss it: the model is told so), or --json holding "approve",
{"deny": "REASON"}, {"args": {...}}, {"respond": "TEXT"} or "ignore". With a wait's token instead
of an id, --json decides every item of the wait at once (all or nothing): {"CALL_ID": decision or
answer, ...}. Exit codes: 0 answered or approved, 1 declined, denied, responded to or ignored (the
call did not run), 2 invalid answer, 4 cannot ask here, 5 unknown id, 6 already answered, 7 no
longer waiting, 8 --timeout ran out before a Temporal worker accepted the answer, 9 the id means
several waiting items (each is listed). ID may also be a tool call id, or the beginning (4
characters or more) of an id.

positional arguments:
  ID                    the id `ask-user pending` shows (a question's or an approval's), or a
                        wait's token (all its items)

options:
  -h, --help            show this help message and exit
  --db URL              the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB
                        (default: sqlite:///ask_user.sqlite)
  --temporal HOST:PORT  the questions (TemporalAnswerer) and approvals (TemporalExternalEvents)
                        waiting in Temporal workflows, on this Temporal server, instead
  --namespace NAME      the Temporal namespace (default: default)
  --timeout SECONDS     with --temporal: stop waiting for a worker of the workflow to accept the
                        answer after SECONDS (exit 8)
  --json FILE|-         read the answer (or the decision, or for a token every item's, by call id)
                        from FILE or stdin (-)
  --approve             approve the tool call ID
  --deny [REASON]       deny the tool call ID, telling the model why
  --args JSON           approve the tool call ID with these arguments (checked against the tool's
                        schema)
  --respond TEXT        do not run the tool call ID: give the model TEXT instead, as what came
                        back
  --ignore              dismiss the tool call ID: it does not run, and the model is told so
"""),
    'resolve': snapshot("""\
usage: ask-user resolve [-h] [--db URL | --temporal HOST:PORT] [--namespace NAME]
                        [--timeout SECONDS] (--json FILE|- | --fail REASON)
                        TOKEN

End the wait of TOKEN, handed out by DBOSExternalEvents (or, with --temporal,
TemporalExternalEvents) to HandleDeferredToolCalls's ask, with --json FILE|- (the
DeferredToolResults deciding every pending call and nothing else, e.g. {"approvals": {"CALL_ID":
true}, "calls": {"CALL_ID": {"Database": ["SQLite"]}}}) or --fail REASON (every pending approval
is denied with REASON). Exit codes: 0 resolved, 2 invalid JSON, not a token, a call left out or
not pending, or an answer that does not fit its question (nothing is sent), 4 cannot reach the
database or the Temporal server, or a missing extra, 7 no run waits on this token any more, 8
--timeout ran out before a Temporal worker accepted the decision, 9 the beginning of a token that
several open waits share (each is listed).

positional arguments:
  TOKEN                 the token HandleDeferredToolCalls handed to your ask function

options:
  -h, --help            show this help message and exit
  --db URL              the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB
                        (default: sqlite:///ask_user.sqlite)
  --temporal HOST:PORT  the waits of Temporal workflows (TemporalExternalEvents), on this Temporal
                        server, instead
  --namespace NAME      the Temporal namespace (default: default)
  --timeout SECONDS     with --temporal: stop waiting for a worker of the workflow to accept the
                        answer after SECONDS (exit 8)
  --json FILE|-         the DeferredToolResults as JSON
  --fail REASON         end the wait without results, for this reason
"""),
    'demo': snapshot("""\
usage: ask-user demo [-h] [--model NAME] [--scripted]

Run an agent that asks two clarifying questions and acts on the answers. Offline and deterministic
by default; in a terminal you answer, elsewhere a scripted person does.

options:
  -h, --help    show this help message and exit
  --model NAME  a Pydantic AI model name, e.g. 'openai:gpt-5' (needs its key)
  --scripted    let a scripted person answer even in a terminal
"""),
    'inbox': snapshot("""\
usage: ask-user inbox [-h] [--db URL | --temporal HOST:PORT] [--namespace NAME] [--host HOST]
                      [--port PORT] [--url URL] [--title TITLE] [--key-file FILE]
                      [--authorize MODULE:FUNCTION] [--notify MODULE:FUNCTION] [--app-dir DIR]
                      [--forwarded-allow-ips IPS] [--max-connections N]
                      [--max-connections-per-ip N] [--open]
                      ACTION ...

Serve the web inbox over the questions and tool approvals waiting in a DBOS database (--db) or in
the workflows of a Temporal namespace (--temporal), until Ctrl-C or SIGTERM: the pages, the JSON
API, the event stream and the approvals, each person seeing only what is addressed to them. People
sign in with one-time links that ask-user inbox link NAME prints, or through your own --authorize
hook. Without --authorize, on a loopback address, an administrator link is printed at start; on
any other address give --url, the address people open. With --notify, a Notifier you make tells
people of what waits for them (by e-mail, Slack, ...) beside the inbox. With the environment
variable ASK_USER_RECEIPT_KEY set to the key the runs sign receipts with, the History tab verifies
each kept receipt. Needs the web extra and the dbos or temporal extra. Exit codes: 0 stopped, 2
invalid arguments, or a --authorize or --notify function that cannot be loaded or fails, 4 the
store cannot be read, the address cannot be served or an extra is missing. Creates no database or
table.

positional arguments:
  ACTION
    link                print a one-time sign-in link for a person

options:
  -h, --help            show this help message and exit
  --db URL              the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB
                        (default: sqlite:///ask_user.sqlite)
  --temporal HOST:PORT  the questions and approvals waiting in Temporal workflows, on this
                        Temporal server, instead
  --namespace NAME      the Temporal namespace (default: default)
  --host HOST           the address to serve on (default: 127.0.0.1)
  --port PORT           the port (default: 8770; 0: any free one)
  --url URL             the address people open, which the sign-in links name
                        (https://inbox.example.com/ behind a proxy); default: http://HOST:PORT/
  --title TITLE         the name in each page's title and header bar
  --key-file FILE       the file holding the key that signs the sign-in links, and the address the
                        links name; shared by ask-user inbox and ask-user inbox link (default: a
                        file per --db or --temporal under ~/.config/ask-user/inbox, made with mode
                        0600)
  --authorize MODULE:FUNCTION
                        your own sign-in instead of links: FUNCTION(request) of MODULE returns a
                        Person, a name, True or False (the Authorize hook of create_app), imported
                        from --app-dir
  --notify MODULE:FUNCTION
                        tell people where they are while the inbox serves: FUNCTION(store, links)
                        of MODULE returns a Notifier (with EmailChannel, say); links (an
                        InboxLinks) name --url and sign with the inbox key. A channel people
                        answer on is served at notify/NAME under the inbox
  --app-dir DIR         with --authorize or --notify: the directory MODULE is imported from, first
                        (default: the current directory)
  --forwarded-allow-ips IPS
                        the proxies (comma-separated addresses, * for any) whose X-Forwarded-Proto
                        and X-Forwarded-For are believed, so that behind one that ends HTTPS the
                        cookies are Secure (default: 127.0.0.1)
  --max-connections N   how many connections at once, at most (default: 512; each open page holds
                        one)
  --max-connections-per-ip N
                        how many one client address may hold (default: 128; behind a proxy,
                        everyone has its address)
  --open                open the administrator's link in a browser on this machine (without
                        --authorize, on a loopback address)
"""),
    'inbox link': snapshot("""\
usage: ask-user inbox link [-h] [--group GROUP] [--admin] [--expires-in SECONDS]
                           [--db URL | --temporal HOST:PORT] [--namespace NAME] [--key-file FILE]
                           [--url URL]
                           NAME

Print a link that signs one browser in to the inbox ask-user inbox serves (the same --db or
--temporal, or --key-file) as NAME, with the groups given, or with --admin as someone who sees
every item. Each link works once, until it expires; the server remembers the links used (in the
key file's .used file beside it). Exit codes: 0 printed, 2 invalid arguments, 4 no key file or no
address known yet (start ask-user inbox first, or give --url).

positional arguments:
  NAME                  who the link signs in: the name their questions are addressed to

options:
  -h, --help            show this help message and exit
  --group GROUP         a group NAME belongs to, whose items they see too (repeat for several)
  --admin               sign in someone who sees and may answer every item
  --expires-in SECONDS  how long the link works, unused (default: a day, 86400)
  --db URL              the DBOS system database: sqlite:///FILE or postgresql://USER@HOST:PORT/DB
                        (default: sqlite:///ask_user.sqlite)
  --temporal HOST:PORT  the inbox serving the Temporal workflows of this Temporal server
  --namespace NAME      the Temporal namespace (default: default)
  --key-file FILE       the file holding the key that signs the sign-in links, and the address the
                        links name; shared by ask-user inbox and ask-user inbox link (default: a
                        file per --db or --temporal under ~/.config/ask-user/inbox, made with mode
                        0600)
  --url URL             the address of the inbox (default: the one ask-user inbox recorded)
"""),
}
