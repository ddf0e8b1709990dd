"""Tool approvals in `ask-user pending` and `answer`: shown beside the questions, decided by id, or every item of a wait
decided at once by its token (all or nothing).

`answer APPROVAL_ID --approve | --deny [REASON] | --args JSON | --json FILE` decides one approval; `answer TOKEN
--json FILE` decides every pending item of one wait, approvals and questions, keyed by their call ids (unique within
a wait) or their ids: `{"call_0": "approve", "call_1": {"Database": ["SQLite"]}}`. Every item is checked before
anything is recorded; a wait is decided whole or not at all. Every string of the model's (tool names, arguments) is
made printable before it is shown, as the questions' are.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any, cast

from pydantic_core import from_json

from .._answers import AskUserRequest
from .._approvals import ApprovalDecision, PendingApproval, read_decision_value
from .._question_limits import MAX_QUESTION_LENGTH
from .._receipt import os_user_at_host
from .._text import printable, terminal_json
from ..store import (
    AlreadyAnsweredError,
    ApprovalStore,
    StoreError,
    UnknownRequestError,
    WithdrawnError,
    read_wait_decision,
)
from .common import (
    Store,
    ask_in_terminal,
    cannot_read_questions,
    clipped,
    fail,
    first_line,
    read_json,
    timestamp,
    where,
    without_nulls,
)
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_DECLINED, EXIT_INVALID, EXIT_WITHDRAWN
from .i18n import _

__all__ = (
    'approval_json',
    'approval_lines',
    'is_wait_token',
    'approval_error',
    'approval_flag_given',
    'answer_approval',
    'answer_wait',
)

_TOKEN_PREFIXES = ('dbos1.', 'temporal1.')
"""How the tokens of the durable waiters begin (`DBOSEventWaiter`, `TemporalEventWaiter`): what `answer` takes for a
wait rather than an item id (ids are 32 hex digits, or an earlier version's tool call id)."""


def is_wait_token(text: str) -> bool:
    """Whether `text` is a wait's token (to decide all its items) rather than an item's id."""
    return text.startswith(_TOKEN_PREFIXES)


def approval_json(approval: PendingApproval) -> dict[str, Any]:
    """One line of `pending --json` for an approval: `kind` `approval`, its `id` (what `answer` takes), its wait's
    `token`, the call (`tool_call_id`, `tool_name`, `args`), the tool's `parameters` schema, its run and workflow,
    whom it is for (`audience`) and where it comes from (`context`).
    """
    line = {
        'kind': 'approval',
        **approval.call_json(),
        'workflow_id': approval.workflow_id,
        'opened_at': timestamp(approval.created_at),
        # Who may decide it (absent: anyone) and where it comes from, as a question's line says.
        **approval.addressing_json(),
    }
    return without_nulls(line)


def approval_lines(approval: PendingApproval) -> list[str]:
    """An approval as `pending` shows it to a person: every string of the model's made printable, on one line each."""
    call = clipped(printable(f'{approval.tool_name} {terminal_json(approval.args)}', allow_newline=False))
    return [
        _('{id}  approval  asked {asked}  workflow {workflow}').format(
            id=printable(approval.key),
            asked=timestamp(approval.created_at),
            workflow=printable(approval.workflow_id, allow_newline=False),
        ),
        '  ' + _('run {call}?').format(call=call) + '  ' + _('call {id}').format(id=printable(approval.tool_call_id)),
        '  ' + _('(--approve, --deny REASON or --args JSON; wait {token})').format(token=printable(approval.token)),
    ]


async def _send(args: argparse.Namespace, sending: Awaitable[None]) -> int | None:
    """`None` once `sending` has recorded the decisions; otherwise the exit code, the problem said."""
    try:
        await sending
    except StoreError as error:
        return approval_error(error)
    except ValueError as error:
        fail(_('invalid decision: {error}').format(error=error))
        return EXIT_INVALID
    except Exception as error:
        return _cannot_send(args, error)
    return None


def approval_error(error: StoreError) -> int:
    """Say why the approval cannot be decided, as `_store_error` says it of a question; its exit code."""
    shown = repr(error.request_id)
    if isinstance(error, AlreadyAnsweredError):
        fail(_('approval {id} has already been decided').format(id=shown))
    elif isinstance(error, WithdrawnError):
        fail(_('approval {id} is no longer waiting for a decision').format(id=shown))
    elif isinstance(error, UnknownRequestError):
        fail(_('nothing is waiting under id {id}').format(id=shown))
    else:
        fail(str(error))
    return error.exit_code


def approval_flag_given(args: argparse.Namespace) -> bool:
    """Whether the arguments decide an approval by a flag: `--approve`, `--deny`, `--args`, `--respond` or
    `--ignore` (`--json` may hold a question's answer as well).
    """
    return (
        args.approve or args.ignore or args.deny is not None or args.edited_args is not None or args.respond is not None
    )


def _decision_given(args: argparse.Namespace) -> ApprovalDecision | str:
    """The decision `--approve`, `--deny`, `--args` or `--json` gives; what is wrong, as text, when none fits."""
    try:
        if args.approve:
            return ApprovalDecision.approve()
        if args.deny is not None:
            return ApprovalDecision.deny(args.deny or None)
        if args.edited_args is not None:
            return ApprovalDecision.edit(_edited(args.edited_args))
        if args.respond is not None:
            return ApprovalDecision.respond(args.respond)
        if args.ignore:
            return ApprovalDecision.ignore()
        if args.json_file is not None:
            return read_decision_value(read_json(args.json_file))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return str(error)
    return _(
        'decide a tool approval with --approve, --deny [REASON], --args JSON, --respond TEXT, --ignore or --json FILE'
    )


async def answer_approval(store: Store, args: argparse.Namespace, approval: PendingApproval) -> int:
    """Decide one approval as the arguments say, or in the terminal menu when they say nothing; print what was
    decided.
    """
    given = approval_flag_given(args) or args.json_file is not None
    decision = _decision_given(args) if given else await _decided_in_terminal(approval)
    if isinstance(decision, int):
        return decision
    if isinstance(decision, str):
        fail(_('invalid decision: {error}').format(error=decision))
        return EXIT_INVALID
    decision = replace(decision, decided_by=os_user_at_host())
    approvals = cast('ApprovalStore', store)
    if (problem := await _send(args, approvals.decide(approval.key, decision))) is not None:
        return problem
    print(terminal_json({'id': approval.key, 'tool_call_id': approval.tool_call_id, **_decided(decision)}))
    return EXIT_ANSWERED if decision.approved else EXIT_DECLINED


APPROVE_LABEL = 'Approve'
"""The menu's option that approves the call as the model asked."""

DENY_LABEL = 'Deny'
"""The menu's option that denies it without a reason."""

IGNORE_LABEL = 'Ignore'
"""The menu's option that dismisses it (the model is told it was dismissed)."""


def approval_question(approval: PendingApproval) -> AskUserRequest:
    """The approval as the terminal menu asks it: run the tool with these arguments? Approve, Deny, Ignore, or the
    person's own words: a reply to give the model instead (*respond*), or JSON arguments to run it with (*edit*).
    Every string of the model's is made printable and cut to fit a question.
    """
    call = printable(f'{approval.tool_name} {approval.args_line()}', allow_newline=False)
    text = f'Run {call}?'
    if len(text) > MAX_QUESTION_LENGTH:
        text = text[: MAX_QUESTION_LENGTH - 2] + '…?'
    arguments = {
        'questions': [
            {
                'header': 'Approval',
                'question': text,
                'options': [
                    {'label': APPROVE_LABEL, 'description': 'Run it as the model asked.'},
                    {'label': DENY_LABEL, 'description': 'Do not run it; the model is told it was denied.'},
                    {
                        'label': IGNORE_LABEL,
                        'description': 'Dismiss it; the model is told so. Or type a reply to give the model '
                        'instead, or JSON arguments ({...}) to run it with.',
                    },
                ],
            }
        ]
    }
    return AskUserRequest.from_tool_args(arguments, id=approval.key)


async def _decided_in_terminal(approval: PendingApproval) -> ApprovalDecision | str | int:
    """The decision a person makes in the terminal menu; what is wrong as text, or an exit code (nothing decided)."""
    response = await ask_in_terminal(approval_question(approval))
    if isinstance(response, int):
        return response
    if response.cancelled:
        fail(_('nothing was decided: the approval still waits'))
        return EXIT_DECLINED
    (answer,) = response.answers
    if answer.custom_answer is None:
        if APPROVE_LABEL in answer.selected:
            return ApprovalDecision.approve()
        return ApprovalDecision.ignore() if IGNORE_LABEL in answer.selected else ApprovalDecision.deny()
    written = answer.custom_answer.strip()
    if not written.startswith('{'):
        return ApprovalDecision.respond(written)
    try:
        return ApprovalDecision.edit(_edited(written))
    except ValueError as error:
        return str(error)


def _edited(text: str) -> dict[str, Any]:
    edited = from_json(text)
    if not isinstance(edited, dict):
        raise ValueError(_('--args must be a JSON object of the arguments to run the call with'))
    return cast(dict[str, Any], edited)


def _decided(decision: ApprovalDecision) -> dict[str, Any]:
    shown: dict[str, Any] = {'decision': decision.describe()}
    if decision.reason is not None:
        shown['reason'] = decision.reason
    if decision.override_args is not None:
        shown['args'] = decision.override_args
    if decision.response is not None:
        shown['response'] = decision.response
    return shown


def _cannot_send(args: argparse.Namespace, error: Exception) -> int:
    fail(
        _('cannot send the decision to {database}: {error}; `ask-user pending` shows whether it still waits').format(
            database=where(args), error=first_line(error)
        )
    )
    return EXIT_CANNOT_ASK


async def answer_wait(store: Store, args: argparse.Namespace) -> int:
    """Decide every pending item of the wait `args.item` names, from `--json`, all or nothing."""
    token: str = args.item
    approvals_store: ApprovalStore = store
    if args.json_file is None:
        fail(_('a wait is decided with --json FILE: an object of each call id and its decision or answer'))
        return EXIT_INVALID
    try:
        approvals, questions = await approvals_store.wait_items(token)
    except Exception as error:
        fail(cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    if not approvals and not questions:
        fail(_('nothing waits under this token: the wait was decided already, is over, or is unknown here'))
        return EXIT_WITHDRAWN
    try:
        data = read_json(args.json_file)
        decisions, answers = read_wait_decision(data, approvals, questions, decided_by=os_user_at_host())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        fail(_('invalid decision: {error}').format(error=error))
        return EXIT_INVALID
    if (problem := await _send(args, approvals_store.decide_wait(decisions, answers))) is not None:
        return problem
    shown: dict[str, Any] = {approval.tool_call_id: _decided(decisions[approval.key]) for approval in approvals}
    shown |= {request.id: {'answered': not answers[request.key].cancelled} for request in questions}
    print(terminal_json({'token': token, 'decided': shown}))
    return EXIT_ANSWERED
