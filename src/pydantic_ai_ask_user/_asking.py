"""The plain ask path, shared by `AskUser` and `ask-user ask`: wait for an answerer with a deadline, show the answer.

Free of Pydantic AI, so that the command line can ask a person without loading the agent framework.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from ._answers import Answerer, AskUserRequest, AskUserResponse, ask_user_result

__all__ = ('wait_for_answer', 'ShownAnswer', 'shown_answers')


async def wait_for_answer(
    answerer: Answerer, request: AskUserRequest, timeout: float | None
) -> tuple[AskUserResponse | None, bool]:
    """What `answerer` returned for `request`, and whether `timeout` ran out before it returned anything.

    At the deadline the answerer is cancelled. An answerer cancelled at the deadline may still return
    the answer it already had: that one counts, and the wait did not time out. `None` and `True` when
    the deadline passed with no answer; `timeout=None` waits as long as it takes.
    """
    response: AskUserResponse | None = None
    with anyio.move_on_after(timeout) as scope:
        response = await answerer(request)
    return response, response is None and scope.cancelled_caught


@dataclass(frozen=True)
class ShownAnswer:
    """One question's answer as a person is shown it: what the model gets for it, and whether it was typed."""

    header: str
    """The question's header."""

    values: tuple[str, ...]
    """What the model gets for this question: the labels picked, or the one answer typed instead."""

    custom: bool
    """Whether `values` holds the person's own words rather than labels."""

    note: str | None = None
    """The note the person added to this answer (`AskUser(notes=True)`), or `None`."""


def shown_answers(request: AskUserRequest, response: AskUserResponse) -> list[ShownAnswer]:
    """What the model gets for `response`, question by question in the request's order; `[]` when declined.

    Built on `ask_user_result`, the one builder of what the model receives, so that every echo of an
    answer (the terminal's, the demo's timeline) shows exactly that. `ValueError` if the response does
    not fit the request.
    """
    result = ask_user_result(request, response)
    if isinstance(result, str):
        return []
    typed = {answer.header for answer in response.answers if answer.custom_answer is not None}
    shown: list[ShownAnswer] = []
    for header, value in result.items():
        # With a note, what the model gets is `{"answer": [...], "note": "..."}`.
        values, note = (value['answer'], value['note']) if isinstance(value, dict) else (value, None)
        shown.append(ShownAnswer(header, tuple(values), header in typed, note if isinstance(note, str) else None))
    return shown
