"""Search and filter: what a person narrows the pending list and the history by, beyond ages and kind.

The fields of `PendingFilter` and `HistoryFilter` (`agent`, `title`, `conversation`, `addressee`, `text`) are checked
here once (`check_search_value`: every front end refuses the same values with the same message), and matched here in
memory (`search_takes`) for the stores that hold their items in memory (the hub) and, after SQL narrowed the rows, for
the others. Duck-typed over a question (`AskUserRequest`) and an approval (`PendingApproval`), so that the filter
modules load none of the models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from ._text import find_forbidden_character

__all__ = (
    'MAX_SEARCH_LENGTH',
    'SEARCH_FIELDS',
    'SearchFields',
    'check_search_value',
    'search_takes',
    'is_searching',
    'item_text',
)

MAX_SEARCH_LENGTH = 200
"""The longest value a search or filter field takes (in characters): a title is at most 200, and so is a search."""

SEARCH_FIELDS = ('agent', 'title', 'conversation', 'addressee', 'text')
"""The search fields `PendingFilter` and `HistoryFilter` share, in the order the front ends list them."""


class SearchFields(Protocol):
    """What `search_takes` reads of a filter: the search fields of `PendingFilter` and `HistoryFilter`."""

    @property
    def agent(self) -> str | None:
        """`QuestionContext.agent_name`, exactly."""
        ...

    @property
    def title(self) -> str | None:
        """A part of `QuestionContext.title`, any case."""
        ...

    @property
    def conversation(self) -> str | None:
        """`QuestionContext.conversation_id`, exactly."""
        ...

    @property
    def addressee(self) -> str | None:
        """A name or group the item's audience names."""
        ...

    @property
    def text(self) -> str | None:
        """A part of the item's text, any case."""
        ...


def check_search_value(name: str, value: str | None) -> str | None:
    """`value` stripped (`None` when blank), or a `ValueError` with a message a person can act on: too long, or a
    control or format character (which could hide what a listing shows).
    """
    if value is None:
        return None
    if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # checked at run time
        raise ValueError(f'{name} must be text')
    value = value.strip()
    if not value:
        return None
    if len(value) > MAX_SEARCH_LENGTH:
        raise ValueError(f'{name} is too long: at most {MAX_SEARCH_LENGTH} characters, not {len(value)}')
    if find_forbidden_character(value, allow_newline=False) is not None:
        raise ValueError(f'{name} must be one line of printable text, without control or format characters')
    return value


def is_searching(where: SearchFields) -> bool:
    """Whether `where` narrows by any search field (then a store that cannot do it in SQL reads and matches)."""
    return any(getattr(where, name) is not None for name in SEARCH_FIELDS)


def item_text(item: Any) -> str:
    """The text free-text search looks in, folded: a question's headers, questions and option labels (or an
    approval's tool name and arguments), and the context's title and summary.
    """
    parts: list[str] = []
    for question in getattr(item, 'questions', None) or ():
        parts.append(str(getattr(question, 'header', '') or ''))
        parts.append(str(getattr(question, 'question', '') or ''))
        for option in getattr(question, 'options', None) or ():
            parts.append(str(getattr(option, 'label', '') or ''))
    tool_name = getattr(item, 'tool_name', None)
    if tool_name is not None:
        parts.append(str(tool_name))
        args = getattr(item, 'args', None)
        if isinstance(args, Mapping):
            parts.append(json.dumps(args, ensure_ascii=False, sort_keys=True, default=str))
    context = getattr(item, 'context', None)
    if context is not None:
        parts.append(context.title or '')
        parts.append(context.summary or '')
    return '\n'.join(parts).casefold()


def search_takes(where: SearchFields, item: Any) -> bool:
    """Whether `item` (an `AskUserRequest` or a `PendingApproval`; `None` takes nothing narrowed) passes `where`'s
    search fields. Visibility is not here: a filter only narrows what a person may already see.
    """
    if not is_searching(where):
        return True
    if item is None:
        return False
    context = getattr(item, 'context', None)
    if where.agent is not None and (context is None or context.agent_name != where.agent):
        return False
    if where.conversation is not None and (context is None or context.conversation_id != where.conversation):
        return False
    if where.title is not None and (
        context is None or context.title is None or where.title.casefold() not in context.title.casefold()
    ):
        return False
    if where.addressee is not None:
        audience = getattr(item, 'audience', None)
        if audience is None or where.addressee not in audience:
            return False
    return where.text is None or where.text.casefold() in item_text(item)
