"""The checks every front end runs on what a person or an answerer hands back, and text made safe to draw.

`AskUser` runs them itself; a front end of your own runs them before it accepts an answer, so a person gets a
message, never a failed run.
"""

from __future__ import annotations

from ._answers import check_answered_by, check_custom_answer, check_response, check_same_questions
from ._text import printable

__all__ = (
    'check_response',
    'check_same_questions',
    'check_custom_answer',
    'check_answered_by',
    'printable',
)
