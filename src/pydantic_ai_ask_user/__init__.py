"""Let a Pydantic AI agent stop mid-run, ask a person multiple-choice questions, and get the answers as data.

The root holds what every user touches: the capability (`AskUser`) with who may answer (`Person`) and where a
question comes from (`QuestionContext`), the request and response types, the answerer protocol, the two events and
the errors a run can end with. The rest lives where its name says: `.deferred`, `.checks`, `.json`, `.store`,
`.webhooks`, `.receipts`, `.i18n`, `.limits`, and the front ends `.terminal`, `.web`, `.testing`, `.mcp`, `.ui`,
`.durable`, `.temporal`, `.prefect`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _module_names

if TYPE_CHECKING:
    from ._answers import (
        DECLINED,
        TIMED_OUT,
        TOOL_NAME,
        WITHDRAWN,
        Answerer,
        AskUserAnswer,
        AskUserRequest,
        AskUserResponse,
        CannotAskError,
        DifferentQuestionsError,
        DurableAnswerer,
        QuestionWithdrawn,
        check_response,
    )
    from ._audience import (
        Person,
        QuestionContext,
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
    from ._questions import (
        MAX_QUESTIONS,
        Question,
        QuestionOption,
    )
    from ._version import __version__ as __version__

__all__ = (
    'AskUser',
    'TimeoutMessage',
    'AskUserTimeoutError',
    'Answerer',
    'DurableAnswerer',
    'AskUserRequest',
    'AskUserResponse',
    'AskUserAnswer',
    'Person',
    'QuestionContext',
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
)

_DEFINED_IN = {
    'AskUser': '_capability',
    'TimeoutMessage': '_capability',
    'AskUserTimeoutError': '_capability',
    'Answerer': '_answers',
    'DurableAnswerer': '_answers',
    'AskUserRequest': '_answers',
    'AskUserResponse': '_answers',
    'AskUserAnswer': '_answers',
    'Person': '_audience',
    'QuestionContext': '_audience',
    'Question': '_questions',
    'QuestionOption': '_questions',
    'AskUserRequestedEvent': '_events',
    'AskUserAnsweredEvent': '_events',
    'QuestionWithdrawn': '_answers',
    'CannotAskError': '_answers',
    'DifferentQuestionsError': '_answers',
    'check_response': '_answers',
    'TOOL_NAME': '_answers',
    'DECLINED': '_answers',
    'TIMED_OUT': '_answers',
    'WITHDRAWN': '_answers',
    'MAX_QUESTIONS': '_questions',
}
"""Which private module defines each public name: `__getattr__` imports it on first use."""

_MOVED_TO = {
    'ask_user_result': 'deferred',
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
"""Names the root exported before 0.2, and the public module that holds each now.

Read from the root they still work, for one release, with a `DeprecationWarning` naming the new import.
"""

__getattr__ = _module_names.lazy_names(__name__, globals(), {**_DEFINED_IN, '__version__': '_version'}, moved=_MOVED_TO)
"""Load a public name on first use, with the module that defines it (PEP 562).

`import pydantic_ai_ask_user` costs next to nothing: the question models are built when first used,
and Pydantic AI is imported only for `AskUser` and the two events. `ask-user --help` and `ask` start
fast because of it. Each name is then kept here, so later lookups are plain attribute reads. `__version__`
too (not in `__all__`, as a star import should not bring it): it is read from the package metadata when first used.
A name in `_MOVED_TO` is read from its new module, with a warning each time (so each place that still uses it
is told), and is never kept here.
"""


def __dir__() -> list[str]:
    """Every public name of the package, loaded or not (the moved names are not listed: they are not its API)."""
    return sorted({*globals(), *__all__, '__version__'})
