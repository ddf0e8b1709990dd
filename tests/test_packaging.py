"""The wheel as a user installs it: typed (`py.typed`), versioned, and with an `[all]` extra that is every extra.

The wheel is built from this tree with `uv build` and installed with `uv pip` into a fresh virtual environment,
offline (from uv's cache, which `uv sync` filled); pyright then checks, in strict mode, a file that uses the library
the way an application does. `ask-user inbox` runs from the installed wheel: without its extras it names them (the
wheel's own install), and with `[web,dbos]` (the lock's versions) it serves a database and signs a browser in.
About twenty seconds on an idle machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import httpx
import pytest
import waits
from ask_user_support import uv_command
from inbox_support import ask_user, inbox, link
from packaging.requirements import Requirement

from pydantic_ai_ask_user.dbos import DBOSQuestionStore

ROOT = Path(__file__).resolve().parent.parent
"""The repository: the project the wheel is built from."""

PYRIGHT = Path(sys.executable).with_name('pyright')
"""The dev environment's pyright, run on the user's file against the fresh environment's packages."""

USER_CODE = """\
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

import pydantic_ai_ask_user
from pydantic_ai_ask_user import AskUser, AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user.testing import ScriptedAnswerer


async def pick_first(request: AskUserRequest) -> AskUserResponse:
    answers = [AskUserAnswer(header=q.header, selected=(q.options[0].label,)) for q in request.questions]
    return AskUserResponse(answers=tuple(answers))


option: QuestionOption = QuestionOption(label='SQLite')
question: Question = Question(header='Database', question='Which?', options=(option, QuestionOption(label='MySQL')))
agent = Agent(TestModel(call_tools=[]), capabilities=[AskUser(answerer=pick_first)])
scripted = AskUser(answerer=ScriptedAnswerer({'Database': 'SQLite'}))
version: str = pydantic_ai_ask_user.__version__
"""
"""An application's use of the library: every name must come typed, none `Unknown`."""


def _offline() -> dict[str, str]:
    return {**os.environ, 'UV_OFFLINE': '1', 'UV_NO_PROGRESS': '1'}


@pytest.fixture(scope='module')
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp('dist')
    subprocess.run(
        [*uv_command(), 'build', '--wheel', '--out-dir', str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=waits.WAIT,
        env=_offline(),
    )
    (built,) = out.glob('*.whl')
    return built


@pytest.fixture(scope='module')
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and its dependencies, and nothing of this checkout; its python."""
    venv = tmp_path_factory.mktemp('venv') / 'env'
    uv = uv_command()
    # The interpreter the tests run on (the dev environment's base), so no Python is downloaded.
    subprocess.run(
        [*uv, 'venv', '-q', str(venv), '--python', sys.executable], check=True, timeout=waits.WAIT, env=_offline()
    )
    python = venv / 'bin' / 'python'
    subprocess.run(
        [*uv, 'pip', 'install', '-q', '--python', str(python), str(wheel)],
        check=True,
        capture_output=True,
        timeout=waits.WAIT,
        env=_offline(),
    )
    return python


@pytest.fixture(scope='module')
def installed_for_the_inbox(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and its `web` and `dbos` extras, what `ask-user inbox --db` needs."""
    venv = tmp_path_factory.mktemp('venv-inbox') / 'env'
    uv = uv_command()
    subprocess.run(
        [*uv, 'venv', '-q', str(venv), '--python', sys.executable], check=True, timeout=waits.WAIT, env=_offline()
    )
    python = venv / 'bin' / 'python'
    # The lock's versions, which uv's cache holds: offline, the newest of each is not there to resolve to.
    exported = subprocess.run(
        [*uv, 'export', '--frozen', '--no-hashes', '--all-extras', '--no-emit-project', '-q'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=waits.WAIT,
        env=_offline(),
    )
    constraints = venv.parent / 'constraints.txt'
    constraints.write_text(exported.stdout, encoding='utf-8')
    subprocess.run(
        [*uv, 'pip', 'install', '-q', '--python', str(python), '-c', str(constraints), f'{wheel}[web,dbos]'],
        check=True,
        capture_output=True,
        timeout=waits.WAIT,
        env=_offline(),
    )
    return python


def test_the_wheel_carries_py_typed(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        assert 'pydantic_ai_ask_user/py.typed' in archive.namelist()


def test_pyright_strict_sees_the_installed_library_as_typed(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / 'app'
    project.mkdir()
    (project / 'app.py').write_text(USER_CODE, encoding='utf-8')
    # reportMissingTypeStubs is what a package without py.typed gets in strict mode; made an error, as mypy does.
    (project / 'pyrightconfig.json').write_text(
        '{"typeCheckingMode": "strict", "reportMissingTypeStubs": "error"}', encoding='utf-8'
    )
    done = subprocess.run(
        [str(PYRIGHT), '--pythonpath', str(installed), 'app.py'],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
    )
    assert done.returncode == 0, done.stdout
    assert '0 errors, 0 warnings' in done.stdout
    # The library pyright checked is the installed wheel, not this checkout.
    located = subprocess.run(
        [str(installed), '-c', 'import pydantic_ai_ask_user; print(pydantic_ai_ask_user.__file__)'],
        capture_output=True,
        text=True,
        check=True,
        timeout=waits.WAIT,
    )
    assert str(ROOT) not in located.stdout


def test_the_installed_wheel_knows_its_version(installed: Path) -> None:
    version = tomllib.loads((ROOT / 'pyproject.toml').read_text(encoding='utf-8'))['project']['version']
    script = installed.with_name('ask-user')
    done = subprocess.run([str(script), '--version'], capture_output=True, text=True, timeout=waits.WAIT)
    assert (done.returncode, done.stdout) == (0, f'ask-user {version}\n')
    printed = subprocess.run(
        [str(installed), '-c', 'import pydantic_ai_ask_user; print(pydantic_ai_ask_user.__version__)'],
        capture_output=True,
        text=True,
        check=True,
        timeout=waits.WAIT,
    )
    assert printed.stdout == f'{version}\n'


def _metadata(wheel: Path) -> tuple[set[str], list[Requirement]]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [name for name in archive.namelist() if name.endswith('.dist-info/METADATA')]
        message = Parser().parsestr(archive.read(name).decode('utf-8'))
    return set(message.get_all('Provides-Extra') or []), [
        Requirement(text) for text in message.get_all('Requires-Dist')
    ]


def test_the_all_extra_is_every_extra(wheel: Path) -> None:
    extras, requirements = _metadata(wheel)
    assert {'terminal', 'web', 'ag-ui', 'vercel-ai', 'dbos', 'mcp', 'temporal', 'prefect', 'all'} <= extras

    def needed_by(extra: str) -> set[str]:
        # Each requirement without its marker: the package, its extras and its versions.
        return {
            str(Requirement(str(requirement).split(';', 1)[0]))
            for requirement in requirements
            if requirement.marker is not None and requirement.marker.evaluate({'extra': extra})
        }

    # What `[all]` installs is what all the others do together: a new extra left out of `all` fails here.
    assert needed_by('all') == set[str]().union(*(needed_by(extra) for extra in extras - {'all'}))


@pytest.mark.parametrize('page', ['README.md', 'docs/getting-started.md'])
def test_the_install_section_names_every_extra(page: str) -> None:
    # The README's short one and the full one of Getting started.
    text = (ROOT / page).read_text(encoding='utf-8')
    install = text.split('\n## Install\n', 1)[1].split('\n## ', 1)[0]
    extras = tomllib.loads((ROOT / 'pyproject.toml').read_text(encoding='utf-8'))['project']['optional-dependencies']
    for extra in extras:
        assert f"'pydantic-ai-ask-user[{extra}]'" in install, extra


def test_ask_user_inbox_without_its_extras_names_them_with_the_wheel(
    installed: Path, wheel: Path, tmp_path: Path
) -> None:
    done = ask_user(
        tmp_path, 'inbox', '--db', f'sqlite:///{tmp_path / "q.sqlite"}', command=[str(installed.with_name('ask-user'))]
    )
    assert done.returncode == 4, done.stderr
    assert f"install the web extra: pip install '{wheel}[web]'" in done.stderr


@pytest.mark.anyio
async def test_ask_user_inbox_serves_from_the_installed_wheel_with_web_and_dbos(
    installed_for_the_inbox: Path, tmp_path: Path
) -> None:
    # Not from `examples/` nor this checkout: the installed script, its package and nothing else.
    located = subprocess.run(
        [str(installed_for_the_inbox), '-c', 'import pydantic_ai_ask_user; print(pydantic_ai_ask_user.__file__)'],
        capture_output=True,
        text=True,
        check=True,
        timeout=waits.WAIT,
    )
    assert str(ROOT) not in located.stdout
    database = f'sqlite:///{tmp_path / "questions.sqlite"}'
    async with DBOSQuestionStore(database) as store:  # a question table, nothing waiting
        assert await store.count_pending() == 0
    command = [str(installed_for_the_inbox.with_name('ask-user'))]
    # A browser opening a link from another program sends `Sec-Fetch-Site: none`, and is signed in at once.
    opened = {'sec-fetch-site': 'none'}
    async with (
        inbox(tmp_path, '--db', database, command=command) as served,
        httpx.AsyncClient(headers=opened) as browser,
    ):
        assert (await browser.get(served.admin_link)).status_code == 303
        listed = await browser.get(served.base + 'api/requests')
        assert listed.status_code == 200, listed.text
        assert listed.json()['total'] == 0
        assert link(tmp_path, 'alice', '--db', database, command=command).startswith(served.base + 'login?code=')
