"""Waiting for people inside a Temporal workflow: a durable timer for the deadline, an Update for the answer.

`TemporalAnswerer` waits for the answer to an AskUser question; `TemporalExternalEvents` installs
`TemporalEventWaiter`, so `wait_for_external_event` and the waiting handler (tool approvals) wait there too.
The workflow inherits `AskUserWorkflow`, which receives the answers. `AskUserPlugin`, beside Pydantic AI's
`PydanticAIPlugin`, passes this package through the workflow sandbox: a worker imports it once, not for every run.

Needs the `temporal` extra: `pip install 'pydantic-ai-ask-user[temporal]'`.
"""

from __future__ import annotations

from ._answerer import TemporalAnswerer, answer_question, pending_questions
from ._events import (
    TOKEN_PREFIX,
    NotATemporalTokenError,
    TemporalEventWaiter,
    TemporalExternalEvents,
    fail_temporal_event,
    pending_temporal_events,
    resolve_temporal_event,
)
from ._plugin import PASSTHROUGH_MODULES, AskUserPlugin, passing_ask_user_through
from ._store import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    MissingSearchAttributeError,
    TemporalEventRecord,
    TemporalQuestionStore,
    TemporalRecord,
)
from ._visibility import QUESTIONS_ATTRIBUTE_NAME
from ._workflow import (
    EVENTS_QUERY_NAME,
    FORWARD_UPDATE_NAME,
    QUERY_NAME,
    RESOLVE_SIGNAL_NAME,
    RESOLVE_UPDATE_NAME,
    SIGNAL_NAME,
    UPDATE_NAME,
    AskUserWorkflow,
    EventResolution,
    Forward,
    QuestionAnswer,
    WaitingEvent,
)

__all__ = (
    'TemporalAnswerer',
    'AskUserWorkflow',
    'AskUserPlugin',
    'passing_ask_user_through',
    'PASSTHROUGH_MODULES',
    'QuestionAnswer',
    'answer_question',
    'pending_questions',
    'TemporalEventWaiter',
    'TemporalExternalEvents',
    'EventResolution',
    'WaitingEvent',
    'NotATemporalTokenError',
    'resolve_temporal_event',
    'fail_temporal_event',
    'pending_temporal_events',
    'TOKEN_PREFIX',
    'UPDATE_NAME',
    'SIGNAL_NAME',
    'QUERY_NAME',
    'TemporalQuestionStore',
    'TemporalRecord',
    'TemporalEventRecord',
    'MissingSearchAttributeError',
    'QUESTIONS_ATTRIBUTE_NAME',
    'DEFAULT_ADDRESS',
    'DEFAULT_NAMESPACE',
    'RESOLVE_UPDATE_NAME',
    'RESOLVE_SIGNAL_NAME',
    'EVENTS_QUERY_NAME',
    'FORWARD_UPDATE_NAME',
    'Forward',
)
