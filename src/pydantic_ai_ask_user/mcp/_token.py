"""The bearer token of `ask-user mcp --http`: made, checked, read from the environment. No MCP SDK needed here."""

from __future__ import annotations

import re
import secrets
from typing import Final

__all__ = ('TOKEN_VARIABLE', 'new_token', 'check_token')

TOKEN_VARIABLE: Final = 'ASK_USER_MCP_TOKEN'
"""The environment variable `ask-user mcp --http` reads its bearer token from (kept out of `ps`, unlike `--token`)."""

_TOKEN = re.compile(r'[A-Za-z0-9._~+/-]{16,512}=*')
"""A bearer token as RFC 6750 spells it (`b64token`), 16 to 512 characters."""


def new_token() -> str:
    """A fresh random bearer token (256 bits)."""
    return secrets.token_urlsafe(32)


def check_token(token: str) -> str | None:
    """What is wrong with `token` as a bearer token, or `None`; the message never quotes the token."""
    if _TOKEN.fullmatch(token) is None:
        return (
            'the token must be 16 to 512 characters of letters, digits and - . _ ~ + / (then = padding), '
            f'like one from: python -c "import secrets; print(secrets.token_urlsafe(32))"; got {len(token)} characters'
        )
    return None
