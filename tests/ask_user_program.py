"""`ask-user` as a program, for the fork server to start: `python ask_user_program.py ARGS...` (`forked.forked_cli`).

Imported once by the fork server (`forked.PRELOADED`) with the command modules the durable and Temporal tests run
(`pending`, `answer`, `resolve` over a database or a Temporal server), so a command forked from it starts at once
instead of importing them again, which cost a new interpreter about 1.4 s of CPU under coverage.
"""

from __future__ import annotations

import sys

import pydantic_ai_ask_user._answer_json
import pydantic_ai_ask_user._cli.answer
import pydantic_ai_ask_user._cli.approvals
import pydantic_ai_ask_user._cli.pending
import pydantic_ai_ask_user._cli.resolve
import pydantic_ai_ask_user._decision
import pydantic_ai_ask_user.dbos
import pydantic_ai_ask_user.temporal  # noqa: F401  (imported for the forks, as the modules above)
from pydantic_ai_ask_user._cli import main

if __name__ == '__main__':
    sys.exit(main())  # from `sys.argv`, as the installed script: a command that ends at once does here too
