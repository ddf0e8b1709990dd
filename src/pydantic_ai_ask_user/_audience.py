"""Who a question is for (`AskUserRequest.audience`), who is looking (`Person`), and where a question comes from.

A question is addressed to names: a person's, a group's, or several. A front end that knows who is looking (the
web inbox, through its `authorize` hook or a login link) shows and accepts only the questions addressed to one of
that person's names, and the unaddressed ones. Names are the application's own strings (user ids, e-mail
addresses, `team:support`): this library keeps no user database, it compares names.

`QuestionContext` says where a question comes from: the agent, the conversation, and what the application adds
(a title, a summary in Markdown, a link back). It is written by the application and, through it, often by the
model or by the people it serves: every front end draws it as hostile text, as it draws the questions.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ForwardRef, Protocol, TypeAlias, cast

from ._module_names import LazyModule
from ._text import check_one_line, find_forbidden_character, printable

if TYPE_CHECKING:
    from pydantic_ai import RunContext
else:
    # Read by `typing.get_type_hints` (the settings below), imported only then: this module stays free of Pydantic AI.
    _tools = LazyModule('pydantic_ai.tools')

__all__ = (
    'Person',
    'QuestionContext',
    'Audience',
    'AudienceSetting',
    'ContextSetting',
    'MAX_AUDIENCE',
    'MAX_NAME_LENGTH',
    'MAX_TITLE_LENGTH',
    'MAX_SUMMARY_LENGTH',
    'MAX_LINK_LENGTH',
    'check_audience',
    'addressed_to',
    'audience_includes',
    'context_to_json',
    'context_from_json',
    'audience_from_json',
    'addressing_json',
)

MAX_AUDIENCE = 100
"""The most names one question may be addressed to."""

MAX_NAME_LENGTH = 200
"""The longest name of a person or group, in characters: one line, like `AskUserResponse.answered_by`."""

MAX_TITLE_LENGTH = 200
"""The longest `QuestionContext.title` (and agent name and conversation id), in characters."""

MAX_SUMMARY_LENGTH = 4000
"""The longest `QuestionContext.summary`, in characters."""

MAX_LINK_LENGTH = 2048
"""The longest `QuestionContext.link`, in characters."""

Audience: TypeAlias = str | Collection[str] | None
"""Who may answer: one name, several names (any of them may answer), or `None` for anyone who may see the inbox."""


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f'{what} must be a string, not {type(name).__name__}')
    return check_one_line(
        name, name=what, max_length=MAX_NAME_LENGTH, must_be='a non-empty line of text', refuse_blank=True
    )


def check_audience(audience: object) -> tuple[str, ...] | None:
    """`audience` as a request stores it: `None`, or its names sorted, each once; `ValueError`/`TypeError` otherwise.

    An empty collection is refused: a question addressed to nobody could never be answered, and is a bug in
    whatever computed it (a signed-in user that was not found), never a question for everyone.
    """
    if audience is None:
        return None
    if isinstance(audience, str):
        return (_check_name(audience, 'an audience name'),)
    if isinstance(audience, (bytes, Mapping)) or not isinstance(audience, Collection):
        raise TypeError(
            f'an audience is a name, a collection of names or None, not {type(audience).__name__}'  # pyright: ignore[reportUnknownArgumentType]
        )
    names = sorted({_check_name(name, 'an audience name') for name in cast('Collection[object]', audience)})
    if not names:
        raise ValueError(
            'an audience must name at least one person or group; use None for a question anyone may answer'
        )
    if len(names) > MAX_AUDIENCE:
        raise ValueError(f'an audience names at most {MAX_AUDIENCE} people or groups, not {len(names)}')
    return tuple(names)


@dataclass(frozen=True)
class Person:
    """Who is looking at the questions, as a front end knows them: a name, the groups they belong to.

    The web inbox's `authorize` hook may return one (a plain name is `Person(name)`); a login link made for
    a name signs its browser in as `Person(name)`. A person sees, and may answer, the questions addressed to
    their name or one of their groups, and the unaddressed ones; `sees_all` sees every question (an
    operator, the holder of the access token).
    """

    name: str | None = None
    """Who they are (recorded as `AskUserResponse.answered_by`), or `None` when the front end cannot tell."""

    groups: Collection[str] = field(default=frozenset[str]())
    """The groups (teams, roles, customers) they belong to: a question addressed to one of them is theirs too."""

    sees_all: bool = False
    """Whether they see and may answer every question, whoever it is addressed to."""

    def __post_init__(self) -> None:
        if self.name is not None:
            _check_name(self.name, 'Person.name')
        if isinstance(self.groups, str):
            raise TypeError('Person.groups is a collection of names, not one string')
        object.__setattr__(self, 'groups', frozenset(_check_name(group, 'a group name') for group in self.groups))
        if not isinstance(self.sees_all, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'Person.sees_all must be True or False, not {self.sees_all!r}')

    @property
    def names(self) -> frozenset[str]:
        """Every name a question may be addressed to that reaches them: their own and their groups'."""
        groups = frozenset(self.groups)
        return groups if self.name is None else groups | {self.name}

    def may_see(self, request: Addressed) -> bool:
        """Whether `request` (or a tool approval) is theirs to see and answer."""
        return addressed_to(request, self)


def addressed_to(request: Addressed, person: Person | None) -> bool:
    """Whether `person` may see and answer `request` (or a tool approval); `None` is the administrative view."""
    return audience_includes(request.audience, person)


def audience_includes(audience: Collection[str] | None, person: Person | None) -> bool:
    """Whether a question addressed to `audience` (`None`: to anyone) is `person`'s to see (`None`: every one is)."""
    if person is None or person.sees_all or audience is None:
        return True
    return not person.names.isdisjoint(audience)


def audience_from_json(data: object) -> tuple[str, ...] | None:
    """The audience a store read back (a JSON list of names), or `None`.

    A stored audience that does not read back as one (a tampered row) is never widened to everyone: it is
    read as addressed to a name no person has, so nobody but the administrative view sees the question.
    """
    if data is None:
        return None
    try:
        if isinstance(data, list):
            return check_audience(cast('list[object]', data))
    except (TypeError, ValueError):
        pass
    return (_NOBODY,)


_NOBODY = '\ufffd'
"""The audience of a stored question whose audience could not be read: a name no `Person` can have (not drawable)."""


def _check_link(link: object) -> str:
    if not isinstance(link, str):
        raise TypeError(f'QuestionContext.link must be a string, not {type(link).__name__}')
    shown = printable(link, allow_newline=False)[:100]
    if len(link) > MAX_LINK_LENGTH:
        raise ValueError(f'QuestionContext.link is {len(link)} characters long, more than {MAX_LINK_LENGTH}')
    if find_forbidden_character(link, allow_newline=False) is not None or any(char.isspace() for char in link):
        raise ValueError(f'QuestionContext.link {shown!r} holds a space, a control or a format character')
    parts = urllib.parse.urlsplit(link)
    if parts.scheme.lower() not in ('http', 'https') or not parts.netloc:
        raise ValueError(f'QuestionContext.link must be an absolute http:// or https:// URL, not {shown!r}')
    return link


def _check_summary(summary: object) -> str:
    if not isinstance(summary, str):
        raise TypeError(f'QuestionContext.summary must be a string, not {type(summary).__name__}')
    if len(summary) > MAX_SUMMARY_LENGTH:
        raise ValueError(f'QuestionContext.summary is {len(summary)} characters long, more than {MAX_SUMMARY_LENGTH}')
    if (char := find_forbidden_character(summary.replace('\r\n', '\n'), allow_newline=True)) is not None:
        raise ValueError(f'QuestionContext.summary holds a control or format character (U+{ord(char):04X})')
    return summary.replace('\r\n', '\n')


_LINE_FIELDS = ('title', 'agent_name', 'conversation_id')
"""The one-line fields of `QuestionContext`."""


@dataclass(frozen=True, kw_only=True)
class QuestionContext:
    """Where a question comes from, shown beside it by every front end: set through `AskUser(context=...)`.

    `AskUser` fills `agent_name` and `conversation_id` from the run (the agent's `name`, `RunContext.conversation_id`)
    unless the application sets them. Every field is optional; every string is checked here (one line, no control
    or format characters, a length limit; `link` an absolute `http(s)` URL) and drawn as untrusted text anyway.
    """

    title: str | None = None
    """What the question is about, in a line ("Refund for order 1042"), at most 200 characters."""

    summary: str | None = None
    """More about it, in Markdown (emphasis, code, lists, http(s) links), at most 4,000 characters.

    The web inbox draws a safe subset of Markdown (no HTML, no images, only http(s) links); terminals and the
    command line show the text as it is written.
    """

    link: str | None = None
    """Where to go back to (the conversation, the ticket): an absolute `http://` or `https://` URL."""

    agent_name: str | None = None
    """The agent that asks (`Agent(name=...)`)."""

    conversation_id: str | None = None
    """The conversation the run belongs to (`RunContext.conversation_id`)."""

    def __post_init__(self) -> None:
        for name in _LINE_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise TypeError(f'QuestionContext.{name} must be a string, not {type(value).__name__}')
            check_one_line(
                value, name=f'QuestionContext.{name}', max_length=MAX_TITLE_LENGTH, must_be='a non-empty line of text'
            )
        if self.summary is not None:
            object.__setattr__(self, 'summary', _check_summary(self.summary))
        if self.link is not None:
            _check_link(self.link)

    @property
    def empty(self) -> bool:
        """Whether no field is set."""
        return not context_to_json(self)


if TYPE_CHECKING:
    AudienceSetting: TypeAlias = (
        str | Collection[str] | Callable[[RunContext[Any]], str | Collection[str] | None] | None
    )
    ContextSetting: TypeAlias = QuestionContext | Callable[[RunContext[Any]], QuestionContext | None] | None
else:
    # The same types, for `typing.get_type_hints`: `RunContext` is a reference resolved in this module when the
    # annotation is read, so importing this module does not import Pydantic AI.
    _RUN_CONTEXT = ForwardRef('_tools.RunContext[Any]', module=__name__)
    AudienceSetting = str | Collection[str] | Callable[[_RUN_CONTEXT], str | Collection[str] | None] | None
    ContextSetting = QuestionContext | Callable[[_RUN_CONTEXT], QuestionContext | None] | None
# `AudienceSetting`: `AskUser(audience=...)`, an `Audience` or a function of the run that returns one (from
# `ctx.deps`, typically). `ContextSetting`: `AskUser(context=...)`, a `QuestionContext` or a function of the run that
# returns one (or `None`).


def context_to_json(context: QuestionContext) -> dict[str, str]:
    """The fields of `context` that are set, as a JSON object."""
    names = ('title', 'summary', 'link', 'agent_name', 'conversation_id')
    fields: dict[str, str | None] = {name: getattr(context, name) for name in names}
    return {name: value for name, value in fields.items() if value is not None}


def context_from_json(data: object) -> QuestionContext | None:
    """The context a store or a payload holds, or `None`; a field that does not pass the checks is left out."""
    if not isinstance(data, dict):
        return None
    fields: dict[str, str] = {}
    for name, value in data.items():  # pyright: ignore[reportUnknownVariableType]
        if name not in ('title', 'summary', 'link', 'agent_name', 'conversation_id') or not isinstance(value, str):
            continue
        try:
            QuestionContext(**{name: value})
        except (TypeError, ValueError):
            continue
        fields[name] = value
    return QuestionContext(**fields) if fields else None


class Addressed(Protocol):
    """What is addressed and in context: a request, or a tool approval (`PendingApproval`)."""

    @property
    def audience(self) -> tuple[str, ...] | None: ...

    @property
    def context(self) -> QuestionContext | None: ...


def addressing_json(item: Addressed) -> dict[str, Any]:
    """`{"audience": [...], "context": {...}}` of `item`, each only when set: what stores and payloads add."""
    data: dict[str, Any] = {}
    if item.audience is not None:
        data['audience'] = list(item.audience)
    if item.context is not None:
        data['context'] = context_to_json(item.context)
    return data
