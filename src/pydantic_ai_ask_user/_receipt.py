"""Signed receipts: proof, checkable later with the app's key, of who answered which questions, how, and when.

Kept where the answer is kept: the run signs a receipt (`AskUser(receipt_key=...)`) and hands it to its answerer
when the answerer is a `ReceiptKeeper` (the web inbox's hub, `DBOSAnswerer`, `TemporalAnswerer`), which stores it
with the finished question. Why the run signs and the store only keeps: the key lives with the application that runs
the agent, never in the store, so whoever can write to the store (the database, the workflow history) cannot make a
receipt that verifies; and the history, given the key, checks the stored receipt against the stored questions and
answer (`check_kept_receipt`), so a receipt, a question or an answer changed in the store shows as not verifying.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, cast

from ._answers import AskUserRequest, AskUserResponse, check_answered_by, check_response
from ._audience import addressing_json
from ._json import response_to_json
from ._os_user import os_user_at_host
from ._plain_questions import questions_to_json
from ._question_limits import MAX_ANSWERED_BY_LENGTH
from ._signing import SignatureError, canonical_json, check_key, hmac_hex, same, sha256_hex
from ._text import printable

__all__ = (
    'MAX_ANSWERED_BY_LENGTH',
    'RECEIPT_VERSION',
    'AnswerReceipt',
    'ReceiptKeeper',
    'receipt_keeper',
    'ReceiptCheck',
    'ReceiptStatus',
    'check_kept_receipt',
    'os_user_at_host',
    'receipt_from_json',
    'receipt_to_json',
    'sign_receipt',
    'verify_receipt',
)

RECEIPT_VERSION = 2
"""The version of the signed material `sign_receipt` makes: 2 binds the run that asked (`run_id`) as well as the call.

`verify_receipt` also checks version 1 receipts, made before a receipt named its run, but only against a
request of no run (`run_id=None`): tool call ids repeat across runs, so a receipt that names no run cannot
tell which run's question it answered. Any other version is refused.
"""

_LEGACY_VERSION = 1
"""Receipts that name the tool call but not the run: still verified, for requests of no run only."""

_FIELDS = (
    'version',
    'request_id',
    'run_id',
    'questions_sha256',
    'response_sha256',
    'answered_by',
    'answered_at',
    'signature',
)
"""The keys of a receipt's JSON, all required (`run_id` may be null)."""

_LEGACY_FIELDS = tuple(name for name in _FIELDS if name != 'run_id')
"""The keys of a version 1 receipt's JSON, all required: it has no `run_id`."""


@dataclass(frozen=True, kw_only=True)
class AnswerReceipt:
    """Who answered a request, with which response, when: signed with HMAC-SHA256 under the app's key.

    It holds hashes, not the questions or the answer: keep it beside them, and `verify_receipt` checks
    that the three belong together and that nobody without the key made or changed it.
    """

    request_id: str
    """The request's id (the tool call id)."""

    run_id: str | None = None
    """The run that asked (`AskUserRequest.run_id`), or `None` for a request of no run (and in version 1 receipts).

    Signed with the tool call id: providers repeat tool call ids across runs, so a receipt for `call_0` in one
    run does not verify for `call_0` in another.
    """

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

    addressing: dict[str, Any] | None = None
    """Who the question was for and where it came from, `{"audience": [...], "context": {...}}` (each when set).

    Signed, and shown: an audit log reads that alice answered the question of `support-bot` about "Refund for
    order 1042", addressed to `team:billing`. `None` for a request with neither (and for receipts made before).
    """


def _questions_sha256(request: AskUserRequest) -> str:
    return sha256_hex(canonical_json(questions_to_json(request)))


def _response_sha256(response: AskUserResponse) -> str:
    return sha256_hex(canonical_json(response_to_json(response)))


def _at(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec='microseconds').replace('+00:00', 'Z')


def _signed_material(
    *,
    version: int,
    request: AskUserRequest,
    response: AskUserResponse,
    answered_by: str,
    answered_at: datetime,
    addressing: dict[str, Any] | None = None,
) -> bytes:
    material: dict[str, Any] = {
        'version': version,
        'request_id': request.id,
        'questions_sha256': _questions_sha256(request),
        'response': response_to_json(response),
        'answered_by': answered_by,
        'answered_at': _at(answered_at),
    }
    if version != _LEGACY_VERSION:
        material['run_id'] = request.run_id
        if request.run_step is not None:
            # Signed, not carried: a receipt of one turn of a run does not verify for another turn that repeats
            # the call id, because the request it is checked against has its own step.
            material['run_step'] = request.run_step
        if addressing is not None:
            # Only when the receipt carries it, so a receipt made before requests had it verifies as it did.
            material['addressing'] = addressing
    return canonical_json(material)


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
    addressing = addressing_json(request) or None
    material = _signed_material(
        version=RECEIPT_VERSION,
        request=request,
        response=response,
        answered_by=who,
        answered_at=when,
        addressing=addressing,
    )
    return AnswerReceipt(
        request_id=request.id,
        run_id=request.run_id,
        questions_sha256=_questions_sha256(request),
        response_sha256=_response_sha256(response),
        answered_by=who,
        answered_at=when,
        signature=hmac_hex(raw_key, material),
        addressing=addressing,
    )


def verify_receipt(
    receipt: AnswerReceipt, request: AskUserRequest, response: AskUserResponse, key: bytes | str
) -> None:
    """Check that `receipt` was signed with `key` for exactly this request and response; raise `SignatureError` if not.

    The error says which part does not match: another request id, another run, other questions (reordered or
    edited), another response, or a signature that is not the key's (a wrong key, or a changed `answered_by`,
    `answered_at` or signature). A version 1 receipt (it names no run) holds only for a request of no run.
    Returns `None` when the receipt holds.
    """
    raw_key = check_key(key)
    if receipt.version not in (RECEIPT_VERSION, _LEGACY_VERSION):
        raise SignatureError(
            f'the receipt is of version {receipt.version!r}, this library checks '
            f'{_LEGACY_VERSION} and {RECEIPT_VERSION}'
        )
    if not same(receipt.request_id, request.id):
        raise SignatureError(
            f'the receipt is for request {printable(receipt.request_id)!r}, not {printable(request.id)!r}'
        )
    _check_run(receipt, request)
    if not same(receipt.questions_sha256, _questions_sha256(request)):
        raise SignatureError('the receipt was signed for other questions (edited or reordered)')
    if not same(receipt.response_sha256, _response_sha256(response)):
        raise SignatureError('the receipt was signed for another response')
    if receipt.addressing is not None and canonical_json(receipt.addressing) != canonical_json(
        addressing_json(request)
    ):
        raise SignatureError(
            'the receipt was signed for a question addressed to others or asked from elsewhere '
            '(its audience or context differ)'
        )
    try:
        material = _signed_material(
            version=receipt.version,
            request=request,
            response=response,
            answered_by=receipt.answered_by,
            answered_at=_check_at(receipt.answered_at),
            addressing=receipt.addressing,
        )
    except (TypeError, ValueError) as error:
        raise SignatureError(f'the receipt cannot be checked: {error}') from None
    if not same(receipt.signature, hmac_hex(raw_key, material)):
        raise SignatureError('the signature does not match: wrong key, or who or when was changed')


def _check_run(receipt: AnswerReceipt, request: AskUserRequest) -> None:
    """`SignatureError` unless the receipt is for the request's run (a version 1 receipt: for no run)."""
    if receipt.version == _LEGACY_VERSION:
        if receipt.run_id is not None:
            raise SignatureError('a version 1 receipt names no run, but this one has a run_id')
        if request.run_id is not None:
            raise SignatureError(
                f'the receipt is of version 1, which names no run, and the request belongs to run '
                f'{printable(request.run_id)!r}: tool call ids repeat across runs, so it verifies only for a '
                'request of no run'
            )
        return
    if receipt.run_id is None or request.run_id is None:
        if receipt.run_id is not request.run_id:
            raise SignatureError(f'the receipt is for {_run(receipt.run_id)}, not {_run(request.run_id)}')
    elif not same(receipt.run_id, request.run_id):
        raise SignatureError(f'the receipt is for {_run(receipt.run_id)}, not {_run(request.run_id)}')


def _run(run_id: str | None) -> str:
    return 'no run' if run_id is None else f'run {printable(run_id)!r}'


def receipt_to_json(receipt: AnswerReceipt) -> dict[str, Any]:
    """`receipt` as a JSON-ready dict, the inverse of `receipt_from_json`; `answered_at` in UTC ISO-8601.

    `run_id` is there (null for a request of no run) from version 2 on; a version 1 receipt has none.
    """
    data: dict[str, Any] = {
        'version': receipt.version,
        'request_id': receipt.request_id,
        'questions_sha256': receipt.questions_sha256,
        'response_sha256': receipt.response_sha256,
        'answered_by': receipt.answered_by,
        'answered_at': _at(receipt.answered_at),
        'signature': receipt.signature,
    }
    if receipt.version != _LEGACY_VERSION:
        data['run_id'] = receipt.run_id
    if receipt.addressing is not None:
        data['addressing'] = receipt.addressing
    return data


def receipt_from_json(data: Any) -> AnswerReceipt:
    """Read a receipt written by `receipt_to_json`; raise `ValueError` naming what is missing or malformed.

    It checks the shape only: `verify_receipt` says whether the receipt holds.
    """
    if not isinstance(data, dict):
        raise ValueError(f'a receipt is a JSON object, not {type(data).__name__}')
    fields: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
    addressing = fields.pop('addressing', None)
    if addressing is not None and not isinstance(addressing, dict):
        raise ValueError('the receipt field addressing is not an object')
    legacy = type(fields.get('version')) is int and fields.get('version') == _LEGACY_VERSION
    expected = _LEGACY_FIELDS if legacy else _FIELDS
    missing = [name for name in expected if name not in fields]
    if missing:
        raise ValueError(f'the receipt lacks {", ".join(missing)}')
    extra = sorted(printable(str(name)) for name in fields if name not in expected)
    if extra:
        raise ValueError(f'the receipt has unknown fields: {", ".join(extra)}')
    version = fields['version']
    if type(version) is not int:
        raise ValueError('the receipt version is not an integer')
    for name in expected[1:]:
        if name == 'run_id' and fields[name] is None:
            continue
        if not isinstance(fields[name], str):
            raise ValueError(f'the receipt field {name} is not a string' + (' or null' if name == 'run_id' else ''))
    try:
        answered_at = datetime.fromisoformat(fields['answered_at'])
    except ValueError:
        raise ValueError(f'the receipt time {printable(fields["answered_at"])!r} is not ISO-8601') from None
    if answered_at.tzinfo is None:
        raise ValueError('the receipt time has no timezone')
    return AnswerReceipt(
        version=version,
        request_id=fields['request_id'],
        run_id=fields.get('run_id'),
        questions_sha256=fields['questions_sha256'],
        response_sha256=fields['response_sha256'],
        answered_by=fields['answered_by'],
        answered_at=answered_at.astimezone(UTC),
        signature=fields['signature'],
        addressing=cast('dict[str, Any] | None', addressing),
    )


class ReceiptKeeper(Protocol):
    """An answerer that keeps the receipts the run signs with the finished question, for the history to show.

    `AskUser(receipt_key=...)` calls `keep_receipt` after signing the receipt of an answer this answerer returned
    (one that names who answered), before the model gets the answer. `WebAnswerer` (its hub), `DBOSAnswerer` and
    `TemporalAnswerer` are receipt keepers; an answerer without the method keeps none (the receipt is still on
    `AskUserAnsweredEvent.receipt`).
    """

    async def keep_receipt(self, request: AskUserRequest, receipt: AnswerReceipt, /) -> AnswerReceipt:
        """Keep `receipt`, signed for the answer to `request`, with the finished question; return the one kept.

        The first receipt kept for a question stays: a replay of the run (a recovered DBOS workflow) signs the same
        answer again, at another time, and gets back the first, so the event and the store carry one receipt. Raises
        when it cannot keep it (the run then fails, as with a failing answerer: the answer is recorded, its proof
        would be missing).
        """
        ...


def receipt_keeper(answerer: object) -> ReceiptKeeper | None:
    """`answerer` as a `ReceiptKeeper` when it has `keep_receipt`, else `None` (a look-up, not `isinstance`)."""
    if callable(getattr(answerer, 'keep_receipt', None)):
        return cast(ReceiptKeeper, answerer)
    return None


ReceiptCheck = Literal['verified', 'not_verified', 'not_checked']
"""What the check of a kept receipt found: it verifies with the key; it does not (changed, forged, or for another
question or answer); or it was not checked, for want of the key."""


@dataclass(frozen=True)
class ReceiptStatus:
    """A kept receipt and what its check found (`check_kept_receipt`)."""

    check: ReceiptCheck
    """`verified`, `not_verified` or `not_checked` (no key given)."""

    kept: Any
    """The receipt as the store keeps it (`receipt_to_json`'s JSON, or whatever the store holds instead)."""

    receipt: AnswerReceipt | None = None
    """The receipt read back, `None` when what is kept does not read as one (then it does not verify)."""

    problem: str | None = None
    """Why it does not verify (`SignatureError`'s message, or what is malformed); `None` otherwise."""


def check_kept_receipt(
    kept: Any, request: AskUserRequest, response: AskUserResponse | None, key: bytes | str | None
) -> ReceiptStatus:
    """Read the kept receipt `kept` (`receipt_to_json`'s JSON) and, with `key`, verify it against the request and
    response the store keeps with it: `verified`, or `not_verified` with the problem (a malformed receipt, no answer
    to check it against, or what `verify_receipt` says); without `key`, `not_checked` (a malformed receipt is
    `not_verified` all the same: no key can make it verify).

    `request` must be addressed as it was asked (a hand-off changes whom a stored question is for, and the receipt
    signed whom it was for then).
    """
    try:
        receipt = receipt_from_json(kept)
    except ValueError as error:
        return ReceiptStatus('not_verified', kept, None, f'the kept receipt is malformed: {error}')
    if key is None:
        return ReceiptStatus('not_checked', kept, receipt)
    if response is None:
        return ReceiptStatus('not_verified', kept, receipt, 'the item has no answer for the receipt to prove')
    try:
        verify_receipt(receipt, request, response, key)
    except ValueError as error:  # `SignatureError`, or a time that is not one
        return ReceiptStatus('not_verified', kept, receipt, str(error))
    return ReceiptStatus('verified', kept, receipt)
