"""The answerer conformance kit: the scenarios every answerer must pass, whatever its front end.

An answerer is checked through its own front end. The kit calls the answerer, and a *driver* you
write makes the front end produce a given response the way a person would: typing keys, clicking,
posting a form. The kit then checks that the answerer returned exactly that response: the same labels, custom answers
and notes (`answered_by` is the answerer's own to set, and only has to pass `check_answered_by`).

Some scenarios need a front end to do more than pick labels. `note_with_an_answer` and
`note_with_a_custom_answer` ask with `notes=True`, and the driver must type each expected `note`
into the front end's note field. The `recommended_*` scenarios mark an option `recommended`: the front
end shows it and may put the cursor on it, so a driver that moves a cursor starts from there; the kit
checks that the answerer is still waiting once the request is shown (it never picks the recommended
option for the person) and that the labels come back exactly as the model wrote them, however hostile
(markup, quotes, brackets).

```python
import pytest

from pydantic_ai_ask_user.testing import CONFORMANCE_SCENARIOS, ConformanceScenario, run_conformance


@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda s: s.name)
async def test_my_answerer_conforms(scenario: ConformanceScenario) -> None:
    answerer = MyAnswerer()
    await run_conformance(scenario, answerer, my_driver)
```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from .._answers import Answerer, AskUserAnswer, AskUserRequest, AskUserResponse, check_answered_by, check_response
from .._questions import Question, QuestionOption

__all__ = ('Driver', 'ConformanceScenario', 'CONFORMANCE_SCENARIOS', 'run_conformance')

Driver = Callable[[AskUserRequest, AskUserResponse | None], Awaitable[None]]
"""Makes the answerer's front end produce a response, as a person would.

Called with the request the answerer was given and the response the person should give. It waits
until the front end shows the request, then acts (keys, clicks, posts) so the answerer returns that
response, notes included. With `None` instead of a response it only waits until the request is shown,
then returns without answering: the kit is about to cancel the wait.
"""

WAIT_SECONDS = 30.0
"""How long a scenario waits for the answerer or the driver before it fails."""


def _option(label: str, description: str | None = None) -> QuestionOption:
    return QuestionOption(label=label, description=description)


def _single(header: str = 'Database', *, recommended: str | None = None) -> Question:
    return Question(
        header=header,
        question='Which database should the migration target?',
        options=(
            _option('PostgreSQL', 'The production database.'),
            _option('SQLite', 'A local file, for development.'),
            _option('MySQL'),
        ),
        recommended=recommended,
    )


def _multi(header: str = 'Environments', *, recommended: str | None = None) -> Question:
    return Question(
        header=header,
        question='Which environments should be migrated?',
        options=(_option('dev'), _option('staging'), _option('production', 'Needs a maintenance window.')),
        multi_select=True,
        recommended=recommended,
    )


_HOSTILE_LABELS = ('<b>PostgreSQL</b>', '[bold]SQLite[/bold]', '"My" SQL & \'co\' {0} %s \\n')
"""Labels a model may write that a front end must draw as text and return exactly: HTML, terminal markup, quotes."""


def _hostile(header: str = 'Database') -> Question:
    return Question(
        header=header,
        question='Which database? <i>Pick</i> [red]one[/red] & say "why".',
        options=tuple(_option(label, f'{label} </label><script>alert(1)</script>') for label in _HOSTILE_LABELS),
        recommended=_HOSTILE_LABELS[0],
    )


def _answers(*answers: AskUserAnswer) -> AskUserResponse:
    return AskUserResponse(answers=answers)


async def _exchange(answerer: Answerer, driver: Driver, request: AskUserRequest, expected: AskUserResponse) -> None:
    got: list[AskUserResponse] = []

    async def ask() -> None:
        got.append(await answerer(request))

    with anyio.fail_after(WAIT_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await driver(request, expected)
    _assert_same(request, got[0], expected)


def _assert_same(request: AskUserRequest, got: AskUserResponse, expected: AskUserResponse) -> None:
    if not isinstance(got, AskUserResponse):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AssertionError(f'request {request.id}: the answerer returned {got!r}, not an AskUserResponse')
    if got.answered_by is not None and (problem := check_answered_by(got.answered_by)) is not None:
        raise AssertionError(f'request {request.id}: the answerer says who answered, but {problem}')
    if not request.notes and any(answer.note is not None for answer in got.answers):
        raise AssertionError(f'request {request.id} takes no notes, but the answerer returned one: {got!r}')
    check_response(request, got)
    if _normal(got) != _normal(expected):
        raise AssertionError(f'request {request.id}: the answerer returned {got!r}, expected {expected!r}')


def _normal(response: AskUserResponse) -> tuple[bool, frozenset[tuple[str, frozenset[str], str | None, str | None]]]:
    # Answers may come in any order, and multi-select labels in any order; who answered is the answerer's own.
    return response.cancelled, frozenset(
        (answer.header, frozenset(answer.selected), answer.custom_answer, answer.note) for answer in response.answers
    )


async def _single_answer(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(),))
    await _exchange(answerer, driver, request, _answers(AskUserAnswer(header='Database', selected=('SQLite',))))


async def _multi_answer(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(), _multi()))
    expected = _answers(
        AskUserAnswer(header='Database', selected=('PostgreSQL',)),
        AskUserAnswer(header='Environments', selected=('dev', 'production')),
    )
    await _exchange(answerer, driver, request, expected)


async def _custom_answer(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(),))
    expected = _answers(AskUserAnswer(header='Database', custom_answer='CockroachDB 24, in 3 regions'))
    await _exchange(answerer, driver, request, expected)


async def _decline(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(), _multi()))
    await _exchange(answerer, driver, request, AskUserResponse(cancelled=True))


async def _cancelled_while_waiting(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(),))
    # The front end must be usable again right after a withdrawn request.
    follow_up = AskUserRequest(questions=(_single('Next'),))
    await _withdrawn_then(
        answerer, driver, request, follow_up, _answers(AskUserAnswer(header='Next', selected=('MySQL',)))
    )


async def _withdrawn_then(
    answerer: Answerer, driver: Driver, request: AskUserRequest, follow_up: AskUserRequest, expected: AskUserResponse
) -> None:
    """Show `request` and cancel the wait once shown (it must still be waiting), then answer `follow_up`."""
    finished = anyio.Event()
    outcome: list[str] = []

    async def ask() -> None:
        try:
            response = await answerer(request)
            outcome.append(f'returned {response!r}')
        except anyio.get_cancelled_exc_class():
            outcome.append('cancelled')
            raise
        finally:
            finished.set()

    with anyio.fail_after(WAIT_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await driver(request, None)
            group.cancel_scope.cancel()
        await finished.wait()
    if outcome != ['cancelled']:
        raise AssertionError(f'cancelling the wait should cancel the answerer, but it {outcome[0]}')
    await _exchange(answerer, driver, follow_up, expected)


async def _concurrent(answerer: Answerer, driver: Driver) -> None:
    first = AskUserRequest(questions=(_single('First'),))
    second = AskUserRequest(questions=(_multi('Second'),))
    expected = {
        first.id: _answers(AskUserAnswer(header='First', selected=('PostgreSQL',))),
        second.id: _answers(AskUserAnswer(header='Second', selected=('staging',))),
    }
    got: dict[str, AskUserResponse] = {}

    async def ask(request: AskUserRequest) -> None:
        got[request.id] = await answerer(request)

    with anyio.fail_after(WAIT_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(ask, first)
            await anyio.sleep(0)
            group.start_soon(ask, second)
            for request in (first, second):
                await driver(request, expected[request.id])
    for request in (first, second):
        _assert_same(request, got[request.id], expected[request.id])


async def _note_with_an_answer(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(), _multi()), notes=True)
    expected = _answers(
        AskUserAnswer(header='Database', selected=('PostgreSQL',), note="Only after tonight's backup."),
        AskUserAnswer(header='Environments', selected=('dev', 'staging')),
    )
    await _exchange(answerer, driver, request, expected)


async def _note_with_a_custom_answer(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(),), notes=True)
    note = 'Ask the DBA first.\nShe is back on Monday.'
    expected = _answers(AskUserAnswer(header='Database', custom_answer='CockroachDB', note=note))
    await _exchange(answerer, driver, request, expected)


async def _recommended_waits_for_the_person(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(recommended='PostgreSQL'),))
    follow_up = AskUserRequest(questions=(_single('Next', recommended='PostgreSQL'), _multi(recommended='staging')))
    expected = _answers(
        AskUserAnswer(header='Next', selected=('MySQL',)),
        AskUserAnswer(header='Environments', selected=('dev', 'production')),
    )
    await _withdrawn_then(answerer, driver, request, follow_up, expected)


async def _recommended_accepted(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_single(recommended='SQLite'), _multi(recommended='production')))
    expected = _answers(
        AskUserAnswer(header='Database', selected=('SQLite',)),
        AskUserAnswer(header='Environments', selected=('production',)),
    )
    await _exchange(answerer, driver, request, expected)


async def _hostile_labels(answerer: Answerer, driver: Driver) -> None:
    request = AskUserRequest(questions=(_hostile('Accepted'), _hostile('Other')))
    expected = _answers(
        AskUserAnswer(header='Accepted', selected=(_HOSTILE_LABELS[0],)),
        AskUserAnswer(header='Other', selected=(_HOSTILE_LABELS[2],)),
    )
    await _exchange(answerer, driver, request, expected)


@dataclass(frozen=True)
class ConformanceScenario:
    """One behaviour every answerer must show."""

    name: str
    """A short name, usable as a pytest id."""

    description: str
    """What the scenario checks."""

    check: Callable[[Answerer, Driver], Awaitable[None]]
    """Runs the scenario; raises `AssertionError` (or times out) when the answerer fails it."""


CONFORMANCE_SCENARIOS: tuple[ConformanceScenario, ...] = (
    ConformanceScenario('single_answer', 'one single-select question answered with one label', _single_answer),
    ConformanceScenario('multi_answer', 'a single- and a multi-select question answered together', _multi_answer),
    ConformanceScenario('custom_answer', "the user's own words instead of a label", _custom_answer),
    ConformanceScenario('decline', 'the user declines the whole request', _decline),
    ConformanceScenario(
        'cancelled_while_waiting',
        'the wait is cancelled while the question is shown; the answerer stops, and the next request works',
        _cancelled_while_waiting,
    ),
    ConformanceScenario('concurrent_requests', 'two requests at once, each answered under its own id', _concurrent),
    ConformanceScenario(
        'note_with_an_answer',
        'with notes=True, a note typed with one picked label comes back with it; the other answer has none',
        _note_with_an_answer,
    ),
    ConformanceScenario(
        'note_with_a_custom_answer',
        "with notes=True, a two-line note comes back with the user's own words",
        _note_with_a_custom_answer,
    ),
    ConformanceScenario(
        'recommended_waits_for_the_person',
        'a recommended option is never picked for the person: the answerer still waits once shown, '
        'and another label than the recommended one is returned when picked',
        _recommended_waits_for_the_person,
    ),
    ConformanceScenario(
        'recommended_accepted', 'the person picks the recommended options themselves', _recommended_accepted
    ),
    ConformanceScenario(
        'hostile_labels',
        'labels with markup, brackets and quotes (one recommended) come back exactly as written',
        _hostile_labels,
    ),
)
"""Every scenario, in a sensible order: single, multi, custom, decline, cancelled, concurrent, notes, recommended.

Every scenario checks that a request without `notes` gets no note back, and that `answered_by`, when the
answerer sets it, passes `check_answered_by`.
"""


async def run_conformance(scenario: ConformanceScenario, answerer: Answerer, driver: Driver) -> None:
    """Run one scenario against `answerer`, driven through its front end by `driver`."""
    await scenario.check(answerer, driver)
