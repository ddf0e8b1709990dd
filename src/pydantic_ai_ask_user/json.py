"""The JSON of questions and answers: what `ask-user` prints and reads, what UI clients send back.

`response_to_json` is byte for byte what the model gets; `read_response` reads every shape a client may send
(the response itself, or the model's `{"HEADER": ["LABEL"]}`) and checks it against the request.
"""

from __future__ import annotations

from ._json import RESPONSE_JSON_SCHEMA, read_response, response_from_json, response_to_json
from ._plain_questions import questions_to_json

__all__ = (
    'questions_to_json',
    'response_from_json',
    'response_to_json',
    'read_response',
    'RESPONSE_JSON_SCHEMA',
)
