"""A small, safe Markdown for `QuestionContext.summary`: what an application (or, through it, a model) writes.

Only what a summary needs: paragraphs, line breaks, `-`/`*` and `1.` lists, `code`, **strong**, *emphasis* and
[links](https://...). Everything else is text. Every piece of text is escaped; no HTML written in the summary ever
reaches the page, no image is loaded, and a link is drawn only to an absolute `http(s)` URL (anything else, a
`javascript:` one included, stays text), with `rel="noopener noreferrer nofollow"`.
"""

from __future__ import annotations

import re
import urllib.parse

from markupsafe import Markup, escape

from pydantic_ai_ask_user._text import printable

__all__ = ('render_markdown', 'safe_link')

_BULLET = re.compile(r'[-*] +(?P<item>.*)')
_NUMBERED = re.compile(r'\d{1,9}[.)] +(?P<item>.*)')


def safe_link(url: str | None) -> str | None:
    """`url` when it is an absolute `http://` or `https://` URL with a host and nothing undrawable; else `None`."""
    if not url or len(url) > 2048 or printable(url, allow_newline=False) != url or any(c.isspace() for c in url):
        return None
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # `http://[` : an IPv6 host that is none
        return None
    return url if parts.scheme.lower() in ('http', 'https') and parts.netloc else None


class _Finder:
    """`str.find` for a scan whose start only moves forward: each part of the text is searched once per needle.

    A failed or far match is remembered, so the next search from a later start inside the part already searched
    costs nothing. This keeps a line of 4,000 `[` (each an unclosed link) linear, where a regular expression
    tried at each of them searched the rest of the line again.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict[str, tuple[int, int]] = {}

    def next(self, needle: str, start: int) -> int:
        """The first index at or after `start` where `needle` begins, or -1."""
        searched = self._found.get(needle)
        if searched is not None and searched[0] <= start and (searched[1] == -1 or start <= searched[1]):
            return searched[1]
        at = self.text.find(needle, start)
        self._found[needle] = (start, at)
        return at


def _is_word(character: str) -> bool:
    return character.isalnum() or character == '_'


def _inline(text: str) -> Markup:
    """`text` (one line) escaped, with `code`, **strong**, [links](https://...), *emphasis* and _emphasis_ drawn.

    The forms are found leftmost first, in that order where two start alike, by one forward scan.
    """
    out: list[str] = []  # pieces escaped already; joined as text, since `Markup.format` costs more than the scan
    finder = _Finder(text)
    hrefs: dict[int, int] = {}  # where the href after `](` at each `]` ends (its `)`), or -1 when it is none
    plain = 0  # where the text not yet drawn starts
    i = 0
    while i < len(text):
        drawn, end = _form_at(text, i, finder, hrefs)
        if drawn is None:
            i += 1
            continue
        out.append(escape(text[plain:i]))
        out.append(drawn)
        plain = i = end
    out.append(escape(text[plain:]))
    return Markup(''.join(out))


def _form_at(text: str, i: int, finder: _Finder, hrefs: dict[int, int]) -> tuple[str | None, int]:
    """The form starting at `i`, drawn, and where it ends; `(None, i)` when none does."""
    character = text[i]
    if character == '`':
        close = finder.next('`', i + 1)
        if close > i + 1:
            return f'<code>{escape(text[i + 1 : close])}</code>', close + 1
    elif character == '*':
        if text.startswith('**', i) and (close := finder.next('**', i + 3)) != -1:
            return f'<strong>{_inline(text[i + 2 : close])}</strong>', close + 2
        close = finder.next('*', i + 1)
        if close > i + 1:
            return f'<em>{_inline(text[i + 1 : close])}</em>', close + 1
    elif character == '[':
        close = finder.next(']', i + 1)
        if close > i + 1 and (end := _href_end(text, close, hrefs)) != -1:
            href = safe_link(text[close + 2 : end])
            if href is None:
                return escape(text[i : end + 1]), end + 1
            label = _inline(text[i + 1 : close])
            return f'<a href="{escape(href)}" rel="noopener noreferrer nofollow" target="_blank">{label}</a>', end + 1
    elif character == '_' and (i == 0 or not _is_word(text[i - 1])):
        close = finder.next('_', i + 1)
        if close > i + 1 and (close + 1 == len(text) or not _is_word(text[close + 1])):
            return f'<em>{_inline(text[i + 1 : close])}</em>', close + 1
    return None, i


def _href_end(text: str, close: int, hrefs: dict[int, int]) -> int:
    """Where `(href)` right after the `]` at `close` ends (the index of its `)`), or -1; each `]` is read once."""
    if close not in hrefs:
        end = -1
        if text.startswith('(', close + 1):
            at = close + 2
            while at < len(text) and not (text[at].isspace() or text[at] in '()'):
                at += 1
            if at > close + 2 and at < len(text) and text[at] == ')':
                end = at
        hrefs[close] = end
    return hrefs[close]


def _lines(lines: list[str]) -> Markup:
    return Markup('<br>\n').join(_inline(line) for line in lines)


def render_markdown(text: str) -> Markup:
    """`text` (Markdown) as safe HTML: escaped, with the few forms this module draws."""
    blocks: list[Markup] = []
    for block in re.split(r'\n\s*\n', printable(text.strip())):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        for pattern, tag in ((_BULLET, 'ul'), (_NUMBERED, 'ol')):
            items = [pattern.fullmatch(line) for line in lines]
            if all(items):
                rendered = Markup('').join(
                    Markup('<li>{}</li>').format(_inline(item.group('item'))) for item in items if item
                )
                blocks.append(Markup(f'<{tag}>') + rendered + Markup(f'</{tag}>'))
                break
        else:
            blocks.append(Markup('<p>{}</p>').format(_lines(lines)))
    return Markup('\n').join(blocks)
