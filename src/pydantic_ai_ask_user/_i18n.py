"""Message catalogs for what a person reads: stdlib `gettext`, one domain, the language chosen from the environment.

The catalogs live in `locale/<lang>/LC_MESSAGES/pydantic_ai_ask_user.{po,mo}` inside the package. The `.mo`
files are committed, compiled from the `.po` files by `make messages` (Babel), and a test compiles every
`.po` again and checks that the committed `.mo` holds exactly the same messages, so a stale one fails CI.
English is the source language and the fallback: it has no catalog. What the model reads never goes
through a catalog.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = (
    'DEFAULT_LANGUAGE',
    'DOMAIN',
    'LOCALE_DIR',
    'Translator',
    'N_',
    'Nn_',
    'available_languages',
    'negotiate_http',
    'negotiate_terminal',
    'translator',
)

DOMAIN = 'pydantic_ai_ask_user'
"""The gettext domain: the name of every catalog file."""

LOCALE_DIR = Path(__file__).parent / 'locale'
"""Where the catalogs are: `LOCALE_DIR / <lang> / 'LC_MESSAGES' / f'{DOMAIN}.mo'`."""

DEFAULT_LANGUAGE = 'en'
"""The source language, and the fallback when nothing asked for has a catalog."""

_MAX_ACCEPT_LANGUAGE = 4096
"""The longest `Accept-Language` value read; the rest is ignored (browsers send well under 200 characters)."""

_TAG = re.compile(r'[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*')
"""A language tag as `Accept-Language` and the locale variables spell it (`ko`, `ko-KR`, `pt_BR`)."""

_Q = re.compile(r'q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)')
"""A quality value, 0 to 1 with at most three decimals (RFC 9110, section 12.4.2)."""


class Translator(NamedTuple):
    """The two lookups of one language: use them as `_ = t.gettext` and `t.ngettext(one, many, n)`."""

    language: str
    """The language whose catalog answers (`en` when none does)."""

    gettext: Callable[[str], str]
    """The translation of a message, or the message itself when the catalog lacks it."""

    ngettext: Callable[[str, str, int], str]
    """The translation of the singular or plural form for a count, by the language's plural rule."""


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it now: `pybabel extract` finds `N_('...')`."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a singular and plural pair for extraction (`make messages` passes `-k Nn_:1,2`), untranslated."""
    return (singular, plural)


@functools.cache
def available_languages() -> tuple[str, ...]:
    """The languages with a compiled catalog, English first (it needs none), the others sorted."""
    found = (
        sorted(path.name for path in LOCALE_DIR.iterdir() if (path / 'LC_MESSAGES' / f'{DOMAIN}.mo').is_file())
        if LOCALE_DIR.is_dir()
        else []
    )
    return (DEFAULT_LANGUAGE, *(name for name in found if name != DEFAULT_LANGUAGE))


def _match(tag: str) -> str | None:
    """The available language for `tag` (`ko_KR.UTF-8`, `ko-kr`, `ko`): the exact one, else its primary language."""
    tag = tag.split('.', 1)[0].split('@', 1)[0].replace('-', '_')
    if not _TAG.fullmatch(tag):
        return None
    by_lower = {name.lower(): name for name in available_languages()}
    exact = by_lower.get(tag.lower())
    if exact is not None:
        return exact
    return by_lower.get(tag.split('_', 1)[0].lower())


def negotiate_terminal(environ: Mapping[str, str] | None = None) -> str:
    """The language for a terminal, from `LANGUAGE`, `LC_ALL`, `LC_MESSAGES` and `LANG` (default: `os.environ`).

    As GNU gettext reads them: the locale is the first set of `LC_ALL`, `LC_MESSAGES`, `LANG`; when it is
    `C` or `POSIX` the messages are English and `LANGUAGE` is ignored. Otherwise `LANGUAGE`, a
    colon-separated list of preferences (`ko:en`), is tried in order, then the locale's own language.
    The first with a catalog wins; `en` when none has one.
    """
    env = os.environ if environ is None else environ
    locale = next((env[name] for name in ('LC_ALL', 'LC_MESSAGES', 'LANG') if env.get(name)), '')
    if locale.split('.', 1)[0] in ('C', 'POSIX'):
        return DEFAULT_LANGUAGE
    for preference in [*env.get('LANGUAGE', '').split(':'), locale]:
        matched = _match(preference) if preference else None
        if matched is not None:
            return matched
    return DEFAULT_LANGUAGE


def negotiate_http(accept_language: str | None) -> str:
    """The language for a web page from an `Accept-Language` header value (`ko-KR,ko;q=0.9,en;q=0.8`).

    Entries are taken by quality value, highest first (in header order among equals); `q=0` refuses one,
    `*` accepts the default, malformed entries are skipped. The first with a catalog wins; `en` when none has one.
    """
    if not accept_language:
        return DEFAULT_LANGUAGE
    ranked: list[tuple[float, int, str]] = []
    for position, entry in enumerate(accept_language[:_MAX_ACCEPT_LANGUAGE].split(',')):
        tag, *parameters = (part.strip() for part in entry.split(';'))
        quality = 1.0
        for parameter in parameters:
            compact = parameter.replace(' ', '').lower()
            if compact.startswith('q='):
                q = _Q.fullmatch(compact)
                quality = float(q.group(1)) if q else -1.0
        if quality > 0 and (tag == '*' or _TAG.fullmatch(tag)):
            ranked.append((-quality, position, tag))
    for _, _, tag in sorted(ranked):
        matched = DEFAULT_LANGUAGE if tag == '*' else _match(tag)
        if matched is not None:
            return matched
    return DEFAULT_LANGUAGE


def translator(language: str) -> Translator:
    """The `gettext` and `ngettext` of `language` (a tag such as `ko` or `ko-KR`), English when it has no catalog.

    Cached per catalog, not per tag: every tag that picks one catalog returns the same `Translator`, so
    tags taken from requests cannot grow the cache.
    """
    matched = _match(language) if isinstance(language, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
    return _translator(matched or DEFAULT_LANGUAGE)


@functools.cache
def _translator(language: str) -> Translator:
    if language == DEFAULT_LANGUAGE:
        catalog: _gettext.NullTranslations = _gettext.NullTranslations()
    else:
        catalog = _gettext.translation(DOMAIN, LOCALE_DIR, languages=[language])
    return Translator(language=language, gettext=catalog.gettext, ngettext=catalog.ngettext)
