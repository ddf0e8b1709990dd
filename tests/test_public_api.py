"""The public API, the seed's names, and what `import pydantic_ai_ask_user` must never import."""

from __future__ import annotations

import json
import subprocess
import sys

import pydantic_ai_ask_user
import pydantic_ai_ask_user.testing

PUBLIC = {
    'AskUser',
    'AskUserTimeoutError',
    'TimeoutMessage',
    'Answerer',
    'DurableAnswerer',
    'AskUserRequest',
    'AskUserResponse',
    'AskUserAnswer',
    'Question',
    'QuestionOption',
    'AskUserRequestedEvent',
    'AskUserAnsweredEvent',
    'check_response',
    'CannotAskError',
    'check_custom_answer',
    'ask_user_result',
    'printable',
    'response_from_json',
    'response_to_json',
    'read_response',
    'questions_to_json',
    'RESPONSE_JSON_SCHEMA',
    'QuestionStore',
    'StoreEvent',
    'StoreError',
    'UnknownRequestError',
    'AlreadyAnsweredError',
    'WithdrawnError',
    'TOOL_NAME',
    'DECLINED',
    'TIMED_OUT',
    'MAX_QUESTIONS',
    'MIN_OPTIONS',
    'MAX_OPTIONS',
    'MAX_HEADER_LENGTH',
    'MAX_QUESTION_LENGTH',
    'MAX_LABEL_LENGTH',
    'MAX_DESCRIPTION_LENGTH',
    'MAX_CUSTOM_ANSWER_LENGTH',
    # Reaching people and proving answers (issue 12): webhooks, signed receipts, message catalogs.
    'notify_then',
    'NotifyingAnswerer',
    'WebhookNotifier',
    'WebhookFailure',
    'question_waiting_payload',
    'sign_webhook',
    'verify_webhook',
    'WEBHOOK_SIGNATURE_HEADER',
    'WEBHOOK_EVENT_HEADER',
    'WEBHOOK_TOLERANCE',
    'SignatureError',
    'AnswerReceipt',
    'sign_receipt',
    'verify_receipt',
    'receipt_to_json',
    'receipt_from_json',
    'os_user_at_host',
    'translator',
    'Translator',
    'negotiate_terminal',
    'negotiate_http',
    'available_languages',
}

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


def test_the_package_exports_exactly_the_public_api() -> None:
    assert set(pydantic_ai_ask_user.__all__) == PUBLIC
    assert len(pydantic_ai_ask_user.__all__) == len(PUBLIC)
    for name in PUBLIC:
        assert getattr(pydantic_ai_ask_user, name) is not None


def test_every_name_the_seed_imports_is_importable_from_the_package() -> None:
    assert set(dir(pydantic_ai_ask_user)) >= SEED_NAMES


def test_the_testing_kit_exports_its_api() -> None:
    assert set(pydantic_ai_ask_user.testing.__all__) == {
        'ScriptedAnswerer',
        'PersonaAnswerer',
        'Custom',
        'DECLINE',
        'Reply',
        'Driver',
        'ConformanceScenario',
        'CONFORMANCE_SCENARIOS',
        'run_conformance',
        'asking_model',
        'DEFAULT_QUESTION',
    }


def test_public_objects_say_they_come_from_the_package_modules() -> None:
    for name in PUBLIC:
        value = getattr(pydantic_ai_ask_user, name)
        module = getattr(value, '__module__', None)
        if module is not None and isinstance(value, type):
            assert module.startswith('pydantic_ai_ask_user.'), name


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
