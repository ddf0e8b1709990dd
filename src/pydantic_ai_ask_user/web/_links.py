"""`SignedLoginLinks`: sign-in links another process makes with a key it shares with the server, each used once.

The app's own links (`AskUserApp.login_path`) are random codes the serving process remembers, so only that process
can make them. A signed link carries who it is for and when it expires, signed with a shared key: `ask-user inbox
link alice` prints one while `ask-user inbox` serves, and an application of yours can mail one. The server checks the
signature and the time, and takes each link's nonce once: in memory, and, with `used_file`, in a file that a restart
of the server (or a second server on the same machine and file) reads too.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import IO

from pydantic_ai_ask_user._action_codes import ActionCode, read_action_code
from pydantic_ai_ask_user._audience import Person
from pydantic_ai_ask_user._login_links import SignedLogin, read_login_code, sign_login_code
from pydantic_ai_ask_user._signing import check_key

__all__ = ('SignedLoginLinks', 'DEFAULT_LINK_SECONDS')

DEFAULT_LINK_SECONDS = 24 * 3600.0
"""How long a signed link works unless its maker says otherwise: a day, as the app's own links."""


class SignedLoginLinks:
    """Login links signed with `key` (16 bytes at least, 32 random ones advised), accepted by an app besides its own.

    Give it to the app as `WebOptions(login_links=...)` (or `create_app(store, login_links=...)`); make a link's code
    with `code(person)` here or in another process holding the same key, and open `login?code=CODE` under the app.
    Each code signs in one browser as `person` (their name, groups and `sees_all`), once, until it expires.

    `used_file`: where the nonces of the links already used are kept (created with mode 0600), so that a link stays
    used across a restart of the server, and between servers on one machine sharing the file. Without it they are
    kept in memory only: after a restart, a link not yet expired would sign in again.
    """

    def __init__(self, key: bytes | str, *, used_file: str | os.PathLike[str] | None = None) -> None:
        self._key = check_key(key)
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()
        self.used_file = None if used_file is None else Path(used_file)
        """Where the used links' nonces are kept, or `None` for memory only."""
        if self.used_file is not None:
            self._forget_expired()

    def code(self, person: Person, *, seconds: float = DEFAULT_LINK_SECONDS) -> str:
        """A code for a link that signs one browser in as `person`, within `seconds` from now."""
        if not seconds > 0:
            raise ValueError(f'a link must work for a positive number of seconds, not {seconds!r}')
        return sign_login_code(self._key, person, expires_at=time.time() + seconds)

    def peek(self, code: str) -> Person | None:
        """Who `code` signs in, when it is signed with the key, not expired and not used; it stays usable."""
        login = read_login_code(self._key, code, now=time.time())
        if login is None or login.nonce in self._used:
            return None
        return login.person

    def read_action(self, code: str) -> ActionCode | None:
        """What a one-click action code (`InboxLinks.action`, signed with the same key) says, when it is signed with
        the key and not expired; `None` otherwise. Reading it uses nothing up: the item it acts on is answered once.
        """
        return read_action_code(self._key, code, now=time.time())

    def redeem(self, code: str) -> Person | None:
        """Use `code` up: who it signs in, or `None` when it is not valid (or was used, here or in `used_file`)."""
        now = time.time()
        login = read_login_code(self._key, code, now=now)
        if login is None:
            return None
        with self._lock:
            for nonce, expires_at in tuple(self._used.items()):
                if expires_at <= now:
                    del self._used[nonce]
            if login.nonce in self._used or not self._take(login):
                return None
            self._used[login.nonce] = login.expires_at
        return login.person

    def _take(self, login: SignedLogin) -> bool:
        """Record `login`'s nonce in `used_file`; `False` when it is there already (another process took it)."""
        if self.used_file is None:
            return True
        with self._ledger() as ledger:
            ledger.seek(0)
            if any(line.split(' ', 1)[0] == login.nonce for line in ledger.read().splitlines()):
                return False
            ledger.write(f'{login.nonce} {int(login.expires_at) + 1}\n')
            ledger.flush()
        return True

    def _forget_expired(self) -> None:
        """Rewrite `used_file` without the nonces of links that have expired anyway."""
        now = time.time()
        with self._ledger() as ledger:
            ledger.seek(0)
            kept = [line for line in ledger.read().splitlines() if _expires(line) > now]
            ledger.seek(0)
            ledger.truncate()
            ledger.write(''.join(f'{line}\n' for line in kept))
            ledger.flush()

    @contextlib.contextmanager
    def _ledger(self) -> Generator[IO[str]]:
        """`used_file`, open for reading and appending (created 0600), locked against other processes meanwhile."""
        assert self.used_file is not None
        fd = os.open(self.used_file, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, 'r+', encoding='ascii', errors='replace') as handle:
            if sys.platform != 'win32':
                import fcntl  # POSIX only: on Windows the file is shared without a lock

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            yield handle


def _expires(line: str) -> float:
    _, _, expires = line.partition(' ')
    try:
        return float(expires)
    except ValueError:
        return 0.0
