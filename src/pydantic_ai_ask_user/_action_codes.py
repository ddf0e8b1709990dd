"""Action codes: signed one-click links that let a named person answer a question (pick one option) or decide an
approval from outside the inbox (an e-mail), after a confirmation page.

A code is `BODY.SIGNATURE` like a login code (`_login_links`), under a purpose of its own, so that neither is ever
the other. `BODY` says who acts (name and groups), on which item (kind and key), what they do (`answer` with a
question and an option index, `approve`, `deny`, or `open` the item), until when, and a nonce. Opening the link only
shows what it would do: the inbox records it on a POST from the confirmation page, so a mail scanner that fetches
every link answers nothing. The item itself can be answered once, so a code can act once too.
Standard library only: a notifier that mails links imports no web server.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Literal, cast

from ._audience import Person
from ._signing import check_key, seal, unseal

__all__ = ('Act', 'ActionCode', 'sign_action_code', 'read_action_code', 'MAX_ACTION_CODE_LENGTH')

_PURPOSE = b'ask-user action link v1\0'
"""Mixed into every signature: only an action code signed with the key reads as one (never a login code)."""

MAX_ACTION_CODE_LENGTH = 4096
"""The longest code read at all; longer ones are refused unread."""

Act = Literal['answer', 'approve', 'deny', 'open']
"""What a link does: pick an option of a question, approve or deny a tool call, or sign in and open the item."""

_ACTS: frozenset[str] = frozenset({'answer', 'approve', 'deny', 'open'})


@dataclass(frozen=True)
class ActionCode:
    """What a signed action code says, once its signature and time checked out."""

    person: Person
    """Who acts: the answer or decision is recorded as their name, and must be addressed to them."""

    kind: Literal['question', 'approval']
    """Whether `key` is a question's or an approval's."""

    key: str
    """The item's key in its store."""

    act: Act
    """What the link does."""

    question: int | None
    """For `answer`: the index of the question in the request."""

    option: int | None
    """For `answer`: the index of the option picked."""

    expires_at: float
    """When the link stops working, in epoch seconds."""


def sign_action_code(
    key: bytes | str,
    person: Person,
    *,
    kind: Literal['question', 'approval'],
    item_key: str,
    act: Act,
    expires_at: float,
    question: int | None = None,
    option: int | None = None,
) -> str:
    """A code for one action by `person` on the item `item_key`, valid until `expires_at`, signed with `key`."""
    raw_key = check_key(key)
    if person.name is None:
        raise ValueError('an action link is for a named person: the answer is recorded as their name')
    if act not in _ACTS:
        raise ValueError(f'an action is one of {sorted(_ACTS)}, not {act!r}')
    if (act == 'answer') != (question is not None and option is not None):
        raise ValueError('an answer link names a question and an option, and only an answer link does')
    if act in ('approve', 'deny') and kind != 'approval':
        raise ValueError(f'{act} is an action on an approval, not on a {kind}')
    body = {
        'n': person.name,
        'g': sorted(person.groups),
        'i': kind,
        'k': item_key,
        'a': act,
        'q': question,
        'o': option,
        'exp': int(expires_at),
        'nonce': secrets.token_urlsafe(8),
    }
    return seal(raw_key, _PURPOSE, body)


def read_action_code(key: bytes | str, code: str, *, now: float) -> ActionCode | None:
    """What `code` says when `key` signed it and it has not expired at `now`; otherwise `None` (never an error)."""
    if not isinstance(code, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        return None
    body: Any = unseal(check_key(key), _PURPOSE, code, max_length=MAX_ACTION_CODE_LENGTH)
    try:
        fields = cast('dict[str, Any]', body)
        action = ActionCode(
            person=Person(fields['n'], groups=fields['g']),
            kind=fields['i'],
            key=fields['k'],
            act=fields['a'],
            question=fields['q'],
            option=fields['o'],
            expires_at=float(fields['exp']),
        )
    except (ValueError, TypeError, KeyError):  # not sealed by us (`None`), or, never, a body of another shape
        return None
    if action.kind not in ('question', 'approval') or action.act not in _ACTS or not isinstance(action.key, str):  # pyright: ignore[reportUnnecessaryComparison,reportUnnecessaryIsInstance]
        return None
    if now >= action.expires_at:
        return None
    return action
