"""Reaching people where they are: tell each waiting question's or approval's people on e-mail, Slack and more.

A `Notifier` watches a store (the in-process hub, `DBOSQuestionStore`, `TemporalQuestionStore`) and tells each
waiting item's addressees, found through your `Directory`, on the `Channel`s that reach them, once (its ledger),
gathered into digests, retried with backoff, never blocking or failing a run. Messages link back to the team inbox
through `InboxLinks`: signed in, and with one-click actions that land on a confirmation page.
"""

from ._apprise import AppriseChannel, plain_message
from ._email import EmailChannel
from ._items import Finished, ItemKind, Recipient, WaitingItem
from ._ledger import EntryState, LedgerEntry, MemoryLedger, NotificationLedger, SQLiteLedger
from ._links import DEFAULT_LINK_SECONDS, InboxLinks
from ._notifier import (
    Channel,
    DeliveryRefused,
    Directory,
    NotificationFailure,
    Notifier,
    ReceivingChannel,
    StaticDirectory,
    UpdatingChannel,
)

__all__ = (
    'Notifier',
    'AppriseChannel',
    'plain_message',
    'Channel',
    'UpdatingChannel',
    'ReceivingChannel',
    'EmailChannel',
    'DeliveryRefused',
    'Directory',
    'StaticDirectory',
    'Recipient',
    'WaitingItem',
    'Finished',
    'ItemKind',
    'InboxLinks',
    'DEFAULT_LINK_SECONDS',
    'NotificationLedger',
    'MemoryLedger',
    'SQLiteLedger',
    'LedgerEntry',
    'EntryState',
    'NotificationFailure',
)
