"""What webhooks and receipts share: canonical JSON, HMAC-SHA256, and the error a failed check raises."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any

__all__ = (
    'SignatureError',
    'canonical_json',
    'check_key',
    'hmac_hex',
    'same',
    'sha256_hex',
    'seal',
    'unseal',
)

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


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode('ascii')


def _seal_signature(key: bytes, purpose: bytes, encoded: str) -> str:
    return _b64(bytes.fromhex(hmac_hex(key, purpose + encoded.encode('ascii', 'replace'))))


def seal(key: bytes, purpose: bytes, body: Any) -> str:
    """`BODY.SIGNATURE`: `body` as canonical JSON and HMAC-SHA256 of it under `key` with `purpose` mixed in, both
    unpadded base64url; `unseal` reads it back only under the same key and purpose (a login code is never an action).
    """
    encoded = _b64(canonical_json(body))
    return f'{encoded}.{_seal_signature(key, purpose, encoded)}'


def unseal(key: bytes, purpose: bytes, code: str, *, max_length: int) -> Any:
    """The body `seal` wrote into `code` under `key` and `purpose`, or `None` when it was not (or is too long)."""
    if len(code) > max_length or code.count('.') != 1:
        return None
    encoded, signature = code.split('.')
    if not hmac.compare_digest(
        signature.encode('ascii', 'replace'), _seal_signature(key, purpose, encoded).encode('ascii')
    ):
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(encoded + '=' * (-len(encoded) % 4)))
    except (ValueError, binascii.Error):  # signed by us, so never; but refused, not raised
        return None
