"""Being told a question waits: a signed `question_waiting` webhook, for senders and receivers.

`notify_then(answerer, url=..., key=..., link=...)` POSTs the webhook, then asks the answerer it wraps;
a receiver checks the signature with `verify_webhook`, which raises `SignatureError` for anything forged.
"""

from __future__ import annotations

from ._signing import SignatureError
from ._webhooks import (
    WEBHOOK_EVENT_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    WEBHOOK_TOLERANCE,
    NotifyingAnswerer,
    WebhookFailure,
    WebhookNotifier,
    notify_then,
    question_waiting_payload,
    sign_webhook,
    verify_webhook,
)

__all__ = (
    'notify_then',
    'NotifyingAnswerer',
    'WebhookNotifier',
    'WebhookFailure',
    'question_waiting_payload',
    'sign_webhook',
    'verify_webhook',
    'WEBHOOK_SIGNATURE_HEADER',
    'WEBHOOK_EVENT_HEADER',
    'WEBHOOK_TOLERANCE',
    'SignatureError',
)
