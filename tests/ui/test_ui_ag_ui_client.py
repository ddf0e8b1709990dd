"""`@ag-ui/client` against the AG-UI example app (`examples/ui/ag_ui_app.py`) under uvicorn.

The question arrives as an interrupt; an answer goes back as a resume entry or as a plain `ToolMessage`;
a misfit is refused with `RUN_ERROR` and the model, which echoes whatever it gets, never replies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_support import GOOD, HOSTILE, Served, run_driver

from pydantic_ai_ask_user import DECLINED, RESPONSE_JSON_SCHEMA


def drive(node_clients: Path, app: Served, mode: str, answer: Any) -> dict[str, Any]:
    return run_driver(node_clients, 'agui_client.mjs', f'{app.base}agent', mode, answer)


def test_the_client_gets_an_interrupt_answers_it_and_the_run_finishes_with_the_answer(
    node_clients: Path, ag_ui_app: Served
) -> None:
    seen = drive(node_clients, ag_ui_app, 'resume', GOOD)
    interrupt = seen['interrupt']
    assert interrupt['reason'] == 'input_required'
    assert interrupt['id'] == f'ask-user-{interrupt["toolCallId"]}'
    assert interrupt['responseSchema'] == RESPONSE_JSON_SCHEMA
    assert [q['header'] for q in interrupt['metadata']['questions']] == ['Region']
    assert [o['label'] for o in interrupt['metadata']['questions'][0]['options']] == ['EU', 'US']
    # The requested event reached the client as a CUSTOM event tied to the tool call.
    requested = {'toolCallId': interrupt['toolCallId'], 'questions': interrupt['metadata']['questions']}
    assert {'name': 'ask_user_requested', 'value': requested} in seen['first']['custom']
    assert seen['second']['error'] is None
    assert seen['second']['outcome'] == {'type': 'success'}
    assert seen['text'] == '{"Region":["EU"]}'


def test_a_cancelled_resume_entry_is_a_decline(node_clients: Path, ag_ui_app: Served) -> None:
    seen = drive(node_clients, ag_ui_app, 'decline', None)
    assert seen['second']['error'] is None
    assert seen['text'] == DECLINED


def test_an_answer_as_a_tool_message_is_checked_the_same_way(node_clients: Path, ag_ui_app: Served) -> None:
    seen = drive(node_clients, ag_ui_app, 'tool-message', {'answers': [{'header': 'Region', 'selected': ['US']}]})
    assert seen['second']['error'] is None
    assert seen['text'] == '{"Region":["US"]}'


@pytest.mark.parametrize('mode', ['resume', 'tool-message'])
@pytest.mark.parametrize('case', list(HOSTILE))
def test_a_misfit_is_refused_with_run_error_and_never_reaches_the_model(
    node_clients: Path, ag_ui_app: Served, mode: str, case: str
) -> None:
    answer, problem = HOSTILE[case]
    seen = drive(node_clients, ag_ui_app, mode, answer)
    error = seen['second']['error']
    assert error is not None
    assert 'refused' in error
    assert problem in error
    assert seen['text'] is None  # the model, which echoes what it gets, was never asked again
