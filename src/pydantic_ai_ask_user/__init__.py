"""Let a Pydantic AI agent stop mid-run, ask a person multiple-choice questions, and get the answers as data.

The root holds what every user touches: the capability (`AskUser`) with who may answer (`Person`) and where a
question comes from (`QuestionContext`), the request and response types, the answerer protocol, the two events, the
errors a run can end with, and every name the reference's `pydantic_ai_harness.ask_user` exports (`ask_user_result`
among them), so a program written for it runs after changing only its imports. The rest lives where its name
says: `.deferred`, `.checks`, `.json`, `.store`, `.webhooks`, `.receipts`, `.i18n`, `.limits`, and the front ends
`.terminal`, `.web`, `.testing`, `.mcp`, `.ui`, the in-process store `.hub`, and the engines `.dbos`, `.temporal`,
`.prefect`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _module_names

if TYPE_CHECKING:
    from ._answers import (
        DECLINED,
        TIMED_OUT,
        TOOL_NAME,
        WITHDRAWN,
        Answerer,
        AskUserAnswer,
        AskUserRequest,
        AskUserResponse,
        CannotAskError,
        DifferentQuestionsError,
        DurableAnswerer,
        QuestionWithdrawn,
        ask_user_result,
        check_response,
    )
    from ._audience import (
        Person,
        QuestionContext,
    )
    from ._capability import (
        AskUser,
        AskUserTimeoutError,
        TimeoutMessage,
    )
    from ._events import (
        AskUserAnsweredEvent,
        AskUserRequestedEvent,
    )
    from ._question_limits import MAX_QUESTIONS
    from ._questions import (
        Question,
        QuestionOption,
    )
    from ._version import __version__ as __version__

__all__ = (
    'AskUser',
    'TimeoutMessage',
    'AskUserTimeoutError',
    'Answerer',
    'DurableAnswerer',
    'AskUserRequest',
    'AskUserResponse',
    'AskUserAnswer',
    'Person',
    'QuestionContext',
    'Question',
    'QuestionOption',
    'AskUserRequestedEvent',
    'AskUserAnsweredEvent',
    'QuestionWithdrawn',
    'CannotAskError',
    'DifferentQuestionsError',
    'check_response',
    'ask_user_result',
    'TOOL_NAME',
    'DECLINED',
    'TIMED_OUT',
    'WITHDRAWN',
    'MAX_QUESTIONS',
)

_MODULES = ('_question_limits', '_audience', '_questions', '_answers', '_events', '_capability')
"""The private modules that define the names above, each after the ones it imports (see `names_in_modules`)."""

__getattr__ = _module_names.names_in_modules(__name__, globals(), __all__, _MODULES, also={'__version__': '_version'})
"""Load a public name on first use, with the module that defines it (PEP 562).

`import pydantic_ai_ask_user` costs next to nothing: the question models are built when first used,
and Pydantic AI is imported only for `AskUser` and the two events. `ask-user --help` and `ask` start
fast because of it. Each name is then kept here, so later lookups are plain attribute reads. `__version__`
too (not in `__all__`, as a star import should not bring it): it is read from the package metadata when first used.
Each name is written twice, in the imports above (where it is defined, for readers and type checkers) and in
`__all__` (what the package exports); pyright holds the two to each other, and nothing else lists them.
"""


def __dir__() -> list[str]:
    """Every public name of the package, loaded or not."""
    return sorted({*globals(), *__all__, '__version__'})
