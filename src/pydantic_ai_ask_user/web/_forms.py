"""Reading the answer form: what a person picked or wrote per question, and what is wrong with it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Question
from pydantic_ai_ask_user._i18n import Translator, translator
from pydantic_ai_ask_user._text import describe_character, find_forbidden_character, is_blank
from pydantic_ai_ask_user.checks import check_custom_answer

__all__ = ('Entered', 'FormResult', 'FormFields', 'FIELDS', 'read_form')


@dataclass(frozen=True)
class FormFields:
    """The names and values of the answer form's fields: the template draws them from here, `read_form` reads them."""

    csrf: str = 'csrf'
    """The hidden field with the form's CSRF token."""

    action: str = 'action'
    """The name of the two submit buttons; its value says which was pressed."""

    answer: str = 'answer'
    """The value of the Submit button."""

    decline: str = 'decline'
    """The value of the Decline button."""

    other: str = 'other'
    """The value of the "Other" radio button or checkbox; option inputs carry their 0-based index."""

    def choice(self, index: int) -> str:
        """The field of question `index`: its radio buttons or checkboxes."""
        return f'q{index}'

    def other_text(self, index: int) -> str:
        """The field of question `index`'s "Other" text box."""
        return f'q{index}-text'

    def note(self, index: int) -> str:
        """The field of question `index`'s note box (only when the request takes notes)."""
        return f'q{index}-note'

    def written(self, form: Mapping[str, Sequence[str]], *, boxes: int, length: int) -> list[str]:
        """What was written in the first `boxes` questions' "Other" and note boxes, each cut to `length`, non-blank.

        In question order, each question's own answer before its note: what a person typed is never lost.
        """
        texts = (form.get(name, ()) for index in range(boxes) for name in (self.other_text(index), self.note(index)))
        return [values[0][:length] for values in texts if values and values[0].strip()]


FIELDS = FormFields()
"""The answer form's fields."""


@dataclass
class Entered:
    """What the person entered for one question, kept to redraw the form when it has errors."""

    picked: frozenset[int] = frozenset()
    """The 0-based indices of the options ticked."""

    other: bool = False
    """Whether "Other" was ticked."""

    text: str = ''
    """What was written in the "Other" box."""

    error: str | None = None
    """What is wrong with this answer, in words for the person, or `None`."""

    note: str = ''
    """What was written in the note box."""

    note_error: str | None = None
    """What is wrong with the note, in words for the person, or `None`."""

    @property
    def errors(self) -> tuple[str, ...]:
        """Every problem with this question's entry: the answer's, then the note's."""
        return tuple(error for error in (self.error, self.note_error) if error)


@dataclass
class FormResult:
    """The response the form makes, or the entries with their errors when it makes none."""

    entered: list[Entered] = field(default_factory=list[Entered])
    """One entry per question, in the request's order."""

    response: AskUserResponse | None = None
    """The response, when every answer is valid."""


def read_form(
    request: AskUserRequest,
    form: Mapping[str, Sequence[str]],
    *,
    allow_custom_answers: bool,
    max_custom_answer_length: int,
    answered_by: str | None = None,
    language: Translator | None = None,
) -> FormResult:
    """Turn posted fields into a response, or into per-question errors that keep what was entered.

    A note per question is read only when the request takes notes; `answered_by` is who the gate let in.
    The errors are in `language` (English by default).
    """
    t = language or translator('en')
    result = FormResult()
    answers: list[AskUserAnswer] = []
    for index, question in enumerate(request.questions):
        entered, answer = _read_question(
            question,
            form.get(FIELDS.choice(index), ()),
            _first(form.get(FIELDS.other_text(index), ())),
            allow_custom_answers=allow_custom_answers,
            max_custom_answer_length=max_custom_answer_length,
            t=t,
        )
        if request.notes:
            entered.note = _first(form.get(FIELDS.note(index), ()))
            note = entered.note.replace('\r\n', '\n').replace('\r', '\n')
            if note.strip():
                entered.note_error = _text_problem(note, max_custom_answer_length, t, note=True)
                if answer is not None and entered.note_error is None:
                    answer = AskUserAnswer(
                        header=answer.header, selected=answer.selected, custom_answer=answer.custom_answer, note=note
                    )
        result.entered.append(entered)
        if answer is not None:
            answers.append(answer)
    if all(not entered.errors for entered in result.entered):
        result.response = AskUserResponse(answers=tuple(answers), answered_by=answered_by)
    return result


def _text_problem(text: str, limit: int, t: Translator, *, note: bool) -> str | None:
    """What is wrong with a custom answer or a note the person typed, in their language; `None` if nothing."""
    _ = t.gettext
    if len(text) > limit:
        message = (
            _('Your note is {length} characters long; please keep it to {limit}.')
            if note
            else _('Your answer is {length} characters long; please keep it to {limit}.')
        )
        return message.format(length=len(text), limit=limit)
    if is_blank(text):
        return _('Your note is blank: write something, or clear it.') if note else _('Your answer is blank.')
    if (char := find_forbidden_character(text, allow_newline=True, allow_invisible=True)) is not None:
        message = (
            _('Your note contains {character}; only plain text and line breaks are allowed.')
            if note
            else _('Your answer contains {character}; only plain text and line breaks are allowed.')
        )
        return message.format(character=describe_character(char))
    if (problem := check_custom_answer(text)) is not None:  # pragma: no cover - the checks above cover its rules
        return f'{problem}.'
    return None


def _first(values: Sequence[str]) -> str:
    return values[0] if values else ''


def _read_question(
    question: Question,
    values: Sequence[str],
    text: str,
    *,
    allow_custom_answers: bool,
    max_custom_answer_length: int,
    t: Translator,
) -> tuple[Entered, AskUserAnswer | None]:
    if not allow_custom_answers:
        text = ''
    picked: set[int] = set()
    other = False
    for value in values:
        if value == FIELDS.other and allow_custom_answers:
            other = True
        # The length first: `int()` refuses a string of more than 4,300 digits with an error of its own.
        elif value.isascii() and value.isdigit() and len(value) <= 2 and int(value) < len(question.options):
            picked.add(int(value))
        else:
            error = t.gettext('That choice is not one of the options; pick again.')
            return Entered(frozenset(picked), other, text, error), None
    entered = Entered(frozenset(picked), other, text)
    error, answer = _judge(question, entered, max_custom_answer_length, t)
    entered.error = error
    return entered, answer


def _judge(question: Question, entered: Entered, limit: int, t: Translator) -> tuple[str | None, AskUserAnswer | None]:
    _ = t.gettext
    written = bool(entered.text.strip())
    if entered.other or (written and not entered.picked):
        # "Other" replaces the options: the page unticks them when it is chosen, as the terminal does, and a form
        # sent without the page's script (options and "Other" both ticked) means the same: the words in the box.
        if not written:
            return _('Write your answer in the box under "Other", or pick one of the options.'), None
        text = entered.text.replace('\r\n', '\n').replace('\r', '\n')
        if len(entered.text) > limit:
            text = entered.text
        if (problem := _text_problem(text, limit, t, note=False)) is not None:
            return problem, None
        return None, AskUserAnswer(header=question.header, custom_answer=text)
    if not entered.picked:
        return (_('Pick at least one option.') if question.multi_select else _('Pick one of the options.')), None
    if written:
        return (
            _('You wrote an answer of your own but picked an option: choose "Other" to send it, or clear the box.'),
            None,
        )
    if not question.multi_select and len(entered.picked) > 1:
        return _('Pick only one option.'), None
    labels = tuple(option.label for index, option in enumerate(question.options) if index in entered.picked)
    return None, AskUserAnswer(header=question.header, selected=labels)
