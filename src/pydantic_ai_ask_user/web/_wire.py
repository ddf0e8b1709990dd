"""The JSON shapes of the web API: a request as a custom frontend reads it, a response as it posts one."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse
from pydantic_ai_ask_user._approvals import PendingApproval
from pydantic_ai_ask_user._audience import addressing_json
from pydantic_ai_ask_user._json import response_from_json
from pydantic_ai_ask_user._plain_questions import questions_to_json
from pydantic_ai_ask_user.store import StoreEvent

__all__ = ('request_json', 'approval_json', 'event_json', 'event_name', 'parse_json_body', 'parse_response', 'BadBody')


class BadBody(ValueError):
    """A request body that cannot be read; `status` is the HTTP status to answer with (400 or 422)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        """400 when the body is not JSON, 422 when it is JSON of the wrong shape."""


def request_json(request: AskUserRequest) -> dict[str, Any]:
    """A request as the API shows it: its `kind` (`question`), `id`, `tool_call_id`, `run_id` and `questions` (in the
    model's shape).

    `id` is the question's `AskUserRequest.key`, its run and its tool call: what every URL of the app and
    every event names, since providers repeat tool call ids across runs. `tool_call_id` is the id the
    model gave the call (what chat protocols such as AG-UI and the Vercel AI SDK see), and `run_id` the
    agent run that asked, or `null` for a request of no run (its `id` is then the tool call id).
    Only when set: `deadline`, when the wait runs out (seconds since the epoch, as `asked_at`),
    `notes: true` when each answer may carry a `note`, `audience` (the names it is addressed to) and `context`
    (`{"title", "summary", "link", "agent_name", "conversation_id"}`, each when set; drawn as untrusted text).
    """
    data: dict[str, Any] = {
        'kind': 'question',
        'id': request.key,
        'tool_call_id': request.id,
        'run_id': request.run_id,
        'questions': questions_to_json(request),
    }
    if request.deadline is not None:
        data['deadline'] = request.deadline
    if request.notes:
        data['notes'] = True
    data.update(addressing_json(request))
    return data


def event_json(event: StoreEvent) -> dict[str, Any]:
    """An event as the SSE stream sends it: `{"id": <the question's key>}`, plus `request` on `requested` events;
    for an approval, `{"id": <its key>}` plus `approval` on `approval_requested` (see `event_name`).
    """
    data: dict[str, Any] = {'id': event.request_id}
    if event.kind != 'requested':
        return data  # the item it may carry is for deciding who hears of it, not to be sent again
    if event.request is not None:
        data['request'] = request_json(event.request)
    if event.approval is not None:
        data['approval'] = approval_json(event.approval)
    return data


def event_name(event: StoreEvent) -> str:
    """The SSE event's name: `requested`, `answered` or `withdrawn` for a question; `approval_requested`,
    `approval_decided` or `approval_withdrawn` for a tool approval (a client that knows only questions ignores them).
    """
    if event.item == 'approval':
        return 'approval_' + ('decided' if event.kind == 'answered' else event.kind)
    return event.kind


def approval_json(approval: PendingApproval) -> dict[str, Any]:
    """An approval as the API shows it: its `kind` (`approval`), `id`, `token`, `tool_call_id`, `tool_name`, `args`,
    `parameters`, `run_id`, `opened_at`, and `audience` and `context` when set.
    """
    return {
        'kind': 'approval',
        **approval.call_json(),
        'opened_at': approval.created_at,
        **approval.addressing_json(),
    }


def parse_json_body(body: bytes) -> Any:
    """The JSON value in `body`; `BadBody(400)` naming the problem when it is not JSON."""
    if not body.strip():
        raise BadBody(400, 'the request body is empty; send a JSON object')
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise BadBody(400, 'the request body is not UTF-8 text') from None
    except json.JSONDecodeError as error:
        raise BadBody(400, f'the request body is not valid JSON: {error.msg} at line {error.lineno}') from None
    except RecursionError:
        raise BadBody(400, 'the request body is JSON nested too deeply') from None
    except ValueError:  # an integer too long to convert: more than `sys.get_int_max_str_digits()` digits
        raise BadBody(400, 'the request body holds a number too long to read') from None


def parse_response(value: Any, *, max_custom_answer_length: int) -> AskUserResponse:
    """Read `{"answers": [...], "cancelled": false}` into an `AskUserResponse`; `BadBody(422)` if it does not fit.

    `answered_by` is refused: who answered is who the server let in, never what a client claims.
    """
    if isinstance(value, dict) and 'answered_by' in value:
        raise BadBody(
            422,
            "answered_by is not taken from the body: the server records who signed in (a login link's name, "
            "the authorize hook's, or WebOptions.answered_by for the access token)",
        )
    try:
        response = response_from_json(value)
    except ValueError as error:
        raise BadBody(422, f'the body is not an answer: {error}') from None
    for answer in response.answers:
        if answer.custom_answer is not None and len(answer.custom_answer) > max_custom_answer_length:
            raise BadBody(
                422,
                f'the custom answer to {answer.header!r} is {len(answer.custom_answer)} characters long; '
                f'the most allowed is {max_custom_answer_length}',
            )
        if answer.note is not None and len(answer.note) > max_custom_answer_length:
            raise BadBody(
                422,
                f'the note to {answer.header!r} is {len(answer.note)} characters long; '
                f'the most allowed is {max_custom_answer_length}',
            )
    return response
