"""Finding what a person means by an id they typed: a whole key, or a unique beginning of one.

The rule `ask-user answer` follows, in the library so that any front end follows it too: a key is looked up whole
first; else, from `MIN_PREFIX` characters on, every waiting question and approval whose key begins with it is a
candidate, as git takes a commit's id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._answers import AskUserRequest
from ._approvals import PendingApproval
from ._question_store import ApprovalStore, QuestionStore

__all__ = ('MIN_PREFIX', 'WaitingMatches', 'waiting_with_prefix')

MIN_PREFIX = 4
"""The shortest beginning of a key (or a wait's token) that is looked up, as git's shortest commit id."""


@dataclass(frozen=True)
class WaitingMatches:
    """The waiting items whose keys begin with one prefix."""

    questions: Sequence[AskUserRequest] = ()
    """The questions, in the store's order."""
    approvals: Sequence[PendingApproval] = ()
    """The approvals (of an `ApprovalStore`), oldest first."""

    def __len__(self) -> int:
        return len(self.questions) + len(self.approvals)

    def candidates(self) -> list[tuple[str, str]]:
        """Each match's key, with what tells it apart: a question's first header, an approval's tool name."""
        return [(request.key, request.questions[0].header) for request in self.questions] + [
            (approval.key, approval.tool_name) for approval in self.approvals
        ]


async def waiting_with_prefix(store: QuestionStore | ApprovalStore, prefix: str) -> WaitingMatches:
    """The waiting questions, and the approvals when `store` holds them, whose key begins with `prefix`; none for a
    prefix shorter than `MIN_PREFIX` (too many would match by chance). Administrative: whoever they are addressed to.
    """
    if len(prefix) < MIN_PREFIX:
        return WaitingMatches()
    questions = [request for request in await store.pending() if request.key.startswith(prefix)]
    approvals: list[PendingApproval] = []
    if isinstance(store, ApprovalStore):
        approvals = [approval for approval in await store.pending_approvals() if approval.key.startswith(prefix)]
    return WaitingMatches(tuple(questions), tuple(approvals))
