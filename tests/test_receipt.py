"""Signed receipts: who answered which questions, how and when, provable with the app's key."""

from __future__ import annotations

import dataclasses
import getpass
import json
import socket
from datetime import UTC, datetime, timedelta, timezone

import pytest

from pydantic_ai_ask_user import (
    AnswerReceipt,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    Question,
    QuestionOption,
    SignatureError,
    os_user_at_host,
    receipt_from_json,
    receipt_to_json,
    sign_receipt,
    verify_receipt,
)

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
    assert data['version'] == 1
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
        ('version', 2, 'version 2'),
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
