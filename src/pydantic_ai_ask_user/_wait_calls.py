"""The calls a waiting handler's wait decides, recorded when it opens, so a resolution is checked against them first.

The waiting handler fails the run on a decision that names a call that is not pending, and leaves the run
without a result for a call the decision forgets. `DBOSEventWaiter` records the pending calls with the
wait, and `ask-user resolve` refuses a decision that does not decide exactly those calls, and checks
each answer to an AskUser question among them with `check_response`, before anything is sent;
`TemporalEventWaiter` holds them with the wait, and its Update refuses such a decision the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._answer_json import parse_answer_json
from ._answers import DECLINED, RUN_ID_METADATA_KEY, TIMED_OUT, TOOL_NAME, WITHDRAWN, AskUserRequest, ask_user_result
from ._decision import Decision

if TYPE_CHECKING:
    from pydantic_ai import DeferredToolRequests

__all__ = ('WaitCalls', 'MAX_IDS_SHOWN', 'Decides', 'checked_decision')


class Decides(Protocol):
    """What `WaitCalls.problem` reads of a decision: a `DeferredToolResults`, or `ask-user resolve`'s `Decision`."""

    @property
    def approvals(self) -> Mapping[str, Any]:
        """The approvals it decides, by call id."""
        ...

    @property
    def calls(self) -> Mapping[str, Any]:
        """The results it gives, by call id."""
        ...

    @property
    def metadata(self) -> Mapping[str, Any]:
        """The metadata it gives, by call id."""
        ...


MAX_IDS_SHOWN = 10
"""How many call ids a refusal names before it says how many more there are: a decision can name thousands."""


@dataclass(frozen=True)
class WaitCalls:
    """The calls one waiting handler's wait decides: approvals, calls that wait for a result, their questions."""

    approvals: tuple[str, ...]
    """The ids of the calls that wait for an approval."""

    calls: tuple[str, ...]
    """The ids of the calls that wait for a result, AskUser questions included."""

    questions: Mapping[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """For each AskUser call among `calls`: `{"args": the model's arguments, "run_id": the asking run's id}`."""

    @classmethod
    def of(cls, requests: DeferredToolRequests) -> WaitCalls:
        """The calls `requests` holds."""
        questions: dict[str, dict[str, Any]] = {}
        for call in requests.calls:
            if call.tool_name == TOOL_NAME:
                run_id = requests.metadata.get(call.tool_call_id, {}).get(RUN_ID_METADATA_KEY)
                questions[call.tool_call_id] = {'args': call.args_as_dict(), 'run_id': run_id}
        return cls(
            approvals=tuple(call.tool_call_id for call in requests.approvals),
            calls=tuple(call.tool_call_id for call in requests.calls),
            questions=questions,
        )

    def to_json(self) -> str:
        """The form kept in the database."""
        data = {'approvals': list(self.approvals), 'calls': list(self.calls), 'questions': dict(self.questions)}
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> WaitCalls:
        """The calls as `to_json` kept them."""
        data = cast(dict[str, Any], json.loads(text))
        return cls(
            approvals=tuple(cast(list[str], data['approvals'])),
            calls=tuple(cast(list[str], data['calls'])),
            questions=cast(dict[str, dict[str, Any]], data.get('questions', {})),
        )

    def question(self, call_id: str) -> AskUserRequest | None:
        """The AskUser request of call `call_id`, or `None` when it is not an AskUser call."""
        recorded = self.questions.get(call_id)
        if recorded is None:
            return None
        run_id = recorded.get('run_id')
        return AskUserRequest.from_tool_args(
            recorded['args'], id=call_id, run_id=run_id if isinstance(run_id, str) and run_id else None
        )

    def problem(self, results: Decides) -> str | None:
        """Why `results` does not decide exactly these calls (each approval approved or denied, each call given
        a result, nothing else), or `None` when it does.
        """
        left_out = [*_absent(self.approvals, results.approvals), *_absent(self.calls, results.calls)]
        not_approvals = _absent(results.approvals, self.approvals)
        not_calls = _absent(results.calls, self.calls)
        # The waiting handler refuses metadata for a call that is not pending, too, and fails the run.
        not_pending = _absent(results.metadata, [*self.approvals, *self.calls])
        parts: list[str] = []
        if left_out:
            parts.append(f'it leaves out {_ids(left_out)}, which the run waits for')
        if not_approvals:
            parts.append(f'it approves or denies {_ids(not_approvals)}, which is no pending approval')
        if not_calls:
            parts.append(f'it gives a result for {_ids(not_calls)}, which is no pending call')
        if not_pending:
            parts.append(f'it gives metadata for {_ids(not_pending)}, which is not pending')
        if not parts:
            return None
        return 'the decision must decide every pending call and nothing else: ' + '; '.join(parts)


def _absent(ids: Sequence[str] | Mapping[str, Any], among: Sequence[str] | Mapping[str, Any]) -> list[str]:
    return [call_id for call_id in ids if call_id not in among]


def _ids(ids: list[str]) -> str:
    """Call ids as a refusal names them: quoted (`repr`, so no id draws on the terminal), the first few only."""
    shown = ', '.join(repr(call_id) for call_id in ids[:MAX_IDS_SHOWN])
    more = len(ids) - MAX_IDS_SHOWN
    return shown if more <= 0 else f'{shown} and {more} more'


def checked_decision(results: Decision, recorded: WaitCalls | None, stored: Mapping[str, AskUserRequest]) -> Decision:
    """`results` checked against the wait that decides `recorded` (the calls it recorded, if it did) and asks
    `stored` (its AskUser questions, by call id, as a store holds them): the one rule every resolver of a wait
    follows, the library's `resolve_dbos_event` as `ask-user resolve`.

    All or nothing: a decision that does not decide exactly the recorded calls is a `ValueError` naming the calls
    left out and the ones that are not pending. Each answer to a question (of `stored`, or recorded with the wait)
    is read as `ask-user answer` reads it: the shape the model gets or the `AskUserResponse` shape, then
    `check_response`; a misfit is a `ValueError` naming the call. Returns `results` with each answer as the model
    gets it and, where an answer in the response shape says who answered, in `answered_by`. A call whose question
    neither holds (a wait opened by an earlier version) is sent as it is: its question is known only to the run.
    """
    if recorded is not None and (problem := recorded.problem(results)) is not None:
        raise ValueError(problem)
    calls = dict(results.calls)
    named: dict[str, str] = {}
    for call_id, value in results.calls.items():
        try:
            request = stored.get(call_id) or (recorded.question(call_id) if recorded is not None else None)
            if request is None:
                continue  # not a question, or one only the run knows
            checked = _checked_answer(request, value)
        except ValueError as error:
            raise ValueError(f'call {call_id!r}: {error}') from None
        if checked is None:
            continue
        calls[call_id], answered_by = checked
        if answered_by is not None:
            named[call_id] = answered_by  # said in the response shape, as `answer --json` keeps
    return replace(results, calls=calls, answered_by=named | results.answered_by)


def _checked_answer(request: AskUserRequest, value: Any) -> tuple[Any, str | None] | None:
    """What the model gets for `value` as the answer to `request`, and who answered if it says; `None` to send
    `value` as it is (`DECLINED`, `TIMED_OUT` or `WITHDRAWN`: the sentence of an outcome, no answer). `ValueError`
    when it is no answer to `request`.
    """
    if isinstance(value, str):
        if value in (DECLINED, TIMED_OUT, WITHDRAWN):
            return None
        # Free text is not an answer: it would reach the model as the person's, checked by nothing.
        raise ValueError(
            'a question is answered with JSON ({"HEADER": ["LABEL"]}, or {"cancelled": true} to decline), '
            'not with text of your own'
        )
    response = parse_answer_json(request, value)
    return ask_user_result(request, response), response.answered_by
