"""The tool the model sees with every option off, pinned: an extension that changes it must be opt-in."""

from __future__ import annotations

from typing import Any

from inline_snapshot import snapshot
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import DECLINED, TIMED_OUT, TOOL_NAME, AskUser
from pydantic_ai_ask_user.testing import ScriptedAnswerer


def _what_the_model_sees(capability: AskUser[None]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (tool,) = [t for t in info.function_tools if t.name == TOOL_NAME]
        seen['description'] = tool.description
        seen['parameters'] = tool.parameters_json_schema
        seen['instructions'] = [m.instructions for m in messages if isinstance(m, ModelRequest)][-1]
        return ModelResponse(parts=[TextPart('done')])

    Agent(FunctionModel(model), capabilities=[capability]).run_sync('go')
    return seen


def test_the_default_tool_the_model_sees_is_unchanged() -> None:
    assert _what_the_model_sees(AskUser(answerer=ScriptedAnswerer())) == snapshot(
        {
            'description': 'Ask the user 1 to 10 multiple-choice questions and wait for the answers. Each question has a short unique header (at most 25 characters), the question text, 2 to 6 options with unique labels and an optional description, and multi_select when more than one option may be picked. The result maps each header to the list of labels picked, or to a one-item list holding the answer the user typed instead.',
            'parameters': {
                '$defs': {
                    'Question': {
                        'additionalProperties': False,
                        'description': 'One multiple-choice question.',
                        'properties': {
                            'header': {
                                'description': 'A short title, 1-25 characters, one line, unique in the call; the answer is keyed by it.',
                                'maxLength': 25,
                                'minLength': 1,
                                'type': 'string',
                            },
                            'question': {
                                'description': 'The full question, 1-500 characters; may span lines.',
                                'maxLength': 500,
                                'minLength': 1,
                                'type': 'string',
                            },
                            'options': {
                                'description': '2-6 concrete choices with unique labels.',
                                'items': {'$ref': '#/$defs/QuestionOption'},
                                'maxItems': 6,
                                'minItems': 2,
                                'type': 'array',
                            },
                            'multi_select': {
                                'default': False,
                                'description': 'True when the user may pick more than one option.',
                                'type': 'boolean',
                            },
                        },
                        'required': ['header', 'question', 'options'],
                        'title': 'Question',
                        'type': 'object',
                    },
                    'QuestionOption': {
                        'additionalProperties': False,
                        'description': 'One choice the user can pick.',
                        'properties': {
                            'label': {
                                'description': 'What the user picks: 1-50 characters, one line, unique within the question.',
                                'maxLength': 50,
                                'minLength': 1,
                                'type': 'string',
                            },
                            'description': {
                                'anyOf': [
                                    {'maxLength': 200, 'type': 'string'},
                                    {'type': 'null'},
                                ],
                                'default': None,
                                'description': 'Optional detail shown under the label: at most 200 characters.',
                            },
                        },
                        'required': ['label'],
                        'title': 'QuestionOption',
                        'type': 'object',
                    },
                },
                'additionalProperties': False,
                'properties': {
                    'questions': {
                        'items': {'$ref': '#/$defs/Question'},
                        'maxItems': 10,
                        'minItems': 1,
                        'type': 'array',
                    }
                },
                'required': ['questions'],
                'type': 'object',
            },
            'instructions': 'You can put multiple-choice questions to the user with the `ask_user_question` tool. Use it when the task is ambiguous in a way that changes what you would do and the answer is not in the conversation, the workspace or the tools you have; do not ask what you can find out yourself. Offer concrete options the user can pick from rather than open questions, and put related questions into one call instead of asking them one after another. If the user declines or does not answer in time, make a reasonable choice yourself and say which.',
        }
    )


def test_what_the_model_reads_when_nobody_answers_is_unchanged() -> None:
    results = {'timed_out': TIMED_OUT, 'declined': DECLINED}
    assert results == snapshot(
        {
            'timed_out': 'The user did not answer in time. Make a reasonable choice yourself, say which choice you made and why, and continue.',
            'declined': 'The user declined to answer. Continue without the answer, or ask differently if it is essential.',
        }
    )


def test_a_timeout_with_the_default_policy_leaves_the_tool_unchanged() -> None:
    # Only a policy that changes what the model gets back adds to the description.
    plain = _what_the_model_sees(AskUser(answerer=ScriptedAnswerer()))
    assert _what_the_model_sees(AskUser(answerer=ScriptedAnswerer(), timeout=60)) == plain
    assert _what_the_model_sees(AskUser(answerer=ScriptedAnswerer(), timeout=60, on_timeout='tell')) == plain
    assert _what_the_model_sees(AskUser(answerer=ScriptedAnswerer(), timeout=60, on_timeout='fail')) == plain
    assert _what_the_model_sees(AskUser(answerer=None)) == plain
