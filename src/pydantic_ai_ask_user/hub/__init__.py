"""The in-process store: `QuestionHub` holds the questions and approvals of this process's runs while they wait.

A `WebAnswerer` asks through one; any front end that takes a `QuestionStore` (the web inbox, `ask-user answer`
in-process, a test) can serve it. Nothing survives the process: for waits that do, see `pydantic_ai_ask_user.dbos`
and `pydantic_ai_ask_user.temporal`. Needs no extra.
"""

from ._store import DEFAULT_REMEMBER_FINISHED, HubRecord, QuestionHub

__all__ = ('QuestionHub', 'HubRecord', 'DEFAULT_REMEMBER_FINISHED')
