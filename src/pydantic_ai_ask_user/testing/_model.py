"""`asking_model`: a scripted model for tests of agents that ask, where `TestModel` cannot be used.

Pydantic AI's `TestModel` calls every tool with arguments generated from its JSON schema. For
`ask_user_question` those are two options both labelled `'a'`, which the schema's uniqueness rule
refuses, so the run ends in "exceeded max retries". `asking_model` sends a valid call instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from .._answers import TOOL_NAME, AskUserRequest
from .._questions import Question

__all__ = ('asking_model', 'DEFAULT_QUESTION')

DEFAULT_QUESTION: Final[Mapping[str, Any]] = {
    'header': 'Choice',
    'question': 'Which option should I use?',
    'options': [{'label': 'A'}, {'label': 'B'}],
}
"""The question `asking_model()` asks when it is given none: one single-select question, options `A` and `B`."""


def _as_arguments(question: Mapping[str, Any] | Question) -> dict[str, Any]:
    if isinstance(question, Question):
        return question.model_dump(mode='json', exclude_none=True)
    return dict(question)


def asking_model(*questions: Mapping[str, Any] | Question, model_name: str = 'asking-model') -> FunctionModel:
    """A `FunctionModel` that asks `questions` in one `ask_user_question` call, then replies with what it got back.

    Each question is the tool's own argument shape (a dict with `header`, `question`, `options`,
    optionally `multi_select`) or a `Question`; with none it asks `DEFAULT_QUESTION`. They are
    validated here, with the tool's rules, so a question the tool would refuse fails the test at
    once instead of as a retry. The final text is exactly the tool's result as the model saw it: the
    JSON object of answers, or the `DECLINED` or `TIMED_OUT` sentence. If the tool refused the call
    anyway, the final text is the refusal. Streams too, so `run_stream` and event stream handlers work.
    """
    arguments: dict[str, Any] = {'questions': [_as_arguments(q) for q in questions] or [dict(DEFAULT_QUESTION)]}
    AskUserRequest.from_tool_args(arguments)  # the tool's own rules, raising a ValidationError naming the problem

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return _turn(messages, arguments)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for index, part in enumerate(_turn(messages, arguments).parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                delta = DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str())
                yield {index: delta}

    return FunctionModel(respond, stream_function=stream, model_name=model_name)


def _turn(messages: list[ModelMessage], arguments: dict[str, Any]) -> ModelResponse:
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == TOOL_NAME:
                return ModelResponse(parts=[TextPart(part.model_response_str())])
    return ModelResponse(parts=[ToolCallPart(TOOL_NAME, arguments)])
