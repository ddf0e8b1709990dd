"""Login codes signed with a key two processes share: one prints a sign-in link (`ask-user inbox link alice`), the
other (the inbox server) reads it back and signs the browser in as the person it names.

A code is `BODY.SIGNATURE`, both unpadded base64url: `BODY` is the canonical JSON of who the link is for (name,
groups, whether they see everything), when it expires (epoch seconds) and a random nonce; `SIGNATURE` is
HMAC-SHA256 of `BODY` under the key, with a purpose of its own mixed in, so that a webhook or receipt signature made
with the same key is never a login. Checking one needs only the standard library: the command that prints links
imports no web server. That a code is used once is the server's business (it remembers the nonces it took).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, cast

from ._audience import Person
from ._signing import check_key, seal, unseal

__all__ = ('SignedLogin', 'sign_login_code', 'read_login_code', 'MAX_LOGIN_CODE_LENGTH')

_PURPOSE = b'ask-user login link v1\0'
"""Mixed into every signature, so that only a login code signed with the key reads as one."""

MAX_LOGIN_CODE_LENGTH = 4096
"""The longest code read at all: a person with many groups fits; anything longer is refused unread."""


@dataclass(frozen=True)
class SignedLogin:
    """What a signed login code says, once its signature checked out: who, until when, and its one-time nonce."""

    person: Person
    """Who the browser that opens the link is signed in as: a name, groups, and whether they see every item."""

    expires_at: float
    """When the link stops working, in epoch seconds."""

    nonce: str
    """A random value of this code alone: the server remembers the ones it took, so each link works once."""


def sign_login_code(key: bytes | str, person: Person, *, expires_at: float) -> str:
    """A login code for `person`, valid until `expires_at` (epoch seconds), signed with `key` (16 bytes at least)."""
    raw_key = check_key(key)
    if person.name is None and not person.sees_all:
        raise ValueError('a signed login link is for a named person, or for someone who sees every item')
    body = {
        'name': person.name,
        'groups': sorted(person.groups),
        'all': person.sees_all,
        'exp': int(expires_at),
        'nonce': secrets.token_urlsafe(16),
    }
    return seal(raw_key, _PURPOSE, body)


def read_login_code(key: bytes | str, code: str, *, now: float) -> SignedLogin | None:
    """What `code` says when `key` signed it and it has not expired at `now` (epoch seconds); otherwise `None`.

    Whether it was used already is not known here: see `SignedLogin.nonce`.
    """
    body: Any = unseal(check_key(key), _PURPOSE, code, max_length=MAX_LOGIN_CODE_LENGTH)
    try:
        fields = cast('dict[str, Any]', body)
        expires_at = float(fields['exp'])
        nonce = fields['nonce']
        person = Person(fields['name'], groups=fields['groups'], sees_all=fields['all'])
    except (ValueError, TypeError, KeyError):  # not sealed by us (`None`), or, never, a body of another shape
        return None
    if not isinstance(nonce, str) or not nonce or now >= expires_at:
        return None
    return SignedLogin(person, expires_at, nonce)
