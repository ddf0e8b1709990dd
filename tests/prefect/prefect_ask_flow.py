"""A Prefect flow whose agent asks with `PrefectAnswerer`, served by a real Prefect server in the tests.

    python tests/prefect/prefect_ask_flow.py    # serves the deployment `ask-flow/ask` until killed

The model is like a real provider's: every call makes a new, random tool call id. It appends one JSON line per call
to `ASK_USER_MODEL_CALLS`, and the flow one line per finished run to `ASK_USER_FINISHED`, so a test counts both.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from uuid import uuid4

from prefect import flow
from pydantic_ai import Agent
from pydantic_ai.durable_exec.prefect import PrefectDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import TOOL_NAME, AskUser
from pydantic_ai_ask_user.prefect import PrefectAnswerer

QUESTION = {
    'header': 'Database',
    'question': 'Which database?',
    'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
}
DEPLOYMENT = 'ask-flow/ask'


def _log(variable: str, entry: dict[str, object]) -> None:
    with Path(os.environ[variable]).open('a') as file:
        file.write(json.dumps(entry) + '\n')


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if returns:
        [returned] = returns
        _log('ASK_USER_MODEL_CALLS', {'answered': returned.tool_call_id, 'content': returned.content})
        return ModelResponse(parts=[TextPart(f'migrating to {json.dumps(returned.content)}')])
    call_id = f'call_{uuid4().hex}'  # random, as real providers make them
    _log('ASK_USER_MODEL_CALLS', {'asked': call_id})
    return ModelResponse(parts=[ToolCallPart(TOOL_NAME, {'questions': [QUESTION]}, tool_call_id=call_id)])


agent = Agent(
    FunctionModel(model), name='asker', capabilities=[PrefectDurability(), AskUser(answerer=PrefectAnswerer())]
)


async def migrate(task: str) -> str:
    """The run of the agent, in an ordinary function of this module, which the flow calls.

    Prefect's runner cloudpickles the flow into the subprocess that runs it. The function under `@flow` is
    pickled by value (its name in the module is the `Flow`, not the function), and with it every global it
    names: naming `agent` there would pickle the agent, which holds context variables and fails. An ordinary
    function of an importable module is pickled by reference, its globals with it.
    """
    output = (await agent.run(task)).output
    _log('ASK_USER_FINISHED', {'output': output})
    return output


@flow(name='ask-flow', persist_result=True)
async def ask_flow(task: str) -> str:
    return await migrate(task)


if __name__ == '__main__':
    # Served from this module imported by its name, not as `__main__`: Prefect's runner cloudpickles the flow into
    # the run's subprocess, and functions of `__main__` (`migrate`, with the agent it names) are pickled by value.
    sys.path.insert(0, str(Path(__file__).parent))
    from prefect_ask_flow import ask_flow as importable

    importable.serve(name='ask', print_starting_message=False)
