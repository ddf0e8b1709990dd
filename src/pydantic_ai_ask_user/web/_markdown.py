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

_INLINE = re.compile(
    r'`(?P<code>[^`\n]+)`'
    r'|\*\*(?P<strong>[^\n]+?)\*\*'
    r'|\[(?P<label>[^\]\n]+)\]\((?P<href>[^\s()]+)\)'
    r'|\*(?P<em>[^*\n]+)\*'
    r'|(?<![\w])_(?P<em2>[^_\n]+)_(?![\w])'
)
"""The inline forms, leftmost first."""

_BULLET = re.compile(r'[-*] +(?P<item>.*)')
_NUMBERED = re.compile(r'\d{1,9}[.)] +(?P<item>.*)')


def safe_link(url: str | None) -> str | None:
    """`url` when it is an absolute `http://` or `https://` URL with a host and nothing undrawable; else `None`."""
    if not url or len(url) > 2048 or printable(url, allow_newline=False) != url or any(c.isspace() for c in url):
        return None
    parts = urllib.parse.urlsplit(url)
    return url if parts.scheme.lower() in ('http', 'https') and parts.netloc else None


def _inline(text: str) -> Markup:
    out: list[Markup] = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(escape(text[position : match.start()]))
        position = match.end()
        if (code := match.group('code')) is not None:
            out.append(Markup('<code>{}</code>').format(code))
        elif (strong := match.group('strong')) is not None:
            out.append(Markup('<strong>{}</strong>').format(_inline(strong)))
        elif (label := match.group('label')) is not None:
            href = safe_link(match.group('href'))
            if href is None:
                out.append(escape(match.group(0)))
            else:
                out.append(
                    Markup('<a href="{}" rel="noopener noreferrer nofollow" target="_blank">{}</a>').format(
                        href, _inline(label)
                    )
                )
        else:
            out.append(Markup('<em>{}</em>').format(_inline(match.group('em') or match.group('em2') or '')))
    out.append(escape(text[position:]))
    return Markup('').join(out)


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
