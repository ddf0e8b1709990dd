"""Questions that wait inside a Temporal workflow: a durable timer for the deadline, an Update for the answer.

Needs the `temporal` extra: `pip install 'pydantic-ai-ask-user[temporal]'`.
"""

from __future__ import annotations

from ._answerer import (
    QUERY_NAME,
    SIGNAL_NAME,
    UPDATE_NAME,
    AskUserWorkflow,
    QuestionAnswer,
    TemporalAnswerer,
    answer_question,
    pending_questions,
)
from ._store import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    MissingSearchAttributeError,
    TemporalQuestionStore,
    TemporalRecord,
)
from ._visibility import QUESTIONS_ATTRIBUTE_NAME

__all__ = (
    'TemporalAnswerer',
    'AskUserWorkflow',
    'QuestionAnswer',
    'answer_question',
    'pending_questions',
    'UPDATE_NAME',
    'SIGNAL_NAME',
    'QUERY_NAME',
    'TemporalQuestionStore',
    'TemporalRecord',
    'MissingSearchAttributeError',
    'QUESTIONS_ATTRIBUTE_NAME',
    'DEFAULT_ADDRESS',
    'DEFAULT_NAMESPACE',
)
