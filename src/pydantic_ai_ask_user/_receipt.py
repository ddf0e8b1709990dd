"""Signed receipts: proof, checkable later with the app's key, of who answered which questions, how, and when."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ._answers import MAX_ANSWERED_BY_LENGTH, AskUserRequest, AskUserResponse, check_answered_by, check_response
from ._json import questions_to_json, response_to_json
from ._signing import SignatureError, canonical_json, check_key, hmac_hex, same, sha256_hex
from ._text import printable

__all__ = (
    'MAX_ANSWERED_BY_LENGTH',
    'RECEIPT_VERSION',
    'AnswerReceipt',
    'os_user_at_host',
    'receipt_from_json',
    'receipt_to_json',
    'sign_receipt',
    'verify_receipt',
)

RECEIPT_VERSION = 1
"""The version of the signed material; a receipt of another version is refused by `verify_receipt`."""


_FIELDS = ('version', 'request_id', 'questions_sha256', 'response_sha256', 'answered_by', 'answered_at', 'signature')
"""The keys of a receipt's JSON, all required."""


@dataclass(frozen=True, kw_only=True)
class AnswerReceipt:
    """Who answered a request, with which response, when: signed with HMAC-SHA256 under the app's key.

    It holds hashes, not the questions or the answer: keep it beside them, and `verify_receipt` checks
    that the three belong together and that nobody without the key made or changed it.
    """

    request_id: str
    """The request's id (the tool call id)."""

    questions_sha256: str
    """SHA-256 (hex) of the canonical JSON of `questions_to_json(request)`: reordering or editing them changes it."""

    response_sha256: str
    """SHA-256 (hex) of the canonical JSON of `response_to_json(response)`."""

    answered_by: str
    """Who answered, as the app names them: `alice@web`, `os_user_at_host()` for the command line."""

    answered_at: datetime
    """When, timezone-aware, in UTC."""

    signature: str
    """HMAC-SHA256 (hex) of the canonical JSON of every field above, with the version."""

    version: int = RECEIPT_VERSION
    """The version of what is signed."""


def _questions_sha256(request: AskUserRequest) -> str:
    return sha256_hex(canonical_json(questions_to_json(request)))


def _response_sha256(response: AskUserResponse) -> str:
    return sha256_hex(canonical_json(response_to_json(response)))


def _at(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec='microseconds').replace('+00:00', 'Z')


def _signed_material(
    *, version: int, request: AskUserRequest, response: AskUserResponse, answered_by: str, answered_at: datetime
) -> bytes:
    return canonical_json(
        {
            'version': version,
            'request_id': request.id,
            'questions_sha256': _questions_sha256(request),
            'response': response_to_json(response),
            'answered_by': answered_by,
            'answered_at': _at(answered_at),
        }
    )


def _check_answered_by(answered_by: str) -> str:
    """`answered_by` when `check_answered_by` takes it (the rule every response is held to); else `ValueError`."""
    if (problem := check_answered_by(answered_by)) is not None:
        raise ValueError(problem)
    return answered_by


def _check_at(at: datetime) -> datetime:
    if not isinstance(at, datetime):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f'the time of an answer is a datetime, not {type(at).__name__}')
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError('the time of an answer must be timezone-aware (use datetime.now(UTC))')
    return at.astimezone(UTC)


def sign_receipt(
    request: AskUserRequest,
    response: AskUserResponse,
    *,
    key: bytes | str,
    answered_by: str | None = None,
    at: datetime | None = None,
) -> AnswerReceipt:
    """Sign that `answered_by` gave `response` to `request` at `at` (default: now), with `key` (16 bytes or more).

    The response is checked against the request first (`check_response`): a receipt is never made for an
    answer that does not fit. `answered_by` (default: `response.answered_by`, which the front end set) is 1
    to 200 characters with no control or format character; a `ValueError` when neither names anyone.
    """
    raw_key = check_key(key)
    check_response(request, response)
    if answered_by is None:
        answered_by = response.answered_by
    elif response.answered_by is not None and answered_by != response.answered_by:
        raise ValueError(
            f'sign_receipt(answered_by={printable(answered_by)!r}) contradicts the response, which says '
            f'{printable(response.answered_by)!r} answered; a receipt names one person'
        )
    if answered_by is None:
        raise ValueError(
            'sign_receipt needs to know who answered: pass answered_by=..., or use an answerer that sets '
            'AskUserResponse.answered_by'
        )
    who = _check_answered_by(answered_by)
    when = _check_at(datetime.now(UTC) if at is None else at)
    material = _signed_material(
        version=RECEIPT_VERSION, request=request, response=response, answered_by=who, answered_at=when
    )
    return AnswerReceipt(
        request_id=request.id,
        questions_sha256=_questions_sha256(request),
        response_sha256=_response_sha256(response),
        answered_by=who,
        answered_at=when,
        signature=hmac_hex(raw_key, material),
    )


def verify_receipt(
    receipt: AnswerReceipt, request: AskUserRequest, response: AskUserResponse, key: bytes | str
) -> None:
    """Check that `receipt` was signed with `key` for exactly this request and response; raise `SignatureError` if not.

    The error says which part does not match: another request id, other questions (reordered or edited),
    another response, or a signature that is not the key's (a wrong key, or a changed `answered_by`,
    `answered_at` or signature). Returns `None` when the receipt holds.
    """
    raw_key = check_key(key)
    if receipt.version != RECEIPT_VERSION:
        raise SignatureError(f'the receipt is of version {receipt.version!r}, this library checks {RECEIPT_VERSION}')
    if not same(receipt.request_id, request.id):
        raise SignatureError(
            f'the receipt is for request {printable(receipt.request_id)!r}, not {printable(request.id)!r}'
        )
    if not same(receipt.questions_sha256, _questions_sha256(request)):
        raise SignatureError('the receipt was signed for other questions (edited or reordered)')
    if not same(receipt.response_sha256, _response_sha256(response)):
        raise SignatureError('the receipt was signed for another response')
    try:
        material = _signed_material(
            version=receipt.version,
            request=request,
            response=response,
            answered_by=receipt.answered_by,
            answered_at=_check_at(receipt.answered_at),
        )
    except (TypeError, ValueError) as error:
        raise SignatureError(f'the receipt cannot be checked: {error}') from None
    if not same(receipt.signature, hmac_hex(raw_key, material)):
        raise SignatureError('the signature does not match: wrong key, or who or when was changed')


def receipt_to_json(receipt: AnswerReceipt) -> dict[str, Any]:
    """`receipt` as a JSON-ready dict, the inverse of `receipt_from_json`; `answered_at` in UTC ISO-8601."""
    return {
        'version': receipt.version,
        'request_id': receipt.request_id,
        'questions_sha256': receipt.questions_sha256,
        'response_sha256': receipt.response_sha256,
        'answered_by': receipt.answered_by,
        'answered_at': _at(receipt.answered_at),
        'signature': receipt.signature,
    }


def receipt_from_json(data: Any) -> AnswerReceipt:
    """Read a receipt written by `receipt_to_json`; raise `ValueError` naming what is missing or malformed.

    It checks the shape only: `verify_receipt` says whether the receipt holds.
    """
    if not isinstance(data, dict):
        raise ValueError(f'a receipt is a JSON object, not {type(data).__name__}')
    fields: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    missing = [name for name in _FIELDS if name not in fields]
    if missing:
        raise ValueError(f'the receipt lacks {", ".join(missing)}')
    extra = sorted(printable(str(name)) for name in fields if name not in _FIELDS)
    if extra:
        raise ValueError(f'the receipt has unknown fields: {", ".join(extra)}')
    version = fields['version']
    if type(version) is not int:
        raise ValueError('the receipt version is not an integer')
    for name in _FIELDS[1:]:
        if not isinstance(fields[name], str):
            raise ValueError(f'the receipt field {name} is not a string')
    try:
        answered_at = datetime.fromisoformat(fields['answered_at'])
    except ValueError:
        raise ValueError(f'the receipt time {printable(fields["answered_at"])!r} is not ISO-8601') from None
    if answered_at.tzinfo is None:
        raise ValueError('the receipt time has no timezone')
    return AnswerReceipt(
        version=version,
        request_id=fields['request_id'],
        questions_sha256=fields['questions_sha256'],
        response_sha256=fields['response_sha256'],
        answered_by=fields['answered_by'],
        answered_at=answered_at.astimezone(UTC),
        signature=fields['signature'],
    )


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
