"""The message catalogs: the language of the terminal menu, the web pages and the command's messages.

What the model reads (the tool, its results, the rules it broke) stays English in every language.
"""

from __future__ import annotations

from ._i18n import Translator, available_languages, negotiate_http, negotiate_terminal, translator

__all__ = (
    'translator',
    'Translator',
    'negotiate_terminal',
    'negotiate_http',
    'available_languages',
)
