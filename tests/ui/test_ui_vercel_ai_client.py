"""The `ai` package's chat transport and UI-message stream reader against the Vercel example app under uvicorn.

The question is a `tool-ask_user_question` part waiting for input; the answer goes back as its output
(as `addToolOutput` sends it); a misfit, or an approval instead of an answer, is refused with the
stream's `error` part and the model, which echoes whatever it gets, never replies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_support import GOOD, HOSTILE, Served, run_driver

from pydantic_ai_ask_user import DECLINED


def drive(node_clients: Path, app: Served, mode: str, answer: Any) -> dict[str, Any]:
    return run_driver(node_clients, 'vercel_client.mjs', f'{app.base}chat', mode, answer)


def test_the_reader_sees_a_question_waiting_for_input_and_the_answer_reaches_the_model(
    node_clients: Path, vercel_ai_app: Served
) -> None:
    seen = drive(node_clients, vercel_ai_app, 'output', GOOD)
    question = seen['question']
    assert question['state'] == 'input-available'
    assert [q['header'] for q in question['input']['questions']] == ['Region']
    requested = [part for part in seen['data'] if part['type'] == 'data-ask-user-requested']
    assert [part['id'] for part in requested] == [question['toolCallId']]
    assert requested[0]['data']['toolCallId'] == question['toolCallId']
    assert seen['secondErrors'] == []
    assert seen['text'] == '{"Region":["EU"]}'


def test_a_cancelled_response_is_a_decline(node_clients: Path, vercel_ai_app: Served) -> None:
    seen = drive(node_clients, vercel_ai_app, 'output', {'answers': [], 'cancelled': True})
    assert seen['secondErrors'] == []
    assert seen['text'] == DECLINED


def test_an_approval_is_no_answer_to_a_question(node_clients: Path, vercel_ai_app: Served) -> None:
    seen = drive(node_clients, vercel_ai_app, 'approve', None)
    assert len(seen['secondErrors']) == 1
    assert 'is a question: answer it with the tool output' in seen['secondErrors'][0]
    assert not seen['text']  # no reply: the run never started


@pytest.mark.parametrize('case', list(HOSTILE))
def test_a_misfit_is_refused_with_an_error_part_and_never_reaches_the_model(
    node_clients: Path, vercel_ai_app: Served, case: str
) -> None:
    answer, problem = HOSTILE[case]
    seen = drive(node_clients, vercel_ai_app, 'output', answer)
    assert len(seen['secondErrors']) == 1
    assert 'refused' in seen['secondErrors'][0]
    assert problem in seen['secondErrors'][0]
    assert not seen['text']  # the model, which echoes what it gets, was never asked again
