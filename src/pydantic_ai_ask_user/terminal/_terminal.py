"""Finding the terminal to talk to: stdin and stdout when both are one, else the controlling terminal."""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass, field
from typing import TextIO

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.output.vt100 import Vt100_Output

from .._answers import CannotAskError

__all__ = ('CONTROLLING_TERMINAL', 'NO_TERMINAL', 'Terminal', 'open_terminal')

CONTROLLING_TERMINAL = '/dev/tty'
"""The device that is the process's controlling terminal, whatever stdin and stdout were redirected to."""

NO_TERMINAL = (
    'the terminal answerer needs a terminal to ask in, but stdin and stdout are not a terminal and there is no '
    'controlling terminal ({reason}). Alternatives: `ask-user ask --web` to ask in a browser, '
    '`AskUser(answerer=None)` (deferred mode) to answer later from another process, or '
    '`pydantic_ai_ask_user.testing.ScriptedAnswerer` in tests.'
)
"""The message of the `CannotAskError` raised when there is no terminal."""


@dataclass
class Terminal:
    """The terminal one `TerminalAnswerer` draws on and reads keys from, open for as long as the answerer."""

    input: Vt100Input
    """Keys, read from the terminal's file descriptor."""

    output: Vt100_Output
    """Drawing, written to the terminal."""

    files: list[TextIO] = field(default_factory=list[TextIO])
    """The files this object opened and so must close; empty when it borrowed stdin and stdout."""

    def say(self, line: str) -> None:
        """Write one finished line below the menu (already cleaned by the caller), in the terminal's cooked mode."""
        self.output.write(line)
        self.output.write_raw('\r\n')
        self.output.flush()

    def close(self) -> None:
        """Close what this object opened."""
        for file in self.files:
            file.close()
        self.files.clear()


def _is_tty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, io.UnsupportedOperation):  # pragma: no cover - a closed or fake stream
        return False


def open_terminal(path: str | None) -> Terminal:
    """The terminal at `path`, or, with `None`, stdin and stdout when both are terminals, else `/dev/tty`.

    Raises `CannotAskError` naming the alternatives when there is none, so a caller never hangs.
    """
    if path is None and _is_tty(sys.stdin) and _is_tty(sys.stdout):
        return Terminal(input=Vt100Input(sys.stdin), output=Vt100_Output.from_pty(sys.stdout))
    device = path or CONTROLLING_TERMINAL
    try:
        # O_NOCTTY: opening a terminal must never make it this process's controlling terminal.
        read_fd = os.open(device, os.O_RDONLY | os.O_NOCTTY)
    except OSError as error:
        raise CannotAskError(NO_TERMINAL.format(reason=f'cannot open {device}: {error.strerror}')) from None
    try:
        write_fd = os.open(device, os.O_WRONLY | os.O_NOCTTY)
    except OSError as error:  # pragma: no cover - readable but not writable
        os.close(read_fd)
        raise CannotAskError(NO_TERMINAL.format(reason=f'cannot write to {device}: {error.strerror}')) from None
    reader = os.fdopen(read_fd, 'r', encoding='utf-8', errors='replace')
    writer = os.fdopen(write_fd, 'w', encoding='utf-8', errors='replace')
    if not reader.isatty():
        reader.close()
        writer.close()
        raise CannotAskError(NO_TERMINAL.format(reason=f'{device} is not a terminal'))
    return Terminal(input=Vt100Input(reader), output=Vt100_Output.from_pty(writer), files=[reader, writer])
