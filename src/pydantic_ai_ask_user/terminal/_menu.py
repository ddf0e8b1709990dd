"""The menu's state machine: which question, which row, what is picked or typed. No I/O, so tests drive it directly."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import ClassVar

from .._answers import (
    MAX_CUSTOM_ANSWER_LENGTH,
    AskUserAnswer,
    AskUserRequest,
    AskUserResponse,
    check_custom_answer,
    check_response,
)
from .._questions import Question
from ._render import Fragment, Line, cell_width, clean, wrap

__all__ = (
    'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH',
    'CUSTOM_ROW_LABEL',
    'Menu',
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


CUSTOM_ROW_LABEL = 'Type my own answer'
"""The label of the row that opens the text field."""

_CARET = '\ue000'
"""A private-use character marking the caret inside the text while it is wrapped; drawn as `_CARET_GLYPH`."""

_CARET_GLYPH = '▏'
"""How the caret is drawn: one cell, between characters."""

STRAY_KEY_HINT = 'To type your own answer, move to "Type my own answer" first (↑↓).'
"""Shown when a letter is pressed on an option row: it types nothing, so a stray `q` never becomes an answer."""

NO_TYPED_ANSWER_HINT = 'This question takes no typed answer; pick an option.'
"""Shown when text is typed or pasted and the menu offers no "Type my own answer" row."""

TEXT_REPLACES_TICKS = 'Typing here unticks {labels}: your own answer replaces the ticked options.'
"""Shown in the text row of a multi-select question with ticked options, before typing unticks them."""

TICKS_REPLACED = 'Your own answer replaces the ticked options: unticked {labels}.'
"""Shown under the text once typing has unticked the options: the screen never shows ticks that will not be sent."""

TEXT_BLOCKS_TICKS = (
    'Your own answer replaces the options: to tick options instead, clear the text in "Type my own answer" first.'
)
"""Shown when an option is ticked while a typed answer is there; the typed answer is kept, not thrown away."""

_INDENT = 5
"""Where option descriptions and typed text start, in cells: under the label, past the marker and number."""


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


class Menu(RenamedCustomOptions):
    """One request, one question at a time: every key a person presses is a method, and `render` draws the state.

    `enter` returns the response once the last question is confirmed, `decline` the cancelled
    response; neither ever answers anything the person did not pick or type.
    """

    _renamed_owner: ClassVar[str] = 'Menu'

    def __init__(
        self,
        request: AskUserRequest,
        *,
        allow_custom_answers: bool = True,
        max_custom_answer_length: int = DEFAULT_MAX_CUSTOM_ANSWER_LENGTH,
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
        self.index = 0
        """The question shown, as an index into `request.questions`."""
        self.message: str | None = None
        """A hint or an error shown under the options until the next key."""
        self.waiting = 0
        """How many more requests are queued behind this one; shown in the title so none is a surprise."""
        self._states = [_State() for _ in request.questions]

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
        return self.allow_custom_answers and self.state.cursor == len(self.question.options)

    def picked_labels(self) -> tuple[str, ...]:
        """The labels that an Enter on an option row would answer with, in the question's order."""
        options = self.question.options
        if self.question.multi_select:
            return self._ticked_labels()
        return (options[self.state.cursor].label,) if self.state.cursor < len(options) else ()

    def _ticked_labels(self) -> tuple[str, ...]:
        return tuple(option.label for index, option in enumerate(self.question.options) if index in self.state.picked)

    # Moving.

    def _rows(self) -> int:
        return len(self.question.options) + (1 if self.allow_custom_answers else 0)

    def up(self) -> None:
        """Highlight the row above, wrapping round to the last."""
        self.message = None
        self.state.cursor = (self.state.cursor - 1) % self._rows()

    def down(self) -> None:
        """Highlight the row below, wrapping round to the first."""
        self.message = None
        self.state.cursor = (self.state.cursor + 1) % self._rows()

    def back(self) -> None:
        """Go back to the previous question, with its answer as the person left it."""
        self.message = None
        if self.index == 0:
            self.message = 'This is the first question.'
            return
        self.index -= 1

    # Picking.

    def pick(self, number: int) -> None:
        """The digit `number` (1-based): select that option, or toggle it in a multi-select question."""
        self.message = None
        if not 1 <= number <= len(self.question.options):
            self.message = f'There is no option {number}.'
            return
        self.state.cursor = number - 1
        if self.question.multi_select:
            self._tick(number - 1)

    def toggle(self) -> None:
        """Space: toggle the highlighted option of a multi-select question."""
        self.message = None
        if not self.question.multi_select:
            self.message = 'Pick one: Enter chooses the highlighted option.'
            return
        self._tick(self.state.cursor)

    def _tick(self, index: int) -> None:
        # A typed answer replaces the options, so ticks and a typed answer are never both on screen.
        state = self.state
        if state.text.strip():
            self.message = TEXT_BLOCKS_TICKS
            return
        state.text, state.caret, state.unticked = '', 0, ()
        state.picked ^= {index}

    def type(self, text: str) -> None:
        """A key that is no binding: text in the text row; on an option row a shortcut (a digit, j, k, Space) or a hint.

        A letter on an option row types nothing: the text row must be reached first, so a stray key
        never becomes an answer.
        """
        if self.typing:
            self._insert(text)
        elif text in ('j', 'k', ' ') or (len(text) == 1 and text in '0123456789'):
            self._shortcut(text)
        else:
            self.message = STRAY_KEY_HINT if self.allow_custom_answers else NO_TYPED_ANSWER_HINT

    def paste(self, text: str) -> None:
        """A bracketed paste: always text, never shortcuts; opens the text field."""
        if not self.allow_custom_answers:
            self.message = NO_TYPED_ANSWER_HINT
            return
        self.state.cursor = len(self.question.options)
        self._insert(text.replace('\r\n', '\n').replace('\r', '\n'))

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

    # Editing the text row.

    def _insert(self, text: str) -> None:
        state = self.state
        room = self.max_custom_answer_length - len(state.text)
        self.message = None
        if text and state.picked:
            state.unticked = self._ticked_labels()
            state.picked.clear()
        if len(text) > room:
            text = text[: max(room, 0)]
            self.message = f'Your answer can be at most {self.max_custom_answer_length} characters.'
        state.text = state.text[: state.caret] + text + state.text[state.caret :]
        state.caret += len(text)

    def backspace(self) -> None:
        """Delete the character before the caret."""
        self.message = None
        state = self.state
        if self.typing and state.caret > 0:
            state.text = state.text[: state.caret - 1] + state.text[state.caret :]
            state.caret -= 1

    def delete(self) -> None:
        """Delete the character under the caret."""
        self.message = None
        state = self.state
        if self.typing and state.caret < len(state.text):
            state.text = state.text[: state.caret] + state.text[state.caret + 1 :]

    def left(self) -> None:
        """Left: move the caret in the text row, else go back a question."""
        if self.typing:
            self.message = None
            self.state.caret = max(self.state.caret - 1, 0)
        else:
            self.back()

    def right(self) -> None:
        """Right: move the caret in the text row."""
        self.message = None
        if self.typing:
            self.state.caret = min(self.state.caret + 1, len(self.state.text))

    def home(self) -> None:
        """Move the caret to the start of the text."""
        self.state.caret = 0

    def end(self) -> None:
        """Move the caret to the end of the text."""
        self.state.caret = len(self.state.text)

    # Finishing.

    def enter(self) -> AskUserResponse | None:
        """Confirm the question shown; the response once the last one is confirmed, else `None`."""
        self.message = None
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
        # Enter sends what is shown. In a multi-select question the ticks and a typed answer are never both
        # there, so whichever is there is the answer, wherever the cursor is.
        if self.question.multi_select and not state.picked and (self.typing or state.text.strip()):
            return self._typed_answer()
        if self.typing and not self.question.multi_select:
            return self._typed_answer()
        labels = self.picked_labels()
        if not labels:
            self.message = 'Pick at least one option (Space or its number), then press Enter.'
            return None
        return AskUserAnswer(header=header, selected=labels)

    def _typed_answer(self) -> AskUserAnswer | None:
        text = self.state.text.strip()
        if not text:
            self.message = 'Type your answer first, or pick an option with Up/Down.'
            return None
        if (problem := check_custom_answer(text)) is not None:
            self.message = f'This answer cannot be sent: it {problem}.'
            return None
        return AskUserAnswer(header=self.question.header, custom_answer=text)

    def decline(self) -> AskUserResponse:
        """Esc, Ctrl-C or end of input: the person declines the whole request."""
        return AskUserResponse(cancelled=True)

    # Drawing.

    def render(self, width: int) -> list[Line]:
        """The rows to draw at `width` cells; every text has gone through `_render.wrap` or `_render.clean`."""
        width = max(width, 10)
        question = self.question
        kind = 'pick one or more' if question.multi_select else 'pick one'
        total = len(self.request.questions)
        rows: list[Line] = []
        title = f'{self.index + 1}/{total} {question.header} · {kind}'
        if self.waiting:
            title += f' · {self.waiting} more request{"s" if self.waiting > 1 else ""} waiting'
        rows.extend([('class:title', row)] for row in wrap(title, width))
        rows.extend([('class:question', row)] for row in wrap(question.question, width))
        for number in range(1, len(question.options) + 1):
            rows.extend(self._option_rows(number, width))
        if self.allow_custom_answers:
            rows.extend(self._text_rows(width))
        if self.message:
            rows.extend([('class:message', row)] for row in wrap(self.message, width))
        rows.extend([('class:help', row)] for row in wrap(self._help(), width))
        return rows

    def _option_rows(self, number: int, width: int) -> list[Line]:
        index = number - 1
        option = self.question.options[index]
        current = self.state.cursor == index
        pointer = '❯ ' if current else '  '
        if self.question.multi_select:
            pointer += '[x] ' if index in self.state.picked else '[ ] '
        lead = f'{pointer}{number}. '
        style = 'class:current' if current else 'class:option'
        label_rows = wrap(option.label, width - cell_width(lead))
        rows: list[Line] = []
        for row_number, row in enumerate(label_rows):
            first: list[Fragment] = [('[SetCursorPosition]', '')] if current and row_number == 0 else []
            rows.append([*first, (style, (lead if row_number == 0 else ' ' * cell_width(lead)) + row)])
        if option.description:
            indent = ' ' * min(cell_width(lead), _INDENT + (4 if self.question.multi_select else 0))
            rows.extend([('class:description', indent + row)] for row in wrap(option.description, width - len(indent)))
        return rows

    def _text_rows(self, width: int) -> list[Line]:
        state = self.state
        lead = '❯ ✎ ' if self.typing else '  ✎ '
        if not self.typing:
            shown = state.text.replace('\n', ' ') if state.text else CUSTOM_ROW_LABEL
            row = clean(shown)
            if cell_width(lead + row) > width:
                row = wrap(row, width - cell_width(lead) - 1)[0] + '…'
            return [[('class:custom', lead + row)]]
        marked = state.text[: state.caret] + _CARET + state.text[state.caret :]
        rows: list[Line] = [[('[SetCursorPosition]', ''), ('class:current', f'{lead}{CUSTOM_ROW_LABEL}:')]]
        for row in wrap(marked, width - _INDENT):
            before, caret, after = row.partition(_CARET)
            line: Line = [('class:typed', ' ' * _INDENT + before)]
            if caret:
                line.append(('class:caret', _CARET_GLYPH))
            line.append(('class:typed', after))
            rows.append(line)
        counter = f'{len(state.text)}/{self.max_custom_answer_length} characters'
        rows.append([('class:counter', ' ' * _INDENT + counter)])
        if state.picked:
            note = TEXT_REPLACES_TICKS.format(labels=', '.join(self._ticked_labels()))
        elif state.text and state.unticked:
            note = TICKS_REPLACED.format(labels=', '.join(state.unticked))
        else:
            return rows
        rows.extend([('class:message', ' ' * _INDENT + row)] for row in wrap(note, width - _INDENT))
        return rows

    def _help(self) -> str:
        back = ' · Shift-Tab back' if self.index else ''
        if self.typing:
            enter = 'Enter confirm the ticked options' if self.state.picked else 'Enter send'
            return f'{enter} · ←→ move in text · ↑↓ leave the text{back} · Esc decline'
        count = len(self.question.options)
        if self.question.multi_select:
            keys = f'↑↓ move · Space or 1-{count} toggle · Enter confirm'
        else:
            keys = f'↑↓ move · 1-{count} pick · Enter confirm'
        back = ' · ← back' if self.index else ''
        return f'{keys}{back} · Esc decline'
