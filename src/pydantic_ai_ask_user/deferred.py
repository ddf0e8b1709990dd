"""Deferred mode: the run pauses at the question and you answer later, even from another process.

`AskUser(answerer=None)` defers every `ask_user_question` call; the run ends with Pydantic AI's
`DeferredToolRequests`. Rebuild each question with `AskUserRequest.from_deferred(requests, call)`, get it
answered however you like, and resume the run with `deferred_answer(request, response)`.

Or keep the run open while people decide: `waiting_handler(ask)` is the capability that hands the deferred calls and
a resume token to `ask` and waits, in whichever spelling the installed Pydantic AI has.
"""

from __future__ import annotations

from ._answers import (
    ADDRESSING_METADATA_KEY,
    RUN_ID_METADATA_KEY,
    RUN_STEP_METADATA_KEY,
    AnswerResult,
    ask_user_result,
    deferred_answer,
)
from ._deferred_handlers import waiting_handler

__all__ = (
    'ask_user_result',
    'waiting_handler',
    'AnswerResult',
    'deferred_answer',
    'RUN_ID_METADATA_KEY',
    'RUN_STEP_METADATA_KEY',
    'ADDRESSING_METADATA_KEY',
)
