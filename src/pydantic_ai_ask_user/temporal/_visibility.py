"""How a workflow shows the questions it waits for to `TemporalQuestionStore`, `ask-user pending` and the web inbox.

Decided: Temporal's own visibility, not the DBOS question table. A waiting question lives in the workflow's
state and is answered by an Update that the workflow validates; copying it to a database of ours would need an
activity per change, a second source of truth to keep in step with the workflow's, and a database that a
Temporal user may not run. Instead, whenever what it waits for changes, the workflow (in workflow code, so the
change is in its history, made again the same way on every replay, and costs no activity):

- sets the search attribute `AskUserQuestions` (a `KeywordList`, which the namespace must have registered) to
  `waiting` while anything waits, `waiting:KEY` per waiting question, and `answered:KEY` / `withdrawn:KEY` for
  the last `SETTLED_KEPT` questions it stopped waiting for: the index. `AskUserQuestions = "waiting"` lists the
  workflows with a question to answer; `AskUserQuestions IN ("waiting:KEY", ...)` finds the one that asked KEY;
- sets the memo `ask_user_waiting` to the waiting questions themselves, with when each was asked, and the memo
  `ask_user_events` to the waiting external events (the waiting handler's approvals, with the calls they decide) of a
  listed `TemporalEventWaiter`, with when each opened: listing and showing them needs no worker (a Query would
  hang while the workers are down, say restarting), and one list
  call returns a page of questions rather than one round trip per workflow.

Visibility is eventually consistent (a question appears in the list a moment after it is asked); what the store
decides with (is it waiting, answered, withdrawn) is read from the workflow itself with `describe`, which is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic_ai.tools import DeferredToolRequests
from temporalio import workflow
from temporalio.common import SearchAttributeKey

from .._answers import TOOL_NAME, AskUserRequest
from .._approvals import PendingApproval
from .._audience import QuestionContext
from .._escalation import Escalation, Handoff
from .._tool_args import approval_args

__all__ = (
    'QUESTIONS_ATTRIBUTE',
    'QUESTIONS_ATTRIBUTE_NAME',
    'WAITING_MEMO',
    'EVENTS_MEMO',
    'SETTLED_MEMO',
    'RECEIPT_MEMO',
    'RECEIPT_PATCH',
    'WAITING',
    'LISTED',
    'SETTLED_KEPT',
    'WaitingQuestion',
    'WaitingEvent',
    'ListedEvent',
    'publish_waits',
    'publish_receipt',
    'wait_questions',
    'wait_approvals',
    'addressed',
    'entry',
)

QUESTIONS_ATTRIBUTE_NAME = 'AskUserQuestions'
"""The search attribute (type `KeywordList`) a workflow lists its questions in; register it once per namespace."""

QUESTIONS_ATTRIBUTE = SearchAttributeKey.for_keyword_list(QUESTIONS_ATTRIBUTE_NAME)
"""`QUESTIONS_ATTRIBUTE_NAME` as a typed key."""

WAITING_MEMO = 'ask_user_waiting'
"""The memo field holding the waiting questions, `{key: WaitingQuestion}`; absent when none waits."""

EVENTS_MEMO = 'ask_user_events'
"""The memo field holding the waiting external events of a listed `TemporalEventWaiter`, `{token: ListedEvent}`;
absent when none waits."""

SETTLED_MEMO = 'ask_user_settled'
"""The memo field holding whom each addressed question that `AskUserQuestions` still says was answered or withdrawn
was for, `{key: [names]}`: so a store tells someone else's finished question from a missing one, as it tells a
waiting one. Absent while there is none (an unaddressed question is anyone's)."""

RECEIPT_MEMO = 'ask_user_receipt'
"""The memo field a workflow sets to `{key: receipt}` as the run signs the receipt of a question's answer
(`TemporalAnswerer.keep_receipt`; the receipt as `receipt_to_json` writes it): each setting is an event of the
workflow's history, where the history reader finds it. Holds the latest receipt only, so the memo stays small."""

RECEIPT_PATCH = 'ask_user.receipt_memo'
"""The patch id (`workflow.patched`) under which a workflow sets `RECEIPT_MEMO`."""

SETTLED_PATCH = 'ask_user.settled_audiences'
"""The patch id (`workflow.patched`) under which a workflow keeps `SETTLED_MEMO`."""

WAITING = 'waiting'
"""The entry of `AskUserQuestions` present while the workflow waits for any answer (or listed external event)."""

LISTED = 'listed'
"""The entry of `AskUserQuestions` a workflow that listed an external event keeps for good: `HISTORY_QUERY` finds it."""

LISTED_PATCH = 'ask_user.listed_entry'
"""The patch id (`workflow.patched`) under which a workflow keeps `LISTED`."""

SETTLED_KEPT = 10
"""How many answered or withdrawn questions `AskUserQuestions` keeps, newest last, so that a late answer is told
"already answered" rather than "unknown". Bounded: Temporal limits a search attribute's size (2 KB by default)."""

State = Literal['waiting', 'answered', 'withdrawn']
"""Where a question is, as its entry in `AskUserQuestions` says."""


@dataclass(frozen=True)
class WaitingQuestion:
    """One question in the memo: the request, and when the workflow started waiting for it."""

    request: AskUserRequest
    """The question, as the model asked it."""

    asked_at: float
    """When it was asked, workflow time (deterministic), in seconds since the epoch."""

    handoffs: tuple[Handoff, ...] = ()
    """Its hand-offs (`TemporalQuestionStore.forward`, escalation), the oldest first; `request` is addressed as the
    last one left it."""


@dataclass(frozen=True)
class WaitingEvent:
    """One external event a workflow waits for, as the Query `pending_temporal_events` and the memo list it."""

    token: str
    """The token that resolves it, naming the workflow: `resolve_temporal_event(client, token, payload)`."""

    name: str
    """The wait's name (`HandleDeferredToolCalls(ask, name=...)`, `'deferred_tool_calls'` by default)."""

    requests: DeferredToolRequests | None = None
    """For a waiting handler's wait (with `TemporalExternalEvents`), the calls it decides: the approvals, with the
    model's arguments, and the calls waiting for a result. `None` for any other wait."""

    parameters: dict[str, dict[str, Any]] | None = None
    """The parameters JSON schema of each tool whose call awaits approval here, by tool name, from the run's tool
    definitions when the wait opened: edited arguments are checked against it. `None` for a wait opened by an
    earlier version (edited arguments are then refused)."""

    audience: tuple[str, ...] | None = None
    """Whom the wait's approvals are for (`PendingApproval.audience`): as `TemporalExternalEvents(audience=...)` set
    it when the wait opened, else as its first AskUser question's; `None` for anyone. The wait is listed to the same
    people (`TemporalQuestionStore.pending_events(visible_to=...)`)."""

    context: QuestionContext | None = None
    """Where the wait's approvals come from (`PendingApproval.context`), set as `audience` is."""

    addressed: bool = False
    """Whether `audience` and `context` were set when the wait opened. `False` for a wait opened by an earlier
    version, whose approvals are addressed and in context as its first AskUser question is (for anyone without one)."""

    escalate: tuple[Escalation, ...] = ()
    """The escalation policy of the wait's approvals (`TemporalExternalEvents(escalate=...)`): each step forwards the
    wait (its `audience`) `after` seconds after it opened, if it still waits. Empty: none."""


@dataclass(frozen=True)
class ListedEvent:
    """One external event in the memo: the wait, and when the workflow opened it."""

    event: WaitingEvent
    """The wait."""

    asked_at: float
    """When it opened, workflow time (deterministic), in seconds since the epoch."""

    handoffs: tuple[Handoff, ...] = ()
    """Its hand-offs, the oldest first, as `WaitingQuestion.handoffs`."""


def entry(state: State, key: str) -> str:
    """The entry of `AskUserQuestions` that says the question `key` is in `state`."""
    return f'{state}:{key}'


def publish_waits(
    pending: Mapping[str, AskUserRequest],
    settled: tuple[State, AskUserRequest] | None = None,
    *,
    events: Mapping[str, WaitingEvent] | None = None,
    handoffs: Mapping[str, Sequence[Handoff]] | None = None,
) -> None:
    """In workflow code: show that `pending` (and `events`) waits now, and that the question `settled` names stopped
    waiting.

    Each waiting question and event keeps the time it was first shown at, from the memo, and is shown as it is now
    (addressed as its hand-offs, `handoffs` by key, left it). `events` is `None` in a workflow that never listed one:
    its memo then never names the field, as before external events were listed.
    """
    handed = handoffs or {}
    info = workflow.info()
    current = list(info.typed_search_attributes.get(QUESTIONS_ATTRIBUTE) or ())
    kept = [item for item in current if item.startswith(('answered:', 'withdrawn:'))]
    if settled is not None:
        kept.append(entry(settled[0], settled[1].key))
    kept = kept[-SETTLED_KEPT:]
    entries = [WAITING] if pending or events else []
    entries += [entry('waiting', key) for key in pending] + kept
    # A workflow that listed an external event keeps `LISTED` once its waits are over, so the history still finds it
    # (a question's workflow keeps its `answered:KEY`). Guarded as new commands are: an older history replays as it ran.
    if events is not None and workflow.patched(LISTED_PATCH):
        entries.append(LISTED)
    workflow.upsert_search_attributes([QUESTIONS_ATTRIBUTE.value_set(entries)])  # pyright: ignore[reportUnknownMemberType]
    now = workflow.now().timestamp()
    none: dict[str, WaitingQuestion] = {}
    asked = workflow.memo_value(WAITING_MEMO, none, type_hint=dict[str, WaitingQuestion])
    memo = {
        key: WaitingQuestion(request, asked[key].asked_at if key in asked else now, tuple(handed.get(key, ())))
        for key, request in pending.items()
    }
    # `None` removes the field: a workflow that waits for nothing carries no questions in its memo.
    fields: dict[str, object] = {WAITING_MEMO: memo or None}
    no_audiences: dict[str, list[str]] = {}
    audiences = workflow.memo_value(SETTLED_MEMO, no_audiences, type_hint=dict[str, list[str]])
    if settled is not None and settled[1].audience is not None:
        audiences = {**audiences, settled[1].key: list(settled[1].audience)}
    kept_keys = {item.partition(':')[2] for item in kept}
    audiences = {key: names for key, names in audiences.items() if key in kept_keys}
    # Guarded as new commands are: a workflow whose history settled its questions before this version replays
    # without the field, exactly as it ran.
    if (audiences or SETTLED_MEMO in workflow.memo()) and workflow.patched(SETTLED_PATCH):
        fields[SETTLED_MEMO] = audiences or None
    if events is not None:
        no_events: dict[str, ListedEvent] = {}
        opened = workflow.memo_value(EVENTS_MEMO, no_events, type_hint=dict[str, ListedEvent])
        listed = {
            token: ListedEvent(event, opened[token].asked_at if token in opened else now, tuple(handed.get(token, ())))
            for token, event in events.items()
        }
        fields[EVENTS_MEMO] = listed or None
    workflow.upsert_memo(fields)


def publish_receipt(key: str, receipt: dict[str, Any]) -> None:
    """In workflow code: put the signed receipt of the answer to the question `key` in the memo (`RECEIPT_MEMO`).

    Guarded as new commands are: a workflow whose history answered its question before this version replays without
    it, exactly as it ran (and its history shows no receipt).
    """
    if workflow.patched(RECEIPT_PATCH):
        workflow.upsert_memo({RECEIPT_MEMO: {key: receipt}})


def wait_questions(event: WaitingEvent) -> list[AskUserRequest]:
    """The AskUser questions among the calls a waiting handler's wait decides (none for another wait)."""
    if event.requests is None:
        return []
    calls = [call for call in event.requests.calls if call.tool_name == TOOL_NAME]
    return [AskUserRequest.from_deferred(event.requests, call) for call in calls]


def addressed(event: WaitingEvent) -> WaitingEvent:
    """`event` with whom it (its approvals, and its listing) is for and where it comes from: as it was addressed when
    it opened, or, for a wait opened by an earlier version, as its first AskUser question is (anyone's without one).
    """
    if event.addressed:
        return event
    questions = wait_questions(event)
    if not questions:
        return replace(event, addressed=True)
    return replace(event, audience=questions[0].audience, context=questions[0].context, addressed=True)


def wait_approvals(event: WaitingEvent, workflow_id: str, created_at: float) -> list[PendingApproval]:
    """The approvals a listed wait of `workflow_id` (opened at `created_at`) holds, as pending items, addressed and in
    context as the wait is.
    """
    event = addressed(event)
    if event.requests is None:
        return []
    parameters = event.parameters or {}
    return [
        PendingApproval(
            token=event.token,
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=approval_args(event.requests, call),
            parameters=parameters.get(call.tool_name),
            workflow_id=workflow_id,
            created_at=created_at,
            audience=event.audience,
            context=event.context,
            escalate=event.escalate,
        )
        for call in event.requests.approvals
    ]
