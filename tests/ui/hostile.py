"""The answers no client may put in the person's mouth, each with a piece of the error the client must get."""

from __future__ import annotations

from typing import Any

GOOD: dict[str, Any] = {'answers': [{'header': 'Region', 'selected': ['EU']}], 'cancelled': False}
"""A fitting answer to the examples' question (`Region`: `EU` or `US`)."""

HOSTILE: dict[str, tuple[Any, str]] = {
    'unknown label': ({'answers': [{'header': 'Region', 'selected': ['MARS']}]}, "selects 'MARS', which is not one"),
    'missing header': ({'answers': []}, "has no answer for 'Region'"),
    'extra header': (
        {'answers': [{'header': 'Region', 'selected': ['EU']}, {'header': 'Admin', 'selected': ['yes']}]},
        "answers 'Admin', which is not a header",
    ),
    'picks plus custom answer': (
        {'answers': [{'header': 'Region', 'selected': ['EU'], 'custom_answer': 'Mars'}]},
        'both selected labels and a custom answer',
    ),
    'control characters': (
        {'answers': [{'header': 'Region', 'custom_answer': 'EU\x1b[2J'}]},
        'U+001B, a control character',
    ),
    "the model's shape, where MARS would pass as the person's own words": (
        {'Region': ['MARS']},
        'Region: Extra inputs are not permitted',
    ),
}
"""Each misfit, and what the refusal must say."""
