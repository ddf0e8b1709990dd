"""Let a Pydantic AI agent stop mid-run, ask a person multiple-choice questions, and get the answers as data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _module_names

if TYPE_CHECKING:
    from ._answers import (
        DECLINED,
        MAX_ANSWERED_BY_LENGTH,
        MAX_CUSTOM_ANSWER_LENGTH,
        MAX_NOTE_LENGTH,
        TIMED_OUT,
        TOOL_NAME,
        Answerer,
        AnswerResult,
        AskUserAnswer,
        AskUserRequest,
        AskUserResponse,
        CannotAskError,
        DurableAnswerer,
        ask_user_result,
        check_answered_by,
        check_custom_answer,
        check_response,
        deferred_answer,
    )
    from ._capability import (
        AskUser,
        AskUserTimeoutError,
        TimeoutMessage,
    )
    from ._events import (
        AskUserAnsweredEvent,
        AskUserRequestedEvent,
    )
    from ._i18n import (
        Translator,
        available_languages,
        negotiate_http,
        negotiate_terminal,
        translator,
    )
    from ._json import (
        RESPONSE_JSON_SCHEMA,
        questions_to_json,
        read_response,
        response_from_json,
        response_to_json,
    )
    from ._notify import (
        WEBHOOK_EVENT_HEADER,
        WEBHOOK_SIGNATURE_HEADER,
        WEBHOOK_TOLERANCE,
        NotifyingAnswerer,
        WebhookFailure,
        WebhookNotifier,
        notify_then,
        question_waiting_payload,
        sign_webhook,
        verify_webhook,
    )
    from ._question_store import (
        AlreadyAnsweredError,
        QuestionStore,
        StoreError,
        StoreEvent,
        UnknownRequestError,
        WithdrawnError,
    )
    from ._questions import (
        MAX_DESCRIPTION_LENGTH,
        MAX_HEADER_LENGTH,
        MAX_LABEL_LENGTH,
        MAX_OPTIONS,
        MAX_QUESTION_LENGTH,
        MAX_QUESTIONS,
        MIN_OPTIONS,
        Question,
        QuestionOption,
    )
    from ._receipt import (
        AnswerReceipt,
        os_user_at_host,
        receipt_from_json,
        receipt_to_json,
        sign_receipt,
        verify_receipt,
    )
    from ._signing import (
        SignatureError,
    )
    from ._text import (
        printable,
    )

__all__ = (
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
    'check_answered_by',
    'ask_user_result',
    'deferred_answer',
    'AnswerResult',
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
    'MAX_NOTE_LENGTH',
    'MAX_ANSWERED_BY_LENGTH',
)

_DEFINED_IN = {
    'DECLINED': '_answers',
    'MAX_CUSTOM_ANSWER_LENGTH': '_answers',
    'TIMED_OUT': '_answers',
    'TOOL_NAME': '_answers',
    'Answerer': '_answers',
    'AskUserAnswer': '_answers',
    'AskUserRequest': '_answers',
    'AskUserResponse': '_answers',
    'CannotAskError': '_answers',
    'DurableAnswerer': '_answers',
    'ask_user_result': '_answers',
    'check_custom_answer': '_answers',
    'check_response': '_answers',
    'check_answered_by': '_answers',
    'deferred_answer': '_answers',
    'AnswerResult': '_answers',
    'MAX_NOTE_LENGTH': '_answers',
    'MAX_ANSWERED_BY_LENGTH': '_answers',
    'MAX_DESCRIPTION_LENGTH': '_questions',
    'MAX_HEADER_LENGTH': '_questions',
    'MAX_LABEL_LENGTH': '_questions',
    'MAX_OPTIONS': '_questions',
    'MAX_QUESTION_LENGTH': '_questions',
    'MAX_QUESTIONS': '_questions',
    'MIN_OPTIONS': '_questions',
    'Question': '_questions',
    'QuestionOption': '_questions',
    'RESPONSE_JSON_SCHEMA': '_json',
    'questions_to_json': '_json',
    'read_response': '_json',
    'response_from_json': '_json',
    'response_to_json': '_json',
    'AlreadyAnsweredError': '_question_store',
    'QuestionStore': '_question_store',
    'StoreError': '_question_store',
    'StoreEvent': '_question_store',
    'UnknownRequestError': '_question_store',
    'WithdrawnError': '_question_store',
    'printable': '_text',
    'AskUser': '_capability',
    'AskUserTimeoutError': '_capability',
    'TimeoutMessage': '_capability',
    'AskUserAnsweredEvent': '_events',
    'AskUserRequestedEvent': '_events',
    'notify_then': '_notify',
    'NotifyingAnswerer': '_notify',
    'WebhookNotifier': '_notify',
    'WebhookFailure': '_notify',
    'question_waiting_payload': '_notify',
    'sign_webhook': '_notify',
    'verify_webhook': '_notify',
    'WEBHOOK_SIGNATURE_HEADER': '_notify',
    'WEBHOOK_EVENT_HEADER': '_notify',
    'WEBHOOK_TOLERANCE': '_notify',
    'SignatureError': '_signing',
    'AnswerReceipt': '_receipt',
    'sign_receipt': '_receipt',
    'verify_receipt': '_receipt',
    'receipt_to_json': '_receipt',
    'receipt_from_json': '_receipt',
    'os_user_at_host': '_receipt',
    'translator': '_i18n',
    'Translator': '_i18n',
    'negotiate_terminal': '_i18n',
    'negotiate_http': '_i18n',
    'available_languages': '_i18n',
}
"""Which private module defines each public name: `__getattr__` imports it on first use."""


__getattr__ = _module_names.lazy_names(__name__, globals(), _DEFINED_IN)
"""Load a public name on first use, with the module that defines it (PEP 562).

`import pydantic_ai_ask_user` costs next to nothing: the question models are built when first used,
and Pydantic AI is imported only for `AskUser` and the two events. `ask-user --help` and `ask` start
fast because of it. Each name is then kept here, so later lookups are plain attribute reads.
"""


def __dir__() -> list[str]:
    """Every public name of the package, loaded or not."""
    return sorted({*globals(), *__all__})
