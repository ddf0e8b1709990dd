"""The four actions on an approval (after Agent Inbox: accept, edit, respond, ignore; deny stays) as the core defines
them: what each gives Pydantic AI, how each is kept and read back, how a person writes each in JSON, and what is
refused."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import TypeAdapter
from pydantic_ai.tools import DeferredToolResults, ToolApproved, ToolDenied

from pydantic_ai_ask_user._approvals import (
    DEFAULT_DENIAL,
    IGNORED_DENIAL,
    RESPONDED_DENIAL,
    ApprovalDecision,
    PendingApproval,
    check_decision,
    read_decision_value,
)

APPROVAL = PendingApproval(
    'w1',
    'call_0',
    'refund',
    {'order': 1042, 'amount': 49.9},
    parameters={'type': 'object', 'properties': {'order': {'type': 'integer'}, 'amount': {'type': 'number'}}},
)

EACH = [
    (ApprovalDecision.approve(), 'approved', True),
    (
        ApprovalDecision.edit({'order': 1042, 'amount': 20}),
        'edited',
        ToolApproved(override_args={'order': 1042, 'amount': 20}),
    ),
    (ApprovalDecision.deny(), 'denied', ToolDenied(DEFAULT_DENIAL)),
    (ApprovalDecision.deny('Not without a photo.'), 'denied', ToolDenied('Not without a photo.')),
    (
        ApprovalDecision.respond('Offer store credit instead.'),
        'responded',
        ToolDenied(RESPONDED_DENIAL.format(response='Offer store credit instead.')),
    ),
    (ApprovalDecision.ignore(), 'ignored', ToolDenied(IGNORED_DENIAL)),
]


@pytest.mark.parametrize(('decision', 'described', 'pydantic_ai'), EACH)
def test_each_action_is_what_pydantic_ai_reads(decision: ApprovalDecision, described: str, pydantic_ai: Any) -> None:
    check_decision(APPROVAL, decision)
    assert decision.describe() == described
    # The JSON form, read by Pydantic AI's own type: respond and ignore are denials with their message.
    read = TypeAdapter(DeferredToolResults).validate_python({'approvals': {'call_0': decision.result()}})
    assert read.approvals['call_0'] == pydantic_ai


@pytest.mark.parametrize(('decision', 'described', 'pydantic_ai'), EACH)
def test_each_action_is_kept_and_read_back_as_it_was(
    decision: ApprovalDecision, described: str, pydantic_ai: Any
) -> None:
    kept = ApprovalDecision.from_json(decision.to_json())
    assert kept == decision
    assert kept.describe() == described


def test_a_decision_kept_before_respond_and_ignore_reads_as_it_was() -> None:
    assert ApprovalDecision.from_json({'approved': False, 'reason': 'no'}) == ApprovalDecision.deny('no')
    assert ApprovalDecision.from_json({'approved': True}).describe() == 'approved'


@pytest.mark.parametrize(
    ('written', 'decision'),
    [
        ('ignore', ApprovalDecision.ignore()),
        ({'respond': 'Offer store credit instead.'}, ApprovalDecision.respond('Offer store credit instead.')),
        ({'approved': False, 'ignored': True}, ApprovalDecision.ignore()),
        ({'approved': False, 'response': 'later'}, ApprovalDecision.respond('later')),
        ('approve', ApprovalDecision.approve()),
        ({'deny': 'no'}, ApprovalDecision.deny('no')),
    ],
)
def test_a_person_writes_each_action_in_json(written: object, decision: ApprovalDecision) -> None:
    assert read_decision_value(written) == decision


@pytest.mark.parametrize(
    ('written', 'problem'),
    [
        ({'respond': 3}, '"respond" must be the text to give the model'),
        ({'approved': False, 'ignored': 'yes'}, '"ignored" must be true or false'),
        ('dismiss', '{"respond": "TEXT"} (give the model these words instead) or "ignore" (dismiss it)'),
    ],
)
def test_what_is_not_an_action_is_refused_naming_the_forms(written: object, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        read_decision_value(written)


@pytest.mark.parametrize(
    ('decision', 'problem'),
    [
        (ApprovalDecision(True, ignored=True), 'a reply or a dismissal runs nothing'),
        (ApprovalDecision(True, response='x'), 'a reply or a dismissal runs nothing'),
        (ApprovalDecision(False, ignored=True, response='x'), 'a dismissal gives the model no words'),
        (ApprovalDecision(False, ignored=True, reason='x'), 'a dismissal gives the model no words'),
        (ApprovalDecision(False, response='x', reason='y'), 'a reply is the words the model gets'),
        (ApprovalDecision.respond(''), 'a reply must be text'),
        (ApprovalDecision.respond('x' * 2001), 'a reply is at most 2000 characters'),
        (ApprovalDecision.respond('ok\u202e'), 'a reply holds'),
    ],
)
def test_what_cannot_be_given_is_refused_before_anything_is_recorded(decision: ApprovalDecision, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        check_decision(APPROVAL, decision)
