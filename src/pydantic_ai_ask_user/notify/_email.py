"""`EmailChannel`: each waiting question or approval as an e-mail, with one-click links to a confirmation page.

Standard library only (`smtplib`, `email`), run in a worker thread: a notifier that mails imports no web server and
needs no extra. One message per `send`: one item, or a digest of several, plain text and HTML
(`multipart/alternative`), in the recipient's language. Everything the application or the model wrote (the
agent, the title, the summary, the questions, the options, the tool's arguments) is escaped in the HTML and
stripped of control characters in the text. Replies are never read: the message says so, and carries
`Auto-Submitted: auto-generated`, so that auto-responders leave it alone.
"""

from __future__ import annotations

import asyncio
import email.errors
import email.utils
import html
import ipaddress
import json
import smtplib
import ssl as _ssl
import time
from collections.abc import Mapping, Sequence
from email.headerregistry import Address
from email.message import EmailMessage

from pydantic_ai_ask_user._i18n import DEFAULT_LANGUAGE, Translator, translator
from pydantic_ai_ask_user._text import check_one_line, printable

from ._items import Recipient, WaitingItem
from ._links import InboxLinks
from ._notifier import DeliveryRefused

__all__ = ('EmailChannel',)

MAX_SUBJECT = 150
"""The longest subject line, in characters; a longer headline is cut with `…`."""

MAX_ARGUMENTS_TEXT = 5000
"""The most characters of a tool call's arguments (as JSON) a message shows; the rest is on the approval page."""

_LOCAL_HOSTS = frozenset({'localhost', 'localhost.localdomain'})
"""Host names that are this machine, where a password sent in plain text never leaves it."""


class EmailChannel:
    """Tells people by e-mail through an SMTP server: `Notifier(channels=[EmailChannel('smtp.example.com', ...)])`.

    It reaches a `Recipient` that has an `email`. Each message is written in `Recipient.language` (or `language`),
    plain text and HTML, with the item's context and questions. When the `InboxLinks` are signed (the inbox's key),
    a question with one single-choice question has a link per option, and an approval Approve and Deny links: each
    lands on the inbox's confirmation page (a mail scanner that fetches it answers nothing), works for that person
    only, and expires with the question. Otherwise, and always besides, a link to the item's page and to the inbox.

    `ssl=True` speaks TLS from the start (port 465 by default), `starttls=True` upgrades a plain connection (port
    587 by default); else port 25 in plain text. A `password` is never sent in plain text to a host other than this
    machine unless `allow_plaintext_password=True` (`ValueError` here). A refusal the server says is permanent (a
    5xx reply: an unknown address, a rejected sender, failed authentication) raises `DeliveryRefused` and is not
    retried; anything else (4xx, a connection that failed) is retried by the `Notifier`.
    """

    def __init__(
        self,
        host: str,
        port: int | None = None,
        *,
        sender: str,
        username: str | None = None,
        password: str | None = None,
        starttls: bool = False,
        ssl: bool = False,
        allow_plaintext_password: bool = False,
        timeout: float = 30.0,
        language: str = DEFAULT_LANGUAGE,
        name: str = 'email',
    ) -> None:
        check_one_line(host, name='the SMTP host', max_length=255, must_be='a host name')
        check_one_line(sender, name='the sender address', max_length=320, must_be='an e-mail address')
        check_one_line(name, name='the channel name', max_length=50, must_be='a name')
        if starttls and ssl:
            raise ValueError('give starttls=True or ssl=True, not both: ssl speaks TLS from the start')
        if port is not None and not 0 < port < 65536:
            raise ValueError(f'the SMTP port must be from 1 to 65535, not {port!r}')
        if not timeout > 0:
            raise ValueError(f'timeout must be positive, not {timeout!r}')
        if (username is None) != (password is None):
            raise ValueError('give both username and password, or neither')
        if password is not None and not (starttls or ssl or allow_plaintext_password or _is_local(host)):
            raise ValueError(
                f'the password would cross the network to {host} in plain text: give starttls=True or ssl=True, '
                'or allow_plaintext_password=True if this is really meant'
            )
        try:
            self._sender = _address(sender)
        except ValueError as error:
            raise ValueError(f'the sender {printable(sender)!r} is not an e-mail address: {error}') from None
        self.host = host
        """The SMTP server's host."""
        self.port = port if port is not None else 465 if ssl else 587 if starttls else 25
        """The SMTP server's port."""
        self.sender = sender
        """The `From` address."""
        self.username = username
        """Who the channel signs in to the server as, or `None` for no authentication."""
        self._password = password
        self.starttls = starttls
        """Whether a plain connection is upgraded to TLS (`STARTTLS`) before anything else is sent."""
        self.ssl = ssl
        """Whether the connection speaks TLS from the start (SMTPS)."""
        self.timeout = timeout
        """Seconds before a connection or a reply that does not come is given up (and retried)."""
        self.language = language
        """The language of the messages to recipients who have none (`Recipient.language`)."""
        self._name = name

    def __repr__(self) -> str:
        return f'EmailChannel({self.host!r}, {self.port}, sender={self.sender!r})'

    @property
    def name(self) -> str:
        """`email` (or the name given), as `Recipient.channels` names it."""
        return self._name

    def reaches(self, recipient: Recipient) -> bool:
        """Whether `recipient` has an e-mail address."""
        return recipient.email is not None

    async def send(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> Mapping[str, str]:
        """Mail `recipient` one message about `items`; the message's `Message-ID` for each item.

        `DeliveryRefused` when the message cannot be written (an address that is none) or the server refuses it for
        good; any other error is worth retrying.
        """
        message = self.message(recipient, items, links)
        await asyncio.to_thread(self._deliver, message)
        message_id = str(message['Message-ID'])
        return {item.key: message_id for item in items}

    def message(self, recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks) -> EmailMessage:
        """The message `send` mails: headers, a plain text part and an HTML part. `DeliveryRefused` when it cannot
        be written (an address that is none, a value a header cannot hold).
        """
        if not items:
            raise ValueError('a message is about one item at least')
        if recipient.email is None:
            raise DeliveryRefused(f'{printable(recipient.name)} has no e-mail address')
        t = translator(recipient.language or self.language)
        text, body = _Writer(t, recipient, links).write(items)
        message = EmailMessage()
        try:
            message['Subject'] = _subject(t, items)
            message['From'] = self._sender
            message['To'] = _address(recipient.email, recipient.name)
            message['Date'] = email.utils.formatdate(localtime=False)
            message['Message-ID'] = email.utils.make_msgid(domain=self._sender.domain or None)
            message['Auto-Submitted'] = 'auto-generated'
            message['X-Auto-Response-Suppress'] = 'All'
            message.set_content(text, subtype='plain', charset='utf-8')
            message.add_alternative(body, subtype='html', charset='utf-8')
            message['Content-Language'] = t.language  # after the content, which clears every Content- header
        except (ValueError, TypeError, email.errors.MessageError) as error:
            raise DeliveryRefused(f'cannot write the message to {printable(recipient.name)}: {error}') from None
        return message

    def _deliver(self, message: EmailMessage) -> None:
        """Hand `message` to the SMTP server (in a worker thread)."""
        context = _ssl.create_default_context()
        try:
            if self.ssl:
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=context)
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            with smtp:
                if self.starttls:
                    smtp.starttls(context=context)
                if self.username is not None and self._password is not None:
                    smtp.login(self.username, self._password)
                refused = smtp.send_message(message)
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _ in error.recipients.values()]
            if codes and all(code >= 500 for code in codes):
                raise DeliveryRefused(f'the server refused the address: {_replies(error.recipients)}') from None
            raise
        except smtplib.SMTPResponseException as error:  # sender refused, data refused, authentication failed
            if error.smtp_code >= 500:
                reply = f'{error.smtp_code} {_reply(error.smtp_error)}'
                raise DeliveryRefused(f'the server refused the message: {reply}') from None
            raise
        except smtplib.SMTPNotSupportedError as error:  # STARTTLS or AUTH that the server does not offer
            raise DeliveryRefused(f'the server cannot do what the channel is set up for: {error}') from None
        if refused:  # some recipients refused, but not all: there is only one
            raise DeliveryRefused(f'the server refused the address: {_replies(refused)}')


class _Writer:
    """Writes one message's text and HTML in one language, for one recipient."""

    def __init__(self, t: Translator, recipient: Recipient, links: InboxLinks) -> None:
        self.t = t
        self.recipient = recipient
        self.links = links
        self.text: list[str] = []
        self.html: list[str] = []

    def write(self, items: Sequence[WaitingItem]) -> tuple[str, str]:
        _ = self.t.gettext
        if len(items) == 1:
            intro = (
                _('A tool call waits for your approval.')
                if items[0].kind == 'approval'
                else _('A question waits for your answer.')
            )
        else:
            intro = self.t.ngettext('{count} item waits for you.', '{count} items wait for you.', len(items)).format(
                count=len(items)
            )
        self.paragraph(intro)
        for item in items:
            self.rule()
            if item.approval is not None:
                self.approval(item)
            else:
                self.question(item)
        self.rule()
        self.link(_('Everything that waits for you:'), self.links.inbox(self.recipient), _('Open the inbox'))
        notes = [_('Replies to this message are not read.')]
        if self.links.signed:
            notes.insert(0, _('Each link asks you to confirm before anything is recorded, and works for you only.'))
        self.paragraph(' '.join(notes), small=True)
        text = '\n'.join(self.text).strip() + '\n'
        body = (
            f'<!DOCTYPE html><html lang="{_e(self.t.language)}"><head><meta charset="utf-8"></head>'
            '<body style="font-family:sans-serif;line-height:1.4;max-width:40em">'
            + ''.join(self.html)
            + '</body></html>\n'
        )
        return text, body

    def context(self, item: WaitingItem) -> None:
        _ = self.t.gettext
        context = item.context
        self.heading(item.headline)
        if context is not None and context.agent_name:
            self.paragraph(_('From {agent}').format(agent=_line(context.agent_name)), small=True)
        if context is not None and context.summary:
            self.paragraph(context.summary)

    def question(self, item: WaitingItem) -> None:
        _ = self.t.gettext
        request = item.request
        assert request is not None
        self.context(item)
        one_click = self.links.signed and len(request.questions) == 1 and not request.questions[0].multi_select
        for question in request.questions:
            self.paragraph(f'{_line(question.header)}: {question.question}', strong=True)
            if one_click:
                for index, option in enumerate(question.options):
                    url = self.links.action(self.recipient, item, 'answer', question=0, option=index)
                    assert url is not None
                    self.option(option.label, option.description, url)
            else:
                for option in question.options:
                    self.option(option.label, option.description, None)
        page = self.links.page(self.recipient, item)
        if one_click:
            self.link(_('To answer in your own words or add a note:'), page, _('Open the question'))
        else:
            self.link(_('Answer on its page:'), page, _('Answer the question'))
        self.expiry(item)

    def approval(self, item: WaitingItem) -> None:
        _ = self.t.gettext
        approval = item.approval
        assert approval is not None
        self.context(item)
        self.paragraph(_('The agent wants to run {tool}.').format(tool=_line(approval.tool_name)), strong=True)
        arguments = json.dumps(approval.args, indent=2, ensure_ascii=False, sort_keys=True, default=str)
        if len(arguments) > MAX_ARGUMENTS_TEXT:
            arguments = arguments[: MAX_ARGUMENTS_TEXT - 1] + '…'
        self.text.append(_('With the arguments:'))
        self.text.append(printable(arguments))
        self.text.append('')
        self.html.append(
            f'<p>{_e(_("With the arguments:"))}</p>'
            '<pre style="background:#f4f4f4;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere">'
            f'{_e(arguments)}</pre>'
        )
        approve = self.links.action(self.recipient, item, 'approve')
        deny = self.links.action(self.recipient, item, 'deny')
        if approve is not None and deny is not None:
            self.text.append(f'{_("Approve")}: {approve}')
            self.text.append(f'{_("Deny")}: {deny}')
            self.text.append('')
            self.html.append(
                f'<p><a href="{_e(approve)}" style="{_BUTTON}">{_e(_("Approve"))}</a> '
                f'<a href="{_e(deny)}" style="{_BUTTON}">{_e(_("Deny"))}</a></p>'
            )
        self.link(_('To change the arguments or give a reason:'), self.links.page(self.recipient, item), _('Open it'))
        self.expiry(item)

    def option(self, label: str, description: str | None, url: str | None) -> None:
        label = _line(label)
        detail = f' ({printable(description, allow_newline=False)})' if description else ''
        if url is None:
            self.text.append(f'  - {label}{detail}')
            self.html.append(f'<p style="margin:.2em 0 .2em 1em">• {_e(label)}{_e(detail)}</p>')
            return
        self.text.append(f'  - {label}{detail}: {url}')
        self.html.append(
            f'<p style="margin:.4em 0"><a href="{_e(url)}" style="{_BUTTON}">{_e(label)}</a>'
            f'<span style="color:#555">{_e(detail)}</span></p>'
        )

    def expiry(self, item: WaitingItem) -> None:
        if not self.links.signed:
            return
        when = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(self.links.expires_at(item)))
        self.paragraph(self.t.gettext('These links work until {when}.').format(when=when), small=True)

    def heading(self, text: str) -> None:
        line = _line(text)
        self.text.extend([line, '=' * min(len(line), 60), ''])
        self.html.append(f'<h2 style="font-size:1.2em;margin:.6em 0 .3em">{_e(line)}</h2>')

    def paragraph(self, text: str, *, strong: bool = False, small: bool = False) -> None:
        shown = printable(text)
        self.text.extend([shown, ''])
        inner = '<br>'.join(_e(line) for line in shown.split('\n'))
        if strong:
            inner = f'<strong>{inner}</strong>'
        style = ' style="color:#555;font-size:.9em"' if small else ''
        self.html.append(f'<p{style}>{inner}</p>')

    def link(self, lead: str, url: str, label: str) -> None:
        self.text.extend([f'{lead} {url}', ''])
        self.html.append(f'<p>{_e(lead)} <a href="{_e(url)}">{_e(label)}</a></p>')

    def rule(self) -> None:
        self.text.extend(['-' * 40, ''])
        self.html.append('<hr style="border:0;border-top:1px solid #ddd">')


_BUTTON = (
    'display:inline-block;padding:.35em .9em;border:1px solid #2358c4;border-radius:4px;color:#2358c4;'
    'text-decoration:none'
)
"""How a one-click link is drawn in the HTML part: as a button."""


def _subject(t: Translator, items: Sequence[WaitingItem]) -> str:
    if len(items) == 1:
        subject = _line(items[0].headline)
    elif all(item.kind == 'question' for item in items):
        subject = t.ngettext('{count} question waits for you', '{count} questions wait for you', len(items))
        subject = subject.format(count=len(items))
    else:
        subject = t.ngettext('{count} item waits for you', '{count} items wait for you', len(items))
        subject = subject.format(count=len(items))
    return subject if len(subject) <= MAX_SUBJECT else subject[: MAX_SUBJECT - 1] + '…'


def _line(text: str) -> str:
    """`text` as one drawable line: control characters and line breaks gone, runs of space one space."""
    return ' '.join(printable(text, allow_newline=False).split())


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _address(address: str, name: str = '') -> Address:
    """`address` (and a display name) as a header value; `ValueError` for one that is not an address."""
    if any(char in address for char in '\r\n') or any(char in name for char in '\r\n'):
        raise ValueError('an address or a name holds a line break')
    parsed = Address(display_name=_line(name), addr_spec=address)
    if not parsed.username or not parsed.domain:
        raise ValueError(f'{printable(address)!r} is not user@domain')
    return parsed


def _is_local(host: str) -> bool:
    if host.lower() in _LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError:
        return False


def _reply(text: bytes | str) -> str:
    shown = text.decode('utf-8', 'replace') if isinstance(text, bytes) else text
    return printable(shown, allow_newline=False)[:200]


def _replies(refused: Mapping[str, tuple[int, bytes]]) -> str:
    return '; '.join(f'{code} {_reply(reply)}' for code, reply in refused.values())
