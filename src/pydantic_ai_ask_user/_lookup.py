"""Finding what a person means by an id they typed: a whole key, a tool call id, or a unique beginning of a key.

The rule `ask-user answer` follows, in the library so that any front end follows it too: a key is looked up whole
first (`QuestionStore.get`); else every waiting question and approval is a candidate whose tool call id is the text
(the id the model gave, which two runs may share), or whose key begins with it (from `MIN_PREFIX` characters on, as
git takes a commit's id). One candidate is the item meant; several are ambiguous, and the person is shown them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._answers import AskUserRequest
from ._approvals import PendingApproval
from ._question_store import ApprovalStore, QuestionStore

__all__ = ('MIN_PREFIX', 'WaitingMatches', 'find_waiting')

MIN_PREFIX = 4
"""The shortest beginning of a key (or a wait's token) that is looked up, as git's shortest commit id."""


@dataclass(frozen=True)
class WaitingMatches:
    """The waiting items a typed id may mean."""

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


async def find_waiting(store: QuestionStore | ApprovalStore, text: str) -> WaitingMatches:
    """The waiting questions, and the approvals when `store` holds them, that `text` may mean: those whose tool call
    id is `text`, and those whose key begins with it when it has at least `MIN_PREFIX` characters (fewer would match
    by chance). Administrative: whoever they are addressed to. A whole key is `store.get`'s, looked up first.
    """

    def meant(key: str, call_id: str) -> bool:
        return call_id == text or (len(text) >= MIN_PREFIX and key.startswith(text))

    if not text:
        return WaitingMatches()
    questions = [request for request in await store.pending() if meant(request.key, request.id)]
    approvals: list[PendingApproval] = []
    if isinstance(store, ApprovalStore):
        approvals = [a for a in await store.pending_approvals() if meant(a.key, a.tool_call_id)]
    return WaitingMatches(tuple(questions), tuple(approvals))
