"""The check on a Temporal wait's decision holds whichever way the waiting handler is spelled and listed, or the run
is refused at its start with the fix (as on DBOS: `tests/dbos/test_handler_order.py`), on a real Temporal server.

Listed after `TemporalExternalEvents`, or `RequestInput` anywhere, the wait is listed with the calls it decides and
an Update that leaves one out is refused to its sender. A `HandleDeferredToolCalls` that waits, listed first, would
open its wait before the calls are noted (the wait would hold none: any decision taken, and the approval missing from
every list): the run is refused at its start instead.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from ask_user_support import handler_order_refusal
from pydantic_ai import DeferredToolResults
from temporal_support import (
    CALL_ID,
    DEPLOYED,
    TOOL_SAID,
    OrderedApprovalWorkflow,
    Outcome,
    Turn,
)
from temporal_testing import user_error_of, waiting_one
from temporalio.client import Client, WorkflowUpdateFailedError
from waits import WAIT

from pydantic_ai_ask_user.temporal import pending_temporal_events, resolve_temporal_event

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize('order', ['events-first', 'handler-first'])
@pytest.mark.parametrize('spelling', ['handle', 'request-input'])
async def test_a_decision_that_leaves_out_a_call_is_refused_in_every_order_and_spelling_or_the_run_is(
    client: Client, worker: str, spelling: str, order: str
) -> None:
    handle = await client.start_workflow(
        OrderedApprovalWorkflow.run,
        Turn(prompt=f'{spelling} {order}'),
        id=f'order-{uuid.uuid4().hex}',
        task_queue=worker,
        execution_timeout=timedelta(seconds=WAIT * 2),
        result_type=Outcome,
    )
    refusal = handler_order_refusal(spelling, order == 'handler-first', 'TemporalExternalEvents')
    if refusal is not None:
        assert refusal in await user_error_of(handle.result())
        assert DEPLOYED == []
        return
    event = await waiting_one(lambda: pending_temporal_events(handle), 'event')
    assert event.requests is not None  # listed with the calls it decides
    assert [call.tool_call_id for call in event.requests.approvals] == [CALL_ID]
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await resolve_temporal_event(client, event.token, DeferredToolResults())
    assert f"it leaves out '{CALL_ID}', which the run waits for" in str(refused.value.cause)
    await resolve_temporal_event(client, event.token, DeferredToolResults(approvals={CALL_ID: True}))
    assert (await handle.result()).output == TOOL_SAID + 'deployed to production'
    assert DEPLOYED == ['production']
