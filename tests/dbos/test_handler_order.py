"""The check on a DBOS wait's decision holds whichever way the waiting handler is spelled and listed, or the run is
refused at its start with the fix.

Both spellings (`HandleDeferredToolCalls` with a handler that takes a resume token, Pydantic AI 2.78's; and
`RequestInput`, 2.68–2.77's, deprecated in 2.78) in both orders (listed after `DBOSExternalEvents`, and before).
`RequestInput` is wrapped by `DBOSExternalEvents` wherever it is listed; `HandleDeferredToolCalls` cannot be (one that
answers in place must stay outside), so listed first it is refused, as it is on a Pydantic AI that passes it no token.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from ask_user_support import handler_order_refusal
from cli_support import run_cli_in_process
from durable_support import RequestInputWorker

pytestmark = pytest.mark.anyio

LEFT_OUT = "the decision must decide every pending call and nothing else: it leaves out '{id}', which the run waits for"


@pytest.mark.parametrize('handler_first', [False, True], ids=['events-first', 'handler-first'])
@pytest.mark.parametrize('spelling', ['handle', 'request-input'])
async def test_a_decision_that_leaves_out_a_call_is_refused_in_every_order_and_spelling_or_the_run_is(
    database_url: str, tmp_path: Path, spelling: str, handler_first: bool
) -> None:
    with RequestInputWorker(
        database_url, tmp_path, spelling=spelling, handler_first=handler_first, workflow_id='order'
    ) as worker:
        refusal = handler_order_refusal(spelling, handler_first, 'DBOSExternalEvents')
        worker.start()
        if refusal is not None:
            code = await anyio.to_thread.run_sync(worker.wait_ended)
            assert code != 0
            assert refusal in ' '.join(worker.log_text().split()), worker.log_text()
            assert worker.lines('token.json') == []  # refused before any wait opened
            assert worker.lines('deployed.txt') == []
            return
        pending = await worker.pending_calls()
        token, question_id = pending['token'], pending['calls'][0]['id']
        left_out = json.dumps({'approvals': {'deploy-1': False}})
        code, _, err = await anyio.to_thread.run_sync(
            lambda: run_cli_in_process(['resolve', token, '--db', database_url, '--json', '-'], left_out)
        )
        assert code == 2, err
        assert LEFT_OUT.format(id=question_id) in err
        assert worker.running()  # nothing reached the run

        decision = json.dumps({'approvals': {'deploy-1': False}, 'calls': {question_id: {'Database': ['SQLite']}}})
        code, _, err = await anyio.to_thread.run_sync(
            lambda: run_cli_in_process(['resolve', token, '--db', database_url, '--json', '-'], decision)
        )
        assert code == 0, err
        await anyio.to_thread.run_sync(worker.wait_succeeded)
        assert worker.output()['ask_user_question'] == {'Database': ['SQLite']}
