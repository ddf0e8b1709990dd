"""The command's own messages to a person, in the terminal's language (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`).

Each message is written in English in the call, `_('cannot read {path}: {error}').format(...)`, so that
`make messages` extracts it; `_` looks it up in the catalog `negotiate_terminal()` picks when it is called.
JSON on stdout, what the model reads, and argparse's help stay English.
"""

from __future__ import annotations

from .._i18n import negotiate_terminal, translator

__all__ = ('_', 'ngettext')


def _(message: str) -> str:
    """`message` in the terminal's language, or as it is when its catalog lacks it (English has none)."""
    return translator(negotiate_terminal()).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The singular or plural form for `count`, in the terminal's language, by that language's plural rule."""
    return translator(negotiate_terminal()).ngettext(singular, plural, count)
