"""The limits of a question call and of a stored request, as plain constants: importable without pydantic's models,
by the commands that read stored questions with the standard library (`ask-user pending` on SQLite) as by the models.
"""

from __future__ import annotations

__all__ = (
    'MAX_QUESTIONS',
    'MIN_OPTIONS',
    'MAX_OPTIONS',
    'MAX_HEADER_LENGTH',
    'MAX_QUESTION_LENGTH',
    'MAX_LABEL_LENGTH',
    'MAX_DESCRIPTION_LENGTH',
    'LATEST_DEADLINE',
    'MAX_ANSWERED_BY_LENGTH',
)

MAX_QUESTIONS = 10
"""The most questions one `ask_user_question` call may carry."""

MIN_OPTIONS = 2
"""The fewest options a question may offer."""

MAX_OPTIONS = 6
"""The most options a question may offer."""

MAX_HEADER_LENGTH = 25
"""The longest header, in characters, after surrounding whitespace is stripped."""

MAX_QUESTION_LENGTH = 500
"""The longest question text, in characters, after surrounding whitespace is stripped."""

MAX_LABEL_LENGTH = 50
"""The longest option label, in characters, after surrounding whitespace is stripped."""

MAX_DESCRIPTION_LENGTH = 200
"""The longest option description, in characters, after surrounding whitespace is stripped."""

LATEST_DEADLINE = 253402300799.0
"""The latest `AskUserRequest.deadline`: the last second of the year 9999, the end of what dates can show."""

MAX_ANSWERED_BY_LENGTH = 200
"""The longest `AskUserResponse.answered_by`, in characters: one line naming who answered."""
