"""The public API, the seed's names, and what `import pydantic_ai_ask_user` must never import."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
import warnings

import pytest
import waits

import pydantic_ai_ask_user
import pydantic_ai_ask_user.testing

REFERENCE_NAMES = [
    # Every name the reference's `pydantic_ai_harness.ask_user` module exports, so a program written for it runs
    # after changing only its imports: the names the seed imports and its API reference lists, and
    # `ask_user_result`, which programs that answer deferred calls import from it (issue 32). The other names the
    # root once held (webhooks, receipts, stores, JSON, i18n, limits) are this package's own, not the reference's.
    'AskUser',
    'Answerer',
    'AskUserRequest',
    'AskUserResponse',
    'AskUserAnswer',
    'Question',
    'QuestionOption',
    'AskUserRequestedEvent',
    'AskUserAnsweredEvent',
    'check_response',
    'TOOL_NAME',
    'DECLINED',
    'MAX_QUESTIONS',
    'ask_user_result',
]

HEAVY = ['prompt_toolkit', 'starlette', 'uvicorn', 'sse_starlette', 'jinja2', 'mcp', 'dbos', 'psycopg', 'sqlalchemy']
HEAVY += ['temporalio']  # imported only by `pydantic_ai_ask_user.temporal`
HEAVY += ['prefect']  # imported only by `pydantic_ai_ask_user.prefect`
HEAVY += ['ag_ui']  # the `ag-ui` extra's protocol package, imported only by `pydantic_ai_ask_user.ui.ag_ui`
HEAVY += ['slack_sdk']  # the `slack` extra's, imported only by `pydantic_ai_ask_user.notify.slack`


CORE_MODULES = ['deferred', 'checks', 'json', 'store', 'webhooks', 'receipts', 'i18n', 'limits']
"""The public modules of the core beside the root."""

ROOT_API = {
    # The capability and the types of its own parameters, the request and response types, the answerer protocol,
    # the events, the errors a run ends with, and the reference's names. Anything new goes in a module named for its
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
    'ask_user_result',
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
    pytest.param('pydantic_ai_ask_user.hub', id='hub'),
    # Each of these needs its extra installed: `make test-floor` (no extras) leaves them out with `-m 'not extras'`.
    pytest.param('pydantic_ai_ask_user.terminal', id='terminal', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.web', id='web', marks=pytest.mark.extras),
    pytest.param('pydantic_ai_ask_user.dbos', id='dbos', marks=pytest.mark.extras),
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
    import pydantic_ai_ask_user._question_limits
    import pydantic_ai_ask_user._questions

    modules = [
        pydantic_ai_ask_user._question_limits,
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
    assert len(pydantic_ai_ask_user.__all__) == 24


FORMER_ROOT_NAMES = {
    # What the root exported before 0.2 and does not any more, each with the public module that holds it now (the
    # changelog's table): at the root it is the plain `AttributeError`, with no warning and no second way in.
    'AnswerResult': 'deferred',
    'deferred_answer': 'deferred',
    'RUN_ID_METADATA_KEY': 'deferred',
    'RUN_STEP_METADATA_KEY': 'deferred',
    'check_same_questions': 'checks',
    'check_custom_answer': 'checks',
    'check_answered_by': 'checks',
    'printable': 'checks',
    'questions_to_json': 'json',
    'response_from_json': 'json',
    'response_to_json': 'json',
    'read_response': 'json',
    'RESPONSE_JSON_SCHEMA': 'json',
    'QuestionStore': 'store',
    'StoreEvent': 'store',
    'StoreError': 'store',
    'UnknownRequestError': 'store',
    'AlreadyAnsweredError': 'store',
    'WithdrawnError': 'store',
    'notify_then': 'webhooks',
    'NotifyingAnswerer': 'webhooks',
    'WebhookNotifier': 'webhooks',
    'WebhookFailure': 'webhooks',
    'question_waiting_payload': 'webhooks',
    'sign_webhook': 'webhooks',
    'verify_webhook': 'webhooks',
    'WEBHOOK_SIGNATURE_HEADER': 'webhooks',
    'WEBHOOK_EVENT_HEADER': 'webhooks',
    'WEBHOOK_TOLERANCE': 'webhooks',
    'SignatureError': 'webhooks',
    'AnswerReceipt': 'receipts',
    'sign_receipt': 'receipts',
    'verify_receipt': 'receipts',
    'receipt_to_json': 'receipts',
    'receipt_from_json': 'receipts',
    'os_user_at_host': 'receipts',
    'translator': 'i18n',
    'Translator': 'i18n',
    'negotiate_terminal': 'i18n',
    'negotiate_http': 'i18n',
    'available_languages': 'i18n',
    'MIN_OPTIONS': 'limits',
    'MAX_OPTIONS': 'limits',
    'MAX_HEADER_LENGTH': 'limits',
    'MAX_QUESTION_LENGTH': 'limits',
    'MAX_LABEL_LENGTH': 'limits',
    'MAX_DESCRIPTION_LENGTH': 'limits',
    'MAX_CUSTOM_ANSWER_LENGTH': 'limits',
    'MAX_NOTE_LENGTH': 'limits',
    'MAX_ANSWERED_BY_LENGTH': 'limits',
}


def test_every_name_the_reference_exports_imports_from_the_root_without_a_warning() -> None:
    # In a fresh interpreter, so each name is loaded (not found already loaded) with every warning an error.
    code = (
        'import warnings; warnings.simplefilter("error")\n'
        f'from pydantic_ai_ask_user import {", ".join(REFERENCE_NAMES)}\n'
        'import pydantic_ai_ask_user.deferred as deferred\n'
        'print(ask_user_result is deferred.ask_user_result)\n'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=waits.WAIT)
    assert (done.returncode, done.stdout, done.stderr) == (0, 'True\n', '')


def test_the_reference_names_are_the_root_api() -> None:
    assert set(REFERENCE_NAMES) <= set(pydantic_ai_ask_user.__all__)


@pytest.mark.parametrize(('name', 'module'), sorted(FORMER_ROOT_NAMES.items()), ids=sorted(FORMER_ROOT_NAMES))
def test_a_name_the_root_gave_up_lives_only_in_its_module(name: str, module: str) -> None:
    assert module in CORE_MODULES
    assert name in importlib.import_module(f'pydantic_ai_ask_user.{module}').__all__
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(pydantic_ai_ask_user, name)
    assert name not in dir(pydantic_ai_ask_user)


def test_a_name_a_private_module_defines_but_the_root_does_not_export_is_not_found_at_the_root() -> None:
    # The root looks its names up in its private modules: only the names of its `__all__`.
    import pydantic_ai_ask_user._answers

    assert 'check_tool_result' in pydantic_ai_ask_user._answers.__all__
    with pytest.raises(AttributeError, match="has no attribute 'check_tool_result'"):
        _ = pydantic_ai_ask_user.check_tool_result  # pyright: ignore[reportAttributeAccessIssue]


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
