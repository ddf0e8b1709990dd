"""Questions that suspend a Prefect flow run until answered, without calling the model again when it resumes.

Needs the `prefect` extra: `pip install 'pydantic-ai-ask-user[prefect]'`.
"""

from __future__ import annotations

from ._answerer import KEY_PREFIX, AskUserInput, PrefectAnswerer, answer_question, pending_questions

__all__ = ('PrefectAnswerer', 'AskUserInput', 'answer_question', 'pending_questions', 'KEY_PREFIX')
