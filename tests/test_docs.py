"""The documentation site builds with `mkdocs build --strict`, and holds what it promises.

Built once per session, as `make docs` builds it: a warning, a broken link or anchor, a `::: module` naming nothing
fails the build. A test rather than a step of `make test` so that the built pages can be checked too: the command
reference generated from the real parser, and every public name of every public module in the API reference.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import waits

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope='module')
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp('site')
    done = subprocess.run(
        [sys.executable, '-m', 'mkdocs', 'build', '--strict', '--site-dir', str(built)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=waits.WAIT * 4,
        env={**os.environ, 'NO_MKDOCS_2_WARNING': '1'},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert 'WARNING' not in done.stderr, done.stderr
    return built


def _text(page: Path) -> str:
    """The page's text as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    return ' '.join(html.unescape(re.sub(r'<[^>]+>', ' ', page.read_text(encoding='utf-8'))).split())


def _parsers() -> dict[str, argparse.ArgumentParser]:
    from pydantic_ai_ask_user._cli import build_parser

    parser = build_parser()
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return {'ask-user': parser, **{f'ask-user {name}': sub for name, sub in commands.choices.items()}}


def test_the_site_builds_with_every_page_of_the_nav(site: Path) -> None:
    for page in ('index.html', 'getting-started/index.html', 'ko/getting-started/index.html', 'cli/index.html'):
        assert (site / page).is_file(), page
    assert 'ask_user_question' in _text(site / 'index.html')


def test_the_command_reference_is_every_command_and_option_of_the_real_parser(site: Path) -> None:
    page = _text(site / 'cli' / 'index.html')
    reference = page.split('Every command and option', 1)[1]
    for title, parser in _parsers().items():
        assert f'usage: {title} ' in reference, title
        assert ' '.join((parser.description or '').split()) in reference, title
        for action in parser._actions:
            for option in action.option_strings:
                assert option in reference, (title, option)
            if action.help and action.help != argparse.SUPPRESS and '%(' not in action.help:
                # Its backticks are Markdown code spans on the page.
                assert ' '.join(action.help.replace('`', '').split()) in reference, (title, action.help)


def test_a_fence_s_test_settings_are_not_shown_to_the_reader(site: Path) -> None:
    # `{test="skip"}` and `{install=...}` are read by the tests; the reader gets a plain, highlighted Python block.
    for page in site.rglob('*.html'):
        text = _text(page)
        assert '{test=' not in text, page
        assert '{install=' not in text, page
    assert '<span class="kn">from</span>' in (site / 'getting-started' / 'index.html').read_text(encoding='utf-8')
