"""Every ```python example in README.md and on the documentation site (docs/**/*.md) runs, and what it prints
matches its `#>` comments, with no deprecated Pydantic AI class or deprecated import of ours constructed on the way."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

DEPRECATED_IS_AN_ERROR = (
    'error::pydantic_ai.exceptions.PydanticAIDeprecationWarning',
    'error::DeprecationWarning',
)
"""What a reader copies must not warn: Pydantic AI's deprecations (a `UserWarning`, `RequestInput` among them on
2.78) and Python's `DeprecationWarning` (ours for a moved name, a library's) are errors while the examples run."""

pytestmark = [pytest.mark.anyio, *(pytest.mark.filterwarnings(rule) for rule in DEPRECATED_IS_AN_ERROR)]

ROOT = Path(__file__).parent.parent
SOURCES = [ROOT / 'README.md', *sorted((ROOT / 'docs').rglob('*.md'))]
"""The README, the front door, and every page of the site: one set of rules for their examples."""


def _python_examples() -> list[CodeExample]:
    found = [example for example in find_examples(*(str(path) for path in SOURCES if path.exists()))]
    return [example for example in found if example.prefix_tags() & {'py', 'python'} or example.prefix.startswith('py')]


EXAMPLES = _python_examples()
# Fences marked test="skip" need a person at a terminal or a browser; they are not collected at all.
RUNNABLE = [example for example in EXAMPLES if example.prefix_settings().get('test') != 'skip']


def test_the_readme_has_python_examples_to_run() -> None:
    assert any(example.path.name == 'README.md' for example in RUNNABLE)


def test_the_site_has_python_examples_to_run_on_its_pages() -> None:
    # The pages the README's manual moved to: each answerer's page has examples that run.
    pages = {
        example.path.relative_to(ROOT / 'docs').as_posix() for example in RUNNABLE if example.path.name != 'README.md'
    }
    assert {'index.md', 'ko/getting-started.md', 'answerers/testing.md', 'answerers/web.md'} <= pages


@pytest.mark.parametrize('example', RUNNABLE, ids=str)
def test_the_documented_example_runs_as_written(
    example: CodeExample, eval_example: EvalExample, monkeypatch: pytest.MonkeyPatch
) -> None:
    if 'temporal' in example.source:
        # The Temporal examples run their worker in this process. Its deadlock detector interrupts a workflow task
        # that holds the thread for 2 s, which a loaded CI machine can do. The interrupt (an exception set on the
        # thread) can then land in a garbage collector callback, where pytest reports it as unraisable: it failed
        # the CI run on 044f0ed. TEMPORAL_DEBUG turns off only that detector; the sandbox and everything else the
        # example shows still run.
        monkeypatch.setenv('TEMPORAL_DEBUG', '1')
    # Only run them: formatting is the docs' business, not this test's.
    eval_example.set_config(line_length=120, quotes='single')
    eval_example.run_print_check(example)


CONFORMANCE_EXAMPLES = [
    example
    for example in EXAMPLES
    if 'run_conformance(' in example.source and example.prefix_settings().get('test') != 'skip'
]


@pytest.mark.parametrize('example', CONFORMANCE_EXAMPLES, ids=str)
async def test_a_documented_conformance_test_passes_every_scenario(
    example: CodeExample, eval_example: EvalExample
) -> None:
    import inspect

    from pydantic_ai_ask_user.testing import CONFORMANCE_SCENARIOS

    module = eval_example.run(example)
    tests = [value for name, value in module.items() if name.startswith('test_') and inspect.iscoroutinefunction(value)]
    assert tests, 'the example defines no async test to run'
    for test in tests:
        for scenario in CONFORMANCE_SCENARIOS:
            await test(scenario)


def test_what_the_readme_repeats_from_the_docs_is_their_copy() -> None:
    # The README repeats the site's introduction, its 30-second example, its extras and the set-up: each is written
    # once, on its page, and copied by scripts/readme.py. Edit the page, then run `python scripts/readme.py`.
    import importlib.util

    spec = importlib.util.spec_from_file_location('readme_script', ROOT / 'scripts' / 'readme.py')
    assert spec is not None
    assert spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    assert script.blocks(readme) == [
        ('docs/index.md', 'intro'),
        ('docs/index.md', 'In 30 seconds'),
        ('docs/index.md', 'Install'),
        ('docs/getting-started.md', 'Set-up: two commands'),
    ]
    assert script.render(readme) == readme, 'README.md differs from the docs it repeats: run python scripts/readme.py'


@pytest.mark.parametrize('page', [ROOT / 'README.md', ROOT / 'docs' / 'index.md'], ids=['README', 'site'])
def test_the_front_door_says_how_this_package_relates_to_the_harness_and_why_not_both(page: Path) -> None:
    import tomllib

    floor = next(
        requirement.removeprefix('pydantic-ai-slim>=')
        for requirement in tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['dependencies']
        if requirement.startswith('pydantic-ai-slim>=')
    )
    text = ' '.join(page.read_text(encoding='utf-8').split())
    assert 'the same names and the same `ask_user_question` tool' in text
    assert f'The harness pins `pydantic-ai-slim==2.62` and this package needs {floor} or newer' in text
