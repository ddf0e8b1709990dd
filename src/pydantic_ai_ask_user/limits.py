"""The limits of the question schema and of what a person may write, as the model and the front ends see them."""

from __future__ import annotations

from ._answers import MAX_CUSTOM_ANSWER_LENGTH, MAX_NOTE_LENGTH
from ._audience import MAX_AUDIENCE, MAX_LINK_LENGTH, MAX_NAME_LENGTH, MAX_SUMMARY_LENGTH, MAX_TITLE_LENGTH
from ._question_limits import (
    MAX_ANSWERED_BY_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS,
    MIN_OPTIONS,
)

__all__ = (
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
    'MAX_AUDIENCE',
    'MAX_NAME_LENGTH',
    'MAX_TITLE_LENGTH',
    'MAX_SUMMARY_LENGTH',
    'MAX_LINK_LENGTH',
)
