"""Let a Pydantic AI agent stop mid-run, ask a person multiple-choice questions, and get the answers as data."""

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
from ._capability import AskUser
from ._events import AskUserAnsweredEvent, AskUserRequestedEvent
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
from ._store import (
    AlreadyAnsweredError,
    QuestionStore,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
)
from ._text import printable

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
