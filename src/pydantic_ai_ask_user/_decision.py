"""The decision `ask-user resolve --json` reads: a `DeferredToolResults`, checked as Pydantic AI checks it, without
importing Pydantic AI for the decisions people write.

Pydantic AI's own validation (`TypeAdapter(DeferredToolResults)`) costs the import of all of Pydantic AI, seconds
on a loaded machine. Most decisions need none of it: approvals that are `true` or `false`, results that are plain
JSON (an answer to a question, `{"Database": ["SQLite"]}`), metadata objects, `answered_by` names. For those,
that validation keeps every value as the JSON gave it, and so does `read_decision`, without Pydantic AI. Any other
decision (a `ToolApproved`, `ToolDenied`, `ToolReturn` or `ToolFailed` object, something that is not valid at all)
is validated by Pydantic AI itself, so it is read, or refused with Pydantic AI's own message, exactly as before.
`tests/cli/test_cli_decision.py` checks both ways give the same on each kind of decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, cast

from pydantic_core import from_json

from ._answers import check_answered_by

__all__ = ('Decision', 'read_decision', 'with_answered_by')


@dataclass
class Decision:
    """A `DeferredToolResults`'s fields, in its order, so its JSON form (`to_jsonable_python`) is the same."""

    calls: dict[str, Any] = field(default_factory=dict[str, Any])
    """Results of the calls that wait for one, by call id."""

    approvals: dict[str, Any] = field(default_factory=dict[str, Any])
    """Approvals (`true`, `false`, or Pydantic AI's `ToolApproved` or `ToolDenied`), by call id."""

    metadata: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """Metadata for the calls, by call id."""

    answered_by: dict[str, str] = field(default_factory=dict[str, str])
    """Who decided each call, by call id."""


_FIELDS = ('calls', 'approvals', 'metadata', 'answered_by')
"""The fields of `DeferredToolResults` (the test checks them against Pydantic AI's)."""

_TAGS = ('kind', 'part_kind')
"""The keys by which Pydantic AI tells a result object (`ToolReturn`, `ToolFailed`, ...) from a plain value."""


def read_decision(text: str) -> Decision:
    """`text` read as a `DeferredToolResults`; `ValueError` with Pydantic AI's message when it is none."""
    plain = _plain(text)
    if plain is not None:
        return plain
    from pydantic import TypeAdapter, ValidationError
    from pydantic_ai import DeferredToolResults

    try:
        results = TypeAdapter(DeferredToolResults).validate_json(text)
    except ValidationError as error:
        raise ValueError(str(error)) from None
    return Decision(**{name: getattr(results, name) for name in _FIELDS})


def _plain(text: str) -> Decision | None:
    """The decision, when every value in it is one Pydantic AI keeps as the JSON gave it; else `None`."""
    try:
        data = from_json(text)  # the JSON parser of Pydantic's `validate_json`
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    fields: dict[str, dict[str, Any]] = {}
    for name in _FIELDS:
        value = cast(dict[str, Any], data).get(name, {})
        if not isinstance(value, dict):
            return None
        fields[name] = cast(dict[str, Any], value)
    plain = (
        all(isinstance(approval, bool) for approval in fields['approvals'].values())
        and all(not _tagged(result) for result in fields['calls'].values())
        and all(isinstance(metadata, dict) for metadata in fields['metadata'].values())
        and all(isinstance(name, str) for name in fields['answered_by'].values())
    )
    return Decision(**fields) if plain else None


def _tagged(value: Any) -> bool:
    """Whether Pydantic AI would read `value` as a result object (it has a `kind` or `part_kind`), not keep it."""
    return isinstance(value, dict) and any(tag in value for tag in _TAGS)


def with_answered_by(results: Decision, who: str) -> Decision:
    """`results` with who decided each call: as `results.answered_by` says (each name checked: `ValueError` naming the
    call when it names a call `results` does not decide, or is no name), else `who`.
    """
    decided = [*results.approvals, *results.calls]
    for call_id, name in results.answered_by.items():
        if call_id not in decided:
            raise ValueError(f'answered_by names call {call_id!r}, which this decision does not decide')
        if (problem := check_answered_by(name)) is not None:
            raise ValueError(f'answered_by of call {call_id!r}: {problem}')
    if not decided:
        return results
    return replace(results, answered_by={call_id: who for call_id in decided} | results.answered_by)
