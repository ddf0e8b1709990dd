"""Proof of who answered: receipts signed over the questions asked and the answers given.

`AskUser(receipt_key=...)` signs one for every answer; `verify_receipt` checks one against the request and
response it claims to be for, and raises `SignatureError` when it does not check out. An answerer that is a
`ReceiptKeeper` keeps it with the finished question, and the history shows it, checked with `check_kept_receipt`.
"""

from __future__ import annotations

from ._receipt import (
    AnswerReceipt,
    ReceiptCheck,
    ReceiptKeeper,
    ReceiptStatus,
    check_kept_receipt,
    os_user_at_host,
    receipt_from_json,
    receipt_to_json,
    sign_receipt,
    verify_receipt,
)
from ._signing import SignatureError

__all__ = (
    'AnswerReceipt',
    'sign_receipt',
    'verify_receipt',
    'receipt_to_json',
    'receipt_from_json',
    'os_user_at_host',
    'SignatureError',
    'ReceiptKeeper',
    'ReceiptStatus',
    'ReceiptCheck',
    'check_kept_receipt',
)
