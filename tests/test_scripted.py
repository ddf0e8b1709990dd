"""`ScriptedAnswerer`, and the conformance kit run against a small queue-based answerer."""

from __future__ import annotations

import html
import time
from dataclasses import replace
from typing import Any

import anyio
import pytest
from ask_user_support import make_question

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question
from pydantic_ai_ask_user.testing import (
    CONFORMANCE_SCENARIOS,
    DECLINE,
    ConformanceScenario,
    Custom,
    ScriptedAnswerer,
    WithNote,
    run_conformance,
)

pytestmark = pytest.mark.anyio


def _request(*questions: Question) -> AskUserRequest:
    return AskUserRequest(questions=questions)


DB = make_question('Database', 'PostgreSQL', 'SQLite', 'MySQL')
ENVS = make_question('Envs', 'dev', 'staging', 'prod', multi_select=True)


async def test_a_script_picks_labels_by_name() -> None:
    response = await ScriptedAnswerer({'Database': 'SQLite', 'Envs': ['dev', 'prod']})(_request(DB, ENVS))
    assert response == AskUserResponse(
        answers=(
            AskUserAnswer(header='Database', selected=('SQLite',)),
            AskUserAnswer(header='Envs', selected=('dev', 'prod')),
        )
    )


async def test_a_script_picks_labels_by_zero_based_index_and_may_mix_both() -> None:
    response = await ScriptedAnswerer({'Database': 2, 'Envs': [0, 'staging']})(_request(DB, ENVS))
    assert [answer.selected for answer in response.answers] == [('MySQL',), ('dev', 'staging')]


async def test_an_index_out_of_range_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="the script picks option 3 of 'Database', which has 3"):
        await ScriptedAnswerer({'Database': 3})(_request(DB))


async def test_a_custom_reply_gives_a_custom_answer() -> None:
    response = await ScriptedAnswerer({'Database': Custom('CockroachDB')})(_request(DB))
    assert response.answers == (AskUserAnswer(header='Database', custom_answer='CockroachDB'),)


async def test_decline_gives_a_cancelled_response() -> None:
    assert await ScriptedAnswerer(DECLINE)(_request(DB)) == AskUserResponse(cancelled=True)
    assert repr(DECLINE) == 'DECLINE'


async def test_a_ready_response_is_returned_as_it_is() -> None:
    ready = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('MySQL',)),))
    assert await ScriptedAnswerer(ready)(_request(DB)) is ready


async def test_a_function_reply_is_called_with_the_request() -> None:
    def respond(request: AskUserRequest) -> AskUserResponse:
        return AskUserResponse(answers=(AskUserAnswer(header=request.questions[0].header, selected=('SQLite',)),))

    response = await ScriptedAnswerer(respond)(_request(DB))
    assert response.answers[0].selected == ('SQLite',)


async def test_replies_are_used_in_the_order_requests_arrive() -> None:
    answerer = ScriptedAnswerer({'Database': 0}, {'Database': 1})
    first = await answerer(_request(DB))
    second = await answerer(_request(DB))
    assert [first.answers[0].selected, second.answers[0].selected] == [('PostgreSQL',), ('SQLite',)]


async def test_every_request_is_recorded_in_arrival_order() -> None:
    answerer = ScriptedAnswerer(default=0)
    requests = [_request(DB), _request(ENVS), _request(DB, ENVS)]
    for request in requests:
        await answerer(request)
    assert answerer.requests == requests


async def test_the_default_answers_questions_a_reply_leaves_out() -> None:
    response = await ScriptedAnswerer({'Database': 'MySQL'}, default=1)(_request(DB, ENVS))
    assert [answer.selected for answer in response.answers] == [('MySQL',), ('staging',)]


async def test_the_default_answers_every_request_once_the_replies_run_out() -> None:
    answerer = ScriptedAnswerer({'Database': 'MySQL'}, default=0)
    await answerer(_request(DB))
    for _ in range(3):
        assert (await answerer(_request(DB))).answers[0].selected == ('PostgreSQL',)


async def test_running_out_of_replies_without_a_default_is_an_error() -> None:
    answerer = ScriptedAnswerer({'Database': 0})
    await answerer(_request(DB))
    with pytest.raises(RuntimeError, match='ScriptedAnswerer ran out of replies: request 2'):
        await answerer(_request(DB))


async def test_a_question_the_reply_leaves_out_without_a_default_is_an_error() -> None:
    with pytest.raises(ValueError, match="the script has no answer for 'Envs' and no default"):
        await ScriptedAnswerer({'Database': 0})(_request(DB, ENVS))


async def test_a_reply_for_a_header_the_request_does_not_ask_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"the script answers \['Region'\], which request .* does not ask"):
        await ScriptedAnswerer({'Database': 0, 'Region': 'EU'})(_request(DB))


async def test_a_script_that_does_not_fit_its_request_fails_loudly() -> None:
    with pytest.raises(ValueError, match="the answer to 'Database' selects 'Oracle', which is not one of its options"):
        await ScriptedAnswerer({'Database': 'Oracle'})(_request(DB))
    with pytest.raises(ValueError, match='single-select'):
        await ScriptedAnswerer({'Database': [0, 1]})(_request(DB))


async def test_a_delay_waits_before_replying() -> None:
    answerer = ScriptedAnswerer(default=0, delay=0.2)
    started = time.monotonic()
    await answerer(_request(DB))
    assert time.monotonic() - started >= 0.19


async def test_a_delayed_reply_can_be_cancelled() -> None:
    answerer = ScriptedAnswerer(default=0, delay=60)
    with anyio.move_on_after(0.05) as scope:
        await answerer(_request(DB))
    assert scope.cancelled_caught


async def test_with_note_adds_a_note_to_a_label_or_a_custom_answer() -> None:
    request = AskUserRequest(questions=(DB, ENVS), notes=True)
    answerer = ScriptedAnswerer(
        {'Database': WithNote('PostgreSQL', "only after tonight's backup"), 'Envs': WithNote(Custom('all'), 'a\nb')}
    )
    response = await answerer(request)
    assert response.answers == (
        AskUserAnswer(header='Database', selected=('PostgreSQL',), note="only after tonight's backup"),
        AskUserAnswer(header='Envs', custom_answer='all', note='a\nb'),
    )
    assert response.answered_by is None


async def test_a_note_for_a_request_that_takes_none_is_refused_clearly() -> None:
    answerer = ScriptedAnswerer({'Database': WithNote(0, 'after the backup')})
    with pytest.raises(
        ValueError,
        match=r"the script adds a note to 'Database', but request .* takes none \(notes need AskUser\(notes=True\)\)",
    ):
        await answerer(_request(DB))


async def test_a_note_breaking_the_custom_answer_rules_is_refused() -> None:
    answerer = ScriptedAnswerer({'Database': WithNote(0, 'x' * 2001)})
    with pytest.raises(ValueError, match='the note is 2001 characters long'):
        await answerer(AskUserRequest(questions=(DB,), notes=True))
    with pytest.raises(ValueError, match='two notes'):
        await ScriptedAnswerer({'Database': WithNote(WithNote(0, 'a'), 'b')})(
            AskUserRequest(questions=(DB,), notes=True)
        )  # type: ignore[arg-type]


async def test_answered_by_names_who_answered_in_every_response_the_script_makes() -> None:
    ready = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('MySQL',)),), answered_by='bob')
    answerer = ScriptedAnswerer({'Database': 1}, DECLINE, ready, default=0, answered_by='alice@ci')
    assert (await answerer(_request(DB))).answered_by == 'alice@ci'
    assert await answerer(_request(DB)) == AskUserResponse(cancelled=True, answered_by='alice@ci')
    assert (await answerer(_request(DB))).answered_by == 'bob'  # a ready response keeps its own
    assert (await answerer(_request(DB))).answered_by == 'alice@ci'


@pytest.mark.parametrize('answered_by', ['', 'two\nlines', 'x' * 201])
def test_answered_by_must_pass_check_answered_by(answered_by: str) -> None:
    from pydantic_ai.exceptions import UserError

    with pytest.raises(UserError, match=r'ScriptedAnswerer\(answered_by=...\)'):
        ScriptedAnswerer(answered_by=answered_by)


# --- The conformance kit ---


class QueueAnswerer:
    """A test-only answerer whose front end is a queue of shown requests and a reply slot per request."""

    def __init__(self) -> None:
        self.shown: dict[str, AskUserRequest] = {}
        self.replies: dict[str, AskUserResponse] = {}
        self.changed = anyio.Event()

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        self.shown[request.id] = request
        self._notify()
        try:
            while request.id not in self.replies:
                await self.changed.wait()
            return self.replies.pop(request.id)
        finally:
            del self.shown[request.id]

    async def wait_shown(self, request_id: str) -> None:
        while request_id not in self.shown:
            await self.changed.wait()

    def reply(self, request_id: str, response: AskUserResponse) -> None:
        self.replies[request_id] = response
        self._notify()


def _driver_for(answerer: QueueAnswerer) -> Any:
    async def driver(request: AskUserRequest, response: AskUserResponse | None) -> None:
        await answerer.wait_shown(request.id)
        if response is not None:
            answerer.reply(request.id, response)

    return driver


def test_the_kit_has_every_scenario_the_spec_names() -> None:
    assert [scenario.name for scenario in CONFORMANCE_SCENARIOS] == [
        'single_answer',
        'multi_answer',
        'custom_answer',
        'decline',
        'cancelled_while_waiting',
        'concurrent_requests',
        'note_with_an_answer',
        'note_with_a_custom_answer',
        'recommended_waits_for_the_person',
        'recommended_accepted',
        'hostile_labels',
    ]
    assert all(scenario.description for scenario in CONFORMANCE_SCENARIOS)


@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda s: s.name)
async def test_a_queue_answerer_passes_the_conformance_kit(scenario: ConformanceScenario) -> None:
    answerer = QueueAnswerer()
    await run_conformance(scenario, answerer, _driver_for(answerer))
    assert answerer.shown == {}


class _PicksFirstLabel(QueueAnswerer):
    """Broken: ignores what the person did and always picks each question's first option."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        await super().__call__(request)
        return AskUserResponse(
            answers=tuple(AskUserAnswer(header=q.header, selected=(q.options[0].label,)) for q in request.questions)
        )


class _IgnoresCancellation(QueueAnswerer):
    """Broken: swallows cancellation and returns a cancelled response instead of stopping."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        try:
            return await super().__call__(request)
        except anyio.get_cancelled_exc_class():
            return AskUserResponse(cancelled=True)


class _OneAtATime(QueueAnswerer):
    """Broken: shows one request at a time, so a second concurrent request gets the first one's reply."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        if self.shown:
            first_id = next(iter(self.shown))
            while first_id not in self.replies:
                await self.changed.wait()
            return self.replies[first_id]
        return await super().__call__(request)


def _scenario(name: str) -> ConformanceScenario:
    (scenario,) = [scenario for scenario in CONFORMANCE_SCENARIOS if scenario.name == name]
    return scenario


async def test_the_kit_catches_an_answerer_that_ignores_the_person() -> None:
    answerer = _PicksFirstLabel()
    with pytest.raises(AssertionError, match='the answerer returned'):
        await run_conformance(_scenario('single_answer'), answerer, _driver_for(answerer))


async def test_the_kit_catches_an_answerer_that_swallows_cancellation() -> None:
    answerer = _IgnoresCancellation()
    with pytest.raises(AssertionError, match='cancelling the wait should cancel the answerer'):
        await run_conformance(_scenario('cancelled_while_waiting'), answerer, _driver_for(answerer))


async def test_the_kit_catches_an_answerer_that_mixes_up_concurrent_requests() -> None:
    answerer = _OneAtATime()

    async def driver(request: AskUserRequest, response: AskUserResponse | None) -> None:
        with anyio.move_on_after(0.5):
            await answerer.wait_shown(request.id)
        if response is not None:
            answerer.reply(request.id, response)

    with pytest.raises((AssertionError, ValueError)):
        await run_conformance(_scenario('concurrent_requests'), answerer, driver)


class _DropsNotes(QueueAnswerer):
    """Broken: loses the note the person typed."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        response = await super().__call__(request)
        return AskUserResponse(answers=tuple(replace(answer, note=None) for answer in response.answers))


class _AlwaysNotes(QueueAnswerer):
    """Broken: adds a note of its own, even to a request that takes none."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        response = await super().__call__(request)
        return AskUserResponse(answers=tuple(replace(answer, note='mine') for answer in response.answers))


class _PicksTheRecommendation(QueueAnswerer):
    """Broken: answers with the recommended labels as soon as it shows the request."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        if all(question.recommended for question in request.questions):
            self.shown[request.id] = request  # left shown: the front end shows it, but already answered it
            self._notify()
            return AskUserResponse(
                answers=tuple(
                    AskUserAnswer(header=q.header, selected=(q.recommended or '',)) for q in request.questions
                )
            )
        return await super().__call__(request)


class _EscapesLabels(QueueAnswerer):
    """Broken: returns labels as its HTML page shows them, escaped."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        response = await super().__call__(request)
        return AskUserResponse(
            answers=tuple(
                replace(a, selected=tuple(html.escape(label) for label in a.selected)) for a in response.answers
            )
        )


class _SignsBadly(QueueAnswerer):
    """Broken: says who answered in two lines."""

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        return replace(await super().__call__(request), answered_by='alice\nbob')


async def test_the_kit_catches_an_answerer_that_drops_a_note() -> None:
    answerer = _DropsNotes()
    with pytest.raises(AssertionError, match='the answerer returned'):
        await run_conformance(_scenario('note_with_an_answer'), answerer, _driver_for(answerer))


async def test_the_kit_catches_an_answerer_that_returns_a_note_to_a_request_that_takes_none() -> None:
    answerer = _AlwaysNotes()
    with pytest.raises(AssertionError, match='takes no notes, but the answerer returned one'):
        await run_conformance(_scenario('single_answer'), answerer, _driver_for(answerer))


async def test_the_kit_catches_an_answerer_that_picks_the_recommended_option_itself() -> None:
    answerer = _PicksTheRecommendation()
    with pytest.raises(AssertionError, match='cancelling the wait should cancel the answerer, but it returned'):
        await run_conformance(_scenario('recommended_waits_for_the_person'), answerer, _driver_for(answerer))


async def test_the_kit_catches_an_answerer_that_returns_labels_escaped() -> None:
    answerer = _EscapesLabels()
    with pytest.raises(ValueError, match="selects '&lt;b&gt;PostgreSQL&lt;/b&gt;', which is not one of its options"):
        await run_conformance(_scenario('hostile_labels'), answerer, _driver_for(answerer))


async def test_the_kit_catches_an_answerer_that_says_who_answered_badly() -> None:
    answerer = _SignsBadly()
    with pytest.raises(AssertionError, match='the answerer says who answered, but'):
        await run_conformance(_scenario('single_answer'), answerer, _driver_for(answerer))
