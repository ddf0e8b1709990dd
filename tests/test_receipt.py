"""Signed receipts: who answered which questions, how and when, provable with the app's key."""

from __future__ import annotations

import dataclasses
import getpass
import json
import socket
from datetime import UTC, datetime, timedelta, timezone

import pytest
from ask_user_support import Watch, ask_call, question, script
from pydantic_ai import Agent

from pydantic_ai_ask_user import (
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user.receipts import (
    AnswerReceipt,
    os_user_at_host,
    receipt_from_json,
    receipt_to_json,
    sign_receipt,
    verify_receipt,
)
from pydantic_ai_ask_user.testing import ScriptedAnswerer
from pydantic_ai_ask_user.webhooks import SignatureError

KEY = 'a shared secret of the application'
AT = datetime(2026, 12, 3, 14, 0, 0, 123456, tzinfo=UTC)

DATABASE = Question(
    header='Database',
    question='Which database?',
    options=(QuestionOption(label='PostgreSQL'), QuestionOption(label='SQLite')),
)
REGION = Question(
    header='Region',
    question='Where?',
    options=(QuestionOption(label='EU'), QuestionOption(label='US')),
    multi_select=True,
)
REQUEST = AskUserRequest(id='call_1', questions=(DATABASE, REGION))
RESPONSE = AskUserResponse(
    answers=(
        AskUserAnswer(header='Database', selected=('PostgreSQL',)),
        AskUserAnswer(header='Region', selected=('EU',)),
    )
)


def _receipt() -> AnswerReceipt:
    return sign_receipt(REQUEST, RESPONSE, answered_by='alice@web', key=KEY, at=AT)


def test_a_receipt_verifies_and_survives_a_json_round_trip() -> None:
    receipt = _receipt()
    verify_receipt(receipt, REQUEST, RESPONSE, KEY)
    data = json.loads(json.dumps(receipt_to_json(receipt)))
    assert data['answered_at'] == '2026-12-03T14:00:00.123456Z'
    assert data['answered_by'] == 'alice@web'
    assert data['version'] == 2
    assert data['run_id'] is None  # a request of no run; an agent's request names its run
    assert receipt_from_json(data) == receipt
    verify_receipt(receipt_from_json(data), REQUEST, RESPONSE, KEY.encode())
    # It holds hashes, not the answer.
    assert 'PostgreSQL' not in json.dumps(data)


def test_a_time_in_another_zone_is_kept_in_utc_and_now_is_the_default() -> None:
    seoul = timezone(timedelta(hours=9))
    receipt = sign_receipt(REQUEST, RESPONSE, answered_by='b', key=KEY, at=AT.astimezone(seoul))
    assert receipt.answered_at == AT
    assert receipt.answered_at.tzinfo == UTC
    before = datetime.now(UTC)
    now = sign_receipt(REQUEST, RESPONSE, answered_by='b', key=KEY)
    assert before <= now.answered_at <= datetime.now(UTC)
    verify_receipt(now, REQUEST, RESPONSE, KEY)


@pytest.mark.parametrize(
    ('name', 'value', 'message'),
    [
        ('request_id', 'call_2', "for request 'call_2', not 'call_1'"),
        ('request_id', 'call_é\x1b', "for request 'call_é\ufffd', not 'call_1'"),
        ('questions_sha256', '0' * 64, 'other questions'),
        ('response_sha256', '0' * 64, 'another response'),
        ('answered_by', 'mallory@web', 'signature does not match'),
        ('answered_at', AT + timedelta(microseconds=1), 'signature does not match'),
        ('signature', '0' * 64, 'signature does not match'),
        ('signature', 'é' * 64, 'signature does not match'),
        ('questions_sha256', '데' * 64, 'other questions'),
        ('version', 3, 'version 3'),
        ('version', 1, 'signature does not match'),
        ('run_id', 'run-2', "for run 'run-2', not no run"),
    ],
)
def test_every_field_changed_fails(name: str, value: object, message: str) -> None:
    tampered = dataclasses.replace(_receipt(), **{name: value})
    with pytest.raises(SignatureError, match=message):
        verify_receipt(tampered, REQUEST, RESPONSE, KEY)


def test_a_wrong_key_fails() -> None:
    with pytest.raises(SignatureError, match='wrong key'):
        verify_receipt(_receipt(), REQUEST, RESPONSE, 'another secret, long enough')


def test_other_questions_or_another_answer_fail() -> None:
    receipt = _receipt()
    reordered = AskUserRequest(id='call_1', questions=(REGION, DATABASE))
    with pytest.raises(SignatureError, match='other questions'):
        verify_receipt(receipt, reordered, RESPONSE, KEY)
    edited = AskUserRequest(id='call_1', questions=(DATABASE.model_copy(update={'question': 'Which DB?'}), REGION))
    with pytest.raises(SignatureError, match='other questions'):
        verify_receipt(receipt, edited, RESPONSE, KEY)
    other = AskUserResponse(
        answers=(
            AskUserAnswer(header='Database', selected=('SQLite',)),
            AskUserAnswer(header='Region', selected=('EU',)),
        )
    )
    with pytest.raises(SignatureError, match='another response'):
        verify_receipt(receipt, REQUEST, other, KEY)
    with pytest.raises(SignatureError, match='another response'):
        verify_receipt(receipt, REQUEST, AskUserResponse(cancelled=True), KEY)


def test_a_declined_request_gets_a_receipt_too() -> None:
    declined = AskUserResponse(cancelled=True)
    receipt = sign_receipt(REQUEST, declined, answered_by='os-user@host', key=KEY, at=AT)
    verify_receipt(receipt, REQUEST, declined, KEY)
    with pytest.raises(SignatureError):
        verify_receipt(receipt, REQUEST, RESPONSE, KEY)


def test_what_cannot_be_signed_is_refused_with_a_clear_error() -> None:
    misfit = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('Oracle',)),))
    with pytest.raises(ValueError, match='Oracle'):
        sign_receipt(REQUEST, misfit, answered_by='a', key=KEY)
    for who, message in [('', 'non-blank'), ('  ', 'non-blank'), ('a' * 201, 'more than 200'), ('a\x1b[2J', 'control')]:
        with pytest.raises(ValueError, match=message):
            sign_receipt(REQUEST, RESPONSE, answered_by=who, key=KEY)
    with pytest.raises(ValueError, match='timezone-aware'):
        sign_receipt(REQUEST, RESPONSE, answered_by='a', key=KEY, at=datetime(2026, 1, 1))
    with pytest.raises(TypeError, match='datetime'):
        sign_receipt(REQUEST, RESPONSE, answered_by='a', key=KEY, at='2026-01-01')  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='at least 16 bytes'):
        sign_receipt(REQUEST, RESPONSE, answered_by='a', key='short')
    naive = dataclasses.replace(_receipt(), answered_at=datetime(2026, 1, 1))
    with pytest.raises(SignatureError, match='cannot be checked'):
        verify_receipt(naive, REQUEST, RESPONSE, KEY)


@pytest.mark.parametrize(
    ('data', 'message'),
    [
        ([], 'JSON object'),
        ({}, 'lacks version'),
        ({**receipt_to_json(_receipt()), 'extra\x1b': 1}, 'unknown fields: extra\ufffd'),
        ({**receipt_to_json(_receipt()), 'version': '1'}, 'not an integer'),
        ({**receipt_to_json(_receipt()), 'version': True}, 'not an integer'),
        ({**receipt_to_json(_receipt()), 'signature': 5}, 'signature is not a string'),
        ({**receipt_to_json(_receipt()), 'answered_at': 'yesterday\x1b'}, "'yesterday\ufffd' is not ISO-8601"),
        ({**receipt_to_json(_receipt()), 'answered_at': '2026-01-01T00:00:00'}, 'no timezone'),
    ],
)
def test_a_malformed_receipt_is_refused_naming_the_problem(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        receipt_from_json(data)


def test_os_user_at_host_names_who_answers_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    expected_user = ''.join(c if c.isascii() and (c.isalnum() or c in '._-') else '_' for c in getpass.getuser())
    assert os_user_at_host().startswith(expected_user + '@')
    monkeypatch.setenv('LOGNAME', 'eve\x1b[31m@evil')
    monkeypatch.setenv('USER', 'eve\x1b[31m@evil')
    monkeypatch.setattr(socket, 'gethostname', lambda: 'host\nname')
    assert os_user_at_host() == 'eve__31m_evil@host_name'
    for name in ('LOGNAME', 'USER', 'LNAME', 'USERNAME'):
        monkeypatch.setenv(name, '')
    monkeypatch.setattr(socket, 'gethostname', lambda: '')
    user, _, host = os_user_at_host().partition('@')
    assert host == 'unknown'
    assert user  # the password database's name for this uid, or 'unknown'
    sign_receipt(REQUEST, RESPONSE, answered_by=os_user_at_host(), key=KEY)


def test_a_user_with_no_name_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_user() -> str:
        raise OSError('No username set in the environment')  # what getpass raises for a uid with no name

    monkeypatch.setattr(getpass, 'getuser', no_user)
    assert os_user_at_host().startswith('unknown@')


RUN_1 = AskUserRequest(id='call_0', questions=(DATABASE, REGION), run_id='run-1')
RUN_2 = AskUserRequest(id='call_0', questions=(DATABASE, REGION), run_id='run-2')

VERSION_1 = {
    'version': 1,
    'request_id': 'call_1',
    'questions_sha256': '083ee5fdac725a7d590fe9efcbedc9cde745de7acca68f02cb840b84c703c34f',
    'response_sha256': '1edd062091e3fd9b0b939485d38237e69bced5f5bef15fcf29c55c9ff73785f9',
    'answered_by': 'alice@web',
    'answered_at': '2026-12-03T14:00:00.123456Z',
    'signature': '6e077f94b13b813051bf9b8d71be166bd2de7ccdad6e27b46d66c19d28a4c454',
}
"""What the library signed before receipts named the run (`_receipt()` with version 1), byte for byte."""


def test_a_receipt_names_the_run_and_holds_for_no_other_run_with_the_same_call_id() -> None:
    receipt = sign_receipt(RUN_1, RESPONSE, answered_by='alice@web', key=KEY, at=AT)
    assert receipt.run_id == 'run-1'
    assert receipt.request_id == 'call_0'
    verify_receipt(receipt, RUN_1, RESPONSE, KEY)
    assert receipt_to_json(receipt)['run_id'] == 'run-1'
    verify_receipt(receipt_from_json(json.loads(json.dumps(receipt_to_json(receipt)))), RUN_1, RESPONSE, KEY)
    with pytest.raises(SignatureError, match="for run 'run-1', not run 'run-2'"):
        verify_receipt(receipt, RUN_2, RESPONSE, KEY)
    with pytest.raises(SignatureError, match="for run 'run-1', not no run"):
        verify_receipt(receipt, AskUserRequest(id='call_0', questions=(DATABASE, REGION)), RESPONSE, KEY)
    # Claiming another run in the receipt itself breaks the signature.
    with pytest.raises(SignatureError, match='signature does not match'):
        verify_receipt(dataclasses.replace(receipt, run_id='run-2'), RUN_2, RESPONSE, KEY)


def test_a_receipt_signed_before_runs_were_bound_verifies_only_for_a_request_of_no_run() -> None:
    legacy = receipt_from_json(VERSION_1)
    assert legacy.version == 1
    assert legacy.run_id is None
    verify_receipt(legacy, REQUEST, RESPONSE, KEY)
    assert receipt_to_json(legacy) == VERSION_1
    in_a_run = AskUserRequest(id='call_1', questions=(DATABASE, REGION), run_id='run-1')
    with pytest.raises(SignatureError, match='version 1, which names no run'):
        verify_receipt(legacy, in_a_run, RESPONSE, KEY)
    with pytest.raises(SignatureError, match='names no run'):
        verify_receipt(dataclasses.replace(legacy, run_id='run-1'), in_a_run, RESPONSE, KEY)
    with pytest.raises(ValueError, match='unknown fields: run_id'):
        receipt_from_json({**VERSION_1, 'run_id': None})
    with pytest.raises(ValueError, match='lacks run_id'):
        receipt_from_json({**VERSION_1, 'version': 2})
    with pytest.raises(ValueError, match='run_id is not a string or null'):
        receipt_from_json({**receipt_to_json(_receipt()), 'run_id': 5})


def test_a_lone_surrogate_in_the_call_id_is_signed_and_verified() -> None:
    request = AskUserRequest(id='call_\ud800', questions=(DATABASE, REGION), run_id='run-\udfff')
    receipt = sign_receipt(request, RESPONSE, answered_by='alice@web', key=KEY, at=AT)
    verify_receipt(receipt, request, RESPONSE, KEY)
    data = json.dumps(receipt_to_json(receipt))
    assert data.isascii()
    verify_receipt(receipt_from_json(json.loads(data)), request, RESPONSE, KEY)
    with pytest.raises(SignatureError, match='for request'):
        verify_receipt(receipt, AskUserRequest(id='call_\udfff', questions=(DATABASE, REGION)), RESPONSE, KEY)


@pytest.mark.anyio
async def test_in_agent_runs_with_call_0_a_receipt_from_run_1_fails_for_run_2() -> None:
    seen: list[tuple[AskUserRequest, AskUserResponse, AnswerReceipt]] = []
    for _ in range(2):
        watch = Watch()
        answerer = ScriptedAnswerer({'Database': 'PostgreSQL'}, answered_by='alice@web')
        capability = AskUser(answerer=answerer, receipt_key=KEY)
        call = ask_call(question('Database'), call_id='call_0')
        await Agent(script([call]).model, capabilities=[capability, watch]).run('migrate')
        requested, answered = watch.events
        assert isinstance(requested, AskUserRequestedEvent)
        assert isinstance(answered, AskUserAnsweredEvent)
        assert answered.receipt is not None
        seen.append((requested.request, answered.response, answered.receipt))
    (first, first_response, first_receipt), (second, second_response, _) = seen
    assert first.id == second.id == 'call_0'
    assert first_response == second_response  # the same answer to the same question: only the run differs
    verify_receipt(first_receipt, first, first_response, KEY)
    with pytest.raises(SignatureError, match='for run'):
        verify_receipt(first_receipt, second, second_response, KEY)


@pytest.mark.anyio
async def test_a_call_id_with_a_lone_surrogate_and_a_receipt_key_does_not_fail_the_run_once_answered() -> None:
    """Issue 19, 8c: the person answered, then signing the receipt raised UnicodeEncodeError and the run failed."""
    watch = Watch()
    answerer = ScriptedAnswerer({'Database': 'SQLite'}, answered_by='alice@web')
    call = ask_call(question('Database'), call_id='call_\ud800')
    result = await Agent(script([call]).model, capabilities=[AskUser(answerer=answerer, receipt_key=KEY), watch]).run(
        'migrate'
    )
    assert result.output
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.receipt is not None
    assert answered.receipt.request_id == 'call_\ud800'
    requested = watch.events[0]
    assert isinstance(requested, AskUserRequestedEvent)
    verify_receipt(answered.receipt, requested.request, answered.response, KEY)


@pytest.mark.anyio
async def test_in_a_temporal_workflow_the_receipt_is_signed_at_the_workflow_s_time_not_the_clock_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Workflow code may not read the clock, and a replay must sign the same time: the workflow's `workflow.time()`.
    import pydantic_ai_ask_user._capability as capability_module

    monkeypatch.setattr(capability_module, 'temporal_workflow_time', lambda: AT.timestamp())
    watch = Watch()
    answerer = ScriptedAnswerer({'Database': 'SQLite'}, answered_by='alice@web')
    call = ask_call(question('Database'))
    await Agent(script([call]).model, capabilities=[AskUser(answerer=answerer, receipt_key=KEY), watch]).run('migrate')
    requested, answered = watch.events
    assert isinstance(requested, AskUserRequestedEvent)
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.receipt is not None
    assert answered.receipt.answered_at == AT
    verify_receipt(answered.receipt, requested.request, answered.response, KEY)
