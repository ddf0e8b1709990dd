"""What a channel is given: the waiting item (`WaitingItem`), who to tell (`Recipient`), how it ended (`Finished`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from pydantic_ai_ask_user._answers import AskUserRequest
from pydantic_ai_ask_user._approvals import PendingApproval
from pydantic_ai_ask_user._audience import Person, QuestionContext
from pydantic_ai_ask_user._question_store import StoreEvent
from pydantic_ai_ask_user._text import check_one_line

__all__ = ('WaitingItem', 'Recipient', 'Finished', 'ItemKind')

ItemKind = Literal['question', 'approval']
"""What waits: a question (`AskUserRequest`) or a tool call waiting for approval (`PendingApproval`)."""

_MAX_ADDRESS_LENGTH = 320
"""The longest e-mail address, Slack user id or other channel address a `Recipient` carries."""


@dataclass(frozen=True)
class WaitingItem:
    """One item that waits for a person, as every channel is given it: a question or a tool approval.

    Everything in it was written by the application or the model: a channel draws it as hostile text (escaped in
    HTML, in Slack's `mrkdwn`, stripped of control characters in plain text), as the web inbox does.
    """

    kind: ItemKind
    """Whether `request` (a question) or `approval` (a tool call) is set."""

    key: str
    """The item's key in its store: `AskUserRequest.key` or `PendingApproval.key`, as in every inbox URL."""

    request: AskUserRequest | None = None
    """The questions, for a `question`."""

    approval: PendingApproval | None = None
    """The tool call, for an `approval`."""

    @classmethod
    def of_question(cls, request: AskUserRequest) -> WaitingItem:
        """The item of a waiting question."""
        return cls('question', request.key, request=request)

    @classmethod
    def of_approval(cls, approval: PendingApproval) -> WaitingItem:
        """The item of a tool call waiting for approval."""
        return cls('approval', approval.key, approval=approval)

    @classmethod
    def of_event(cls, event: StoreEvent) -> WaitingItem | None:
        """The item a store's `requested` event carries, or `None` when it carries none."""
        if event.item == 'approval':
            return None if event.approval is None else cls.of_approval(event.approval)
        return None if event.request is None else cls.of_question(event.request)

    @property
    def audience(self) -> tuple[str, ...] | None:
        """Whom it is addressed to: names of people or groups, or `None` for anyone who may see the inbox."""
        item = self.request if self.request is not None else self.approval
        return None if item is None else item.audience

    @property
    def context(self) -> QuestionContext | None:
        """Where it comes from (agent, title, summary, link), when the application said."""
        item = self.request if self.request is not None else self.approval
        return None if item is None else item.context

    @property
    def deadline(self) -> float | None:
        """When a question stops waiting (`AskUserRequest.deadline`); `None` for an approval or no deadline."""
        return None if self.request is None else self.request.deadline

    @property
    def headline(self) -> str:
        """One line that names the item: its context's title, else the first question's text or the tool's name.

        Not escaped: the channel escapes it for where it draws it.
        """
        context = self.context
        if context is not None and context.title:
            return context.title
        if self.request is not None and self.request.questions:
            return self.request.questions[0].question
        if self.approval is not None:
            return self.approval.tool_name
        return self.key

    @property
    def page_path(self) -> str:
        """The item's page, relative to the inbox: `requests/<key>` or `approvals/<key>`."""
        return f'{"approvals" if self.kind == "approval" else "requests"}/{self.key}'


@dataclass(frozen=True)
class Recipient:
    """Someone a channel can reach, as your `Directory` describes them: a name, and their address on each channel.

    `name` is the name questions are addressed to (`AskUser(audience=...)`) and that answers are recorded as; the
    groups are theirs as in `Person`. A channel reaches a recipient it has an address for (`email` for e-mail,
    `slack_user` for Slack, an entry of `addresses` for any other), among the channels they prefer.
    """

    name: str
    """Who they are: the name an item is addressed to and an answer is recorded as (`AskUserResponse.answered_by`)."""

    groups: Collection[str] = field(default=frozenset[str]())
    """The groups they belong to, as in `Person.groups`: they may answer what is addressed to these too."""

    email: str | None = None
    """Their e-mail address, for `EmailChannel`."""

    slack_user: str | None = None
    """Their Slack user id (`U0123ABCD`), for `SlackChannel`."""

    addresses: dict[str, str] = field(default_factory=dict[str, str])
    """Their address on any other channel, by the channel's `name` (an Apprise URL for `apprise`, say)."""

    channels: tuple[str, ...] | None = None
    """The channels (by `Channel.name`) they want to be told on; `None` for every channel that can reach them."""

    language: str | None = None
    """The language their messages are written in (`'ko'`, `'en'`); `None` for the channel's default."""

    def __post_init__(self) -> None:
        check_one_line(self.name, name='Recipient.name', max_length=200, must_be='a non-empty line of text')
        if isinstance(self.groups, str):
            raise TypeError('Recipient.groups is a collection of names, not one string')
        object.__setattr__(self, 'groups', frozenset(self.groups))
        for what, value in (('email', self.email), ('slack_user', self.slack_user), ('language', self.language)):
            if value is not None:
                check_one_line(value, name=f'Recipient.{what}', max_length=_MAX_ADDRESS_LENGTH, must_be='one line')
        for channel, address in self.addresses.items():
            check_one_line(
                address, name=f'Recipient.addresses[{channel!r}]', max_length=2048, must_be='one line of text'
            )
        if self.channels is not None:
            object.__setattr__(self, 'channels', tuple(self.channels))

    @property
    def person(self) -> Person:
        """Who they are to the inbox: the `Person` an answer they give through a channel is checked and recorded as."""
        return Person(self.name, groups=self.groups)

    def address(self, channel: str) -> str | None:
        """Their address on the channel named `channel`: `email` for `'email'`, `slack_user` for `'slack'`, or else
        their entry in `addresses`.
        """
        if channel in self.addresses:
            return self.addresses[channel]
        if channel == 'email':
            return self.email
        if channel == 'slack':
            return self.slack_user
        return None

    def wants(self, channel: str) -> bool:
        """Whether they want to be told on `channel` (by name): in `channels`, or any when it is `None`."""
        return self.channels is None or channel in self.channels


@dataclass(frozen=True)
class Finished:
    """How an item that was notified ended, for a channel that updates its message in place (Slack)."""

    kind: ItemKind
    """A question or an approval."""

    key: str
    """The item's key."""

    outcome: str
    """`answered`, `declined`, `approved`, `denied`, `withdrawn`, ... (`FinishedRecord.outcome`), or `finished`
    when the store keeps no history to say."""

    by: str | None = None
    """Who answered or decided, when the store's history says; `None` when nobody named or unknown."""

    headline: str = ''
    """The item's headline when it was notified (`WaitingItem.headline`), for the updated message."""
