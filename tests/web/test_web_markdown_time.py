"""A summary's Markdown renders in time linear in its length, whatever a model writes into it.

The inline forms were found by a regular expression tried at each position, and an unclosed one (`[`, `**`,
`` ` ``) made it search the rest of the line again: 4,000 `[` took about 300 times as long as 4,000 letters, on
the event loop, on every view. Timings are compared as ratios within this run, best of several, with a generous
bound: a quadratic renderer is off by two orders of magnitude.
"""

from __future__ import annotations

import time

import pytest

from pydantic_ai_ask_user._audience import MAX_SUMMARY_LENGTH
from pydantic_ai_ask_user.web._markdown import render_markdown

HOSTILE = ['[', '*', '`', '_a', '**a', '[a](', '[a](h', '*a', '`a']
"""Units of a summary that each open a form they never close, or close it only at the end."""


def best_seconds(text: str) -> float:
    best = float('inf')
    for _ in range(7):
        started = time.perf_counter()
        render_markdown(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize('unit', HOSTILE)
def test_a_summary_of_unclosed_forms_renders_about_as_fast_as_plain_text(unit: str) -> None:
    hostile = unit * (MAX_SUMMARY_LENGTH // len(unit))
    plain = 'summary ' * (MAX_SUMMARY_LENGTH // 8)
    ratio = best_seconds(hostile) / best_seconds(plain)
    assert ratio < 25, ratio


def test_a_link_to_a_host_that_is_no_host_is_drawn_as_text() -> None:
    # `urlsplit` raises on `http://[`: the summary is drawn, the link stays text.
    assert str(render_markdown('see [here](http://[)')) == '<p>see [here](http://[)</p>'
