"""The opt-in extensions of issue 12 in the core: notes, a recommended option, who answered, receipts, the deadline.

Each is off by default (the default tool is pinned in `test_default_tool_snapshot.py`); these tests turn them on
and check what the model reads, what the answerer gets, what the model gets back, and what is refused.
"""

from __future__ import annotations

import json
import pickle
import time
from typing import Any

import anyio
import pytest
from ask_user_support import Watch, ask_call, make_question, question, script
from pydantic_ai import Agent
from pydantic_ai.capabilities import IncludeToolReturnSchemas
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from pydantic_ai_ask_user import (
    TOOL_NAME,
    AskUser,
    AskUserAnswer,
    AskUserAnsweredEvent,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    Question,
    QuestionOption,
    check_response,
)
from pydantic_ai_ask_user._capability import MAX_TIMEOUT, NOTES_DESCRIPTION, RECOMMENDED_DESCRIPTION, TOOL_DESCRIPTION
from pydantic_ai_ask_user._question_limits import LATEST_DEADLINE
from pydantic_ai_ask_user._questions import PlainToolArguments
from pydantic_ai_ask_user.checks import check_answered_by
from pydantic_ai_ask_user.deferred import ask_user_result, deferred_answer
from pydantic_ai_ask_user.json import questions_to_json, read_response, response_from_json, response_to_json
from pydantic_ai_ask_user.limits import MAX_NOTE_LENGTH
from pydantic_ai_ask_user.receipts import sign_receipt, verify_receipt
from pydantic_ai_ask_user.webhooks import SignatureError

pytestmark = pytest.mark.anyio

KEY = b'a receipt key of at least 16 bytes'


def _tool_seen(capability: AskUser[None]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (tool,) = [t for t in info.function_tools if t.name == TOOL_NAME]
        seen['description'] = tool.description
        seen['parameters'] = tool.parameters_json_schema
        return ModelResponse(parts=[TextPart('done')])

    Agent(FunctionModel(model), capabilities=[capability]).run_sync('go')
    return seen


class Recording:
    """An answerer that records each request and answers with what `answer` makes of it."""

    def __init__(self, answer: Any) -> None:
        self.requests: list[AskUserRequest] = []
        self._answer = answer

    async def __call__(self, request: AskUserRequest) -> AskUserResponse:
        self.requests.append(request)
        return self._answer(request)


def _pick_first(note: str | None = None, answered_by: str | None = None) -> Any:
    def answer(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(
            answers=tuple(
                AskUserAnswer(header=q.header, selected=(q.options[0].label,), note=note) for q in request.questions
            ),
            answered_by=answered_by,
        )

    return answer


async def _run(capability: AskUser[None], *turns: Any) -> tuple[Any, Any, Watch]:
    model = script(*turns)
    watch = Watch()
    agent = Agent(model.model, capabilities=[capability, watch])
    with anyio.fail_after(60):
        result = await agent.run('go')
    return result, model, watch


# Notes


def test_notes_add_a_sentence_to_the_description_and_change_no_schema() -> None:
    plain = _tool_seen(AskUser(answerer=Recording(_pick_first())))
    noted = _tool_seen(AskUser(answerer=Recording(_pick_first()), notes=True))
    assert noted['description'] == TOOL_DESCRIPTION + NOTES_DESCRIPTION
    assert noted['parameters'] == plain['parameters']


async def test_a_note_reaches_the_model_beside_its_answer() -> None:
    answerer = Recording(_pick_first(note="only after tonight's backup"))
    _, model, _ = await _run(AskUser(answerer=answerer, notes=True), [ask_call(question('Database'))])
    assert answerer.requests[0].notes is True
    (returned,) = model.returns()
    assert returned.content == {'Database': {'answer': ['PostgreSQL'], 'note': "only after tonight's backup"}}


async def test_answers_without_a_note_keep_the_plain_shape_when_notes_are_on() -> None:
    def answer(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(
            answers=(
                AskUserAnswer(header='Database', selected=('SQLite',)),
                AskUserAnswer(header='Cache', custom_answer='none for now', note='we will revisit'),
            )
        )

    _, model, _ = await _run(
        AskUser(answerer=Recording(answer), notes=True), [ask_call(question('Database'), question('Cache'))]
    )
    (returned,) = model.returns()
    assert returned.content == {
        'Database': ['SQLite'],
        'Cache': {'answer': ['none for now'], 'note': 'we will revisit'},
    }


async def test_a_note_without_notes_on_fails_the_run_naming_the_option() -> None:
    answerer = Recording(_pick_first(note='sneaked in'))
    with pytest.raises(ValueError, match=r'has a note, but request .* takes none \(notes need AskUser\(notes=True\)\)'):
        await _run(AskUser(answerer=answerer), [ask_call(question('Database'))])
    assert answerer.requests[0].notes is False


@pytest.mark.parametrize(
    ('note', 'problem'),
    [
        ('   ', 'is blank'),
        ('x' * (MAX_NOTE_LENGTH + 1), f'at most {MAX_NOTE_LENGTH} are allowed'),
        ('fine\x1b[2Jgone', 'only plain text and line breaks are allowed'),
        ('rtl \u202e trick', 'only plain text and line breaks are allowed'),
    ],
)
def test_a_note_follows_the_rules_of_a_custom_answer(note: str, problem: str) -> None:
    request = AskUserRequest(questions=(make_question('Database'),), notes=True)
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',), note=note),))
    with pytest.raises(ValueError, match=f"the answer to 'Database': the note .*{problem}"):
        check_response(request, response)


def test_a_note_may_span_lines_and_reaches_the_model_as_written() -> None:
    request = AskUserRequest(questions=(make_question('Database'),), notes=True)
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='a\nb'),))
    assert ask_user_result(request, response) == {'Database': {'answer': ['SQLite'], 'note': 'a\nb'}}


def test_notes_round_trip_through_the_response_json() -> None:
    request = AskUserRequest(questions=(make_question('Database'),), notes=True)
    response = AskUserResponse(
        answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='small data'),), answered_by='alice@web'
    )
    data = response_to_json(response)
    assert data == {
        'answers': [{'header': 'Database', 'selected': ['SQLite'], 'note': 'small data'}],
        'cancelled': False,
        'answered_by': 'alice@web',
    }
    assert read_response(request, data) == response
    with pytest.raises(ValueError, match='takes none'):
        read_response(AskUserRequest(questions=request.questions), data)
    with pytest.raises(ValueError, match='note'):
        response_from_json({'answers': [{'header': 'Database', 'selected': ['SQLite'], 'note': 3}]})


def test_a_deferred_call_is_rebuilt_with_the_notes_of_its_capability() -> None:
    call = ToolCallPart(TOOL_NAME, {'questions': [question('Database')]}, tool_call_id='call_1')
    assert AskUserRequest.from_tool_call(call).notes is False
    assert AskUserRequest.from_tool_call(call, notes=True).notes is True
    with pytest.raises(TypeError, match='notes must be a bool'):
        AskUserRequest(questions=(make_question(),), notes='yes')  # type: ignore[arg-type]


# Recommended option


def test_the_recommended_field_is_in_the_schema_only_when_turned_on() -> None:
    plain = _tool_seen(AskUser(answerer=Recording(_pick_first())))
    assert 'recommended' not in plain['parameters']['$defs']['Question']['properties']
    on = _tool_seen(AskUser(answerer=Recording(_pick_first()), recommended_options=True))
    assert on['description'] == TOOL_DESCRIPTION + RECOMMENDED_DESCRIPTION
    field = on['parameters']['$defs']['Question']['properties']['recommended']
    assert 'recommend' in field['description']
    assert {'type': 'string', 'maxLength': 50, 'minLength': 1} in field['anyOf']
    assert 'recommended' not in on['parameters']['$defs']['Question']['required']
    both = _tool_seen(AskUser(answerer=Recording(_pick_first()), recommended_options=True, notes=True))
    assert both['description'] == TOOL_DESCRIPTION + NOTES_DESCRIPTION + RECOMMENDED_DESCRIPTION


async def test_the_answerer_sees_the_recommendation_and_the_model_gets_what_the_person_picked() -> None:
    def answer(request: AskUserRequest) -> AskUserResponse:
        (q,) = request.questions
        return AskUserResponse(answers=(AskUserAnswer(header=q.header, selected=('PostgreSQL',)),))

    answerer = Recording(answer)
    _, model, _ = await _run(
        AskUser(answerer=answerer, recommended_options=True),
        [ask_call(question('Database', recommended='SQLite'))],
    )
    assert answerer.requests[0].questions[0].recommended == 'SQLite'
    (returned,) = model.returns()
    assert returned.content == {'Database': ['PostgreSQL']}


@pytest.mark.parametrize('value', ['SQLite', None, 'MongoDB'])
async def test_the_default_tool_refuses_a_recommendation_as_it_refuses_any_unknown_field(value: str | None) -> None:
    answerer = Recording(_pick_first())
    _, model, _ = await _run(
        AskUser(answerer=answerer),
        [ask_call(question('Database', recommended=value))],
        [ask_call(question('Database'))],
    )
    (retry,) = model.returns(1)
    assert retry.outcome == 'retried'
    assert retry.content == [
        {
            'type': 'extra_forbidden',
            'loc': ['questions', 0, 'recommended'],
            'msg': 'Extra inputs are not permitted',
            'input': value,
        }
    ]
    assert len(answerer.requests) == 1
    assert answerer.requests[0].questions[0].recommended is None
    assert type(answerer.requests[0].questions[0]) is Question


def test_the_default_tools_return_schema_is_the_specified_one() -> None:
    def return_schema(capability: AskUser[None]) -> Any:
        seen: list[Any] = []

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            (tool,) = [t for t in info.function_tools if t.name == TOOL_NAME]
            seen.append(tool.description)
            return ModelResponse(parts=[TextPart('done')])

        Agent(FunctionModel(model), capabilities=[capability, IncludeToolReturnSchemas()]).run_sync('go')
        return json.loads(seen[0].split('Return schema:', 1)[1])

    plain = return_schema(AskUser(answerer=Recording(_pick_first()), recommended_options=True))
    assert plain == {
        'anyOf': [
            {'additionalProperties': {'items': {'type': 'string'}, 'type': 'array'}, 'type': 'object'},
            {'type': 'string'},
        ]
    }
    noted = return_schema(AskUser(answerer=Recording(_pick_first()), notes=True))
    assert noted != plain


def test_the_plain_arguments_model_is_the_default_tools_schema() -> None:
    default = _tool_seen(AskUser(answerer=Recording(_pick_first())))['parameters']
    schema = PlainToolArguments.model_json_schema()
    assert list(schema['$defs']['Question']['properties']) == list(default['$defs']['Question']['properties'])
    with pytest.raises(ValueError, match='Extra inputs are not permitted'):
        PlainToolArguments.model_validate({'questions': [question('Database', recommended=None)]})
    (validated,) = PlainToolArguments.model_validate({'questions': [question('Database')]}).questions
    assert type(validated) is Question


def test_a_question_pickled_before_recommended_existed_reads_as_none() -> None:
    fresh = make_question('Database')
    state = fresh.__getstate__()
    del state['__dict__']['recommended']
    old = Question.__new__(Question)
    old.__setstate__(state)
    assert old.recommended is None
    assert old == fresh
    assert questions_to_json(AskUserRequest(questions=(old,))) == questions_to_json(AskUserRequest(questions=(fresh,)))
    assert pickle.loads(pickle.dumps(fresh)) == fresh


def test_the_receipt_key_is_not_in_the_repr() -> None:
    assert 'receipt' not in repr(AskUser(answerer=Recording(_pick_first()), receipt_key=KEY))


async def test_a_recommendation_that_is_not_an_option_gets_a_retry() -> None:
    answerer = Recording(_pick_first())
    _, model, _ = await _run(
        AskUser(answerer=answerer, recommended_options=True),
        [ask_call(question('Database', recommended='MongoDB'))],
        [ask_call(question('Database', recommended='SQLite'))],
    )
    (retry,) = model.returns(1)
    assert retry.outcome == 'retried'
    assert "recommended 'MongoDB' is not the label of one of its options" in retry.model_response_str()
    assert answerer.requests[0].questions[0].recommended == 'SQLite'


def test_a_recommended_label_is_checked_like_a_label() -> None:
    options = (QuestionOption(label='A'), QuestionOption(label='B'))
    with pytest.raises(ValueError, match='one line of plain text'):
        Question(header='H', question='Q?', options=options, recommended='A\x1b')
    assert Question(header='H', question='Q?', options=options, recommended='  B ').recommended == 'B'


def test_questions_json_has_recommended_only_when_set() -> None:
    options = (QuestionOption(label='A'), QuestionOption(label='B'))
    plain = AskUserRequest(questions=(Question(header='H', question='Q?', options=options),))
    assert 'recommended' not in questions_to_json(plain)[0]
    marked = AskUserRequest(questions=(Question(header='H', question='Q?', options=options, recommended='B'),))
    assert questions_to_json(marked)[0]['recommended'] == 'B'
    rebuilt = AskUserRequest.from_tool_args({'questions': questions_to_json(marked)})
    assert rebuilt.questions == marked.questions


# Who answered, receipts


async def test_who_answered_is_in_the_answered_event_and_never_in_what_the_model_gets() -> None:
    answerer = Recording(_pick_first(answered_by='alice@laptop'))
    _, model, watch = await _run(AskUser(answerer=answerer), [ask_call(question('Database'))])
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.answered_by == 'alice@laptop'
    assert answered.receipt is None
    (returned,) = model.returns()
    assert returned.content == {'Database': ['PostgreSQL']}


@pytest.mark.parametrize(
    ('who', 'problem'),
    [
        ('', 'must be a non-blank string'),
        ('  ', 'must be a non-blank'),
        ('a\nb', 'control or format'),
        ('x' * 201, '201'),
        ('a' + '\u0301' * 150, 'stacks 150 combining marks'),
    ],
)
def test_who_answered_is_one_drawable_line(who: str, problem: str) -> None:
    assert problem in (check_answered_by(who) or '')
    request = AskUserRequest(questions=(make_question(),))
    with pytest.raises(ValueError, match='the response says who answered, but'):
        check_response(request, AskUserResponse(cancelled=True, answered_by=who))


async def test_with_a_receipt_key_the_answered_event_carries_a_receipt_that_verifies() -> None:
    answerer = Recording(_pick_first(answered_by='alice@web'))
    _, _, watch = await _run(AskUser(answerer=answerer, receipt_key=KEY), [ask_call(question('Database'))])
    requested, answered = watch.events
    assert isinstance(requested, AskUserRequestedEvent)
    assert isinstance(answered, AskUserAnsweredEvent)
    receipt = answered.receipt
    assert receipt is not None
    assert receipt.answered_by == 'alice@web'
    assert receipt.request_id == requested.request.id
    verify_receipt(receipt, requested.request, answered.response, KEY)
    with pytest.raises(SignatureError):
        verify_receipt(receipt, requested.request, AskUserResponse(cancelled=True, answered_by='alice@web'), KEY)


async def test_no_receipt_when_the_answerer_cannot_tell_who_answered() -> None:
    _, _, watch = await _run(AskUser(answerer=Recording(_pick_first()), receipt_key=KEY), [ask_call(question())])
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.receipt is None


def test_a_receipt_key_too_short_is_refused_when_the_capability_is_made() -> None:
    with pytest.raises(UserError, match=r'AskUser\(receipt_key=...\)'):
        AskUser(answerer=Recording(_pick_first()), receipt_key=b'short')
    with pytest.raises(UserError, match=r'AskUser\(notes=...\) must be True or False'):
        AskUser(answerer=Recording(_pick_first()), notes='yes')  # type: ignore[arg-type]


def test_sign_receipt_takes_who_answered_from_the_response_or_refuses() -> None:
    request = AskUserRequest(questions=(make_question(),))
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),), answered_by='bob')
    assert sign_receipt(request, response, key=KEY).answered_by == 'bob'
    anonymous = AskUserResponse(answers=response.answers)
    assert sign_receipt(request, anonymous, key=KEY, answered_by='carol').answered_by == 'carol'
    with pytest.raises(ValueError, match="contradicts the response, which says 'bob' answered"):
        sign_receipt(request, response, key=KEY, answered_by='carol')
    with pytest.raises(ValueError, match='needs to know who answered'):
        sign_receipt(request, AskUserResponse(answers=response.answers), key=KEY)


async def test_deferred_answer_puts_who_answered_in_the_deferred_results() -> None:
    model = script([ask_call(question('Database'), call_id='call_7')])
    agent = Agent(
        model.model, capabilities=[AskUser(answerer=None, notes=True)], output_type=[str, DeferredToolRequests]
    )
    first = await agent.run('go')
    assert isinstance(first.output, DeferredToolRequests)
    (call,) = first.output.calls
    request = AskUserRequest.from_tool_call(call, notes=True)
    response = AskUserResponse(
        answers=(AskUserAnswer(header='Database', selected=('SQLite',), note='tiny'),), answered_by='dana@host'
    )
    results = deferred_answer(request, response)
    assert results.answered_by == {'call_7': 'dana@host'}
    assert results.calls == {'call_7': {'Database': {'answer': ['SQLite'], 'note': 'tiny'}}}
    second = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)
    assert second.output == 'done'
    (returned,) = model.returns()
    assert returned.content == {'Database': {'answer': ['SQLite'], 'note': 'tiny'}}
    assert deferred_answer(request, AskUserResponse(cancelled=True)).answered_by == {}


# The deadline


async def test_the_request_carries_the_deadline_of_the_timeout() -> None:
    answerer = Recording(_pick_first())
    before = time.time()
    _, _, watch = await _run(AskUser(answerer=answerer, timeout=300), [ask_call(question())])
    (request,) = answerer.requests
    assert request.deadline is not None
    assert before + 300 <= request.deadline <= time.time() + 300
    requested = watch.events[0]
    assert isinstance(requested, AskUserRequestedEvent)
    assert requested.deadline == request.deadline
    assert requested.request == AskUserRequest(questions=request.questions, id=request.id)  # not part of equality


async def test_no_deadline_without_a_timeout() -> None:
    answerer = Recording(_pick_first())
    await _run(AskUser(answerer=answerer), [ask_call(question())])
    assert answerer.requests[0].deadline is None
    with pytest.raises(TypeError, match=r'deadline must be a time\.time'):
        AskUserRequest(questions=(make_question(),), deadline='soon')  # type: ignore[arg-type]
    for unshowable in (float('nan'), float('inf'), -1e13, 1e12, LATEST_DEADLINE + 1):
        with pytest.raises(TypeError, match=r'deadline must be a time\.time\(\) timestamp up to the year 9999'):
            AskUserRequest(questions=(make_question(),), deadline=unshowable)
    assert AskUserRequest(questions=(make_question(),), deadline=LATEST_DEADLINE).deadline == LATEST_DEADLINE
    with pytest.raises(UserError, match=r'up to 3\.16\d*e\+08 \(ten years\)'):
        AskUser(answerer=Recording(_pick_first()), timeout=1e12)
    assert AskUser(answerer=Recording(_pick_first()), timeout=MAX_TIMEOUT).timeout == MAX_TIMEOUT
    with pytest.raises(TypeError, match='notes must be a bool'):
        AskUserRequest.from_tool_args({'questions': [question()]}, notes=1)  # type: ignore[arg-type]


def test_model_request_is_still_the_instructions_and_the_tool() -> None:
    # The options never add instructions: only the description of the tool changes.
    seen: list[str | None] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(m.instructions for m in messages if isinstance(m, ModelRequest))
        return ModelResponse(parts=[TextPart('done')])

    for capability in (
        AskUser(answerer=Recording(_pick_first())),
        AskUser(answerer=Recording(_pick_first()), notes=True, recommended_options=True, receipt_key=KEY),
    ):
        Agent(FunctionModel(model), capabilities=[capability]).run_sync('go')
    assert seen[0] == seen[1]
