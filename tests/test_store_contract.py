"""The errors and events of the `QuestionStore` contract shared by the web hub and the durable store."""

from __future__ import annotations

import pytest

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user.store import AlreadyAnsweredError, StoreError, StoreEvent, UnknownRequestError, WithdrawnError


def test_an_unknown_request_is_a_store_error_and_a_key_error_with_a_readable_message() -> None:
    error = UnknownRequestError('abc')
    assert isinstance(error, StoreError)
    assert isinstance(error, KeyError)
    assert error.request_id == 'abc'
    # A KeyError's str() is normally the repr of its key; this one reads as a sentence.
    assert str(error) == (
        "no question is waiting under key 'abc' (a store takes the request's key, `AskUserRequest.key`, not its tool "
        'call id `.id`)'
    )
    # A run's key (32 hex digits) needs no such hint.
    assert str(UnknownRequestError('0' * 32)) == f"no question is waiting under key '{'0' * 32}'"


@pytest.mark.anyio
async def test_a_store_given_the_tool_call_id_of_a_runs_request_says_it_takes_the_key() -> None:
    import anyio

    from pydantic_ai_ask_user.hub import QuestionHub

    hub = QuestionHub()
    request = AskUserRequest.from_tool_args(
        {'questions': [{'header': 'Go', 'question': 'Go?', 'options': [{'label': 'Yes'}, {'label': 'No'}]}]},
        id='call_0',
        run_id='run-1',
    )
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        with anyio.fail_after(60):
            async for event in hub.events():
                if event.kind == 'requested':
                    break
        with pytest.raises(UnknownRequestError, match=r'takes the request.s key, `AskUserRequest.key`'):
            await hub.get(request.id)
        assert await hub.get(request.key) == request
        group.cancel_scope.cancel()


def test_an_already_answered_request_names_its_id() -> None:
    error = AlreadyAnsweredError('abc')
    assert isinstance(error, StoreError)
    assert error.request_id == 'abc'
    assert str(error) == "question 'abc' has already been answered"


def test_a_withdrawn_request_names_its_id() -> None:
    error = WithdrawnError('abc')
    assert isinstance(error, StoreError)
    assert error.request_id == 'abc'
    assert str(error) == "question 'abc' is no longer waiting for an answer"


def test_a_store_event_carries_the_request_only_when_it_is_requested() -> None:
    request = AskUserRequest.from_tool_args(
        {'questions': [{'header': 'H', 'question': 'Q', 'options': [{'label': 'a'}, {'label': 'b'}]}]}
    )
    requested = StoreEvent(kind='requested', request_id=request.id, request=request)
    answered = StoreEvent(kind='answered', request_id=request.id)
    assert requested.request is request
    assert answered.request is None
    assert requested != answered


@pytest.mark.extras  # the durable and Temporal stores need their extras (`make test-floor` installs none)
def test_every_store_that_holds_approvals_is_an_approval_store_with_paging() -> None:
    # The in-process hub and the durable stores hold approvals; the web inbox lists and pages them over any of them.
    from pydantic_ai_ask_user.dbos import DBOSQuestionStore
    from pydantic_ai_ask_user.hub import QuestionHub
    from pydantic_ai_ask_user.store import ApprovalStore
    from pydantic_ai_ask_user.temporal import TemporalQuestionStore

    for store in (QuestionHub, DBOSQuestionStore, TemporalQuestionStore):
        assert issubclass(store, ApprovalStore), store
        assert callable(store.pending_approvals_page)
