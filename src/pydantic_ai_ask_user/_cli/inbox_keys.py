"""The key file `ask-user inbox` and `ask-user inbox link` share, and `inbox link` itself: print a sign-in link.

The key file is JSON, `{"key": "...", "url": "..."}`, mode 0600: the key signs the links (`SignedLoginLinks`), and
`url` is the address the server serves people at, which it records at each start so that `inbox link` prints links
to it. Whoever can read the file can sign in as anyone: it sits in the user's config directory
(`~/.config/ask-user/inbox/`, one file per store) unless `--key-file` puts it elsewhere. Beside it, `FILE.used` holds
the nonces of the links the server took, so that each link works once, across restarts too.

Loaded when `inbox link` runs, and by `inbox` itself; it imports the standard library and the core only: printing a
link loads no web server.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import ipaddress
import json
import os
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlencode, urlsplit

from .._audience import Person
from .._login_links import sign_login_code
from .._text import printable
from ..dbos import DEFAULT_DATABASE_URL, shown_database_url
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _

__all__ = (
    'InboxKey',
    'key_file',
    'load_key',
    'record_url',
    'used_file',
    'source_name',
    'without_password',
    'login_url',
    'is_loopback',
    'public_url',
    'run_link',
    'KEY_BYTES',
)

KEY_BYTES = 32
"""How many random bytes a new key holds."""


@dataclass(frozen=True)
class InboxKey:
    """What the key file holds: the signing key, and the address the server last recorded."""

    path: Path
    """The key file."""

    key: str
    """The secret that signs the links (URL-safe base64 of `KEY_BYTES` random bytes, or the text an operator put)."""

    url: str | None
    """The address people open the inbox at, ending in `/`, as the server recorded it; `None` before its first start."""


def _say(message: str) -> None:
    print(f'ask-user: {printable(message)}', file=sys.stderr)


def source_name(args: argparse.Namespace) -> str:
    """Which store `--db` or `--temporal` names, the same however it is spelled: a SQLite file by its absolute path,
    another database without its password, a Temporal namespace by its server and name.
    """
    if args.temporal is not None:
        return f'temporal:{args.temporal}/{args.namespace or "default"}'
    url: str = args.db or DEFAULT_DATABASE_URL
    if url.startswith('sqlite:///') and '?' not in url:
        return 'sqlite:///' + os.path.abspath(unquote(url[len('sqlite:///') :]))
    return without_password(url)


def without_password(database_url: str) -> str:
    """`database_url` without its password (and made printable): with the password or without, one store."""
    return shown_database_url(database_url).replace(':***@', '@', 1)


def key_file(args: argparse.Namespace) -> Path:
    """`--key-file`, or the file of this store under the user's config directory (`$XDG_CONFIG_HOME`, `~/.config`)."""
    if args.key_file is not None:
        return Path(args.key_file)
    config = os.environ.get('XDG_CONFIG_HOME') or os.path.join(os.path.expanduser('~'), '.config')
    digest = hashlib.sha256(source_name(args).encode('utf-8', 'surrogatepass')).hexdigest()[:20]
    return Path(config) / 'ask-user' / 'inbox' / f'{digest}.json'


def used_file(path: Path) -> Path:
    """Where the server keeps the nonces of the links it took, beside the key file."""
    return path.with_name(path.name + '.used')


def load_key(path: Path, *, create: bool) -> InboxKey:
    """The key file at `path`; with `create`, a new one (mode 0600, its directory 0700) when there is none.

    `OSError` when it cannot be read or made, `ValueError` when it holds no key.
    """
    if create and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileExistsError):  # made by the other command meanwhile: read that one
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, 'w', encoding='utf-8') as handle:
                json.dump({'key': secrets.token_urlsafe(KEY_BYTES)}, handle)
    text = path.read_text(encoding='utf-8')
    try:
        found: Any = json.loads(text)
    except ValueError:
        found = None
    fields = cast('dict[str, Any]', found) if isinstance(found, dict) else {}
    key, url = fields.get('key'), fields.get('url')
    if not isinstance(key, str) or len(key.encode()) < 16:
        raise ValueError(_('{path} holds no key: a JSON object with "key", 16 characters or more').format(path=path))
    return InboxKey(path, key, url if isinstance(url, str) else None)


def record_url(found: InboxKey, url: str) -> None:
    """Write `url` into the key file, for `inbox link`: replaced whole (a file of mode 0600 renamed over it)."""
    if found.url == url:
        return
    fd, temporary = tempfile.mkstemp(dir=found.path.parent, prefix=found.path.name + '.')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as handle:  # mkstemp makes it 0600
            json.dump({'key': found.key, 'url': url}, handle)
        os.replace(temporary, found.path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def public_url(text: str) -> str | None:
    """`text` as the base address of the inbox (`http(s)://HOST[:PORT]/PATH/`, ending in `/`); `None` if it is none."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme not in ('http', 'https') or not parts.netloc or parts.query or parts.fragment:
        return None
    if any(not character.isprintable() or character.isspace() for character in text):
        return None
    return text if text.endswith('/') else text + '/'


def is_loopback(host: str) -> bool:
    """Whether `host` is reached from this machine only: `localhost`, `127.0.0.0/8` or `::1`."""
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError:
        return False


def login_url(base: str, code: str) -> str:
    """The sign-in link of `code` on the inbox at `base`."""
    return f'{base}login?{urlencode({"code": code})}'


def run_link(args: argparse.Namespace) -> int:
    """`ask-user inbox link NAME`: print a one-time sign-in link for NAME on stdout."""
    if args.temporal is None and args.namespace is not None:
        _say(_('--namespace is a Temporal namespace: give --temporal HOST:PORT with it'))
        return EXIT_INVALID
    try:
        person = Person(args.name, groups=args.group, sees_all=args.admin)
    except (TypeError, ValueError) as error:
        _say(str(error))
        return EXIT_INVALID
    base = None
    if args.url is not None and (base := public_url(args.url)) is None:
        _say(_('--url takes the address of the inbox, http(s)://HOST[:PORT]/, not {url!r}').format(url=args.url))
        return EXIT_INVALID
    path = key_file(args)
    try:
        found = load_key(path, create=False)
    except FileNotFoundError:
        _say(
            _(
                'no inbox key at {path}: start ask-user inbox with the same --db or --temporal first, '
                'or give --key-file'
            ).format(path=path)
        )
        return EXIT_CANNOT_ASK
    except (OSError, ValueError) as error:
        _say(_('cannot read the inbox key: {error}').format(error=error))
        return EXIT_CANNOT_ASK
    base = base or found.url
    if base is None:
        _say(_('the address of the inbox is not known yet: start ask-user inbox first, or give --url'))
        return EXIT_CANNOT_ASK
    code = sign_login_code(found.key, person, expires_at=time.time() + args.expires_in)
    print(printable(login_url(base, code), allow_newline=False))
    return 0
