"""`AppriseChannel`: tell people on any service Apprise reaches (Discord, Teams, Telegram, ntfy, Pushover, ...).

Notify-only: the message says what waits and links back to the inbox (signed in), with one-click actions where the
item allows them (they land on the inbox's confirmation page). Nothing is answered inside the chat app.

Measured before adding it (docs/reaching-people.md): `import apprise` costs about 1.5 times `import pydantic`, and
the first URL loads its plugins (about 0.65 s more). So it is an extra of its own (`apprise`), imported when an
`AppriseChannel` is made, in the process that delivers: never by `import pydantic_ai_ask_user` or `.notify`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai_ask_user._i18n import translator
from pydantic_ai_ask_user._text import printable

from ._items import Recipient, WaitingItem
from ._links import InboxLinks
from ._notifier import DeliveryRefused

__all__ = ('AppriseChannel', 'plain_message')

_MASS_MENTION = re.compile(r'@(everyone|here|channel)\b|<!(everyone|here|channel)[^>]*>', re.IGNORECASE)
"""Mentions that would ping a whole room on Discord, Slack or Teams if a model wrote them into a question."""

_MAX_ITEMS_SHOWN = 20
"""The most items one message lists in full; the rest are counted, behind the inbox link."""


def _safe(text: str) -> str:
    """Model or application text as a chat message may carry it: drawable characters only, no mass mentions."""
    return _MASS_MENTION.sub(lambda match: match.group(0).replace('@', '(at)').replace('<!', '<'), printable(text))


def plain_message(recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> tuple[str, str]:
    """The title and plain-text body telling `recipient` of `items`, in their language, with the links."""
    t = translator(recipient.language or 'en')
    _ = t.gettext
    if len(items) == 1:
        title = _safe(items[0].headline)
    else:
        title = t.ngettext('{count} item waits for you', '{count} items wait for you', len(items)).format(
            count=len(items)
        )
    lines: list[str] = []
    for item in items[:_MAX_ITEMS_SHOWN]:
        lines.extend(_item_lines(recipient, item, links, _))
        lines.append('')
    if len(items) > _MAX_ITEMS_SHOWN:
        lines.append(_('{count} more in the inbox.').format(count=len(items) - _MAX_ITEMS_SHOWN))
    lines.append(_('Open the inbox: {link}').format(link=links.inbox(recipient)))
    return title[:250], '\n'.join(lines)


def _item_lines(recipient: Recipient, item: WaitingItem, links: InboxLinks, _: Any) -> list[str]:
    lines = [f'## {_safe(item.headline)}']
    context = item.context
    if context is not None and context.agent_name:
        lines.append(_('Asked by {agent}').format(agent=_safe(context.agent_name)))
    if context is not None and context.summary:
        lines.append(_safe(context.summary))
    request = item.request
    if request is not None:
        one_click = len(request.questions) == 1 and not request.questions[0].multi_select
        for question in request.questions:
            lines.append(f'{_safe(question.header)}: {_safe(question.question)}')
            for index, option in enumerate(question.options):
                link = links.action(recipient, item, 'answer', question=0, option=index) if one_click else None
                lines.append(f'  - {_safe(option.label)}' + (f': {link}' if link else ''))
        lines.append(_('Answer in the inbox: {link}').format(link=links.page(recipient, item)))
    approval = item.approval
    if approval is not None:
        lines.append(_('Tool call waiting for approval: {tool}').format(tool=_safe(approval.tool_name)))
        approve = links.action(recipient, item, 'approve')
        deny = links.action(recipient, item, 'deny')
        if approve is not None and deny is not None:
            lines.append(_('Approve: {link}').format(link=approve))
            lines.append(_('Deny: {link}').format(link=deny))
        lines.append(_('See the arguments and decide: {link}').format(link=links.page(recipient, item)))
    return lines


class AppriseChannel:
    """Tells each recipient at their Apprise URL(s): `Recipient(addresses={'apprise': 'ntfy://ntfy.sh/alice-7f3a'})`.

    Several URLs for one person are separated by spaces or commas. A URL Apprise does not know is refused
    (`DeliveryRefused`, never retried); a delivery Apprise reports failed is retried by the `Notifier`. The URLs
    hold secrets (tokens, webhook paths): they are never logged or put in an error message. `ImportError` naming
    the extra when Apprise is not installed.
    """

    name = 'apprise'
    """The channel's name: a recipient's `addresses['apprise']`, and the preference that names it."""

    def __init__(self, *, timeout: float = 15.0) -> None:
        try:
            self._apprise: Any = importlib.import_module('apprise')
        except ImportError as error:
            raise ImportError(
                "AppriseChannel needs Apprise: pip install 'pydantic-ai-ask-user[apprise]'", name=error.name
            ) from error
        if not timeout > 0:
            raise ValueError(f'timeout must be positive, not {timeout!r}')
        self.timeout = timeout
        """Seconds each service may take to accept a message."""

    def __repr__(self) -> str:
        return 'AppriseChannel()'

    def reaches(self, recipient: Recipient) -> bool:
        """Whether `recipient` has an Apprise URL."""
        return bool(recipient.address(self.name))

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        """Send one message (one item, or a digest) to every URL of `recipient`; nothing to update later."""
        urls = [url for url in re.split(r'[\s,]+', recipient.address(self.name) or '') if url]
        apprise = self._apprise.Apprise()
        for url in urls:
            if not apprise.add(url):
                raise DeliveryRefused(f'an Apprise URL of {printable(recipient.name)} is not one Apprise knows')
        title, body = plain_message(recipient, items, links)
        delivered = await apprise.async_notify(
            body=body, title=title, body_format=self._apprise.NotifyFormat.TEXT, timeout=self.timeout
        )
        if not delivered:
            raise OSError(f'Apprise could not deliver to {printable(recipient.name)} (see the apprise log)')
        return {}
