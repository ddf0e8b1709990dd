"""AskUser over AG-UI (CopilotKit and other AG-UI clients): `pip install 'pydantic-ai-ask-user[ag-ui]'`.

`AskUserAGUIAdapter` is Pydantic AI's `AGUIAdapter` with three additions: a pending question ends
the run with an interrupt (`reason: "input_required"`, the questions in `metadata.questions`,
`responseSchema` = `RESPONSE_JSON_SCHEMA`); an answer (a resume entry, or a `ToolMessage`) is
checked against its question before the model sees it, a misfit ending the request in `RUN_ERROR`;
AskUser's two events reach the page as `CUSTOM` events.
"""

from .._answers import ANSWERED_EVENT_NAME, REQUESTED_EVENT_NAME
from ._adapter import (
    INTERRUPT_PREFIX,
    INTERRUPT_REASON,
    AnsweredBy,
    AskUserAGUIAdapter,
    AskUserAGUIEventStream,
    MalformedHistoryError,
    question_interrupt,
)

__all__ = (
    'AskUserAGUIAdapter',
    'AskUserAGUIEventStream',
    'question_interrupt',
    'AnsweredBy',
    'MalformedHistoryError',
    'INTERRUPT_PREFIX',
    'INTERRUPT_REASON',
    'REQUESTED_EVENT_NAME',
    'ANSWERED_EVENT_NAME',
)
