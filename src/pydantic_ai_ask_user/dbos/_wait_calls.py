"""`WaitCalls`, kept importable from here: it lives in `pydantic_ai_ask_user._wait_calls`, shared with Temporal."""

from __future__ import annotations

from .._wait_calls import MAX_IDS_SHOWN, WaitCalls

__all__ = ('WaitCalls', 'MAX_IDS_SHOWN')
