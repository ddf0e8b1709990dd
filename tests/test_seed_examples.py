"""The seed's two examples, and a deferred program written against the reference's exports, with only their import
lines changed to `pydantic_ai_ask_user`, run for real."""

from __future__ import annotations

from typing import Any

import pytest
from ask_user_support import ask_call, question, script

pytestmark = pytest.mark.anyio

SEED_AGENT_EXAMPLE = """\
from pydantic_ai import Agent
from pydantic_ai_harness import AskUser
from pydantic_ai_harness.ask_user import AskUserAnswer, AskUserRequest, AskUserResponse


async def pick_first(request: AskUserRequest) -> AskUserResponse:
    answers = [AskUserAnswer(header=q.header, selected=(q.options[0].label,)) for q in request.questions]
    return AskUserResponse(answers=tuple(answers))


agent = Agent('anthropic:claude-fable-5', capabilities=[AskUser(answerer=pick_first)])
"""

SEED_WAIT_INDICATOR_EXAMPLE = """\
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, on_event

from pydantic_ai_harness.ask_user import AskUserAnsweredEvent, AskUserRequestedEvent


class WaitIndicator(AbstractCapability[None]):
    @on_event(AskUserRequestedEvent)
    async def waiting(self, ctx: RunContext[None], event: AskUserRequestedEvent) -> None:
        print(f'waiting on {len(event.request.questions)} question(s)')

    @on_event(AskUserAnsweredEvent)
    async def done(self, ctx: RunContext[None], event: AskUserAnsweredEvent) -> None:
        print('declined' if event.response.cancelled else 'answered')
"""

REFERENCE_DEFERRED_PROGRAM = """\
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai_harness import AskUser
from pydantic_ai_harness.ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, ask_user_result


def answer_later(agent: Agent, prompt: str) -> str:
    paused = agent.run_sync(prompt)
    assert isinstance(paused.output, DeferredToolRequests)
    results = DeferredToolResults()
    for call in paused.output.calls:
        request = AskUserRequest.from_tool_call(call)
        answers = [AskUserAnswer(header=q.header, selected=(q.options[-1].label,)) for q in request.questions]
        results.calls[call.tool_call_id] = ask_user_result(request, AskUserResponse(answers=tuple(answers)))
    return agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results).output


agent = Agent('anthropic:claude-fable-5', capabilities=[AskUser(answerer=None)], output_type=[str, DeferredToolRequests])
"""
"""Not from the seed: a program that answers deferred calls with the names the reference's `ask_user` module exports,
`ask_user_result` among them (issue 32)."""


def _ported(code: str) -> str:
    """The seed's code with `pydantic_ai_harness` / `pydantic_ai_harness.ask_user` imports pointed at us."""
    return code.replace('from pydantic_ai_harness.ask_user import', 'from pydantic_ai_ask_user import').replace(
        'from pydantic_ai_harness import', 'from pydantic_ai_ask_user import'
    )


def _run(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {'__name__': 'seed_example'}
    exec(compile(code, 'seed_example.py', 'exec'), namespace)
    return namespace


@pytest.mark.parametrize(
    'code',
    [SEED_AGENT_EXAMPLE, SEED_WAIT_INDICATOR_EXAMPLE, REFERENCE_DEFERRED_PROGRAM],
    ids=['agent', 'wait_indicator', 'deferred'],
)
def test_porting_a_seed_example_changes_only_its_import_lines(code: str) -> None:
    before, after = code.splitlines(), _ported(code).splitlines()
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    assert changed
    assert all(
        old.startswith('from pydantic_ai_harness') and new.startswith('from pydantic_ai_ask_user ')
        for old, new in changed
    )


@pytest.fixture
def dummy_anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # `Agent('anthropic:...')` builds its provider at construction and wants a key; nothing is ever sent.
    monkeypatch.setenv('ANTHROPIC_API_KEY', 'sk-ant-dummy-for-construction-only')


@pytest.mark.usefixtures('dummy_anthropic_key')
async def test_the_seed_agent_example_runs_and_its_answerer_picks_every_first_option() -> None:
    seed = _run(_ported(SEED_AGENT_EXAMPLE))
    model = script([ask_call(question('Database', 'PostgreSQL', 'SQLite'), question('Envs', 'dev', 'prod'))])
    with seed['agent'].override(model=model.model):
        result = await seed['agent'].run('Add a shipped_at column.')
    assert result.output == 'done'
    (part,) = model.returns()
    assert part.content == {'Database': ['PostgreSQL'], 'Envs': ['dev']}


@pytest.mark.usefixtures('dummy_anthropic_key')
async def test_the_seed_wait_indicator_prints_while_the_seed_agent_waits(capsys: pytest.CaptureFixture[str]) -> None:
    seed = _run(_ported(SEED_AGENT_EXAMPLE))
    indicator = _run(_ported(SEED_WAIT_INDICATOR_EXAMPLE))
    model = script([ask_call(question('Database'))], [ask_call(question('A'), question('B'))])
    with seed['agent'].override(model=model.model):
        await seed['agent'].run('Add a shipped_at column.', capabilities=[indicator['WaitIndicator']()])
    assert capsys.readouterr().out == 'waiting on 1 question(s)\nanswered\nwaiting on 2 question(s)\nanswered\n'


@pytest.mark.usefixtures('dummy_anthropic_key')
async def test_the_seed_wait_indicator_reports_a_declined_request(capsys: pytest.CaptureFixture[str]) -> None:
    from pydantic_ai import Agent

    from pydantic_ai_ask_user import AskUser
    from pydantic_ai_ask_user.testing import DECLINE, ScriptedAnswerer

    indicator = _run(_ported(SEED_WAIT_INDICATOR_EXAMPLE))
    model = script([ask_call(question('Database'))])
    agent = Agent(model.model, capabilities=[AskUser(answerer=ScriptedAnswerer(DECLINE)), indicator['WaitIndicator']()])
    await agent.run('Add a shipped_at column.')
    assert capsys.readouterr().out == 'waiting on 1 question(s)\ndeclined\n'


@pytest.mark.usefixtures('dummy_anthropic_key')
@pytest.mark.filterwarnings('error')
def test_a_deferred_program_written_for_the_reference_runs_with_only_its_imports_changed() -> None:
    program = _run(_ported(REFERENCE_DEFERRED_PROGRAM))
    model = script([ask_call(question('Database', 'PostgreSQL', 'SQLite'))])
    with program['agent'].override(model=model.model):
        assert program['answer_later'](program['agent'], 'Add a shipped_at column.') == 'done'
    (part,) = model.returns()
    assert part.content == {'Database': ['SQLite']}
