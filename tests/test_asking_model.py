"""`asking_model`: what to test agents that ask with, since `TestModel`'s generated arguments break the schema."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from pydantic_ai_ask_user import (
    DECLINED,
    AskUser,
    AskUserAnswer,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    Question,
    QuestionOption,
)
from pydantic_ai_ask_user.deferred import ask_user_result
from pydantic_ai_ask_user.testing import DECLINE, DEFAULT_QUESTION, ScriptedAnswerer, asking_model

pytestmark = pytest.mark.anyio

DATABASE = {'header': 'Database', 'question': 'Which one?', 'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}]}


def test_test_model_cannot_ask_because_its_generated_labels_are_the_same() -> None:
    # Why the helper exists: TestModel fills the schema with 'a' everywhere, so both options are labelled 'a'.
    answerer = ScriptedAnswerer(default=0)
    agent = Agent(TestModel(), capabilities=[AskUser(answerer=answerer)])
    with pytest.raises(UnexpectedModelBehavior, match='exceeded max retries'):
        agent.run_sync('Go.')
    assert answerer.requests == []


def test_the_asking_model_asks_the_default_question_and_replies_with_the_tool_result() -> None:
    answerer = ScriptedAnswerer({'Choice': 'B'})
    agent = Agent(asking_model(), capabilities=[AskUser(answerer=answerer)])
    assert agent.run_sync('Go.').output == '{"Choice":["B"]}'
    (request,) = answerer.requests
    assert request == AskUserRequest.from_tool_args({'questions': [DEFAULT_QUESTION]}, id=request.id)


def test_the_asking_model_asks_the_questions_it_is_given_in_one_call() -> None:
    environments = Question(
        header='Environments',
        question='Where?',
        options=(QuestionOption(label='dev', description='Sandboxes.'), QuestionOption(label='staging')),
        multi_select=True,
    )
    answerer = ScriptedAnswerer({'Database': 'SQLite', 'Environments': ['dev', 'staging']})
    agent = Agent(asking_model(DATABASE, environments), capabilities=[AskUser(answerer=answerer)])
    assert agent.run_sync('Go.').output == '{"Database":["SQLite"],"Environments":["dev","staging"]}'
    (request,) = answerer.requests
    assert request.questions[1] == environments


def test_a_declined_question_gives_the_declined_sentence_as_the_output() -> None:
    agent = Agent(asking_model(DATABASE), capabilities=[AskUser(answerer=ScriptedAnswerer(DECLINE))])
    assert agent.run_sync('Go.').output == DECLINED


def test_a_question_the_tool_would_refuse_fails_when_the_model_is_built() -> None:
    same_labels = {'header': 'Pick', 'question': 'Which?', 'options': [{'label': 'a'}, {'label': 'A'}]}
    with pytest.raises(ValidationError, match="option label 'A' is the same as 'a'"):
        asking_model(same_labels)


async def test_the_asking_model_streams_so_event_stream_handlers_see_the_call() -> None:
    seen: list[AskUserRequestedEvent] = []
    agent = Agent(asking_model(DATABASE), capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))])
    async with agent.run_stream_events('Go.') as events:
        async for event in events:
            if isinstance(event, AskUserRequestedEvent):
                seen.append(event)
    assert [event.request.questions[0].header for event in seen] == ['Database']
    async with agent.run_stream('Go.') as streamed:
        assert await streamed.get_output() == '{"Database":["PostgreSQL"]}'


def test_the_asking_model_works_in_deferred_mode() -> None:
    capabilities = [AskUser(answerer=None)]
    agent = Agent(asking_model(DATABASE), capabilities=capabilities, output_type=[str, DeferredToolRequests])
    paused = agent.run_sync('Go.')
    assert isinstance(paused.output, DeferredToolRequests)
    (call,) = paused.output.calls
    request = AskUserRequest.from_tool_call(call)
    response = AskUserResponse(answers=(AskUserAnswer(header='Database', custom_answer='DuckDB'),))
    results = DeferredToolResults(calls={request.id: ask_user_result(request, response)})
    resumed = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert resumed.output == '{"Database":["DuckDB"]}'


def test_a_call_the_tool_refuses_ends_the_run_with_the_refusal() -> None:
    # Only a schema changed after the model was built can refuse its call; the run must still end, saying why.
    function = asking_model(DATABASE).function
    assert function is not None

    def with_a_repeated_label(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        response = function(messages, info)
        assert isinstance(response, ModelResponse)
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                part.args = {'questions': [{**DATABASE, 'options': [{'label': 'a'}, {'label': 'a'}]}]}
        return response

    agent = Agent(FunctionModel(with_a_repeated_label), capabilities=[AskUser(answerer=ScriptedAnswerer(default=0))])
    assert "option label 'a' is repeated" in agent.run_sync('Go.').output
