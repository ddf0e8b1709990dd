"""Let a Pydantic AI agent stop mid-run, ask a person multiple-choice questions, and get the answers as data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._answers import (
    DECLINED,
    MAX_CUSTOM_ANSWER_LENGTH,
    TIMED_OUT,
    TOOL_NAME,
    Answerer,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    CannotAskError,
    DurableAnswerer,
    ask_user_result,
    check_custom_answer,
    check_response,
)
from ._json import RESPONSE_JSON_SCHEMA, questions_to_json, read_response, response_from_json, response_to_json
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
from ._text import printable

if TYPE_CHECKING:
    from ._capability import AskUser
    from ._events import AskUserAnsweredEvent, AskUserRequestedEvent

_LAZY = ('AskUser', 'AskUserRequestedEvent', 'AskUserAnsweredEvent')
"""Names whose modules import Pydantic AI, loaded on first use so that `ask-user ask` and the front ends start fast."""

__all__ = (
    'AskUser',
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
)


def __getattr__(name: str) -> Any:
    """Load `AskUser` and the two events on first use: their modules import Pydantic AI (PEP 562)."""
    if name == 'AskUser':
        from ._capability import AskUser

        return AskUser
    if name == 'AskUserRequestedEvent':
        from ._events import AskUserRequestedEvent

        return AskUserRequestedEvent
    if name == 'AskUserAnsweredEvent':
        from ._events import AskUserAnsweredEvent

        return AskUserAnsweredEvent
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__() -> list[str]:
    """Every name of the package, the lazily loaded ones included."""
    return sorted({*globals(), *_LAZY})
