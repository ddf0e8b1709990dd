"""A missing extra is named with an install command that works where ask-user was installed from."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_without

import pydantic_ai_ask_user._cli.install as cli_install
from pydantic_ai_ask_user._cli import main
from pydantic_ai_ask_user._cli.install import install_hint

VALID = {'questions': [{'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]}


def _installed_from(monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, Any] | None) -> None:
    monkeypatch.setattr(cli_install, '_direct_url', lambda: direct_url)


def test_from_the_registry_the_hint_is_pip_install_with_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _installed_from(monkeypatch, None)
    assert install_hint('web') == "install the web extra: pip install 'pydantic-ai-ask-user[web]'"


def test_in_a_clone_synced_with_uv_the_hint_is_uv_sync_all_extras(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / 'uv.lock').write_text('', encoding='utf-8')
    _installed_from(monkeypatch, {'url': tmp_path.as_uri(), 'dir_info': {'editable': True}})
    assert install_hint('web') == (
        f"install the web extra: uv sync --all-extras (in {tmp_path}), or pip install -e '{tmp_path}[web]'"
    )


def test_from_a_source_directory_without_uv_the_hint_is_pip_install_of_that_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed_from(monkeypatch, {'url': tmp_path.as_uri(), 'dir_info': {}})
    assert install_hint('dbos') == f"install the dbos extra: pip install '{tmp_path}[dbos]'"


def test_from_a_built_wheel_the_hint_installs_that_wheel_with_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    wheel = tmp_path / 'pydantic_ai_ask_user-0.1.0-py3-none-any.whl'
    wheel.write_bytes(b'')
    _installed_from(monkeypatch, {'url': wheel.as_uri(), 'archive_info': {}})
    assert install_hint('terminal') == f"install the terminal extra: pip install '{wheel}[terminal]'"


def test_this_checkout_is_recognised_as_a_clone() -> None:
    root = Path(__file__).resolve().parents[2]
    assert install_hint('web').startswith(f'install the web extra: uv sync --all-extras (in {root})')


def test_ask_web_without_the_web_extra_names_an_install_that_works_in_a_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pydantic_ai_ask_user._cli.asking as cli_ask

    def missing(args: Any) -> Any:
        raise ImportError("No module named 'starlette'")

    monkeypatch.setattr(cli_ask, '_web_opener', missing)
    path = tmp_path / 'questions.json'
    path.write_text(json.dumps(VALID), encoding='utf-8')
    assert main(['ask', '--web', str(path)]) == 4
    err = capsys.readouterr().err
    assert err == f"ask-user: No module named 'starlette'; {install_hint('web')}\n"
    assert 'uv sync --all-extras' in err


@pytest.mark.parametrize('text', [None, '', 'not json', '[1]'])
def test_an_install_record_that_says_nothing_usable_falls_back_to_the_registry(
    monkeypatch: pytest.MonkeyPatch, text: str | None
) -> None:
    class Distribution:
        def read_text(self, name: str) -> str | None:
            return text

    # The install hint imports `importlib.metadata` when it is given (not at start-up), and reads it there.
    monkeypatch.setattr(importlib.metadata, 'distribution', lambda name: Distribution())
    assert install_hint('web') == "install the web extra: pip install 'pydantic-ai-ask-user[web]'"


def test_without_an_installed_distribution_the_hint_is_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import PackageNotFoundError

    def not_installed(name: str) -> Any:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, 'distribution', not_installed)
    assert install_hint('web') == "install the web extra: pip install 'pydantic-ai-ask-user[web]'"


@pytest.mark.parametrize('url', [42, 'https://example.com/pydantic_ai_ask_user-0.1.0-py3-none-any.whl'])
def test_an_install_from_somewhere_that_is_not_a_local_path_gets_the_registry_hint(
    monkeypatch: pytest.MonkeyPatch, url: object
) -> None:
    _installed_from(monkeypatch, {'url': url, 'archive_info': {}})
    assert install_hint('web') == "install the web extra: pip install 'pydantic-ai-ask-user[web]'"


@pytest.mark.parametrize(
    ('hidden', 'args', 'extra'),
    [
        pytest.param('mcp', [], 'mcp', id='mcp'),
        pytest.param('prompt_toolkit', [], 'terminal', id='terminal'),
        pytest.param('jinja2', ['--web'], 'web', id='web'),
        pytest.param('dbos', ['--db', 'sqlite:///questions.sqlite'], 'dbos', id='dbos'),
    ],
)
def test_ask_user_mcp_without_an_extra_gives_the_hint_every_command_gives(
    hidden: str, args: list[str], extra: str
) -> None:
    done = run_without(hidden, 'mcp', *args)
    assert done.returncode == 4, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith('ask-user: ')
    # The install that works where this ask-user came from (a clone here), not the registry's name.
    assert line.endswith(f'; {install_hint(extra)}'), line
    assert f"pip install 'pydantic-ai-ask-user[{extra}]'" not in line


@pytest.mark.parametrize(
    ('hidden', 'args', 'extra'),
    [
        pytest.param('starlette', ['--db', 'sqlite:///questions.sqlite'], 'web', id='web'),
        pytest.param('uvicorn', ['--db', 'sqlite:///questions.sqlite'], 'web', id='uvicorn'),
        pytest.param('sqlalchemy,psycopg', ['--db', 'postgresql://ask@127.0.0.1:1/app'], 'dbos', id='dbos'),
        pytest.param('temporalio', ['--temporal', '127.0.0.1:1'], 'temporal', id='temporal'),
    ],
)
def test_ask_user_inbox_without_an_extra_gives_the_hint_every_command_gives(
    hidden: str, args: list[str], extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the missing SQLite file is never reached: the missing extra is said first
    monkeypatch.setenv('XDG_CONFIG_HOME', str(tmp_path / 'config'))
    done = run_without(hidden, 'inbox', *args, '--port', '0')
    assert done.returncode == 4, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith('ask-user: ')
    assert line.endswith(f'; {install_hint(extra)}'), line
    assert not (tmp_path / 'config').exists()  # no key file made for an inbox that cannot start
