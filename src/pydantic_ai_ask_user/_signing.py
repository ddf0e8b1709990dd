"""What webhooks and receipts share: canonical JSON, HMAC-SHA256, and the error a failed check raises."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

__all__ = ('SignatureError', 'canonical_json', 'check_key', 'hmac_hex', 'same', 'sha256_hex')

MIN_KEY_BYTES = 16
"""The shortest signing key accepted: a key is a secret, not a password; 32 random bytes is the advice."""


class SignatureError(ValueError):
    """A signed webhook or receipt does not check out: its message says what did not match."""


def check_key(key: bytes | str) -> bytes:
    """`key` as bytes (a `str` is UTF-8 encoded), refusing one too short to be a secret."""
    raw = key.encode('utf-8') if isinstance(key, str) else key
    if not isinstance(raw, bytes):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f'a signing key is bytes or str, not {type(key).__name__}')
    if len(raw) < MIN_KEY_BYTES:
        raise ValueError(f'a signing key must be at least {MIN_KEY_BYTES} bytes, got {len(raw)}')
    return raw


def canonical_json(value: Any) -> bytes:
    """`value` as UTF-8 JSON with sorted keys and no whitespace: one byte string for one value.

    A lone surrogate (a provider's tool call id may hold one: `'\\ud800'`) is encoded as its three bytes
    (`surrogatepass`) instead of failing: still one byte string per value, and every string of valid
    Unicode gives the very bytes it always did, so receipts signed before still verify.
    """
    text = json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False, allow_nan=False)
    return text.encode('utf-8', 'surrogatepass')


def hmac_hex(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 of `message` under `key`, as lowercase hex."""
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sha256_hex(message: bytes) -> str:
    """SHA-256 of `message`, as lowercase hex."""
    return hashlib.sha256(message).hexdigest()


def same(expected: str, given: str) -> bool:
    """Whether `given` equals `expected` in constant time, for any text (`compare_digest` refuses non-ASCII str)."""
    return hmac.compare_digest(expected.encode('utf-8', 'surrogatepass'), given.encode('utf-8', 'surrogatepass'))
