"""What an answerer receives and returns, the `Answerer` protocol, and the check that the two fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast, runtime_checkable
from uuid import uuid4

from pydantic import ValidationError

from ._audience import QuestionContext, audience_from_json, check_audience, context_from_json
from ._escalation import Escalation, check_escalation
from ._fast_questions import fast_questions
from ._module_names import LazyModule
from ._plain_questions import request_key
from ._question_limits import LATEST_DEADLINE, MAX_ANSWERED_BY_LENGTH
from ._questions import Question, ToolArguments, check_questions
from ._text import check_one_line, describe_character, find_forbidden_character, find_mark_run, is_blank, printable

if TYPE_CHECKING:
    from pydantic_ai import messages as _messages
    from pydantic_ai import tools as _tools
else:
    # Read by `typing.get_type_hints`, imported only then: the standard-library-only commands import this module.
    _messages = LazyModule('pydantic_ai.messages')
    _tools = LazyModule('pydantic_ai.tools')

__all__ = (
    'TOOL_NAME',
    'DECLINED',
    'TIMED_OUT',
    'WITHDRAWN',
    'RUN_ID_METADATA_KEY',
    'RUN_STEP_METADATA_KEY',
    'ADDRESSING_METADATA_KEY',
    'AskUserRequest',
    'AskUserAnswer',
    'AskUserResponse',
    'Answerer',
    'DurableAnswerer',
    'check_response',
    'check_custom_answer',
    'check_answered_by',
    'MAX_CUSTOM_ANSWER_LENGTH',
    'MAX_NOTE_LENGTH',
    'AnswerResult',
    'ask_user_result',
    'deferred_answer',
    'check_tool_result',
    'response_from_result',
    'format_validation_error',
    'CannotAskError',
    'QuestionWithdrawn',
    'DifferentQuestionsError',
    'check_same_questions',
)

TOOL_NAME = 'ask_user_question'
"""The name of the one tool `AskUser` gives the model."""

DECLINED = 'The user declined to answer. Continue without the answer, or ask differently if it is essential.'
"""What the model gets back when the user declines to answer."""

TIMED_OUT = (
    'The user did not answer in time. Make a reasonable choice yourself, say which choice you made and why, '
    'and continue.'
)
"""What the model gets back when `AskUser(timeout=...)` runs out before the user answers."""

WITHDRAWN = (
    'The question was withdrawn before anyone answered it; the user did not decline. Continue without the '
    'answer, making and stating a reasonable choice, or ask again if the answer is essential.'
)
"""What the model gets back when the wait ended without a person's answer: cancelled, withdrawn or shut down.

Never `DECLINED`, which only a person's decline produces. An answerer says so by raising `QuestionWithdrawn`.
"""

RUN_ID_METADATA_KEY = 'ask_user_run_id'
"""The key of a deferred question's `DeferredToolRequests.metadata` entry holding the run that asked it.

The run that resumes with `DeferredToolResults` is a new run with a new `run_id`; the question stays the
one the deferring run published, and `AskUserRequest.from_deferred` reads its run from here.
"""

RUN_STEP_METADATA_KEY = 'ask_user_run_step'
"""Beside `RUN_ID_METADATA_KEY`: the step of the deferring run in which the model made the call (`run_step`)."""

ADDRESSING_METADATA_KEY = 'ask_user_addressing'
"""Beside `RUN_ID_METADATA_KEY`: who a deferred question is for and where it comes from (`audience`, `context`).

`{"audience": [...], "context": {...}}`, each only when set: the call's arguments hold only what the model wrote.
"""

MAX_CUSTOM_ANSWER_LENGTH = 2000
"""The longest custom answer, in characters: `check_custom_answer` refuses a longer one, so every front end does.

A front end may set a lower limit of its own (the terminal menu and the web form do, for their counters),
never a higher one.
"""

MAX_NOTE_LENGTH = MAX_CUSTOM_ANSWER_LENGTH
"""The longest note, in characters: a note follows the rules of a custom answer (`check_custom_answer`)."""

AnswerResult: TypeAlias = dict[str, list[str] | dict[str, list[str] | str]] | str
"""What the model gets from `ask_user_question`: each header mapped to its answer, or a message (`DECLINED`).

An answer is the list of labels picked (or a one-item list of the person's own words); with
`AskUser(notes=True)`, an answer that carries a note is `{"answer": [...], "note": "..."}` instead.
"""


def _new_request_id() -> str:
    return uuid4().hex


def _check_run(run_id: object, run_step: object) -> None:
    """`ValueError` unless `run_id` and `run_step` can say where a request was asked: both checks of a request's run."""
    if run_id is not None and (not isinstance(run_id, str) or not run_id):
        raise ValueError('AskUserRequest.run_id must be a non-empty string or None')
    if run_step is not None and (isinstance(run_step, bool) or not isinstance(run_step, int) or run_step < 0):
        raise ValueError(f'AskUserRequest.run_step must be a step number (0 or more) or None, not {run_step!r}')


def format_validation_error(error: ValidationError) -> list[str]:
    """One line per problem, each naming where it is: `questions.0.header: String should have ...`."""
    lines: list[str] = []
    for item in error.errors(include_url=False):
        where = '.'.join(str(part) for part in item['loc']) or 'arguments'
        message = item['msg']
        if item['type'] == 'value_error':
            # Our own rules raise ValueError; pydantic prefixes its message with "Value error, ", which says nothing.
            message = message.removeprefix('Value error, ')
        lines.append(f'{where}: {message}')
    return lines


@dataclass(frozen=True)
class AskUserRequest:
    """One `ask_user_question` call: passed to the `Answerer` and carried by `AskUserRequestedEvent`."""

    questions: tuple[Question, ...]
    """The validated questions, exactly as the model asked them, in its order."""

    id: str = field(default_factory=_new_request_id)
    """Tells concurrent or repeated calls apart; a UI matches its reply to it.

    A request made by the tool has the tool call's id, in every mode: stable across validation
    retries, replays, deferral and recovery, so a question published twice is the same question.
    A fresh random hex string is only the default for a request built directly.
    """

    notes: bool = False
    """Whether the person may add a note to each answer (`AskUserAnswer.note`): `AskUser(notes=True)` sets it.

    Front ends offer a note only when it is set, and `check_response` refuses a note when it is not.
    """

    deadline: float | None = field(default=None, compare=False)
    """When the wait runs out, as a `time.time()` timestamp, for front ends that show the time left; `None`: no limit.

    `AskUser(timeout=...)` sets it when it asks; it is not part of what is asked, so two requests that differ
    only in it are equal.
    """

    run_id: str | None = field(default=None, compare=False)
    """The agent run that asked (`RunContext.run_id`), or `None` for a request built outside a run.

    A tool call id is unique only within its run: providers repeat ids across runs and turns (`call_0`,
    `functions.<tool>:<n>`) or send none. So a question is identified by its run *and* its call, `key`.
    Under a durable engine the run id is derived from the workflow, so a replay or recovery asks the same
    question again, not a new one; a deferred question keeps the run that deferred it (`from_deferred`).
    Like `deadline`, it is not part of what is asked: equality compares the questions, the id and `notes`.
    """

    run_step: int | None = field(default=None, compare=False)
    """The step of the run in which the model made the call (`RunContext.run_step`: its n-th model response).

    Part of the key beside `run_id`, because some providers number calls per response (`functions.<tool>:0` in
    every turn), so one run can repeat an id too. `None` for a request of no run, or one rebuilt without it.
    """

    audience: tuple[str, ...] | None = field(default=None, compare=False)
    """Who may answer: the names (of people or groups, sorted, each once) it is addressed to; `None`: anyone.

    `AskUser(audience=...)` sets it. A front end that knows who is looking (the web inbox) shows and accepts the
    question only from a `Person` whose name or one of whose groups is here; to everyone else it does not exist.
    A sequence given here is stored as such a tuple; an empty one is refused (nobody could answer).
    """

    context: QuestionContext | None = field(default=None, compare=False)
    """Where the question comes from (agent, conversation, a title, a summary, a link back), or `None`.

    `AskUser` fills it from the run and `AskUser(context=...)`; front ends show it beside the questions.
    """

    escalate: tuple[Escalation, ...] = field(default=(), compare=False)
    """The escalation policy (`AskUser(escalate=...)`): while it waits unanswered, each step forwards it to more (or
    other) people `after` seconds after it was asked. Empty: none. Not part of what is asked, nor of the tool's
    schema: the model never sees it.
    """

    @property
    def key(self) -> str:
        """Where this question is stored, waited on, answered and signed: its run, step and tool call, as one string.

        The tool call id itself (`id`) when the request belongs to no run, else 32 hex digits of a SHA-256 over
        the run id, the step and the call id: the same for every replay of one call in one run, different for
        another run, or another turn of the same run, that repeats the id, and safe in a URL, a file name or a
        workflow id whatever the provider sent.
        """
        if self.run_id is None:
            return self.id
        return request_key(self.run_id, self.id, self.run_step)

    def __post_init__(self) -> None:
        questions = tuple(self.questions)
        for question in questions:
            if not isinstance(question, Question):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(f'AskUserRequest.questions holds {type(question).__name__}, not Question')
        object.__setattr__(self, 'questions', check_questions(questions))
        if not isinstance(self.id, str) or not self.id:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError('AskUserRequest.id must be a non-empty string')
        if not isinstance(self.notes, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'AskUserRequest.notes must be a bool, not {type(self.notes).__name__}')
        _check_run(self.run_id, self.run_step)
        object.__setattr__(self, 'audience', check_audience(self.audience))
        if self.context is not None and not isinstance(self.context, QuestionContext):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'AskUserRequest.context must be a QuestionContext, not {type(self.context).__name__}')
        object.__setattr__(self, 'escalate', check_escalation(self.escalate, 'AskUserRequest.escalate'))
        if self.deadline is not None and (
            isinstance(self.deadline, bool)
            or not isinstance(self.deadline, (int, float))  # pyright: ignore[reportUnnecessaryIsInstance]
            or not 0 <= self.deadline <= LATEST_DEADLINE
        ):
            raise TypeError(
                f'AskUserRequest.deadline must be a time.time() timestamp up to the year 9999, not {self.deadline!r}'
            )

    @classmethod
    def from_tool_args(
        cls,
        args: str | bytes | Mapping[str, Any] | None,
        *,
        id: str | None = None,
        notes: bool = False,
        run_id: str | None = None,
        run_step: int | None = None,
    ) -> AskUserRequest:
        """Validate the model's `ask_user_question` arguments (a JSON string or a dict) exactly as the tool does.

        Recommended labels are accepted (the tool takes them with `AskUser(recommended_options=True)`). Pass
        `notes=True` when the `AskUser` that made the call has `notes=True`: the call's arguments do not say so.
        Raises `ValueError` (a pydantic `ValidationError`) saying what was wrong.
        """
        if not isinstance(notes, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'notes must be a bool, not {type(notes).__name__}')
        arguments: str | bytes | Mapping[str, Any] = args if args is not None else {}
        questions = fast_questions(arguments, recommending=True)  # the exact rules only on rejection, to name it
        if questions is None:
            if isinstance(arguments, (str, bytes)):
                questions = ToolArguments.model_validate_json(arguments).questions
            else:
                questions = ToolArguments.model_validate(arguments).questions
        return cls._trusted(
            questions,
            _new_request_id() if id is None else id,
            notes=notes,
            run_id=run_id,
            run_step=run_step,
        )

    @classmethod
    def _trusted(
        cls,
        questions: tuple[Question, ...],
        id: str,
        *,
        notes: bool = False,
        deadline: float | None = None,
        run_id: str | None = None,
        run_step: int | None = None,
        audience: tuple[str, ...] | None = None,
        context: QuestionContext | None = None,
        escalate: tuple[Escalation, ...] = (),
    ) -> AskUserRequest:
        """A request from questions the tool's validator (or `ToolArguments`) has just validated, checked once.

        Only for that: `AskUserRequest(...)` checks its questions again, as it must for questions built by hand.
        """
        if not id:
            raise ValueError('AskUserRequest.id must be a non-empty string')
        _check_run(run_id, run_step)
        request = object.__new__(cls)
        object.__setattr__(request, 'questions', questions)
        object.__setattr__(request, 'id', id)
        object.__setattr__(request, 'notes', notes)
        object.__setattr__(request, 'deadline', deadline)
        object.__setattr__(request, 'run_id', run_id)
        object.__setattr__(request, 'run_step', run_step)
        object.__setattr__(request, 'audience', check_audience(audience))
        object.__setattr__(request, 'context', context)
        object.__setattr__(request, 'escalate', escalate)
        return request

    @classmethod
    def from_tool_call(
        cls,
        call: _messages.ToolCallPart,
        *,
        notes: bool = False,
        run_id: str | None = None,
        run_step: int | None = None,
    ) -> AskUserRequest:
        """Rebuild the request of a deferred `ask_user_question` call; its `id` is the tool call id.

        Prefer `from_deferred`, which also knows the run that asked: without `run_id`, the request's `key` is
        the bare tool call id, which another run may repeat. Pass `notes=True` when that `AskUser` has
        `notes=True`.
        """
        if call.tool_name != TOOL_NAME:
            raise ValueError(f'tool call {call.tool_call_id!r} is a call to {call.tool_name!r}, not {TOOL_NAME!r}')
        return cls.from_tool_args(call.args, id=call.tool_call_id, notes=notes, run_id=run_id, run_step=run_step)

    @classmethod
    def from_deferred(
        cls, requests: _tools.DeferredToolRequests, call: _messages.ToolCallPart | str, *, notes: bool = False
    ) -> AskUserRequest:
        """Rebuild a deferred `ask_user_question` call of `requests` (the call, or its id), with the run that asked.

        Use it on the calls of the `DeferredToolRequests` a run with `AskUser(answerer=None)` ended with, in
        this process or in another one: the request's `run_id` is the deferring run's (`RUN_ID_METADATA_KEY`
        in `requests.metadata`), so its `key` tells it from a call with the same id in any other run. Pass
        `notes=True` when that `AskUser` has `notes=True`. `ValueError` if `requests` has no such call.
        """
        call_id = call if isinstance(call, str) else call.tool_call_id
        found = next((pending for pending in requests.calls if pending.tool_call_id == call_id), None)
        if found is None:
            raise ValueError(f'these DeferredToolRequests have no pending call with id {call_id!r}')
        metadata = requests.metadata.get(call_id, {})
        run_id, run_step = metadata.get(RUN_ID_METADATA_KEY), metadata.get(RUN_STEP_METADATA_KEY)
        request = cls.from_tool_call(
            found,
            notes=notes,
            run_id=run_id if isinstance(run_id, str) and run_id else None,
            run_step=run_step if isinstance(run_step, int) and not isinstance(run_step, bool) else None,
        )
        addressing = metadata.get(ADDRESSING_METADATA_KEY)
        return with_addressing(request, cast(dict[str, Any], addressing)) if isinstance(addressing, dict) else request

    def question(self, header: str) -> Question:
        """The question with this header; `KeyError` if there is none."""
        for question in self.questions:
            if question.header == header:
                return question
        raise KeyError(header)


@dataclass(frozen=True)
class AskUserAnswer:
    """The labels picked for one question, or the user's own words instead of them."""

    header: str
    """The header of the question this answers."""

    selected: tuple[str, ...] = ()
    """The picked labels: exactly one unless the question is `multi_select`, at least one either way.

    Empty when `custom_answer` is given.
    """

    custom_answer: str | None = None
    """The user's own answer instead of a label, or `None`."""

    note: str | None = None
    """What the person added to this answer ("PostgreSQL, but only after tonight's backup"), or `None`.

    Only when the request has `notes=True` (`AskUser(notes=True)`); it follows the rules of a custom answer.
    """

    def __post_init__(self) -> None:
        # Accept a list, as people naturally write one; store the immutable form.
        if not isinstance(self.selected, tuple):  # pyright: ignore[reportUnnecessaryIsInstance]
            object.__setattr__(self, 'selected', tuple(self.selected))


@dataclass(frozen=True)
class AskUserResponse:
    """What an `Answerer` returns: one answer per question, or `cancelled` when the user declined."""

    answers: tuple[AskUserAnswer, ...] = ()
    """One answer per question of the request, in any order."""

    cancelled: bool = False
    """True when the user declined to answer; `answers` is then empty."""

    answered_by: str | None = None
    """Who gave this response, as the answerer knows them, or `None` when it cannot tell.

    The web inbox sets the name bound to the login link or session, the command line the OS user and host
    (`os_user_at_host()`). One line, at most `MAX_ANSWERED_BY_LENGTH` characters. The model never sees it;
    it is in `AskUserAnsweredEvent.response`, the durable store, `DeferredToolResults.answered_by`
    (`deferred_answer`) and signed receipts.
    """

    def __post_init__(self) -> None:
        if not isinstance(self.answers, tuple):  # pyright: ignore[reportUnnecessaryIsInstance]
            object.__setattr__(self, 'answers', tuple(self.answers))


class Answerer(Protocol):
    """Anything that puts questions in front of a person: a terminal menu, a web form, a scripted test.

    A plain `async def` with this signature qualifies. Return a cancelled response when the user
    declines; raise only for failures that should fail the run.
    """

    async def __call__(self, request: AskUserRequest, /) -> AskUserResponse:
        """Present `request` to the user and return what they picked."""
        ...


@runtime_checkable
class DurableAnswerer(Answerer, Protocol):
    """An answerer that records its own wait in a durable engine, and bounds it itself.

    `AskUser` calls `ask_durably` instead of the plain call, passing its `timeout`, and neither wraps
    the call in a durable step nor cancels it when the time is up: the answerer owns the deadline, so
    it can record it once and resume a recovered wait with the time left, and it decides, atomically
    with whoever answers, whether an answer came in time. `DBOSAnswerer` is one.
    """

    async def ask_durably(self, request: AskUserRequest, /, *, timeout: float | None) -> AskUserResponse | None:
        """Present `request`, wait at most `timeout` seconds (`None`: no limit) from when it was first asked.

        Returns the response, or `None` when the time ran out first and the request was withdrawn: an
        answer is then refused to whoever gives it, never accepted and dropped.
        """
        ...


def durable_answerer(answerer: Answerer) -> DurableAnswerer | None:
    """`answerer` as a `DurableAnswerer` when it is one, else `None`; what `isinstance` says, at a fraction of its cost.

    `isinstance` against a runtime-checkable protocol looks up every member through the protocol machinery
    (tens of microseconds), and the tool asks it on every call.
    """
    if callable(getattr(answerer, 'ask_durably', None)):
        return cast(DurableAnswerer, answerer)
    return None


def check_custom_answer(text: str) -> str | None:
    """Why `text` cannot be a custom answer, or `None` when it can.

    It can when it holds at most `MAX_CUSTOM_ANSWER_LENGTH` characters, something visible (whitespace and
    invisible characters alone are blank), and no control or format character but newline. Invisible
    characters among visible ones are the person's own text (an emoji keyboard writes U+FE0F), and pass.
    """
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        return f'must be a string, not {type(text).__name__}'
    if len(text) > MAX_CUSTOM_ANSWER_LENGTH:
        return f'is {len(text)} characters long; at most {MAX_CUSTOM_ANSWER_LENGTH} are allowed'
    if is_blank(text):
        return 'is blank'
    if (char := find_forbidden_character(text, allow_newline=True, allow_invisible=True)) is not None:
        return f'contains {describe_character(char)}; only plain text and line breaks are allowed'
    return None


def check_answered_by(answered_by: str) -> str | None:
    """Why `answered_by` cannot name who answered, or `None` when it can: 1 to 200 characters, one line, drawable."""
    try:
        check_one_line(
            answered_by,
            name='answered_by',
            max_length=MAX_ANSWERED_BY_LENGTH,
            must_be='a non-blank string naming who answered',
            refuse_blank=True,
        )
    except ValueError as error:
        return str(error)
    if (run := find_mark_run(answered_by)) is not None:
        return f'answered_by stacks {run} combining marks on one character; a name is drawn in audit logs'
    return None


def check_response(request: AskUserRequest, response: AskUserResponse) -> None:
    """Check that `response` answers `request`, raising `ValueError` naming the first problem.

    An answerer can call it before returning; `AskUser` calls it on every response, and a response
    that fails it fails the run, since it is a bug in the answerer.
    """
    if not isinstance(response, AskUserResponse):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f'the answerer returned {type(response).__name__}, not an AskUserResponse')
    if response.answered_by is not None and (problem := check_answered_by(response.answered_by)) is not None:
        raise ValueError(f'the response says who answered, but {problem}')
    if response.cancelled:
        if response.answers:
            raise ValueError(f'a cancelled response carries {len(response.answers)} answer(s); it must carry none')
        return
    by_header = {question.header: question for question in request.questions}
    answered: set[str] = set()
    for answer in response.answers:
        if not isinstance(answer, AskUserAnswer):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f'the response holds {type(answer).__name__}, not an AskUserAnswer')
        question = by_header.get(answer.header)
        if question is None:
            raise ValueError(f'the response answers {answer.header!r}, which is not a header of request {request.id}')
        if answer.header in answered:
            raise ValueError(f'the response answers {answer.header!r} more than once')
        answered.add(answer.header)
        _check_answer(question, answer)
        if answer.note is not None:
            if not request.notes:
                raise ValueError(
                    f'the answer to {question.header!r} has a note, but request {request.id} takes none '
                    '(notes need AskUser(notes=True))'
                )
            if (problem := check_custom_answer(answer.note)) is not None:
                raise ValueError(f'the answer to {question.header!r}: the note {problem}')
    if missing := [question.header for question in request.questions if question.header not in answered]:
        raise ValueError(f'the response has no answer for {", ".join(repr(h) for h in missing)}')


def _check_answer(question: Question, answer: AskUserAnswer) -> None:
    where = f'the answer to {question.header!r}'
    if answer.custom_answer is not None:
        if answer.selected:
            raise ValueError(f'{where} has both selected labels and a custom answer; give one or the other')
        if (problem := check_custom_answer(answer.custom_answer)) is not None:
            raise ValueError(f'{where}: the custom answer {problem}')
        return
    if not answer.selected:
        raise ValueError(f'{where} selects nothing; pick at least one label or give a custom answer')
    if not question.multi_select and len(answer.selected) > 1:
        raise ValueError(f'{where} selects {len(answer.selected)} labels, but the question is single-select')
    offered = {option.label for option in question.options}
    seen: set[str] = set()
    for label in answer.selected:
        if label not in offered:
            raise ValueError(f'{where} selects {label!r}, which is not one of its options')
        if label in seen:
            raise ValueError(f'{where} selects {label!r} twice')
        seen.add(label)


def ask_user_result(request: AskUserRequest, response: AskUserResponse) -> AnswerResult:
    """What the model gets for `response`: each header mapped to its labels (or its custom answer), or `DECLINED`.

    An answer with a note (only with `notes=True`) maps to `{"answer": [...], "note": "..."}`. Who answered is
    not in it: the model does not need it. Checks the response first (`ValueError` if it does not fit). In
    deferred mode, `deferred_answer(request, response)` makes the `DeferredToolResults`.
    """
    check_response(request, response)
    if response.cancelled:
        return DECLINED
    by_header = {answer.header: answer for answer in response.answers}
    result: dict[str, list[str] | dict[str, list[str] | str]] = {}
    for question in request.questions:
        answer = by_header[question.header]
        picked = [answer.custom_answer] if answer.custom_answer is not None else list(answer.selected)
        result[question.header] = picked if answer.note is None else {'answer': picked, 'note': answer.note}
    return result


def deferred_answer(request: AskUserRequest, response: AskUserResponse) -> _tools.DeferredToolResults:
    """The `DeferredToolResults` that answers a deferred call: its result, and who answered when the response says.

    `ask_user_result(request, response)` goes in `calls` and `response.answered_by` in `answered_by` (Pydantic
    AI reports it in `DeferredToolResultsEvent`). Several answers combine with `DeferredToolResults.update`.
    """
    from pydantic_ai.tools import DeferredToolResults

    result = ask_user_result(request, response)
    answered_by = {request.id: response.answered_by} if response.answered_by is not None else {}
    return DeferredToolResults(calls={request.id: result}, answered_by=answered_by)


def check_tool_result(request: AskUserRequest, result: object, *, messages: Sequence[str] = ()) -> None:
    """Check that `result` is what the model may get for `request`, raising `ValueError` naming the first problem.

    What the model may get: `ask_user_result` of a response that fits (`check_response`), or one of the
    outcome sentences (`DECLINED`, `TIMED_OUT`, `WITHDRAWN`, and the application's own `messages`, such as a
    `TimeoutMessage`). `AskUser` holds the results in `DeferredToolResults` to it, so free text a host or a
    client put there never reaches the model as a person's answer.
    """
    if isinstance(result, str):
        if result in (DECLINED, TIMED_OUT, WITHDRAWN, *messages):
            return
        raise ValueError(
            'the result is text, but not one of the outcomes (DECLINED, TIMED_OUT, WITHDRAWN): '
            f'{printable(result[:80])!r}'
        )
    response_from_result(request, result)


def response_from_result(request: AskUserRequest, result: object) -> AskUserResponse:
    """The response `result` (an answers object of `ask_user_result`, or `DECLINED`) stands for, checked against
    `request`: the inverse of `ask_user_result`, for a reader that has only what the model got (a Temporal
    workflow's history). `ValueError` naming the first problem for anything else; who answered is not in a result.
    """
    if result == DECLINED:
        return AskUserResponse(cancelled=True)
    if not isinstance(result, dict):
        raise ValueError(f'the result is {type(result).__name__}, not the answers object of ask_user_result')
    answers: list[AskUserAnswer] = []
    for header, value in cast(dict[Any, Any], result).items():
        answers.append(_answer_from_result(request, header, value))
    response = AskUserResponse(answers=tuple(answers))
    check_response(request, response)
    if ask_user_result(request, response) != result:
        raise ValueError('the result is not in the shape ask_user_result gives')
    return response


def _answer_from_result(request: AskUserRequest, header: object, value: object) -> AskUserAnswer:
    """The answer one entry of a result object stands for: labels if they are all offered, else typed words."""
    if not isinstance(header, str):
        raise ValueError(f'the result has a key {header!r} that is not a header')
    try:
        question = request.question(header)
    except KeyError:
        raise ValueError(
            f'the result answers {printable(header)!r}, which is not a header of request {request.id}'
        ) from None
    note: str | None = None
    if isinstance(value, dict):
        shape = cast(dict[Any, Any], value)
        if set(shape) != {'answer', 'note'} or not isinstance(shape['note'], str):
            raise ValueError(
                f'the answer to {printable(header)!r} is an object, but not {{"answer": [...], "note": "..."}}'
            )
        value, note = shape['answer'], shape['note']
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in cast(list[Any], value)):
        raise ValueError(f'the answer to {printable(header)!r} is not a non-empty list of strings')
    picked = cast(list[str], value)
    offered = {option.label for option in question.options}
    if all(label in offered for label in picked):
        return AskUserAnswer(header=header, selected=tuple(picked), note=note)
    if len(picked) == 1:
        return AskUserAnswer(header=header, custom_answer=picked[0], note=note)
    raise ValueError(f'the answer to {printable(header)!r} picks labels that are not its options')


class QuestionWithdrawn(Exception):
    """Raised by an answerer whose wait ended without a person's answer: withdrawn, cancelled, shut down.

    `AskUser` emits the answered event with `withdrawn=True` and gives the model `WITHDRAWN`, never `DECLINED`:
    nobody declined. The run goes on. Raise it instead of returning a cancelled response, which means the
    person said no.
    """

    def __init__(self, reason: str = 'the question was withdrawn before anyone answered') -> None:
        self.reason = reason
        """Why the wait ended, for logs; the model reads `WITHDRAWN`, not this."""
        super().__init__(reason)


class DifferentQuestionsError(ValueError):
    """A store holds an answer under a question's key, but to other questions than the ones asked now.

    An answer is used only for the exact questions it answers: a remembered answer to anything else is a
    loud error, never returned. It happens when a run id and a tool call id are both reused (an explicit
    `run_id` given twice, a replay whose model asked differently).
    """

    def __init__(self, asked: AskUserRequest, stored: AskUserRequest) -> None:
        self.asked = asked
        """The request being asked now."""
        self.stored = stored
        """The request the store holds under the same key."""
        super().__init__(
            f'question {asked.key!r} (tool call {asked.id!r}) asks {_headers(asked)}, but what is stored under that '
            f'key asks {_headers(stored)}: an answer is used only for the exact questions it answers, so it is not '
            'returned. Give each run its own run_id, or clear the stored question.'
        )

    def __reduce__(self) -> tuple[type[DifferentQuestionsError], tuple[AskUserRequest, AskUserRequest]]:
        # Built again from its fields, so it survives pickling: a durable engine records a run's error that way.
        return type(self), (self.asked, self.stored)


def _headers(request: AskUserRequest) -> str:
    return ', '.join(repr(printable(question.header)) for question in request.questions)


def check_same_questions(asked: AskUserRequest, stored: AskUserRequest) -> None:
    """Refuse (`DifferentQuestionsError`) to use the answer stored for `stored` as `asked`'s, unless both ask alike.

    Alike: the same questions (headers, texts, options, multi-select, recommended) in the same order, and the
    same `notes`. Stores call it wherever they would return a remembered answer or join a waiting question.
    """
    if asked.questions != stored.questions or asked.notes != stored.notes:
        raise DifferentQuestionsError(asked, stored)


class CannotAskError(RuntimeError):
    """A front end has no way to reach a person here: no terminal to draw on, no display, a missing extra.

    Raised by shipped answerers at call time, with a message naming what is missing and the
    alternatives, so that a misconfigured deployment fails at once instead of hanging.
    """


def with_addressing(request: AskUserRequest, data: Mapping[str, Any]) -> AskUserRequest:
    """`request` with the audience and context `data` holds (as `addressing_json` wrote them), read defensively."""
    if 'audience' not in data and 'context' not in data:
        return request
    return replace(
        request,
        audience=audience_from_json(data.get('audience')),
        context=context_from_json(data.get('context')),
    )
