"""`ask-user pending` a page at a time: `--limit`, `--cursor`, the count line, and the `--json` trailer."""

from __future__ import annotations

import json
import shlex
import time

import pytest
from cli_support import run_cli_in_process, run_cli_process
from durable_support import dbos_workflows, publish_question

from pydantic_ai_ask_user._cli.inbox import DEFAULT_PENDING_LIMIT


@pytest.fixture
def url(database_url: str) -> str:
    dbos_workflows(database_url, {'wf': 'PENDING'})
    now = time.time()
    for index in range(13):
        publish_question(database_url, f'q{index:02d}', deadline=now + 1000 - index if index < 2 else None)
    return database_url


def test_pending_shows_a_screenful_and_says_how_many_wait_and_how_to_see_more(url: str) -> None:
    code, out, err = run_cli_in_process(['pending', '--db', url])
    assert code == 0, err
    shown = [line.split()[0] for line in out.splitlines() if not line.startswith(' ')]
    assert len(shown) == DEFAULT_PENDING_LIMIT == 10
    assert shown[:3] == ['q01', 'q00', 'q02']  # the nearest deadline first
    assert err.startswith(f'10 of 13 waiting items shown; the next ones: ask-user pending --db {url} --cursor ')
    command = shlex.split(err.split('the next ones: ', 1)[1])
    code, out, err = run_cli_in_process(command[1:])
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines() if not line.startswith(' ')] == ['q10', 'q11', 'q12']
    assert err == '3 of 13 waiting items shown\n'


def test_pending_json_pages_with_its_trailer_line(url: str) -> None:
    keys: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        argv = ['pending', '--db', url, '--json', '--limit', '5']
        code, out, err = run_cli_in_process([*argv, '--cursor', cursor] if cursor else argv)
        assert code == 0, err
        *lines, trailer = map(json.loads, out.splitlines())
        assert len(lines) <= 5
        assert trailer['total'] == 13
        keys.extend(line['id'] for line in lines)
        pages += 1
        if (cursor := trailer.get('next_cursor')) is None:
            break
    assert pages == 3
    assert sorted(keys) == [f'q{index:02d}' for index in range(13)]
    assert len(set(keys)) == 13


@pytest.mark.parametrize(
    ('argv', 'code', 'message'),
    [
        (['--cursor', 'tampered'], 2, 'ask-user: the cursor is not one this server gave out'),
        (['--limit', '0'], 2, "give a whole number from 1 to 500, not '0'"),
        (['--limit', '501'], 2, "give a whole number from 1 to 500, not '501'"),
        (['--older-than', '-1'], 2, "give a number of seconds, 0 or more, not '-1'"),
    ],
)
def test_a_bad_cursor_limit_or_age_is_refused_with_a_message(
    url: str, argv: list[str], code: int, message: str
) -> None:
    done = run_cli_process('pending', '--db', url, *argv)  # in its own process: argparse exits
    assert (done.returncode, done.stdout) == (code, '')
    assert message in done.stderr
    assert 'Traceback' not in done.stderr


def test_the_age_filters_take_only_the_questions_old_or_young_enough(url: str) -> None:
    code, out, _ = run_cli_in_process(['pending', '--db', url, '--json', '--older-than', '3600'])
    assert (code, [json.loads(line) for line in out.splitlines()]) == (
        0,
        [{'total': 0, 'total_exact': True}],
    )
    code, out, _ = run_cli_in_process(['pending', '--db', url, '--json', '--newer-than', '3600', '--limit', '500'])
    assert len(out.splitlines()) == 14
