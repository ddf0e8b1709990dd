"""The public API, the seed's names, and what `import pydantic_ai_ask_user` must never import."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest
import waits

import pydantic_ai_ask_user
import pydantic_ai_ask_user.testing

SEED_NAMES = {
    # Every name the seed imports from `pydantic_ai_harness` or `pydantic_ai_harness.ask_user`.
    'AskUser',
    'AskUserAnswer',
    'AskUserRequest',
    'AskUserResponse',
    'AskUserAnsweredEvent',
    'AskUserRequestedEvent',
    'Answerer',
    'Question',
    'QuestionOption',
    'check_response',
    'TOOL_NAME',
    'DECLINED',
    'MAX_QUESTIONS',
}

HEAVY = ['prompt_toolkit', 'starlette', 'uvicorn', 'sse_starlette', 'jinja2', 'mcp', 'dbos', 'psycopg', 'sqlalchemy']
HEAVY += ['temporalio']  # imported only by `pydantic_ai_ask_user.temporal`
HEAVY += ['prefect']  # imported only by `pydantic_ai_ask_user.prefect`
HEAVY += ['ag_ui']  # the `ag-ui` extra's protocol package, imported only by `pydantic_ai_ask_user.ui.ag_ui`


CORE_MODULES = ['deferred', 'checks', 'json', 'store', 'webhooks', 'receipts', 'i18n', 'limits']
"""The public modules of the core beside the root: what the root exported before 0.2 and does not any more."""

ROOT_API = {
    # The capability and the types of its own parameters, the request and response types, the answerer protocol,
    # the events, the errors a run ends with, and the seed's constants. Anything new goes in a module named for its
    # feature, not here.
    'AskUser',
    'TimeoutMessage',
    'AskUserTimeoutError',
    'Person',
    'QuestionContext',
    'Answerer',
    'DurableAnswerer',
    'AskUserRequest',
    'AskUserResponse',
    'AskUserAnswer',
    'Question',
    'QuestionOption',
    'AskUserRequestedEvent',
    'AskUserAnsweredEvent',
    'QuestionWithdrawn',
    'CannotAskError',
    'DifferentQuestionsError',
    'check_response',
    'TOOL_NAME',
    'DECLINED',
    'TIMED_OUT',
    'WITHDRAWN',
    'MAX_QUESTIONS',
}

PUBLIC_MODULES = [
    pytest.param('pydantic_ai_ask_user', id='root'),
    *(pytest.param(f'pydantic_ai_ask_user.{name}', id=name) for name in CORE_MODULES),
    pytest.param('pydantic_ai_ask_user.testing', id='testing'),
    pytest.param('pydantic_ai_ask_user.ui', id='ui'),
    # Each of these needs its extra installed: `make test-floor` (no extras) leaves them out with `-m 'not extras'`.
    pytest.param('pydantic_ai_ask_user.terminal', id='terminal', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.web', id='web', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.durable', id='durable', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.mcp', id='mcp', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.prefect', id='prefect', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.temporal', id='temporal', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.ui.ag_ui', id='ui.ag_ui', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.ui.vercel_ai', id='ui.vercel_ai', marks=pytest.mark.extras),
]
"""Every public module; each says what it exports in `__all__`, and the tests below hold it to that."""


@pytest.mark.parametrize('name', PUBLIC_MODULES)
def test_each_public_name_is_exported_once_and_defined_in_the_package(name: str) -> None:
    module = importlib.import_module(name)
    exported: tuple[str, ...] = module.__all__
    assert len(set(exported)) == len(exported)
    assert set(dir(module)) >= set(exported)
    for public in exported:
        value = getattr(module, public)
        defined_in = getattr(value, '__module__', None)
        if isinstance(value, type) or inspect.isfunction(value):
            # Defined in a private module of the package, and listed in that module's own `__all__`.
            assert defined_in is not None, public
            assert defined_in.startswith('pydantic_ai_ask_user.'), public
            assert public in sys.modules[defined_in].__all__, (public, defined_in)


@pytest.mark.parametrize('name', PUBLIC_MODULES)
def test_nothing_public_is_left_out_of_all(name: str) -> None:
    # Every class, function and constant a public module holds under a public name is in its `__all__`.
    module = importlib.import_module(name)
    held = {
        public
        for public, value in vars(module).items()
        if not public.startswith('_')
        and not inspect.ismodule(value)
        and public not in {'annotations', 'Any'}
        and public not in {'TYPE_CHECKING'}
    }
    assert held <= set(module.__all__)


def test_the_root_exports_the_names_of_its_modules_own_all() -> None:
    # Derived, not copied: the root's API is what its private modules export, less what they keep for the package.
    import pydantic_ai_ask_user._answers
    import pydantic_ai_ask_user._audience
    import pydantic_ai_ask_user._capability
    import pydantic_ai_ask_user._events
    import pydantic_ai_ask_user._questions

    modules = [
        pydantic_ai_ask_user._answers,
        pydantic_ai_ask_user._audience,
        pydantic_ai_ask_user._capability,
        pydantic_ai_ask_user._events,
        pydantic_ai_ask_user._questions,
    ]
    offered = {public for module in modules for public in module.__all__}
    assert set(pydantic_ai_ask_user.__all__) <= offered


def test_the_root_holds_only_what_every_user_touches() -> None:
    assert set(pydantic_ai_ask_user.__all__) == ROOT_API
    assert len(pydantic_ai_ask_user.__all__) == 23


MOVED = sorted(pydantic_ai_ask_user._MOVED_TO.items())  # pyright: ignore[reportPrivateUsage]


def test_every_name_the_root_gave_up_has_a_public_home_of_the_core() -> None:
    assert not set(pydantic_ai_ask_user._MOVED_TO) & set(pydantic_ai_ask_user.__all__)  # pyright: ignore[reportPrivateUsage]
    for name, module in MOVED:
        assert module in CORE_MODULES, (name, module)
        assert name in importlib.import_module(f'pydantic_ai_ask_user.{module}').__all__, (name, module)


@pytest.mark.parametrize(('name', 'module'), MOVED, ids=[name for name, _ in MOVED])
def test_a_name_the_root_gave_up_still_works_with_a_warning_naming_its_new_import(name: str, module: str) -> None:
    new_home = importlib.import_module(f'pydantic_ai_ask_user.{module}')
    with pytest.warns(DeprecationWarning, match=f'from pydantic_ai_ask_user.{module} import {name}$') as caught:
        value = getattr(pydantic_ai_ask_user, name)
    assert value is getattr(new_home, name)
    assert caught[0].filename == __file__  # the warning points at the line that used the old name
    assert name not in dir(pydantic_ai_ask_user)


def test_the_old_import_statement_warns_at_the_line_of_the_import_every_time() -> None:
    # `from pydantic_ai_ask_user import X` in a user's module: the warning names that module and line, and a
    # second module that does the same is told too (the value is not cached at the root).
    code = (
        'import warnings; warnings.simplefilter("always")\n'
        'from pydantic_ai_ask_user import WebhookNotifier\n'
        'from pydantic_ai_ask_user import WebhookNotifier as again\n'
        'from pydantic_ai_ask_user.webhooks import WebhookNotifier as new\n'
        'print(WebhookNotifier is new is again)\n'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=waits.WAIT, check=True)
    assert done.stdout == 'True\n'
    warned = [line for line in done.stderr.splitlines() if 'DeprecationWarning' in line]
    # (The import system reads the name twice per statement, a `hasattr` probe then the import: under "always"
    # that is two warnings at one line; the default filter shows one per line.)
    assert sorted({line.split(': DeprecationWarning')[0] for line in warned}) == ['<string>:2', '<string>:3']
    assert 'from pydantic_ai_ask_user.webhooks import WebhookNotifier' in warned[0]


def test_the_root_knows_where_each_of_its_names_is_defined_and_no_more() -> None:
    # A name added to `__all__` but not to the table `__getattr__` reads would fail on first use, and a name
    # in the table but not in `__all__` would be public without being declared.
    assert set(pydantic_ai_ask_user._DEFINED_IN) == set(pydantic_ai_ask_user.__all__)  # pyright: ignore[reportPrivateUsage]


def test_the_names_loaded_on_first_use_are_the_real_classes() -> None:
    done = subprocess.run(
        [
            sys.executable,
            '-c',
            'import sys, pydantic_ai_ask_user as p; before = "pydantic_ai" in sys.modules; '
            'from pydantic_ai_ask_user import AskUser; import pydantic_ai_ask_user._capability as c; '
            'print(before, AskUser is c.AskUser, "AskUser" in dir(p), p.AskUserAnsweredEvent.__name__)',
        ],
        capture_output=True,
        text=True,
        timeout=waits.WAIT,
        check=True,
    )
    assert done.stdout.split() == ['False', 'True', 'True', 'AskUserAnsweredEvent']


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = pydantic_ai_ask_user.Nope  # pyright: ignore[reportAttributeAccessIssue]


def test_every_name_the_seed_imports_is_importable_from_the_package() -> None:
    assert set(dir(pydantic_ai_ask_user)) >= SEED_NAMES


def test_the_events_are_capability_events() -> None:
    from pydantic_ai import CapabilityEvent

    assert issubclass(pydantic_ai_ask_user.AskUserRequestedEvent, CapabilityEvent)
    assert issubclass(pydantic_ai_ask_user.AskUserAnsweredEvent, CapabilityEvent)


def test_ask_user_is_a_pydantic_ai_capability() -> None:
    from pydantic_ai.capabilities import AbstractCapability

    assert issubclass(pydantic_ai_ask_user.AskUser, AbstractCapability)


def test_importing_the_package_imports_no_terminal_web_mcp_or_database_library() -> None:
    code = (
        'import json, sys; import pydantic_ai_ask_user, pydantic_ai_ask_user.testing; '
        f'print(json.dumps([m for m in {HEAVY!r} if any(k == m or k.startswith(m + ".") for k in sys.modules)]))'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []


def test_the_check_of_imported_modules_would_see_a_heavy_import() -> None:
    # The check above is only worth something if it notices an import when there is one.
    code = (
        'import json, sys, jinja2; '
        f'print(json.dumps([m for m in {HEAVY!r} if any(k == m or k.startswith(m + ".") for k in sys.modules)]))'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == ['jinja2']
