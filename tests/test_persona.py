"""`PersonaAnswerer`: a model playing a persona answers, checked with `check_response`, retried on a misfit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ask_user_support import Watch
from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior, UserError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import AskUser, AskUserAnswer, AskUserAnsweredEvent, AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.testing import PersonaAnswerer, asking_model
from pydantic_ai_ask_user.testing._persona import PERSONA_NOTES_INSTRUCTIONS, PERSONA_RECOMMENDED_INSTRUCTIONS

pytestmark = pytest.mark.anyio

PERSONA = 'a cautious SRE who never deploys on Fridays'

REQUEST = AskUserRequest.from_tool_args(
    {
        'questions': [
            {
                'header': 'Day',
                'question': 'When should it ship?',
                'options': [{'label': 'Friday'}, {'label': 'Monday'}],
            },
            {
                'header': 'Checks',
                'question': 'Which checks first?',
                'options': [{'label': 'Canary'}, {'label': 'Load test'}, {'label': 'None'}],
                'multi_select': True,
            },
        ]
    },
    id='call-1',
)


class PersonaModel:
    """A `FunctionModel` playing the persona: one scripted reply (the output tool's arguments) per request."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[list[ModelMessage], AgentInfo]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append((list(messages), info))
        (tool,) = info.output_tools
        return ModelResponse(parts=[ToolCallPart(tool.name, self.replies.pop(0))])

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self)

    def retries_told(self) -> list[str]:
        return [
            str(part.content)
            for messages, _ in self.seen
            for message in messages[-1:]
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart) and part.outcome == 'retried'
        ]


FITS = {
    'answers': [{'header': 'Day', 'selected': ['Monday']}, {'header': 'Checks', 'selected': ['Canary', 'Load test']}]
}


async def test_the_persona_answers_and_the_model_is_told_who_it_is_and_what_was_asked() -> None:
    persona = PersonaModel(FITS)
    answerer = PersonaAnswerer(persona.model, persona=PERSONA)
    response = await answerer(REQUEST)
    assert response == AskUserResponse(
        answers=(
            AskUserAnswer(header='Day', selected=('Monday',)),
            AskUserAnswer(header='Checks', selected=('Canary', 'Load test')),
        ),
        answered_by='persona',
    )
    assert answerer.requests == [REQUEST]
    assert answerer.responses == [response]
    ((messages, info),) = persona.seen
    assert PERSONA in (info.instructions or '')
    prompt = next(p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart))
    asked = json.loads(str(prompt.content).split('\n', 1)[1])
    assert [q['header'] for q in asked['questions']] == ['Day', 'Checks']
    assert asked['questions'][1]['multi_select'] is True
    # Without notes, the persona's model is not offered one.
    (output_tool,) = info.output_tools
    answer_schema = output_tool.parameters_json_schema['$defs']['_PersonaAnswer']
    assert 'note' not in answer_schema['properties']
    assert PERSONA_NOTES_INSTRUCTIONS not in (info.instructions or '')


NOTED_REQUEST = AskUserRequest.from_tool_args(
    {
        'questions': [
            {'header': 'Day', 'question': 'When should it ship?', 'options': [{'label': 'Friday'}, {'label': 'Monday'}]}
        ]
    },
    id='call-2',
    notes=True,
)


async def test_with_notes_the_persona_may_add_a_note_to_an_answer() -> None:
    persona = PersonaModel({'answers': [{'header': 'Day', 'selected': ['Monday'], 'note': 'Never on a Friday.'}]})
    answerer = PersonaAnswerer(persona.model, persona=PERSONA, name='cautious-sre')
    response = await answerer(NOTED_REQUEST)
    assert response == AskUserResponse(
        answers=(AskUserAnswer(header='Day', selected=('Monday',), note='Never on a Friday.'),),
        answered_by='persona:cautious-sre',
    )
    ((_, info),) = persona.seen
    assert PERSONA_NOTES_INSTRUCTIONS in (info.instructions or '')
    (output_tool,) = info.output_tools
    assert 'note' in json.dumps(output_tool.parameters_json_schema)


async def test_a_note_that_breaks_the_rules_goes_back_to_the_model() -> None:
    persona = PersonaModel(
        {'answers': [{'header': 'Day', 'selected': ['Monday'], 'note': 'x' * 2001}]},
        {'answers': [{'header': 'Day', 'selected': ['Monday'], 'note': 'Short.'}]},
    )
    response = await PersonaAnswerer(persona.model, persona=PERSONA)(NOTED_REQUEST)
    assert response.answers[0].note == 'Short.'
    (told,) = persona.retries_told()
    assert 'the note is 2001 characters long' in told


async def test_an_agent_with_notes_gets_the_personas_note() -> None:
    day = {'header': 'Day', 'question': 'When should it ship?', 'options': [{'label': 'Friday'}, {'label': 'Monday'}]}
    persona = PersonaModel({'answers': [{'header': 'Day', 'selected': ['Monday'], 'note': 'After the freeze.'}]})
    answerer = PersonaAnswerer(persona.model, persona=PERSONA)
    agent = Agent(asking_model(day), capabilities=[AskUser(answerer=answerer, notes=True)])
    result = await agent.run('Ship the release.')
    assert json.loads(result.output) == {'Day': {'answer': ['Monday'], 'note': 'After the freeze.'}}


@pytest.mark.parametrize('name', ['', 'two\nlines', 'x' * 200])
def test_a_persona_name_must_fit_answered_by(name: str) -> None:
    with pytest.raises(UserError, match=r'PersonaAnswerer\(name=...\) must be a short one-line name'):
        PersonaAnswerer(PersonaModel().model, persona=PERSONA, name=name)


async def test_a_misfit_goes_back_to_the_model_naming_the_problem_and_the_fit_is_used() -> None:
    misfit = {'answers': [{'header': 'Day', 'selected': ['Tuesday']}, {'header': 'Checks', 'selected': ['Canary']}]}
    persona = PersonaModel(misfit, FITS)
    response = await PersonaAnswerer(persona.model, persona=PERSONA)(REQUEST)
    assert response.answers[0].selected == ('Monday',)
    assert len(persona.seen) == 2
    (told,) = persona.retries_told()
    assert "'Tuesday'" in told
    assert 'not one of its options' in told
    assert told.startswith('That answer does not fit the questions: ')


async def test_a_misfit_with_control_characters_is_told_to_the_model_drawn_safely() -> None:
    misfit = {'answers': [{'header': 'Day', 'selected': ['Mon\x1b[2Jday']}, {'header': 'Checks', 'selected': []}]}
    persona = PersonaModel(misfit, FITS)
    await PersonaAnswerer(persona.model, persona=PERSONA)(REQUEST)
    (told,) = persona.retries_told()
    assert '\x1b' not in told  # no escape sequence reaches a terminal showing the transcript
    assert "selects 'Mon" in told


async def test_a_persona_that_never_fits_fails_after_its_retries_and_so_does_the_run_it_answers() -> None:
    misfit = {'answers': [{'header': 'Day', 'selected': ['Friday', 'Monday']}]}  # two picks, one question missing
    persona = PersonaModel(*[misfit] * 3)
    answerer = PersonaAnswerer(persona.model, persona=PERSONA, retries=1)
    watch = Watch()
    day = {'header': 'Day', 'question': 'When?', 'options': [{'label': 'Friday'}, {'label': 'Monday'}]}
    agent = Agent(asking_model(day), capabilities=[AskUser(answerer=answerer), watch])
    with pytest.raises(UnexpectedModelBehavior, match='retries'):
        await agent.run('ship it')
    assert len(persona.seen) == 2  # the first reply and one retry
    answered = watch.events[-1]
    assert isinstance(answered, AskUserAnsweredEvent)
    assert answered.failed is True


async def test_a_persona_may_decline_or_answer_in_its_own_words() -> None:
    persona = PersonaModel(
        {'declined': True},
        {
            'answers': [
                {'header': 'Day', 'custom_answer': 'After the freeze'},
                {'header': 'Checks', 'selected': ['None']},
            ]
        },
    )
    answerer = PersonaAnswerer(persona.model, persona=PERSONA)
    assert await answerer(REQUEST) == AskUserResponse(cancelled=True, answered_by='persona')
    response = await answerer(REQUEST)
    assert response.answers[0] == AskUserAnswer(header='Day', custom_answer='After the freeze')


async def test_an_agent_that_asks_gets_the_personas_answer() -> None:
    day = {'header': 'Day', 'question': 'When should it ship?', 'options': [{'label': 'Friday'}, {'label': 'Monday'}]}
    persona = PersonaModel({'answers': [{'header': 'Day', 'selected': ['Monday']}]})
    agent = Agent(asking_model(day), capabilities=[AskUser(answerer=PersonaAnswerer(persona.model, persona=PERSONA))])
    result = await agent.run('Ship the release.')
    assert json.loads(result.output) == {'Day': ['Monday']}


@pytest.mark.parametrize('persona', ['', '  ', None])
def test_a_persona_must_be_described_in_words(persona: Any) -> None:
    with pytest.raises(UserError, match=r'PersonaAnswerer\(persona=...\) must describe someone in words'):
        PersonaAnswerer(PersonaModel().model, persona=persona)


@pytest.mark.parametrize('retries', [-1, True, 1.5])
def test_retries_must_be_a_count(retries: Any) -> None:
    with pytest.raises(UserError, match=r'PersonaAnswerer\(retries=...\) must be 0 or more'):
        PersonaAnswerer(PersonaModel().model, persona=PERSONA, retries=retries)


def test_the_answerer_says_who_it_plays() -> None:
    assert repr(PersonaAnswerer(PersonaModel().model, persona=PERSONA)) == f'PersonaAnswerer(persona={PERSONA!r})'


async def test_a_recommendation_is_shown_to_the_persona_to_weigh_not_to_follow() -> None:
    day = {'header': 'Day', 'question': 'When?', 'options': [{'label': 'Friday'}, {'label': 'Monday'}]}
    recommending = AskUserRequest.from_tool_args({'questions': [{**day, 'recommended': 'Friday'}]})
    persona = PersonaModel({'answers': [{'header': 'Day', 'selected': ['Monday']}]}, FITS)
    answerer = PersonaAnswerer(persona.model, persona=PERSONA)
    response = await answerer(recommending)
    assert response.answers[0].selected == ('Monday',)  # the persona's pick, not the recommendation
    messages, info = persona.seen[0]
    assert PERSONA_RECOMMENDED_INSTRUCTIONS in (info.instructions or '')
    prompt = next(p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart))
    assert json.loads(str(prompt.content).split('\n', 1)[1])['questions'][0]['recommended'] == 'Friday'
    await answerer(REQUEST)
    assert PERSONA_RECOMMENDED_INSTRUCTIONS not in (persona.seen[1][1].instructions or '')
