"""Rules for the text a model writes: what may reach a terminal or a web page, and when two strings are the same."""

from __future__ import annotations

import json
import unicodedata

__all__ = ('find_forbidden_character', 'fold', 'describe_character', 'printable', 'terminal_json')

_FORBIDDEN_CATEGORIES = frozenset({'Cc', 'Cf', 'Cs', 'Zl', 'Zp'})
"""Unicode categories never allowed in model-written text.

Control characters (`Cc`) carry terminal escape sequences; format characters (`Cf`: zero-width
spaces, joiners, bidirectional overrides) make two different strings look alike; surrogates (`Cs`)
are not text; line and paragraph separators (`Zl`, `Zp`) are line breaks that one-line fields must
not hold and that multi-line fields spell as `\\n`.
"""


def find_forbidden_character(text: str, *, allow_newline: bool) -> str | None:
    """Return the first character of `text` that may not be drawn, or `None` when every one may."""
    # Fast path, in C: every forbidden category is "Other" or "Separator", which `str.isprintable` rejects, so
    # printable text holds none. Only text that fails it (a wide space, a private-use character, or a real
    # problem) is walked character by character.
    if text.isprintable() or (allow_newline and text.replace('\n', ' ').isprintable()):
        return None
    for char in text:
        if char == '\n' and allow_newline:
            continue
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            return char
    return None


_CATEGORY_NAMES = {
    'Cc': 'a control character',
    'Cf': 'an invisible format character',
    'Cs': 'a lone surrogate',
    'Zl': 'a line separator',
    'Zp': 'a paragraph separator',
}
"""How an error message names each forbidden category."""


def describe_character(char: str) -> str:
    """Name a character for an error message without drawing it: `U+200B (ZERO WIDTH SPACE), an invisible ...`."""
    code = f'U+{ord(char):04X}'
    if name := unicodedata.name(char, ''):
        code = f'{code} ({name})'
    kind = _CATEGORY_NAMES.get(unicodedata.category(char))
    return f'{code}, {kind}' if kind else code


def fold(text: str) -> str:
    """The form under which two headers or two labels count as the same: NFKC, then case-folded.

    `Yes`, `yes` and full-width `Ｙｅｓ` fold alike. NFKC runs again after case folding because
    folding can produce characters that compatibility normalisation would still change.
    """
    return unicodedata.normalize('NFKC', unicodedata.normalize('NFKC', text).casefold())


def printable(text: str, *, allow_newline: bool = True) -> str:
    """Return `text` with every character that may not be drawn replaced by U+FFFD.

    Validated questions never hold such characters; front ends pass everything they draw through
    this anyway, so that a string which did not come through validation cannot reach the screen.
    """
    if text.isprintable():
        return text
    return ''.join(
        '\ufffd'
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES and not (char == '\n' and allow_newline)
        else char
        for char in text
    )


def terminal_json(value: object) -> str:
    """`value` as one line of JSON that is safe to print: readable non-ASCII, but no character a terminal acts on.

    `json.dumps` escapes only C0 controls; C1 controls (U+0080-U+009F, `U+009B` starts an escape
    sequence on some terminals), format characters, line separators and lone surrogates would go out
    raw. Each is written as a `\\uXXXX` escape instead, so the JSON still decodes to exactly `value`.
    """
    text = json.dumps(value, ensure_ascii=False)
    if text.isprintable():
        return text
    return ''.join(_json_escape(char) if unicodedata.category(char) in _FORBIDDEN_CATEGORIES else char for char in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f'\\u{code:04x}'
    code -= 0x10000  # JSON spells a character beyond the BMP as a surrogate pair
    return f'\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}'
