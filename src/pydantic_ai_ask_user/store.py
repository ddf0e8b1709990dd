"""Where questions wait, and the contract between that and the front ends that answer them.

A `QuestionStore` lists waiting questions, takes answers and tells of changes; the web inbox and `ask-user
answer` work over any of them (the in-process hub, the DBOS database, Temporal workflows).
"""

from __future__ import annotations

from ._audience import addressed_to
from ._question_store import (
    AlreadyAnsweredError,
    QuestionStore,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    WithdrawnError,
)

__all__ = (
    'QuestionStore',
    'StoreEvent',
    'StoreError',
    'UnknownRequestError',
    'AlreadyAnsweredError',
    'WithdrawnError',
    'addressed_to',
)
