"""What the README, the site and the examples show builds no deprecated class on today's Pydantic AI.

Pydantic AI 2.78 deprecates `RequestInput(ask)` for `HandleDeferredToolCalls(ask)` (each construction warns with
`PydanticAIDeprecationWarning`, a `UserWarning` a user sees by default). The documented examples run with that
warning an error (tests/test_readme.py); here, the team inbox example imports under `-W error`, no page writes
`RequestInput(` outside its one-line note for Pydantic AI 2.68–2.77 (the fences a person runs by hand included),
and the filter tests/test_readme.py sets does catch a deprecated construction.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import waits
from test_readme import DEPRECATED_IS_AN_ERROR

ROOT = Path(__file__).resolve().parent.parent

PAGES = sorted(
    [
        ROOT / 'README.md',
        *(page for page in (ROOT / 'docs').rglob('*.md') if page.name != 'changelog.md'),
        *(ROOT / 'examples').rglob('*.py'),
    ]
)
"""Where a reader copies from: the README, every page of the site but the changelog (which keeps the history),
and every example program."""

COMPATIBILITY_NOTE = re.compile(r'Pydantic AI 2\.68[–-]2\.77,? write `RequestInput\(ask\)` instead')
"""The one sentence that may write the old spelling: what to write on Pydantic AI 2.68–2.77."""


def _prose(text: str) -> str:
    """`text` with its lines joined (comment markers dropped), so a sentence wrapped over lines reads as one."""
    return re.sub(r'\s*\n\s*(?:#\s*)?', ' ', text)


def test_the_pages_are_found() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert {'README.md', 'docs/deferred.md', 'docs/answerers/web.md', 'examples/team_inbox/app.py'} <= names
    assert 'docs/changelog.md' not in names


@pytest.mark.parametrize('page', PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_no_page_writes_request_input_but_in_its_compatibility_note(page: Path) -> None:
    text = COMPATIBILITY_NOTE.sub('', _prose(page.read_text(encoding='utf-8')))
    found = [match.start() for match in re.finditer(r'RequestInput\(', text)]
    assert not found, [text[max(0, at - 80) : at + 60] for at in found]


def test_the_compatibility_note_is_on_the_pages_that_show_the_waiting_handler() -> None:
    for page in ('docs/deferred.md', 'docs/answerers/web.md', 'examples/team_inbox/app.py'):
        text = _prose((ROOT / page).read_text(encoding='utf-8'))
        assert 'HandleDeferredToolCalls(' in text, page
        assert COMPATIBILITY_NOTE.search(text), page
        assert 'waiting_handler(ask)' in text, page


def test_the_team_inbox_example_imports_with_every_warning_an_error(tmp_path: Path) -> None:
    # As a user starts it (`uvicorn app:api --app-dir examples/team_inbox`), up to serving: the module builds its
    # agents, DBOS and the app. Under `-W error` a deprecated class (or anything else that warns) fails the import.
    env = {
        **os.environ,
        'TEAM_INBOX_DB': f'sqlite:///{tmp_path}/team-inbox.sqlite',
        'TEAM_INBOX_SECRET': 'a-test-secret',
    }
    program = 'import app; print(app.returns_agent.name)'
    done = subprocess.run(
        [sys.executable, '-W', 'error', '-c', program],
        cwd=ROOT / 'examples' / 'team_inbox',
        env=env,
        capture_output=True,
        text=True,
        timeout=waits.WAIT * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == 'returns-bot'


@pytest.mark.parametrize('rule', DEPRECATED_IS_AN_ERROR)
def test_the_rules_of_the_examples_are_warnings_made_errors(rule: str) -> None:
    assert rule.startswith('error::')


@pytest.mark.filterwarnings(DEPRECATED_IS_AN_ERROR[0])
@pytest.mark.filterwarnings(DEPRECATED_IS_AN_ERROR[1])
def test_under_the_rules_of_the_examples_a_deprecated_construction_fails() -> None:
    # The marks tests/test_readme.py runs the documented examples under: on a Pydantic AI that deprecates
    # `RequestInput` (2.78 on, where `HandleDeferredToolCalls` hands tokens on), building one fails there.
    from pydantic_ai.capabilities import HandleDeferredToolCalls
    from pydantic_ai.exceptions import PydanticAIDeprecationWarning

    from pydantic_ai_ask_user._deferred_handlers import HANDLERS_TAKE_TOKENS, REQUEST_INPUT

    async def ask(ctx: object, requests: object, token: str) -> None:
        return None

    if REQUEST_INPUT is not None and HANDLERS_TAKE_TOKENS:
        with pytest.raises(PydanticAIDeprecationWarning, match='RequestInput'):
            REQUEST_INPUT(ask)
    HandleDeferredToolCalls(ask)  # the current spelling builds without a warning
