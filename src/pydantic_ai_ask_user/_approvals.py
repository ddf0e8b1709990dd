"""The second kind of pending item: a tool call waiting for a person's approval, and the person's decision on it.

A question (`AskUserRequest`) waits for an answer; an approval (`PendingApproval`) waits for a decision, one of
four actions (after LangGraph's Agent Inbox):
- *accept*: run the call as the model asked (`ToolApproved`, or `True`);
- *edit*: run it with edited arguments (`ToolApproved(override_args=...)`), which are checked against the tool's
  parameters JSON schema, recorded when the wait opened, before anything is recorded;
- *respond*: do not run it, and give the model the person's words instead (`ToolDenied` whose message frames them,
  `RESPONDED_DENIAL`): the model reads them as the call's result and goes on;
- *ignore*: dismiss it, and the model is told so (`ToolDenied(IGNORED_DENIAL)`).
A plain *deny*, with or without a reason, stays too (`ToolDenied(reason)`). In Pydantic AI's terms *respond* and
*ignore* are denials: a tool call that needs approval either runs or returns a message, and there is no third way.
What tells them apart is the message the model reads and what the stores and history record.
Both kinds wait in the same stores (`ApprovalStore`, in `_question_store`) and are shown by the same front ends.

An approval belongs to its wait (the waiting handler's token, which names its run's workflow), never to its tool call
id alone: providers repeat ids like `call_0` across runs, so its `key` is made from the token and the call id.
This module loads neither Pydantic AI nor a database driver: `ask-user pending` and `answer` read it on their
fast path. `jsonschema` is loaded only to check edited arguments, and then only as `_schemas` applies it: patterns
in linear time, references within the schema, depth and size bounded, NaN and Infinity refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ._audience import QuestionContext, addressing_json, audience_from_json, context_from_json
from ._escalation import Escalation
from ._plain_questions import request_key
from ._schemas import UncheckableSchemaError, schema_errors
from ._text import describe_character, find_forbidden_character

__all__ = (
    'PendingApproval',
    'ApprovalDecision',
    'DEFAULT_DENIAL',
    'TIMED_OUT_DENIAL',
    'IGNORED_DENIAL',
    'RESPONDED_DENIAL',
    'MAX_REASON_LENGTH',
    'approval_key',
    'check_decision',
    'read_decision_value',
)

DEFAULT_DENIAL = 'The tool call was denied.'
"""What the model is told for a denial without a reason (Pydantic AI's own `ToolDenied` default)."""

TIMED_OUT_DENIAL = 'No decision on this tool call arrived in time, so it was denied.'
"""What the model is told for an approval nobody decided before its wait's deadline."""

IGNORED_DENIAL = 'A person dismissed this tool call without running it. Do not try it again unless they ask.'
"""What the model is told for an approval a person ignored (dismissed)."""

RESPONDED_DENIAL = 'The tool call was not run. Instead, the person replied: {response}'
"""What the model is told for an approval a person answered with words instead of a decision (`{response}`)."""

MAX_REASON_LENGTH = 2000
"""The longest reason a denial, or a reply, may give the model."""


def approval_key(token: str, tool_call_id: str) -> str:
    """The key of the approval of call `tool_call_id` in the wait of `token`: 32 hex digits, safe in a URL.

    Made from the token, which is unique to one wait of one run, so a call id another run repeats has another key.
    """
    return request_key(token, tool_call_id)


@dataclass(frozen=True)
class PendingApproval:
    """A tool call a run waits to have approved: what it is, with what arguments, in which wait of which run."""

    token: str
    """The token of the waiting handler's wait holding it; the wait's questions and approvals are decided together."""

    tool_call_id: str
    """The call's id, as the model sent it (unique within its wait, not across runs)."""

    tool_name: str
    """The tool the model wants to call."""

    args: dict[str, Any]
    """The model's arguments, as a JSON object."""

    parameters: dict[str, Any] | None = None
    """The tool's parameters JSON schema, recorded when the wait opened; edited arguments are checked against it.
    `None` when it was not known (edited arguments are then refused: nothing could check them)."""

    run_id: str | None = None
    """The run that waits, when known."""

    workflow_id: str = ''
    """The durable workflow that waits."""

    created_at: float = 0.0
    """When the wait opened, in seconds since the epoch."""

    audience: tuple[str, ...] | None = None
    """Who may decide it, as `AskUserRequest.audience`: the names and groups it is addressed to; `None` for anyone.
    Front ends show and accept it only from those (`audience_includes`), as they do questions."""

    context: QuestionContext | None = None
    """Where it comes from (the agent, the conversation, the application's title, summary and link), as a
    question's `AskUserRequest.context`."""

    escalate: tuple[Escalation, ...] = ()
    """The escalation policy of its wait, as a question's `AskUserRequest.escalate` (the waiting handler's `ask`
    sets it, beside `audience`): while it waits undecided, each step forwards it `after` seconds after the wait
    opened. Empty: none."""

    @property
    def key(self) -> str:
        """Where it is stored and decided: `approval_key(token, tool_call_id)`."""
        return approval_key(self.token, self.tool_call_id)

    def call_json(self) -> dict[str, Any]:
        """What every listing of it shows first: its `id` (the key), its wait's `token`, the call (`tool_call_id`,
        `tool_name`, `args`), the tool's `parameters` schema and its `run_id`.
        """
        return {
            'id': self.key,
            'token': self.token,
            'tool_call_id': self.tool_call_id,
            'tool_name': self.tool_name,
            'args': self.args,
            'parameters': self.parameters,
            'run_id': self.run_id,
        }

    def addressing_json(self) -> dict[str, Any]:
        """`{"audience": [...], "context": {...}}`, each only when set, as a question's are kept."""
        return addressing_json(self)

    @staticmethod
    def addressing_from_json(data: object) -> dict[str, Any]:
        """The `audience` and `context` fields `addressing_json` kept, read defensively (a tampered audience is
        addressed to nobody, never to everyone).
        """
        if not isinstance(data, dict) or not data:
            return {}
        kept = cast(dict[str, Any], data)
        return {'audience': audience_from_json(kept.get('audience')), 'context': context_from_json(kept.get('context'))}

    def args_line(self, limit: int = 200) -> str:
        """The arguments as compact JSON on one line, cut at `limit` characters (escape it for where it is drawn)."""
        text = json.dumps(self.args, ensure_ascii=False, separators=(',', ':'), sort_keys=True)
        return text if len(text) <= limit else text[: limit - 1] + '…'

    def args_text(self) -> str:
        """The arguments as indented JSON, for a person to read (escape it for where it is drawn)."""
        return json.dumps(self.args, ensure_ascii=False, indent=2, sort_keys=True)


@dataclass(frozen=True)
class ApprovalDecision:
    """A person's decision on a `PendingApproval`: approve, approve with edited arguments, deny with a reason, reply
    with words instead (respond), or dismiss it (ignore). Build one with the class methods.
    """

    approved: bool
    """Whether the call may run."""

    reason: str | None = None
    """A denial's reason, told to the model (`DEFAULT_DENIAL` when `None`); `None` when approved."""

    override_args: dict[str, Any] | None = None
    """Edited arguments to run the call with instead of the model's; only with `approved`."""

    decided_by: str | None = field(default=None, compare=False)
    """Who decided, when the front end knows (recorded, and given to the run as `answered_by`)."""

    response: str | None = None
    """*Respond*: the person's words, given to the model instead of running the call (`RESPONDED_DENIAL`)."""

    ignored: bool = False
    """*Ignore*: the call was dismissed, and the model is told so (`IGNORED_DENIAL`)."""

    @classmethod
    def approve(cls, *, decided_by: str | None = None) -> ApprovalDecision:
        """Run the call as the model asked."""
        return cls(True, decided_by=decided_by)

    @classmethod
    def deny(cls, reason: str | None = None, *, decided_by: str | None = None) -> ApprovalDecision:
        """Do not run it; the model is told `reason`."""
        return cls(False, reason=reason or None, decided_by=decided_by)

    @classmethod
    def edit(cls, args: dict[str, Any], *, decided_by: str | None = None) -> ApprovalDecision:
        """Run it with `args` instead of the model's arguments."""
        return cls(True, override_args=args, decided_by=decided_by)

    @classmethod
    def respond(cls, response: str, *, decided_by: str | None = None) -> ApprovalDecision:
        """Do not run it; give the model `response`, the person's words, as what came back instead."""
        return cls(False, response=response, decided_by=decided_by)

    @classmethod
    def ignore(cls, *, decided_by: str | None = None) -> ApprovalDecision:
        """Dismiss it: it does not run, and the model is told it was dismissed."""
        return cls(False, ignored=True, decided_by=decided_by)

    def result(self) -> bool | dict[str, Any]:
        """The JSON form of this decision in `DeferredToolResults.approvals`: `true`, a `ToolApproved` with
        `override_args`, or a `ToolDenied` with the reason, the framed reply or the dismissal.
        """
        if not self.approved:
            if self.ignored:
                message = IGNORED_DENIAL
            elif self.response is not None:
                message = RESPONDED_DENIAL.format(response=self.response)
            else:
                message = self.reason or DEFAULT_DENIAL
            return {'kind': 'tool-denied', 'message': message}
        if self.override_args is not None:
            return {'kind': 'tool-approved', 'override_args': self.override_args}
        return True

    def to_json(self) -> dict[str, Any]:
        """The form kept in a store; `from_json` reads it back."""
        data: dict[str, Any] = {'approved': self.approved}
        if self.reason is not None:
            data['reason'] = self.reason
        if self.override_args is not None:
            data['override_args'] = self.override_args
        if self.response is not None:
            data['response'] = self.response
        if self.ignored:
            data['ignored'] = True
        if self.decided_by is not None:
            data['decided_by'] = self.decided_by
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApprovalDecision:
        """The decision `to_json` kept (one kept before *respond* and *ignore* existed reads as it was)."""
        return cls(
            approved=data.get('approved') is True,
            reason=data.get('reason'),
            override_args=data.get('override_args'),
            decided_by=data.get('decided_by'),
            response=data.get('response'),
            ignored=data.get('ignored') is True,
        )

    def describe(self) -> str:
        """One word for what was decided: `approved`, `edited`, `denied`, `responded` or `ignored`."""
        if self.ignored:
            return 'ignored'
        if self.response is not None:
            return 'responded'
        if not self.approved:
            return 'denied'
        return 'approved' if self.override_args is None else 'edited'


def check_decision(approval: PendingApproval, decision: ApprovalDecision) -> None:
    """`ValueError` saying what is wrong when `decision` cannot be given to `approval`; nothing is recorded then.

    A denial's reason is one to a few lines of printable text; edited arguments are a JSON object valid against
    the tool's parameters schema (its first problem is named, with where it is).
    """
    if decision.approved and decision.reason is not None:
        raise ValueError('an approval gives no reason: a reason goes with a denial')
    if not decision.approved and decision.override_args is not None:
        raise ValueError('a denial runs nothing: edited arguments go with an approval')
    if decision.approved and (decision.response is not None or decision.ignored):
        raise ValueError('a reply or a dismissal runs nothing: it cannot approve the call')
    if decision.ignored and (decision.response is not None or decision.reason is not None):
        raise ValueError('a dismissal gives the model no words: reply or deny with a reason instead')
    if decision.response is not None and decision.reason is not None:
        raise ValueError('a reply is the words the model gets: it takes no reason besides')
    if decision.reason is not None:
        _check_words(decision.reason, 'the reason for a denial')
    if decision.response is not None:
        _check_words(decision.response, 'a reply')
    if decision.override_args is not None:
        check_arguments(approval, decision.override_args)


def _check_words(text: object, what: str) -> None:
    """`ValueError` unless `text` is one to a few lines of printable text that fits `MAX_REASON_LENGTH`."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f'{what} must be text')
    if len(text) > MAX_REASON_LENGTH:
        raise ValueError(f'{what} is at most {MAX_REASON_LENGTH} characters')
    if (bad := find_forbidden_character(text, allow_newline=True)) is not None:
        raise ValueError(f'{what} holds {describe_character(bad)}, which cannot be shown')


def check_arguments(approval: PendingApproval, args: object) -> None:
    """`ValueError` unless `args` are arguments `approval`'s tool takes, by its parameters JSON schema."""
    if not isinstance(args, dict):
        raise ValueError(f'the edited arguments of {approval.tool_name} must be a JSON object')
    if approval.parameters is None:
        raise ValueError(
            f'the parameters of {approval.tool_name} were not recorded with the wait, so edited arguments cannot '
            'be checked: approve or deny it as it is'
        )
    try:
        errors = schema_errors(approval.parameters, cast(dict[str, Any], args))
    except UncheckableSchemaError as error:
        raise ValueError(
            f'the parameters of {approval.tool_name} cannot check edited arguments ({error}): approve or deny it '
            'as it is'
        ) from None
    except ValueError as error:
        raise ValueError(f'the edited arguments of {approval.tool_name} are refused: {error}') from None
    except ImportError:  # pragma: no cover - an extra that needs approvals installs it
        raise ValueError('checking edited arguments needs jsonschema: pip install jsonschema') from None
    if errors:
        where, message = errors[0]
        at = f' at {where}' if where else ''
        problem = f'the edited arguments do not fit the parameters of {approval.tool_name}{at}: {message}'
        raise ValueError(problem[:1000])


def read_decision_value(value: object) -> ApprovalDecision:
    """A decision as a person writes it in JSON (`ask-user answer`, the JSON API), `ValueError` for anything else:

    `"approve"` or `true`; `"deny"`, `false`, `"deny:REASON"` or `{"deny": "REASON"}`; `{"args": {...}}` to
    approve with edited arguments; `{"respond": "TEXT"}` to give the model words instead; `"ignore"` to dismiss it;
    or the kept form `{"approved": ..., "reason": ..., "override_args": ..., "response": ..., "ignored": ...}`.
    """
    if value is True or value == 'approve':
        return ApprovalDecision.approve()
    if value is False or value == 'deny':
        return ApprovalDecision.deny()
    if value == 'ignore':
        return ApprovalDecision.ignore()
    if isinstance(value, str) and value.startswith('deny:'):
        return ApprovalDecision.deny(value[len('deny:') :].strip() or None)
    if isinstance(value, dict):
        data = cast(dict[str, Any], value)
        if set(data) == {'deny'} and (data['deny'] is None or isinstance(data['deny'], str)):
            return ApprovalDecision.deny(data['deny'])
        if set(data) == {'respond'}:
            if not isinstance(data['respond'], str):
                raise ValueError('"respond" must be the text to give the model instead of running the call')
            return ApprovalDecision.respond(data['respond'])
        if set(data) == {'args'}:
            if not isinstance(data['args'], dict):
                raise ValueError('"args" must be a JSON object of the arguments to run the call with')
            return ApprovalDecision.edit(cast(dict[str, Any], data['args']))
        if 'approved' in data and set(data) <= {'approved', 'reason', 'override_args', 'response', 'ignored'}:
            if not isinstance(data['approved'], bool):
                raise ValueError('"approved" must be true or false')
            if not isinstance(data.get('ignored', False), bool):
                raise ValueError('"ignored" must be true or false')
            return ApprovalDecision.from_json(data)
    raise ValueError(
        'an approval is decided with "approve", "deny", "deny:REASON", {"deny": "REASON"}, {"args": {...}} '
        '(approve with these arguments instead), {"respond": "TEXT"} (give the model these words instead) or '
        '"ignore" (dismiss it)'
    )
