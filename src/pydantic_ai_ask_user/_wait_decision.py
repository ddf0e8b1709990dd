"""Reading the decision of a whole wait: each of its pending approvals decided and each of its questions answered,
keyed by call id (unique within a wait) or by key, all of them or none.

The rule `ask-user answer TOKEN --json FILE` follows, in the library so that any front end deciding a wait at once
follows it too, before `ApprovalStore.decide_wait` records anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from ._answer_json import parse_answer_json
from ._answers import AskUserRequest, AskUserResponse
from ._approvals import ApprovalDecision, PendingApproval, read_decision_value
from ._wait_calls import MAX_IDS_SHOWN

__all__ = ('read_wait_decision',)


def read_wait_decision(
    data: object, approvals: Sequence[PendingApproval], questions: Sequence[AskUserRequest], *, decided_by: str
) -> tuple[dict[str, ApprovalDecision], dict[str, AskUserResponse]]:
    """The decision of each approval and the answer of each question of one wait that `data` (parsed JSON: an object
    of call id or key to a decision or an answer) gives, by key, each marked as `decided_by`'s unless an answer names
    who gave it; `ValueError` naming the item when one is missing (a wait is decided whole), unknown, or does not
    read as its kind's.
    """
    if not isinstance(data, Mapping):
        raise ValueError('a wait is decided with a JSON object: {"CALL_ID": decision or answer, ...}')
    given = cast(Mapping[str, Any], data)
    by_id: dict[str, str] = {}
    items = [(approval.tool_call_id, approval.key) for approval in approvals]
    for call_id, key in [*items, *((request.id, request.key) for request in questions)]:
        by_id[call_id] = by_id[key] = key
    unknown = [name for name in given if name not in by_id]
    if unknown:
        shown = ', '.join(repr(name) for name in unknown[:MAX_IDS_SHOWN])
        raise ValueError(f'{shown}: no pending item of this wait has this call id or id')
    values = {by_id[name]: value for name, value in given.items()}
    decisions: dict[str, ApprovalDecision] = {}
    answers: dict[str, AskUserResponse] = {}
    left_out: list[str] = []
    for approval in approvals:
        if approval.key not in values:
            left_out.append(approval.tool_call_id)
            continue
        try:
            decisions[approval.key] = replace(read_decision_value(values[approval.key]), decided_by=decided_by)
        except ValueError as error:
            raise ValueError(f'call {approval.tool_call_id!r}: {error}') from None
    for request in questions:
        if request.key not in values:
            left_out.append(request.id)
            continue
        try:
            response = parse_answer_json(request, values[request.key])
        except ValueError as error:
            raise ValueError(f'call {request.id!r}: {error}') from None
        answers[request.key] = (
            response if response.answered_by is not None else replace(response, answered_by=decided_by)
        )
    if left_out:
        raise ValueError(
            'a wait is decided whole: it leaves out ' + ', '.join(repr(call_id) for call_id in left_out[:MAX_IDS_SHOWN])
        )
    return decisions, answers
