"""The tool's JSON schema, exactly as the model receives it: the text rules' fast paths must not change a byte of it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ask_user_support import script
from inline_snapshot import snapshot
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart
from pydantic_ai.models.function import FunctionModel

from pydantic_ai_ask_user import AskUser

pytestmark = pytest.mark.anyio


async def test_the_model_facing_schema_is_byte_for_byte_the_same() -> None:
    schemas: list[dict[str, Any]] = []

    def record(messages: Any, info: Any) -> Any:
        schemas.extend(tool.parameters_json_schema for tool in info.function_tools)
        return script([TextPart('ok')])._respond(messages, info)  # pyright: ignore[reportPrivateUsage]

    await Agent(FunctionModel(record), capabilities=[AskUser(answerer=None)]).run('hello')
    (schema,) = schemas
    assert json.dumps(schema, indent=1) == snapshot("""\
{
 "$defs": {
  "Question": {
   "additionalProperties": false,
   "description": "One multiple-choice question.",
   "properties": {
    "header": {
     "description": "A short title, 1-25 characters, one line, unique in the call; the answer is keyed by it.",
     "maxLength": 25,
     "minLength": 1,
     "type": "string"
    },
    "question": {
     "description": "The full question, 1-500 characters; may span lines.",
     "maxLength": 500,
     "minLength": 1,
     "type": "string"
    },
    "options": {
     "description": "2-6 concrete choices with unique labels.",
     "items": {
      "$ref": "#/$defs/QuestionOption"
     },
     "maxItems": 6,
     "minItems": 2,
     "type": "array"
    },
    "multi_select": {
     "default": false,
     "description": "True when the user may pick more than one option.",
     "type": "boolean"
    }
   },
   "required": [
    "header",
    "question",
    "options"
   ],
   "title": "Question",
   "type": "object"
  },
  "QuestionOption": {
   "additionalProperties": false,
   "description": "One choice the user can pick.",
   "properties": {
    "label": {
     "description": "What the user picks: 1-50 characters, one line, unique within the question.",
     "maxLength": 50,
     "minLength": 1,
     "type": "string"
    },
    "description": {
     "anyOf": [
      {
       "maxLength": 200,
       "type": "string"
      },
      {
       "type": "null"
      }
     ],
     "default": null,
     "description": "Optional detail shown under the label: at most 200 characters."
    }
   },
   "required": [
    "label"
   ],
   "title": "QuestionOption",
   "type": "object"
  }
 },
 "additionalProperties": false,
 "properties": {
  "questions": {
   "items": {
    "$ref": "#/$defs/Question"
   },
   "maxItems": 10,
   "minItems": 1,
   "type": "array"
  }
 },
 "required": [
  "questions"
 ],
 "type": "object"
}\
""")
