"""Slack for the notifier: `SlackChannel` posts Block Kit messages people answer with buttons, and its endpoint
records their clicks. Needs the `slack` extra (`pip install 'pydantic-ai-ask-user[slack]'`: slack_sdk, Starlette).

A module of its own, so that `pydantic_ai_ask_user.notify` imports without slack_sdk.
"""

from ._slack import MAX_PAYLOAD_BYTES, REFUSING_ERRORS, SlackChannel, SlackPeople

__all__ = ('SlackChannel', 'SlackPeople', 'REFUSING_ERRORS', 'MAX_PAYLOAD_BYTES')
