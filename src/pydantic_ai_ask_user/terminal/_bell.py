"""Telling the person a question waits: the terminal bell and the desktop-notification escape sequences.

What goes into a sequence is the model's header, so it is hostile: every control, format and separator
character is dropped (ESC, BEL and the C1 string terminator `\\x9c` among them, so the text can never end
the sequence early or start another one), so is `;` (the field separator of OSC 777), and it is cut short.
"""

from __future__ import annotations

import unicodedata

__all__ = ('BEL', 'MAX_NOTIFICATION_TEXT', 'notification_text', 'notification_sequences', 'tmux_passthrough')

BEL = '\a'
"""The terminal bell; also what ends each OSC sequence here (the terminator every terminal accepts)."""

MAX_NOTIFICATION_TEXT = 100
"""The most characters of the text put in a desktop notification; longer text is cut, with `…`."""

_ESC = '\x1b'


def notification_text(text: str, limit: int = MAX_NOTIFICATION_TEXT) -> str:
    """`text` safe inside an OSC sequence: no control, format, surrogate, private-use or separator character, no `;`.

    Whitespace runs become one space; the result is at most `limit` characters, ending in `…` when cut.
    """
    kept = ''.join(
        ' ' if char.isspace() else char
        for char in text
        if char != ';' and (char.isspace() or unicodedata.category(char)[0] not in 'CZ')
    )
    words = ' '.join(kept.split())
    return words if len(words) <= limit else words[: limit - 1] + '…'


def tmux_passthrough(sequence: str) -> str:
    """`sequence` wrapped so tmux hands it to the terminal it runs in: `ESC P tmux; ... ESC \\`, each ESC doubled.

    tmux passes it on only with `set -g allow-passthrough on` (off by default since tmux 3.3).
    """
    return f'{_ESC}Ptmux;{sequence.replace(_ESC, _ESC * 2)}{_ESC}\\'


def notification_sequences(title: str, body: str, *, bell: bool, desktop: bool, tmux: bool = False) -> str:
    """What to write to the terminal when a question opens: BEL, and OSC 9 plus OSC 777 `notify`, as asked.

    OSC 9 (`ESC ] 9 ; text BEL`) is understood by iTerm2, Windows Terminal, ConEmu, WezTerm, kitty and
    others; OSC 777 (`ESC ] 777 ; notify ; title ; body BEL`) by urxvt, foot, VTE terminals (GNOME
    Terminal, Tilix), kitty and WezTerm. A terminal that knows neither ignores both. With `tmux`, each
    OSC sequence goes through `tmux_passthrough` (tmux handles the bell itself).
    """
    out = BEL if bell else ''
    if desktop:
        title, body = notification_text(title), notification_text(body)
        sequences = (
            f'{_ESC}]9;{title}: {body}{BEL}' if body else f'{_ESC}]9;{title}{BEL}',
            f'{_ESC}]777;notify;{title};{body}{BEL}',
        )
        out += ''.join(tmux_passthrough(sequence) if tmux else sequence for sequence in sequences)
    return out
