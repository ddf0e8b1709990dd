"""Rules for the text a model writes: what may reach a terminal or a web page, and when two strings are the same."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache

from pydantic_core import SchemaValidator, core_schema

__all__ = (
    'utc_iso',
    'MAX_COMBINING_MARKS',
    'find_forbidden_character',
    'find_mark_run',
    'check_one_line',
    'is_blank',
    'fold',
    'fold_all',
    'folds_by_case_and_width',
    'is_latin1',
    'is_clean',
    'describe_character',
    'printable',
    'terminal_json',
)

MAX_COMBINING_MARKS = 4
"""The most combining marks (categories `Mn`, `Me`) model-written text may stack on one character.

Real writing stacks few: Vietnamese two, Devanagari, Hebrew pointing and Tibetan three or four. A longer
run ("Zalgo" text) draws above and below its line, over the neighbouring options of a menu or form.
"""

_FORBIDDEN_CATEGORIES = frozenset({'Cc', 'Cf', 'Cs', 'Zl', 'Zp'})
"""Unicode categories never allowed in model-written text.

Control characters (`Cc`) carry terminal escape sequences; format characters (`Cf`: zero-width
spaces, joiners, bidirectional overrides) make two different strings look alike; surrogates (`Cs`)
are not text; line and paragraph separators (`Zl`, `Zp`) are line breaks that one-line fields must
not hold and that multi-line fields spell as `\\n`.
"""


_INVISIBLE = re.compile(
    '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f'
    '\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8'
    '\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]'
)
"""Characters that draw as nothing: Unicode's Default_Ignorable_Code_Point set, and U+2800 BRAILLE PATTERN BLANK.

Default-ignorable code points (DerivedCoreProperties.txt) are what a renderer shows nothing for unless it
supports them: the combining grapheme joiner, variation selectors, the Hangul fillers, Khmer inherent
vowels, Mongolian selectors, tags, and the format characters also rejected by category. Several are
printable (`Mn`, `Lo`), so `str.isprintable` lets them through: `Yes` and `Yes` + U+FE0F look alike, and
a label of U+3164 HANGUL FILLER looks empty. The Braille blank is a visible-width blank that is not a space.
"""

_MARK_RUN_CANDIDATE = re.compile(rf'[^\w\s\x00-\x7f]{{{MAX_COMBINING_MARKS + 1},}}')
"""A run that may hold too many combining marks: no mark is a word character, a space or ASCII (checked in tests)."""


def _rust_class(python_class: str) -> str:
    # The body of a Python character class of literal characters and ranges, in Rust's regex syntax.
    return ''.join(char if char == '-' else f'\\x{{{ord(char):x}}}' for char in python_class)


@cache
def _clean_validator() -> SchemaValidator:
    # Built on first use, not at import: compiling the Unicode classes takes a few milliseconds.
    invisible = _rust_class(_INVISIBLE.pattern[1:-1])
    mark = rf'[\p{{M}}--[{invisible}]]'
    # Every character is a non-mark followed by at most MAX_COMBINING_MARKS marks; none is invisible.
    pattern = rf'^{mark}{{0,{MAX_COMBINING_MARKS}}}(?:[^\p{{M}}{invisible}]{mark}{{0,{MAX_COMBINING_MARKS}}})*$'
    return SchemaValidator(core_schema.str_schema(pattern=pattern))


def is_clean(text: str) -> bool:
    """Whether `text` surely holds no invisible character and no run of too many combining marks.

    Checked in Rust (pydantic-core's regex), some ten times faster than `_INVISIBLE` and the mark scan in
    Python. Its marks are every `M` category of pydantic-core's Unicode version, a superset of the `Mn` and
    `Me` this Python knows (checked in tests), so `True` is sure; `False` only means: look closer.
    """
    return _clean_validator().isinstance_python(text)


def is_latin1(text: str) -> bool:
    """Whether every character of `text` is below U+0100: such text holds no combining mark and no printable
    invisible character, so printable Latin-1 text breaks no rule of `find_forbidden_character` or `find_mark_run`.

    Encoding is a copy in C, much cheaper than the regular expressions, and keeps the common case fast.
    """
    try:
        text.encode('latin-1')
    except UnicodeEncodeError:
        return False
    return True


def find_forbidden_character(text: str, *, allow_newline: bool, allow_invisible: bool = False) -> str | None:
    """Return the first character of `text` that may not be drawn, or `None` when every one may.

    Invisible characters (`_INVISIBLE`) count as forbidden unless `allow_invisible`; those of category `Cf` are
    forbidden either way.
    """
    # Fast path, in C: every forbidden category is "Other" or "Separator", which `str.isprintable` rejects, so
    # printable text holds none. Only text that fails it (a wide space, a private-use character, or a real
    # problem) is walked character by character. Printable invisible characters need one more scan, skipped
    # for Latin-1 text.
    drawable = text.isprintable() or (allow_newline and text.replace('\n', ' ').isprintable())
    if drawable and (allow_invisible or is_latin1(text) or _INVISIBLE.search(text) is None):
        return None
    invisible = None if allow_invisible else _INVISIBLE.search(text)
    for char in text[: invisible.start()] if invisible else text:
        if char == '\n' and allow_newline:
            continue
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            return char
    return invisible.group() if invisible else None


def check_one_line(value: str, *, name: str, max_length: int, must_be: str, refuse_blank: bool = False) -> str:
    """`value` if it is a non-empty string of at most `max_length` characters, one line, every one drawable.

    Otherwise a `ValueError` naming `name` (with `value` filtered by `printable`): `{name} must be {must_be}`
    for a non-string or an empty one (a blank one too when `refuse_blank`).
    """
    if not isinstance(value, str) or not (value.strip() if refuse_blank else value):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f'{name} must be {must_be}')
    if len(value) > max_length:
        raise ValueError(f'{name} is {len(value)} characters long, more than {max_length}')
    if find_forbidden_character(value, allow_newline=False) is not None:
        raise ValueError(f'{name} {printable(value)!r} holds a control or format character')
    return value


def find_mark_run(text: str) -> int | None:
    """The length of the first run of more than `MAX_COMBINING_MARKS` combining marks in `text`, or `None`."""
    if is_latin1(text):
        return None
    for candidate in _MARK_RUN_CANDIDATE.finditer(text):
        run = 0
        for char in candidate.group():
            if unicodedata.category(char) in ('Mn', 'Me'):
                run += 1
            elif run > MAX_COMBINING_MARKS:
                return run
            else:
                run = 0
        if run > MAX_COMBINING_MARKS:
            return run
    return None


def is_blank(text: str) -> bool:
    """Whether `text` shows nothing: only whitespace and invisible characters."""
    if not text.strip():
        return True
    return not text.isascii() and not _INVISIBLE.sub('', text).strip()


_CATEGORY_NAMES = {
    'Cc': 'a control character',
    'Cf': 'an invisible format character',
    'Cs': 'a lone surrogate',
    'Zl': 'a line separator',
    'Zp': 'a paragraph separator',
    'Co': 'a private-use character, which each font draws as it likes',
}
"""How an error message names each forbidden category."""


def describe_character(char: str) -> str:
    """Name a character for an error message without drawing it: `U+200B (ZERO WIDTH SPACE), an invisible ...`.

    Printable invisible characters are named `an invisible character`: `U+3164 (HANGUL FILLER), an invisible ...`.
    """
    code = f'U+{ord(char):04X}'
    if name := unicodedata.name(char, ''):
        code = f'{code} ({name})'
    kind = _CATEGORY_NAMES.get(unicodedata.category(char))
    if kind is None and _INVISIBLE.fullmatch(char):
        kind = 'an invisible character'
    return f'{code}, {kind}' if kind else code


_LOOKALIKES = str.maketrans(
    'авекмнорстухіјѕԁԛԝһӏү'  # Cyrillic, case-folded
    'αβεζηικμνορτυχϲϳ',  # Greek, case-folded
    'abekmhopctyxijsdqwhlyabezhikmnoptyxcj',
)
"""Cyrillic and Greek letters one of whose cases is drawn like the same case of a Latin letter (UTS #39
confusables), case-folded, and that Latin letter.

Mapped after case folding, so `Yes`, `YES` and `Yеs` with a Cyrillic `е` fold alike, and so do `В` and `B`,
`Ν` and `N` (their lower cases, `в` and `ν`, then fold with `b` and `n`, which they only resemble in their
upper cases: a label pair that collides needlessly is rare and the model simply renames one). Whole labels in
Cyrillic or Greek stay apart from each other; only a label that a Latin one (or a mix) would be taken for
collides with it.
"""


def _fold(text: str, *, lookalikes: bool) -> str:
    folded = unicodedata.normalize('NFKC', text).casefold()
    # No look-alike letter is in Latin-1: the translation (in Python, per character) would leave such text as it is.
    return unicodedata.normalize(
        'NFKC', folded.translate(_LOOKALIKES) if lookalikes and not is_latin1(folded) else folded
    )


def fold(text: str) -> str:
    """The form under which two headers or two labels count as the same: NFKC, case-folded, look-alikes Latin.

    `Yes`, `yes`, full-width `Ｙｅｓ` and `Yеs` with a Cyrillic `е` fold alike (`_LOOKALIKES`). NFKC runs
    again after case folding because folding can produce characters that compatibility normalisation would
    still change.
    """
    return _fold(text, lookalikes=True)


def folds_by_case_and_width(first: str, second: str) -> bool:
    """Whether `first` and `second` fold alike without the look-alike letters: they differ only in case or width."""
    return _fold(first, lookalikes=False) == _fold(second, lookalikes=False)


def fold_all(texts: Sequence[str]) -> list[str]:
    """`[fold(text) for text in texts]`, in one pass over all of them: three C calls instead of three per text.

    The texts are joined with NUL, which neither normalisation nor case folding changes or combines with, and
    split again; a text holding NUL itself (no validated one does) is folded on its own.
    """
    joined = '\x00'.join(texts)
    if joined.count('\x00') != len(texts) - 1:
        return [fold(text) for text in texts]
    if joined.isascii():  # NFKC leaves ASCII alone, and case folding ASCII is lowering it
        return joined.lower().split('\x00')
    return fold(joined).split('\x00')


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
    # Compact, the one JSON style of every command: byte for byte what the model gets (`{"Database":["SQLite"]}`,
    # as Pydantic AI serializes a tool's result), one object per line for `pending --json`, as `jq -c` prints.
    text = json.dumps(value, ensure_ascii=False, separators=(',', ':'))
    if text.isprintable():
        return text
    return ''.join(_json_escape(char) if unicodedata.category(char) in _FORBIDDEN_CATEGORIES else char for char in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f'\\u{code:04x}'
    code -= 0x10000  # JSON spells a character beyond the BMP as a surrogate pair
    return f'\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}'


def utc_iso(timestamp: float) -> str:
    """A `time.time()` timestamp as an ISO 8601 UTC time to the second: `2026-12-03T16:30:00Z`."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec='seconds').replace('+00:00', 'Z')
