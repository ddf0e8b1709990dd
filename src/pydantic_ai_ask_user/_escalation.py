"""Escalation: a waiting question or approval handed on to other people when nobody answered it in time.

`Escalation(after=..., to=...)` is one step of a policy, given as `AskUser(escalate=...)` (and to the waiting
handlers' approvals, as their `audience` is): when the item is still waiting `after` seconds after it was asked, its
store forwards it to `to` (added to whom it is addressed, or, with `replace=True`, instead of them), as `forward`
would, with a note saying it escalated. The policy travels with the item (`AskUserRequest.escalate`,
`PendingApproval.escalate`) into every store; each store keeps the timer its own way (the in-process hub a timer per
item, DBOS and Temporal in the durable wait itself, so a restart neither loses nor repeats a step). Nothing of it is
in the tool's schema: the model never sees it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from ._audience import check_audience

__all__ = (
    'Escalation',
    'Handoff',
    'EscalationSetting',
    'MAX_HANDOFF_NOTE_LENGTH',
    'MAX_ESCALATION_NOTE_LENGTH',
    'check_note',
    'check_escalation',
    'escalation_note',
    'escalation_to_json',
    'escalation_from_json',
)

MAX_HANDOFF_NOTE_LENGTH = 2000
"""The longest note of a hand-off (`Handoff.note`), in characters."""

MAX_ESCALATION_NOTE_LENGTH = 1000
"""The longest note of an `Escalation`, in characters: the hand-off's note is it after a line saying it escalated."""

_NOTE_CONTROL = re.compile(r'[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]')
"""What a note may not hold: control characters (a tab and line breaks allowed) and bidirectional overrides."""

_MAX_AFTER = 10 * 365 * 24 * 3600.0
"""The latest an escalation may come, in seconds: ten years, as `AskUser(timeout=...)`'s longest."""


def check_note(note: object, limit: int = MAX_HANDOFF_NOTE_LENGTH) -> str:
    """A hand-off's note, stripped and checked: `TypeError` for no string, `ValueError` for one longer than `limit`
    or holding control characters.
    """
    if not isinstance(note, str):
        raise TypeError(f'a note must be a string, not {type(note).__name__}')
    note = note.strip()
    if len(note) > limit:
        raise ValueError(f'a note holds at most {limit} characters, not {len(note)}')
    if _NOTE_CONTROL.search(note):
        raise ValueError('a note may not hold control characters')
    return note


@dataclass(frozen=True)
class Escalation:
    """One step of an escalation policy: after `after` seconds unanswered, the item is forwarded to `to`.

    `AskUser(escalate=Escalation(after=timedelta(minutes=30), to='team:oncall'))`, or several steps, the earliest
    first. The store applies a step once, as a hand-off (`Handoff`, `by=None`) whose note says it escalated (and
    carries `note`); it shows in the item's hand-offs and history, and a `Notifier` tells the new addressees.
    """

    after: float
    """How long after the item was asked it escalates, in seconds (a `timedelta` is taken too); more than 0."""

    to: tuple[str, ...]
    """Whom it is forwarded to: names or groups, as an audience (a single name is taken too)."""

    replace: bool = False
    """`False` (the default): `to` is added to whom it is addressed (one addressed to anyone stays so). `True`: it is
    addressed to `to` alone."""

    note: str = ''
    """A note for the new addressees, after the line saying it escalated (at most `MAX_ESCALATION_NOTE_LENGTH`)."""

    def __post_init__(self) -> None:
        after = cast('object', self.after)
        if isinstance(after, timedelta):
            after = after.total_seconds()
        if isinstance(after, bool) or not isinstance(after, (int, float)):
            raise ValueError(f'Escalation(after=...) must be a number of seconds or a timedelta, not {after!r}')
        if not (0 < after <= _MAX_AFTER and math.isfinite(after)):
            raise ValueError(f'Escalation(after=...) must be more than 0 seconds and at most ten years, not {after!r}')
        object.__setattr__(self, 'after', float(after))
        to: object = self.to
        try:
            names = check_audience(cast('Any', to))
        except (TypeError, ValueError) as error:
            raise ValueError(f'Escalation(to=...): {error}') from None
        if names is None:
            raise ValueError('Escalation(to=...) names at least one person or group')
        object.__setattr__(self, 'to', names)
        if not isinstance(self.replace, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f'Escalation(replace=...) must be True or False, not {self.replace!r}')
        try:
            object.__setattr__(self, 'note', check_note(self.note, MAX_ESCALATION_NOTE_LENGTH))
        except (TypeError, ValueError) as error:
            raise ValueError(f'Escalation(note=...): {error}') from None


EscalationSetting = Escalation | Sequence[Escalation] | None
"""`AskUser(escalate=...)`: one `Escalation`, several (the earliest first), or `None` for none."""


def check_escalation(setting: object, where: str = 'escalate') -> tuple[Escalation, ...]:
    """The steps of `setting` (an `EscalationSetting`), checked: `ValueError` naming `where` for anything but
    `Escalation`s, or steps not in strictly increasing order of `after`. `()` for `None`.
    """
    if setting is None:
        return ()
    if isinstance(setting, Escalation):
        return (setting,)
    if isinstance(setting, (str, bytes)) or not isinstance(setting, Sequence):
        raise ValueError(f'{where} must be an Escalation, a sequence of them, or None, not {type(setting).__name__}')
    steps = tuple(cast('Sequence[object]', setting))
    for step in steps:
        if not isinstance(step, Escalation):
            raise ValueError(f'{where} holds {type(step).__name__}, not Escalation')
    checked = cast('tuple[Escalation, ...]', steps)
    for earlier, later in itertools.pairwise(checked):
        if later.after <= earlier.after:
            raise ValueError(
                f'{where}: the steps must come in order, each later than the one before '
                f'({later.after:g} s is not after {earlier.after:g} s)'
            )
    return checked


def _duration(seconds: float) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        hours = int(seconds // 3600)
        return f'{hours} hour' if hours == 1 else f'{hours} hours'
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f'{minutes} minute' if minutes == 1 else f'{minutes} minutes'
    return f'{seconds:g} seconds'


def escalation_note(step: Escalation) -> str:
    """The note of the hand-off `step` makes: that it escalated, unanswered after how long, then the step's note."""
    said = f'Escalated: unanswered after {_duration(step.after)}.'
    return f'{said}\n{step.note}' if step.note else said


def escalation_to_json(steps: Sequence[Escalation]) -> list[dict[str, Any]]:
    """The steps as JSON values, as stores keep them with the item."""
    return [{'after': step.after, 'to': list(step.to), 'replace': step.replace, 'note': step.note} for step in steps]


def escalation_from_json(data: object) -> tuple[Escalation, ...]:
    """The steps a store kept (`escalation_to_json`), read defensively: anything unreadable is no escalation."""
    if not isinstance(data, list):
        return ()
    steps: list[Escalation] = []
    for item in cast('list[object]', data):
        if not isinstance(item, dict):
            return ()
        fields = cast('dict[str, Any]', item)
        try:
            steps.append(
                Escalation(
                    after=fields['after'],
                    to=tuple(fields['to']),
                    replace=fields.get('replace', False),
                    note=fields.get('note', ''),
                )
            )
        except (KeyError, TypeError, ValueError):
            return ()
    try:
        return check_escalation(steps)
    except ValueError:
        return ()


@dataclass(frozen=True)
class Handoff:
    """One hand-off of a waiting question or approval (`forward`): who passed it on, when, from whom to whom, and
    why. Kept with the item, and shown with it while it waits and in the history after.
    """

    at: float
    """When it was handed on, in seconds since the epoch."""

    by: str | None
    """Who handed it on (the login, the CLI's user); `None` when the front end did not say (an administrator's
    access token, a library call without `by`)."""

    from_audience: tuple[str, ...] | None
    """Whom it was addressed to before (`None`: anyone)."""

    to_audience: tuple[str, ...]
    """Whom it is addressed to after: the names given, or (`replace=False`) those added to the ones before."""

    note: str = ''
    """The note for the new addressees (may be empty; several lines allowed)."""
