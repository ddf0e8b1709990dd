"""AskUser over the Vercel AI SDK (`useChat`): `pip install 'pydantic-ai-ask-user[vercel-ai]'`.

`AskUserVercelAIAdapter` is Pydantic AI's `VercelAIAdapter` with three additions: a pending question
is its `tool-ask_user_question` part in state `input-available` (also after a reload through
`dump_messages`, never `approval-requested`); an answer (the tool part's `output`, in the response
JSON shape) is checked against its question before the model sees it, a misfit ending the request
in the stream's `error` part; AskUser's two events reach the page as data parts.
"""

from .._answers import ANSWERED_EVENT_NAME, REQUESTED_EVENT_NAME
from ._adapter import ANSWERED_DATA_TYPE, REQUESTED_DATA_TYPE, AskUserVercelAIAdapter, AskUserVercelAIEventStream

__all__ = (
    'AskUserVercelAIAdapter',
    'AskUserVercelAIEventStream',
    'REQUESTED_DATA_TYPE',
    'ANSWERED_DATA_TYPE',
    'REQUESTED_EVENT_NAME',
    'ANSWERED_EVENT_NAME',
)
