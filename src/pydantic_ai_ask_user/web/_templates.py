"""The Jinja2 environment the pages are drawn with: autoescaped, strict, and loaded from the package."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from pydantic_ai_ask_user.checks import printable

from ._markdown import render_markdown, safe_link

__all__ = ('render', 'TEMPLATES_DIR', 'STATIC_DIR')

TEMPLATES_DIR = Path(__file__).parent / 'templates'
"""Where the page templates live."""

STATIC_DIR = Path(__file__).parent / 'static'
"""Where the stylesheet and scripts the pages load live; the app serves them itself, no CDN."""


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        # Every value is escaped, whatever the template's name: questions are written by a model.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # Strings that did not come through validation still cannot put control characters on the page.
    environment.filters['text'] = printable
    # A context's summary is Markdown: drawn by the safe subset of `_markdown`, never as HTML; its link, only http(s).
    environment.filters['markdown'] = render_markdown
    environment.filters['safe_link'] = safe_link  # pyright: ignore[reportArgumentType]
    return environment


def render(name: str, **context: Any) -> str:
    """Draw template `name` with `context`."""
    return _environment().get_template(name).render(**context)
