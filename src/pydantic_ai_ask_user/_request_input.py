"""What a waiting handler's `ask` that puts a wait before people does, whatever holds it: the wait's AskUser questions
and tool approvals as pending items (`wait_items`), and the `DeferredToolResults` their answers and decisions make
(`wait_results`).

Shared by `durable.ask_through_store` (a database) and `web.WebAnswerer.request_input` (the in-process hub). Loads
Pydantic AI only when an `ask` runs (it is one of its callbacks).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._answers import TIMED_OUT, TOOL_NAME, AskUserRequest, AskUserResponse, ask_user_result
from ._approvals import TIMED_OUT_DENIAL, ApprovalDecision, PendingApproval
from ._tool_args import approval_args

if TYPE_CHECKING:
    from pydantic_ai import DeferredToolRequests, RunContext

    from ._audience import AudienceSetting, ContextSetting
    from ._escalation import Escalation

__all__ = ('wait_items', 'approvals_of', 'wait_results')


def wait_items(
    ctx: RunContext[Any],
    requests: DeferredToolRequests,
    token: str,
    *,
    owner: str,
    otherwise: str = 'answer such a wait from your own ask function.',
    notes: bool = False,
    audience: AudienceSetting = None,
    context: ContextSetting = None,
    workflow_id: str = '',
    escalate: tuple[Escalation, ...] = (),
) -> tuple[list[AskUserRequest], list[PendingApproval]]:
    """The AskUser questions and the tool approvals of a wait, as pending items, the approvals addressed and in
    context (by `audience` and `context`, else as the wait's first question), each with the escalation policy
    `escalate` (checked by the caller: `check_escalation`).

    A `UserError` naming `owner` (the `ask` that was given it) and saying what to do `otherwise` when the wait also
    needs a result of another tool: nobody here can give one.
    """
    from pydantic_ai.exceptions import UserError

    others = [call.tool_name for call in requests.calls if call.tool_name != TOOL_NAME]
    if others:
        raise UserError(
            f'{owner} answers AskUser questions and decides tool approvals only, but this wait also '
            f'needs a result of {", ".join(others)}: {otherwise}'
        )
    questions = [_deferred_request(ctx, requests, call.tool_call_id, notes) for call in requests.calls]
    approvals = approvals_of(ctx, requests, token, workflow_id)
    if approvals:
        from ._external_events import approvals_addressing

        addressing = approvals_addressing(ctx, questions, audience, context)
        approvals = [replace(approval, **addressing, escalate=escalate) for approval in approvals]
    return questions, approvals


def _deferred_request(
    ctx: RunContext[Any], requests: DeferredToolRequests, call_id: str, notes: bool
) -> AskUserRequest:
    """The request of a deferred call, with the run that deferred it (this run, when the call does not say)."""
    request = AskUserRequest.from_deferred(requests, call_id, notes=notes)
    if request.run_id is None and ctx.run_id is not None:
        request = replace(request, run_id=ctx.run_id)
    return request


def approvals_of(
    ctx: RunContext[Any], requests: DeferredToolRequests, token: str, workflow_id: str = ''
) -> list[PendingApproval]:
    """The approvals `requests` holds, as pending items of the wait of `token`, each with its tool's parameters
    JSON schema as the run's tool definitions give it this turn (`None` for a tool the run does not list).
    """
    tools = ctx.tools
    approvals: list[PendingApproval] = []
    for call in requests.approvals:
        definition = tools.get(call.tool_name)
        approvals.append(
            PendingApproval(
                token=token,
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                args=approval_args(requests, call),
                parameters=None if definition is None else dict(definition.parameters_json_schema),
                run_id=ctx.run_id,
                workflow_id=workflow_id,
            )
        )
    return approvals


def wait_results(
    answers: Iterable[tuple[AskUserRequest, AskUserResponse | None]],
    decisions: Iterable[tuple[PendingApproval, ApprovalDecision | None]],
) -> dict[str, Any]:
    """The JSON form of the `DeferredToolResults` a wait is resolved with, by tool call id (the items of one wait
    are the calls of one run, so their ids tell them apart): each answer (`ask_user_result`), `TIMED_OUT` for a
    question not answered (`None`); each approval's decision (`ApprovalDecision.result`), a denial
    (`TIMED_OUT_DENIAL`) for one not decided; and who answered or decided each, when known, in `answered_by`.
    """
    calls: dict[str, Any] = {}
    answered_by: dict[str, str] = {}
    for request, response in answers:
        if response is None:
            calls[request.id] = TIMED_OUT
            continue
        calls[request.id] = ask_user_result(request, response)
        if response.answered_by is not None:
            answered_by[request.id] = response.answered_by
    decided: dict[str, Any] = {}
    for approval, decision in decisions:
        decided[approval.tool_call_id] = (decision or ApprovalDecision.deny(TIMED_OUT_DENIAL)).result()
        if decision is not None and decision.decided_by is not None:
            answered_by[approval.tool_call_id] = decision.decided_by
    results: dict[str, Any] = {'calls': calls}
    if decided:
        results['approvals'] = decided
    if answered_by:
        results['answered_by'] = answered_by
    return results
