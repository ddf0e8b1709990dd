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
from typing import Any

import pytest
import waits
from ask_user_support import unmeasured

ROOT = Path(__file__).resolve().parent.parent


def _build(into: Path) -> None:
    done = subprocess.run(
        [sys.executable, '-m', 'mkdocs', 'build', '--strict', '--site-dir', str(into)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=waits.WAIT * 4,
        env={**unmeasured(os.environ), 'NO_MKDOCS_2_WARNING': '1'},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert 'WARNING' not in done.stderr, done.stderr


@pytest.fixture(scope='module')
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: built once per session, even when `make test`'s workers each run some of these tests."""
    if 'PYTEST_XDIST_WORKER' not in os.environ:
        built = tmp_path_factory.mktemp('site')
        _build(built)
        return built
    # The workers of one session share the parent of their temporary directories: the first builds, under a lock.
    import fcntl

    shared = tmp_path_factory.getbasetemp().parent
    with (shared / 'docs-site.lock').open('w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built, done = shared / 'docs-site', shared / 'docs-site.built'
        if not done.exists():
            _build(built)
            done.touch()
    return built


def _text(page: Path) -> str:
    """The page's text as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    return ' '.join(html.unescape(re.sub(r'<[^>]+>', ' ', page.read_text(encoding='utf-8'))).split())


def _parsers() -> dict[str, argparse.ArgumentParser]:
    from pydantic_ai_ask_user._cli import build_parser

    found: dict[str, argparse.ArgumentParser] = {}

    def add(parser: argparse.ArgumentParser, title: str) -> None:
        found[title] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    add(sub, f'{title} {name}')

    add(build_parser(), 'ask-user')
    assert 'ask-user inbox link' in found  # a command's own subcommands are documented too
    return found


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


def _public_modules() -> list[str]:
    """Every public module of the package, found by walking it: no part of its dotted name starts with `_`."""
    import pkgutil

    import pydantic_ai_ask_user

    found = ['pydantic_ai_ask_user']
    for module in pkgutil.walk_packages(pydantic_ai_ask_user.__path__, 'pydantic_ai_ask_user.'):
        if not any(part.startswith('_') for part in module.name.split('.')):
            found.append(module.name)
    return found


def test_the_public_modules_are_all_found() -> None:
    found = set(_public_modules())
    assert {'pydantic_ai_ask_user', 'pydantic_ai_ask_user.webhooks', 'pydantic_ai_ask_user.ui.ag_ui'} <= found
    assert not {name for name in found if '._' in name}


@pytest.fixture(scope='module')
def source() -> Any:
    """The package as the API reference reads it (griffe, from the source): a constant's docstring counts too."""
    import griffe

    return griffe.load('pydantic_ai_ask_user', search_paths=[str(ROOT / 'src')], resolve_aliases=True)


@pytest.fixture(scope='module')
def anchors(site: Path) -> set[str]:
    """Every object the built API reference has an entry for, by its dotted path."""
    return {
        anchor
        for page in (site / 'reference').rglob('*.html')
        for anchor in re.findall(r'id="(pydantic_ai_ask_user[\w.]*)"', page.read_text(encoding='utf-8'))
    }


@pytest.mark.parametrize('module', _public_modules())
def test_every_exported_name_has_a_docstring_and_an_entry_in_the_api_reference(
    module: str, source: Any, anchors: set[str]
) -> None:
    import importlib

    exported = importlib.import_module(module).__all__
    assert exported, module
    for name in exported:
        documented = source[
            f'{module}.{name}'.removeprefix('pydantic_ai_ask_user.').removeprefix('pydantic_ai_ask_user')
        ]
        assert documented.docstring is not None, f'{module}.{name} has no docstring'
        assert documented.docstring.value.strip(), f'{module}.{name} has an empty docstring'
        assert f'{module}.{name}' in anchors, f'{module}.{name} is not in the API reference'


def test_the_readme_links_into_the_site_resolve(site: Path) -> None:
    # GitHub shows the README's relative links as they are: each names a page of docs/, and its anchor one of the
    # page's headings (as the built site, whose anchors GitHub's match for these headings, has them).
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    links = re.findall(r'\]\((docs/[^)#\s]+\.md)(?:#([\w-]+))?\)', readme)
    assert len(links) >= 15
    for target, anchor in links:
        assert (ROOT / target).is_file(), target
        if anchor:
            built = site / target.removeprefix('docs/').removesuffix('.md') / 'index.html'
            assert f'id="{anchor}"' in built.read_text(encoding='utf-8'), (target, anchor)
