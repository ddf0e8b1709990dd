"""The one path from text to the screen: made printable, measured in display cells, wrapped to the width."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from wcwidth import wcwidth  # pyright: ignore[reportUnknownVariableType]

from .._text import printable

__all__ = ('Fragment', 'Line', 'cell_width', 'clean', 'wrap', 'wrap_parts', 'to_fragments')

Fragment = tuple[str, str]
"""A run of text and the prompt_toolkit style it is drawn in: `(style, text)`."""

Line = list[Fragment]
"""One screen row, as fragments; never holds a line break."""


def clean(text: str) -> str:
    """`text` made safe for one screen row: every control or format character, line breaks included, becomes U+FFFD."""
    return printable(text, allow_newline=False)


def _char_width(char: str) -> int:
    width: int = wcwidth(char)
    # wcwidth says -1 for control characters; `clean` has turned those into U+FFFD already.
    return max(width, 0)


def cell_width(text: str) -> int:
    """How many terminal cells `text` takes: East Asian wide characters 2, combining marks 0, never `len()`."""
    return sum(_char_width(char) for char in text)


def _split_long(word: str, width: int) -> list[str]:
    pieces: list[str] = []
    current = ''
    used = 0
    for char in word:
        char_width = _char_width(char)
        if current and used + char_width > width:
            pieces.append(current)
            current, used = '', 0
        current += char
        used += char_width
    if current:
        pieces.append(current)
    return pieces


def _wrap_paragraph(paragraph: str, width: int) -> list[str]:
    rows: list[str] = []
    current = ''
    used = 0
    for word in paragraph.split(' '):
        word_width = cell_width(word)
        gap = 1 if current else 0
        if used + gap + word_width <= width:
            current = f'{current} {word}' if current else word
            used += gap + word_width
            continue
        if current:
            rows.append(current)
            current, used = '', 0
        if word_width <= width:
            current, used = word, word_width
        else:
            # A word wider than the row (a long URL, or CJK text without spaces) breaks between characters.
            *full, current = _split_long(word, width)
            rows.extend(full)
            used = cell_width(current)
    rows.append(current)
    return rows


def wrap(text: str, width: int) -> list[str]:
    """`text` as rows of at most `width` cells, broken at spaces where it can and at line breaks always.

    Every row has passed through `clean`, so no row holds a control character.
    """
    width = max(width, 1)
    rows: list[str] = []
    for paragraph in text.split('\n'):
        rows.extend(_wrap_paragraph(clean(paragraph), width))
    return rows


def wrap_parts(parts: Sequence[str], separator: str, width: int) -> list[str]:
    """`parts` joined by `separator` in rows of at most `width` cells, broken between parts, never inside one.

    A key hint cut in two ("Esc 답하지" / "않기") reads as two hints; a part wider than a row on its own is
    wrapped at its spaces (`wrap`). Widths are display cells, so a Korean letter counts two.
    """
    width = max(width, 1)
    rows: list[str] = []
    row = ''
    for part in (clean(part) for part in parts):
        joined = f'{row}{separator}{part}' if row else part
        if cell_width(joined) <= width:
            row = joined
            continue
        if row:
            rows.append(row)
        *whole, row = wrap(part, width) or ['']
        rows.extend(whole)
    if row:
        rows.append(row)
    return rows


def to_fragments(lines: Iterable[Sequence[Fragment]]) -> list[Fragment]:
    """Join rows into the fragment list prompt_toolkit draws, cleaning every text once more on the way out.

    This is the only place the menu's text reaches prompt_toolkit: whatever a row holds, the only
    control character that leaves here is the line break this function puts between rows.
    """
    out: list[Fragment] = []
    for index, line in enumerate(lines):
        if index:
            out.append(('', '\n'))
        out.extend((style, clean(text)) for style, text in line)
    return out
