"""Who answers from this process, as `user@host`: what the terminal and the command line say answered.

A module of its own, apart from the receipts that also name it (`receipts.os_user_at_host`): the terminal menu
needs only this, and the receipts' JSON shapes are pydantic models built when their module is imported, which
`ask-user ask` must not pay for before it draws.
"""

from __future__ import annotations

import socket

__all__ = ('os_user_at_host',)


def os_user_at_host() -> str:
    """Who answers from this process, as `user@host`: the OS login name and the host name, filtered.

    Characters other than letters, digits and `._-` become `_`; an unknown user or host is `unknown`.
    """
    import getpass

    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = ''
    host = socket.gethostname()
    return f'{_name_part(user)}@{_name_part(host)}'


def _name_part(value: str) -> str:
    cleaned = ''.join(char if (char.isalnum() and char.isascii()) or char in '._-' else '_' for char in value)[:64]
    return cleaned or 'unknown'
