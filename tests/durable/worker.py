"""A worker process for the durable tests: runs DBOS-durable agents that ask one question each.

    python tests/durable/worker.py --db URL --calls FILE --out FILE [--runs N] [--timeout S] [--resume]

The model is a `FunctionModel` that appends one line per call to `--calls` ("ask RUN" before the
question, "final RUN" after it), so a test can tell whether a call was repeated after a restart.
Each finished run appends `{"run": RUN, "output": ...}` to `--out`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from dbos import DBOS, SetWorkflowID
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import TOOL_NAME, AskUser
from pydantic_ai_ask_user.durable import DBOSAnswerer, dbos_config

APPLICATION_VERSION = 'ask-user-tests-1'
"""Fixed, so a restarted worker recovers the workflows of the one it replaces."""

QUESTIONS = {
    'questions': [
        {
            'header': 'Database',
            'question': 'Which database should the migration target?',
            'options': [{'label': 'PostgreSQL'}, {'label': 'SQLite'}],
        }
    ]
}
"""What every run asks."""


def _append(path: str, line: str) -> None:
    with open(path, 'a', encoding='utf-8') as handle:
        handle.write(line + '\n')
        handle.flush()
        os.fsync(handle.fileno())


def build_agent(database_url: str, calls_file: str, timeout: float | None) -> Agent[None, str]:
    """The agent: asks once, then reports the tool result it got."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(
            str(part.content) for message in messages for part in message.parts if isinstance(part, UserPromptPart)
        )
        returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
        if not returns:
            _append(calls_file, f'ask {prompt}')
            return ModelResponse(parts=[ToolCallPart(TOOL_NAME, QUESTIONS)])
        _append(calls_file, f'final {prompt}')
        content = returns[-1].content
        return ModelResponse(parts=[TextPart(json.dumps(content) if not isinstance(content, str) else content)])

    answerer = DBOSAnswerer(database_url, recheck_seconds=600)
    return Agent(
        FunctionModel(model),
        name='durable_test_agent',
        capabilities=[DBOSDurability(), AskUser(answerer=answerer, timeout=timeout)],
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--db', required=True)
    parser.add_argument('--calls', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--runs', type=int, default=1)
    parser.add_argument('--prefix', default='run')
    parser.add_argument('--timeout', type=float, default=None)
    parser.add_argument('--resume', action='store_true', help='only wait for the runs recovered at launch')
    args = parser.parse_args()

    agent = build_agent(args.db, args.calls, args.timeout)

    @DBOS.workflow(name='durable_test.run')
    async def run(prompt: str) -> str:
        return (await agent.run(prompt)).output

    DBOS(config=dbos_config(args.db, name='ask-user-tests', application_version=APPLICATION_VERSION))
    DBOS.launch()

    async def go() -> None:
        names = [f'{args.prefix}-{index}' for index in range(args.runs)]

        async def one(name: str) -> None:
            if args.resume:
                handle = await DBOS.retrieve_workflow_async(name)
            else:
                with SetWorkflowID(name):
                    handle = await DBOS.start_workflow_async(run, name)
            output = await handle.get_result()
            _append(args.out, json.dumps({'run': name, 'output': output}))

        await asyncio.gather(*(one(name) for name in names))

    try:
        asyncio.run(go())
    finally:
        DBOS.destroy(workflow_completion_timeout_sec=0)
    return 0


if __name__ == '__main__':
    sys.exit(main())
