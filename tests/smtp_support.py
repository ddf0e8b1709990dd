"""A real SMTP server for the tests of `EmailChannel`: aiosmtpd on 127.0.0.1 and a free port, in a thread of its own.

It keeps every message delivered, parsed back as a mail client reads it (`email.policy.default`), and refuses the
addresses it is told to with `550` at `RCPT TO`, as a server that has no such mailbox does.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import socket
import threading
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any, cast

from aiosmtpd.controller import Controller


class SMTPInbox:
    """The aiosmtpd handler: what was delivered, to whom, the addresses to refuse (550, for good), and the ones to
    put off (451, a passing refusal) so many times first (`busy`)."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.refuse: set[str] = set()
        self.busy: dict[str, int] = {}
        self.attempts = 0
        self._lock = threading.Lock()

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        with self._lock:
            self.attempts += 1
        if address in self.refuse:
            return '550 5.1.1 no such mailbox here'
        with self._lock:
            if self.busy.get(address, 0) > 0:
                self.busy[address] -= 1
                return '451 4.3.0 busy, try again later'
        envelope.rcpt_tos.append(address)
        return '250 OK'

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = cast(EmailMessage, email.message_from_bytes(envelope.content, policy=email.policy.default))
        with self._lock:
            self.messages.append((list(envelope.rcpt_tos), message))
        return '250 OK: queued'

    def to(self, address: str) -> list[EmailMessage]:
        """The messages delivered to `address`, in order."""
        with self._lock:
            return [message for recipients, message in self.messages if address in recipients]


def parts(message: EmailMessage) -> tuple[str, str]:
    """The plain text and the HTML of a `multipart/alternative` message."""
    text = message.get_body(preferencelist=('plain',))
    html = message.get_body(preferencelist=('html',))
    assert text is not None
    assert html is not None
    return cast(str, text.get_content()), cast(str, html.get_content())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def smtp_server() -> Iterator[tuple[SMTPInbox, int]]:
    """An SMTP server on 127.0.0.1 while the block runs: its inbox and its port."""
    inbox = SMTPInbox()
    controller = Controller(inbox, hostname='127.0.0.1', port=_free_port())
    controller.start()
    try:
        yield inbox, controller.port
    finally:
        controller.stop()
