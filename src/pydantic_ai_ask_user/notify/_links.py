"""`InboxLinks`: the links a message carries back to the team inbox, signed for the person it is sent to."""

from __future__ import annotations

import time
import urllib.parse
from typing import Literal

from pydantic_ai_ask_user._action_codes import sign_action_code
from pydantic_ai_ask_user._login_links import sign_login_code
from pydantic_ai_ask_user._signing import check_key
from pydantic_ai_ask_user._text import check_one_line

from ._items import Recipient, WaitingItem

__all__ = ('InboxLinks', 'DEFAULT_LINK_SECONDS')

DEFAULT_LINK_SECONDS = 7 * 24 * 3600.0
"""How long a link in a message works when its item has no deadline: a week, as long as finished items are kept."""


class InboxLinks:
    """Makes the links of a message: to the inbox, to an item's page, and one-click actions, for one recipient.

    `base_url` is where the team inbox is served (`https://inbox.example.com/`, its mount point included). With
    `key` (the key the inbox is given as `WebOptions(login_links=SignedLoginLinks(key))`, or `ask-user inbox`'s
    key), each link signs its recipient in, and `action` makes one-click links (an option of a question, approve,
    deny) that land on a confirmation page; a link works until the item's deadline, or `link_seconds`. Without a
    key, links lead to the pages as they are, and there are no one-click actions (`action` gives `None`).
    """

    def __init__(
        self, base_url: str, *, key: bytes | str | None = None, link_seconds: float = DEFAULT_LINK_SECONDS
    ) -> None:
        check_one_line(base_url, name='the inbox base_url', max_length=1024, must_be='one line')
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ('http', 'https') or not parts.hostname or parts.query or parts.fragment:
            raise ValueError('the inbox base_url must be an absolute http(s) URL without a query or fragment')
        if not link_seconds > 0:
            raise ValueError(f'link_seconds must be positive, not {link_seconds!r}')
        self.base_url = base_url if base_url.endswith('/') else base_url + '/'
        """Where the inbox is served, ending in `/`."""
        self._key = None if key is None else check_key(key)
        self.link_seconds = link_seconds
        """How long a link works when its item has no deadline."""

    def __repr__(self) -> str:
        return f'InboxLinks({self.base_url!r}, signed={self._key is not None})'

    @property
    def signed(self) -> bool:
        """Whether links sign their recipient in and one-click actions exist (a key was given)."""
        return self._key is not None

    def expires_at(self, item: WaitingItem | None) -> float:
        """When a link about `item` stops working: its deadline, or `link_seconds` from now."""
        deadline = None if item is None else item.deadline
        return deadline if deadline is not None else time.time() + self.link_seconds

    def inbox(self, recipient: Recipient) -> str:
        """The inbox, signed in as `recipient` when there is a key."""
        return self._login(recipient, '', None)

    def page(self, recipient: Recipient, item: WaitingItem) -> str:
        """The item's page (its form, or its approval page), signed in as `recipient` when there is a key."""
        return self._login(recipient, item.page_path, item)

    def action(
        self,
        recipient: Recipient,
        item: WaitingItem,
        act: Literal['answer', 'approve', 'deny'],
        *,
        question: int | None = None,
        option: int | None = None,
    ) -> str | None:
        """A one-click link for `recipient` to `act` on `item` (after a confirmation page); `None` without a key."""
        if self._key is None:
            return None
        code = sign_action_code(
            self._key,
            recipient.person,
            kind=item.kind,
            item_key=item.key,
            act=act,
            expires_at=self.expires_at(item),
            question=question,
            option=option,
        )
        return f'{self.base_url}act?{urllib.parse.urlencode({"code": code})}'

    def _login(self, recipient: Recipient, target: str, item: WaitingItem | None) -> str:
        if self._key is None:
            return self.base_url + target
        code = sign_login_code(self._key, recipient.person, expires_at=self.expires_at(item))
        query = {'code': code} | ({'next': target} if target else {})
        return f'{self.base_url}login?{urllib.parse.urlencode(query)}'
