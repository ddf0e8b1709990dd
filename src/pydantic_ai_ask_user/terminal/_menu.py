"""The menu's state machine: which question, which row, what is picked or typed. No I/O, so tests drive it directly."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from .._answers import (
    MAX_CUSTOM_ANSWER_LENGTH,
    MAX_NOTE_LENGTH,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    check_custom_answer,
    check_response,
)
from .._i18n import DEFAULT_LANGUAGE, N_, translator
from .._questions import Question
from .._text import find_forbidden_character
from ._render import Fragment, Line, cell_width, clean, wrap, wrap_parts

__all__ = (
    'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH',
    'CUSTOM_ROW_LABEL',
    'NOTE_LABEL',
    'RECOMMENDED_MARK',
    'URGENT_SECONDS',
    'Menu',
    'format_time_left',
    'warn_renamed',
    'RenamedCustomOptions',
    'renamed_custom_options',
)

DEFAULT_MAX_CUSTOM_ANSWER_LENGTH = MAX_CUSTOM_ANSWER_LENGTH
"""The most characters a person may type as their own answer, unless `TerminalAnswerer` sets a lower limit."""

RENAMED = {
    'allow_custom': 'allow_custom_answers',
    'max_custom_length': 'max_custom_answer_length',
    'DEFAULT_MAX_CUSTOM_LENGTH': 'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH',
}
"""The terminal's old names for the custom-answer options, and the one spelling every front end uses now."""


def warn_renamed(old: str, where: str, *, stacklevel: int = 3) -> str:
    """Warn that `old` (in `where`) is deprecated, naming its new spelling; return the new name."""
    new = RENAMED[old]
    warnings.warn(
        f'{where}: {old} is deprecated, use {new} (the same name in every front end)',
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return new


def renamed_custom_options(
    owner: str,
    allow_custom_answers: bool,
    max_custom_answer_length: int,
    allow_custom: bool | None,
    max_custom_length: int | None,
) -> tuple[bool, int]:
    """The custom-answer options of `owner`'s constructor, given in either spelling; an old one used warns."""
    if allow_custom is not None:
        # stacklevel 4: past this function and the constructor, at the line that built the object.
        warn_renamed('allow_custom', owner, stacklevel=4)
        allow_custom_answers = allow_custom
    if max_custom_length is not None:
        warn_renamed('max_custom_length', owner, stacklevel=4)
        max_custom_answer_length = max_custom_length
    return allow_custom_answers, max_custom_answer_length


class RenamedCustomOptions:
    """The deprecated `allow_custom` and `max_custom_length` spellings of the custom-answer options, read-only."""

    _renamed_owner: ClassVar[str]
    """The class name the deprecation warnings give."""

    allow_custom_answers: bool
    max_custom_answer_length: int

    @property
    def allow_custom(self) -> bool:
        """Deprecated: `allow_custom_answers`."""
        warn_renamed('allow_custom', self._renamed_owner)
        return self.allow_custom_answers

    @property
    def max_custom_length(self) -> int:
        """Deprecated: `max_custom_answer_length`."""
        warn_renamed('max_custom_length', self._renamed_owner)
        return self.max_custom_answer_length


CUSTOM_ROW_LABEL = N_('Type my own answer')
"""The label of the row that opens the text field."""

HELP_SEPARATOR = ' · '
"""Between two key hints of the help row."""

_CARET = '\ue000'
"""A private-use character marking the caret inside the text while it is wrapped; drawn as `_CARET_GLYPH`."""

_CARET_GLYPH = '▏'
"""How the caret is drawn: one cell, between characters."""

STRAY_KEY_HINT = N_('To type your own answer, move to "Type my own answer" first (↑↓).')
"""Shown when a letter is pressed on an option row: it types nothing, so a stray `q` never becomes an answer."""

NO_TYPED_ANSWER_HINT = N_('This question takes no typed answer; pick an option.')
"""Shown when text is typed or pasted and the menu offers no "Type my own answer" row."""

TEXT_REPLACES_TICKS = N_('Typing here unticks {labels}: your own answer replaces the ticked options.')
"""Shown in the text row of a multi-select question with ticked options, before typing unticks them."""

TICKS_REPLACED = N_('Your own answer replaces the ticked options: unticked {labels}.')
"""Shown under the text once typing has unticked the options: the screen never shows ticks that will not be sent."""

TEXT_BLOCKS_TICKS = N_(
    'Your own answer replaces the options: to tick options instead, clear the text in "Type my own answer" first.'
)
"""Shown when an option is ticked while a typed answer is there; the typed answer is kept, not thrown away."""

NOTE_LABEL = N_('Note:')
"""What the note row of a question starts with, while it is edited and once it holds a note."""

RECOMMENDED_MARK = N_('(recommended)')
"""Drawn after the label of the option the model recommends (`Question.recommended`)."""

URGENT_SECONDS = 60
"""Under this many seconds left before `AskUserRequest.deadline`, the time left is drawn in the urgent style."""

_INDENT = 5
"""Where option descriptions and typed text start, in cells: under the label, past the marker and number."""


CONTEXT_SUMMARY_ROWS = 4
"""The most rows of a question's context summary the menu shows above it."""


def _asked_by(gettext: Callable[[str], str], agent_name: str | None) -> str | None:
    return None if agent_name is None else gettext('Asked by {agent}').format(agent=agent_name)


def format_time_left(seconds: float) -> str:
    """`seconds` as a person reads a countdown: `4:59`, `0:07`, `1:02:03`; rounded up, never below `0:00`."""
    total = max(math.ceil(seconds), 0)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f'{hours}:{minutes:02}:{secs:02}' if hours else f'{minutes}:{secs:02}'


@dataclass
class _State:
    """What the person has done on one question; kept when they go back to it."""

    cursor: int = 0
    """The highlighted row: an option's index, or the number of options for the text row."""

    picked: set[int] = field(default_factory=set[int])
    """Toggled options of a multi-select question."""

    text: str = ''
    """What they typed in the text row."""

    caret: int = 0
    """Where typing goes in `text`, as an index."""

    answer: AskUserAnswer | None = None
    """Their confirmed answer, once they pressed Enter on this question."""

    unticked: tuple[str, ...] = ()
    """The options typing unticked, named under the text while it is being typed, so no tick vanishes unsaid."""

    note: str = ''
    """The note they wrote for this question (only when the request has `notes=True`); empty for none."""

    note_caret: int = 0
    """Where typing goes in `note`, as an index."""


class Menu(RenamedCustomOptions):
    """One request, one question at a time: every key a person presses is a method, and `render` draws the state.

    `enter` returns the response once the last question is confirmed, `decline` the cancelled
    response; neither ever answers anything the person did not pick or type. The recommended option
    (`Question.recommended`) is highlighted first, never picked or ticked by the menu itself.
    """

    _renamed_owner: ClassVar[str] = 'Menu'

    def __init__(
        self,
        request: AskUserRequest,
        *,
        allow_custom_answers: bool = True,
        max_custom_answer_length: int = DEFAULT_MAX_CUSTOM_ANSWER_LENGTH,
        language: str = DEFAULT_LANGUAGE,
        clock: Callable[[], float] = time.time,
        allow_custom: bool | None = None,
        max_custom_length: int | None = None,
    ) -> None:
        allow_custom_answers, max_custom_answer_length = renamed_custom_options(
            'Menu', allow_custom_answers, max_custom_answer_length, allow_custom, max_custom_length
        )
        self.request = request
        self.allow_custom_answers = allow_custom_answers
        """Whether the menu offers a "Type my own answer" row."""
        self.max_custom_answer_length = max_custom_answer_length
        """The most characters the person may type as their own answer."""
        self.max_note_length = min(max_custom_answer_length, MAX_NOTE_LENGTH)
        """The most characters of a note (`request.notes`): the custom-answer limit, at most `MAX_NOTE_LENGTH`."""
        self.translator = translator(language)
        """Where every string the menu draws comes from: the catalog of `language`, English without one."""
        self.clock = clock
        """The `time.time()` the time left before `request.deadline` is measured with."""
        self.index = 0
        """The question shown, as an index into `request.questions`."""
        self.message: str | None = None
        """A hint or an error shown under the options until the next key."""
        self.waiting = 0
        """How many more requests are queued behind this one; shown in the title so none is a surprise."""
        self.noting = False
        """Whether the note of the question shown is being edited (Tab opens and closes it)."""
        self._states = [_State(cursor=self._recommended_index(question)) for question in request.questions]

    @staticmethod
    def _recommended_index(question: Question) -> int:
        labels = [option.label for option in question.options]
        return labels.index(question.recommended) if question.recommended in labels else 0

    def _(self, message: str) -> str:
        return self.translator.gettext(message)

    # What is shown.

    @property
    def question(self) -> Question:
        """The question shown."""
        return self.request.questions[self.index]

    @property
    def state(self) -> _State:
        """What the person has done on the question shown."""
        return self._states[self.index]

    @property
    def typing(self) -> bool:
        """Whether the highlighted row is the text row, so that keys are text, not shortcuts."""
        return self.allow_custom_answers and self.state.cursor == len(self.question.options) and not self.noting

    def picked_labels(self) -> tuple[str, ...]:
        """The labels that an Enter on an option row would answer with, in the question's order."""
        options = self.question.options
        if self.question.multi_select:
            return self._ticked_labels()
        return (options[self.state.cursor].label,) if self.state.cursor < len(options) else ()

    def _ticked_labels(self) -> tuple[str, ...]:
        return tuple(option.label for index, option in enumerate(self.question.options) if index in self.state.picked)

    def time_left(self) -> float | None:
        """Seconds until `request.deadline`, or `None` when the request has none."""
        deadline = self.request.deadline
        return None if deadline is None else deadline - self.clock()

    # Moving.

    def _rows(self) -> int:
        return len(self.question.options) + (1 if self.allow_custom_answers else 0)

    def up(self) -> None:
        """Highlight the row above, wrapping round to the last; in the note, leave it."""
        self.message = None
        if self.noting:
            self.close_note()
            return
        self.state.cursor = (self.state.cursor - 1) % self._rows()

    def down(self) -> None:
        """Highlight the row below, wrapping round to the first; in the note, leave it."""
        self.message = None
        if self.noting:
            self.close_note()
            return
        self.state.cursor = (self.state.cursor + 1) % self._rows()

    def back(self) -> None:
        """Go back to the previous question, with its answer as the person left it."""
        self.message = None
        if self.noting and not self.close_note():
            return
        if self.index == 0:
            self.message = self._('This is the first question.')
            return
        self.index -= 1

    # Notes.

    def note(self) -> None:
        """Tab: open the note of the question shown, or close it; only when the request takes notes."""
        if not self.request.notes:
            return
        self.message = None
        if self.noting:
            self.close_note()
            return
        self.noting = True
        self.state.note_caret = len(self.state.note)

    def close_note(self) -> bool:
        """Leave the note being edited; whether it was left (a note that breaks the rules stays open, with a message).

        A blank note is no note: clearing its text clears it.
        """
        if not self.noting:
            return True
        state = self.state
        text = state.note.strip()
        if text and (problem := self._text_problem(text)) is not None:
            self.message = problem
            return False
        if not text:
            state.note, state.note_caret = '', 0
        self.noting = False
        return True

    # Picking.

    def pick(self, number: int) -> None:
        """The digit `number` (1-based): select that option, or toggle it in a multi-select question."""
        self.message = None
        if not 1 <= number <= len(self.question.options):
            self.message = self._('There is no option {number}.').format(number=number)
            return
        self.state.cursor = number - 1
        if self.question.multi_select:
            self._tick(number - 1)

    def toggle(self) -> None:
        """Space: toggle the highlighted option of a multi-select question."""
        self.message = None
        if not self.question.multi_select:
            self.message = self._('Pick one: Enter chooses the highlighted option.')
            return
        self._tick(self.state.cursor)

    def _tick(self, index: int) -> None:
        # A typed answer replaces the options, so ticks and a typed answer are never both on screen.
        state = self.state
        if state.text.strip():
            self.message = self._(TEXT_BLOCKS_TICKS)
            return
        state.text, state.caret, state.unticked = '', 0, ()
        state.picked ^= {index}

    def type(self, text: str) -> None:
        """A key that is no binding: text in the text row or the note; on an option row a shortcut or a hint.

        The shortcuts are a digit, j, k and Space. A letter on an option row types nothing: the text row
        must be reached first, so a stray key never becomes an answer.
        """
        if self.typing or self.noting:
            self._insert(text)
        elif text in ('j', 'k', ' ') or (len(text) == 1 and text in '0123456789'):
            self._shortcut(text)
        else:
            self.message = self._(STRAY_KEY_HINT if self.allow_custom_answers else NO_TYPED_ANSWER_HINT)

    def paste(self, text: str) -> None:
        """A bracketed paste: always text, never shortcuts; into the note being edited, else opens the text field."""
        text = text.replace('\r\n', '\n').replace('\r', '\n')
        if self.noting:
            self._insert(text)
            return
        if not self.allow_custom_answers:
            self.message = self._(NO_TYPED_ANSWER_HINT)
            return
        self.state.cursor = len(self.question.options)
        self._insert(text)

    def _shortcut(self, key: str) -> None:
        if key == 'j':
            self._next_option(1)
        elif key == 'k':
            self._next_option(-1)
        elif key == ' ':
            self.toggle()
        else:
            self.pick(int(key))

    def _next_option(self, step: int) -> None:
        # j and k are letters, and letters are text in the text row: they move among the options only.
        self.message = None
        self.state.cursor = (self.state.cursor + step) % len(self.question.options)

    # Editing the text row or the note: one field at a time.

    def _field(self) -> tuple[str, int]:
        state = self.state
        return (state.note, state.note_caret) if self.noting else (state.text, state.caret)

    def _set_field(self, text: str, caret: int) -> None:
        state = self.state
        if self.noting:
            state.note, state.note_caret = text, caret
        else:
            state.text, state.caret = text, caret

    @property
    def _editing(self) -> bool:
        return self.noting or self.typing

    def _insert(self, text: str) -> None:
        state = self.state
        current, caret = self._field()
        limit = self.max_note_length if self.noting else self.max_custom_answer_length
        room = limit - len(current)
        self.message = None
        if text and state.picked and not self.noting:
            state.unticked = self._ticked_labels()
            state.picked.clear()
        if len(text) > room:
            text = text[: max(room, 0)]
            if self.noting:
                self.message = self.translator.ngettext(
                    'Your note can be at most {count} character.', 'Your note can be at most {count} characters.', limit
                ).format(count=limit)
            else:
                self.message = self.translator.ngettext(
                    'Your answer can be at most {count} character.',
                    'Your answer can be at most {count} characters.',
                    limit,
                ).format(count=limit)
        self._set_field(current[:caret] + text + current[caret:], caret + len(text))

    def backspace(self) -> None:
        """Delete the character before the caret."""
        self.message = None
        current, caret = self._field()
        if self._editing and caret > 0:
            self._set_field(current[: caret - 1] + current[caret:], caret - 1)

    def delete(self) -> None:
        """Delete the character under the caret."""
        self.message = None
        current, caret = self._field()
        if self._editing and caret < len(current):
            self._set_field(current[:caret] + current[caret + 1 :], caret)

    def left(self) -> None:
        """Left: move the caret in the text row or the note, else go back a question."""
        if self._editing:
            self.message = None
            current, caret = self._field()
            self._set_field(current, max(caret - 1, 0))
        else:
            self.back()

    def right(self) -> None:
        """Right: move the caret in the text row or the note."""
        self.message = None
        if self._editing:
            current, caret = self._field()
            self._set_field(current, min(caret + 1, len(current)))

    def home(self) -> None:
        """Move the caret to the start of the text (of the note, while it is edited)."""
        current, _ = self._field()
        self._set_field(current, 0)

    def end(self) -> None:
        """Move the caret to the end of the text (of the note, while it is edited)."""
        current, _ = self._field()
        self._set_field(current, len(current))

    # Finishing.

    def enter(self) -> AskUserResponse | None:
        """Confirm the question shown; the response once the last one is confirmed, else `None`.

        In the note, Enter only closes it: the question is confirmed by the next Enter.
        """
        self.message = None
        if self.noting:
            self.close_note()
            return None
        answer = self._confirm()
        if answer is None:
            return None
        self.state.answer = answer
        if self.index + 1 < len(self.request.questions):
            self.index += 1
            return None
        answers = tuple(state.answer for state in self._states if state.answer is not None)
        response = AskUserResponse(answers=answers)
        check_response(self.request, response)
        return response

    def _confirm(self) -> AskUserAnswer | None:
        header = self.question.header
        state = self.state
        note = (state.note.strip() or None) if self.request.notes else None
        # Enter sends what is shown. In a multi-select question the ticks and a typed answer are never both
        # there, so whichever is there is the answer, wherever the cursor is.
        if self.question.multi_select and not state.picked and (self.typing or state.text.strip()):
            return self._typed_answer(note)
        if self.typing and not self.question.multi_select:
            return self._typed_answer(note)
        labels = self.picked_labels()
        if not labels:
            self.message = self._('Pick at least one option (Space or its number), then press Enter.')
            return None
        return AskUserAnswer(header=header, selected=labels, note=note)

    def _typed_answer(self, note: str | None) -> AskUserAnswer | None:
        text = self.state.text.strip()
        if not text:
            self.message = self._('Type your answer first, or pick an option with Up/Down.')
            return None
        if (problem := self._text_problem(text)) is not None:
            self.message = problem
            return None
        return AskUserAnswer(header=self.question.header, custom_answer=text, note=note)

    def _text_problem(self, text: str) -> str | None:
        # `check_custom_answer` is the rule (for a note too); the message is the person's language.
        if check_custom_answer(text) is None:
            return None
        char = find_forbidden_character(text, allow_newline=True, allow_invisible=True)
        if char is None:
            return self._('This text cannot be sent: it is blank.')
        return self._(
            'This text cannot be sent: it contains {character}; only plain text and line breaks are allowed.'
        ).format(character=f'U+{ord(char):04X}')

    def decline(self) -> AskUserResponse:
        """Esc, Ctrl-C or end of input: the person declines the whole request."""
        return AskUserResponse(cancelled=True)

    # Drawing.

    def render(self, width: int) -> list[Line]:
        """The rows to draw at `width` cells; every text has gone through `_render.wrap` or `_render.clean`."""
        _ = self._
        width = max(width, 10)
        question = self.question
        kind = _('pick one or more') if question.multi_select else _('pick one')
        total = len(self.request.questions)
        rows: list[Line] = self._context_rows(width)
        title = f'{self.index + 1}/{total} {question.header} · {kind}'
        if self.waiting:
            waiting = self.translator.ngettext(
                '{count} more request waiting', '{count} more requests waiting', self.waiting
            ).format(count=self.waiting)
            title += f' · {waiting}'
        rows.extend([('class:title', row)] for row in wrap(title, width))
        self._add_time_left(rows, width)
        rows.extend([('class:question', row)] for row in wrap(question.question, width))
        for number in range(1, len(question.options) + 1):
            rows.extend(self._option_rows(number, width))
        if self.allow_custom_answers:
            rows.extend(self._text_rows(width))
        if self.request.notes:
            rows.extend(self._note_rows(width))
        if self.message:
            rows.extend([('class:message', row)] for row in wrap(self.message, width))
        rows.extend([('class:help', row)] for row in wrap_parts(self._help(), HELP_SEPARATOR, width))
        return rows

    def _context_rows(self, width: int) -> list[Line]:
        """Where the question comes from, above it: its title and agent, a few rows of its summary, its link.

        The summary is shown as written (no Markdown is drawn in a terminal), cut to `CONTEXT_SUMMARY_ROWS` rows.
        Every part is cleaned by `wrap`, as model-written text: it is the application's, but may hold anyone's words.
        Only a context the application wrote (a title, a summary or a link) is shown: the person at a terminal runs
        the agent themselves, and the agent's name and conversation id alone would be a row of noise on every question.
        """
        context = self.request.context
        if context is None or not (context.title or context.summary or context.link):
            return []
        head = [part for part in (context.title, _asked_by(self._, context.agent_name)) if part]
        rows: list[Line] = [[('class:context', row)] for row in wrap(' · '.join(head), width)] if head else []
        if context.summary:
            summary = wrap(context.summary, width)
            if len(summary) > CONTEXT_SUMMARY_ROWS:
                summary = [*summary[: CONTEXT_SUMMARY_ROWS - 1], summary[CONTEXT_SUMMARY_ROWS - 1][: width - 1] + '…']
            rows.extend([('class:context', row)] for row in summary)
        if context.link:
            rows.extend([('class:context', row)] for row in wrap(context.link, width))
        return rows

    def _add_time_left(self, rows: list[Line], width: int) -> None:
        # On the title's last row when it fits, else on a row of its own.
        left = self.time_left()
        if left is None:
            return
        text = self._('{time} left').format(time=format_time_left(left))
        style = 'class:time-urgent' if left < URGENT_SECONDS else 'class:time'
        last = rows[-1]
        used = sum(cell_width(part) for _style, part in last)
        if used + cell_width(f' · {text}') <= width:
            last.extend([('class:title', ' · '), (style, clean(text))])
        else:
            rows.extend([(style, row)] for row in wrap(text, width))

    def _option_rows(self, number: int, width: int) -> list[Line]:
        index = number - 1
        option = self.question.options[index]
        current = self.state.cursor == index
        # One `❯`, where the keys go: while a note is edited it is on the note, and this row keeps only its highlight.
        pointer = '❯ ' if current and not self.noting else '  '
        if self.question.multi_select:
            pointer += '[x] ' if index in self.state.picked else '[ ] '
        lead = f'{pointer}{number}. '
        style = 'class:current' if current else 'class:option'
        label_rows = wrap(option.label, width - cell_width(lead))
        rows: list[Line] = []
        for row_number, row in enumerate(label_rows):
            focused = current and row_number == 0 and not self.noting
            first: list[Fragment] = [('[SetCursorPosition]', '')] if focused else []
            rows.append([*first, (style, (lead if row_number == 0 else ' ' * cell_width(lead)) + row)])
        if option.label == self.question.recommended:
            mark = self._(RECOMMENDED_MARK)
            mark_style = f'{style} class:recommended'
            if cell_width(lead) + cell_width(label_rows[-1]) + 1 + cell_width(mark) <= width:
                rows[-1].append((mark_style, f' {mark}'))
            else:
                rows.append([(mark_style, ' ' * cell_width(lead) + mark)])
        if option.description:
            indent = ' ' * min(cell_width(lead), _INDENT + (4 if self.question.multi_select else 0))
            rows.extend([('class:description', indent + row)] for row in wrap(option.description, width - len(indent)))
        return rows

    def _field_rows(self, text: str, caret: int, limit: int, width: int) -> list[Line]:
        # The text being edited, wrapped under its row with the caret drawn in it, and its counter.
        marked = text[:caret] + _CARET + text[caret:]
        rows: list[Line] = []
        for row in wrap(marked, width - _INDENT):
            before, mark, after = row.partition(_CARET)
            line: Line = [('class:typed', ' ' * _INDENT + before)]
            if mark:
                line.append(('class:caret', _CARET_GLYPH))
            line.append(('class:typed', after))
            rows.append(line)
        counter = self._('{count}/{limit} characters').format(count=len(text), limit=limit)
        rows.extend([('class:counter', ' ' * _INDENT + row)] for row in wrap(counter, width - _INDENT))
        return rows

    @staticmethod
    def _one_row(lead: str, text: str, width: int) -> str:
        row = clean(text.replace('\n', ' '))
        if cell_width(lead + row) > width:
            row = wrap(row, width - cell_width(lead) - 1)[0] + '…'
        return lead + row

    def _text_rows(self, width: int) -> list[Line]:
        state = self.state
        lead = '❯ ✎ ' if self.typing else '  ✎ '
        label = self._(CUSTOM_ROW_LABEL)
        if not self.typing:
            return [[('class:custom', self._one_row(lead, state.text or label, width))]]
        rows: list[Line] = [[('[SetCursorPosition]', ''), ('class:current', f'{lead}{label}:')]]
        rows.extend(self._field_rows(state.text, state.caret, self.max_custom_answer_length, width))
        if state.picked:
            note = self._(TEXT_REPLACES_TICKS).format(labels=', '.join(self._ticked_labels()))
        elif state.text and state.unticked:
            note = self._(TICKS_REPLACED).format(labels=', '.join(state.unticked))
        else:
            return rows
        rows.extend([('class:message', ' ' * _INDENT + row)] for row in wrap(note, width - _INDENT))
        return rows

    def _note_rows(self, width: int) -> list[Line]:
        state = self.state
        label = self._(NOTE_LABEL)
        if self.noting:
            rows: list[Line] = [[('[SetCursorPosition]', ''), ('class:current', f'❯ + {label}')]]
            rows.extend(self._field_rows(state.note, state.note_caret, self.max_note_length, width))
            return rows
        if not state.note:
            return []
        return [[('class:note', self._one_row('  + ', f'{label} {state.note}', width))]]

    def _help(self) -> list[str]:
        """The key hints for the present state, each drawn whole (`wrap_parts` breaks the help between hints)."""
        _ = self._
        if self.noting:
            return [_('Enter or Tab done'), _('←→ move in text'), _('Esc decline')]
        parts: list[str] = []
        if self.typing:
            parts.append(_('Enter confirm the ticked options') if self.state.picked else _('Enter send'))
            parts.extend((_('←→ move in text'), _('↑↓ leave the text')))
            if self.index:
                parts.append(_('Shift-Tab back'))
        else:
            count = len(self.question.options)
            parts.append(_('↑↓ move'))
            if self.question.multi_select:
                parts.append(_('Space or 1-{count} toggle').format(count=count))
            else:
                parts.append(_('1-{count} pick').format(count=count))
            parts.append(_('Enter confirm'))
            if self.index:
                parts.append(_('← back'))
        if self.request.notes:
            parts.append(_('Tab note'))
        parts.append(_('Esc decline'))
        return parts
