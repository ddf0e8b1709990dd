"""A decision checked against the DBOS wait it resolves, before anything is sent: the rule `resolve_dbos_event` and
`ask-user resolve` share (`checked_decision`), read from the database alone, so the command loads neither Pydantic
AI nor DBOS to follow it.
"""

from __future__ import annotations

from .._decision import Decision
from .._wait_calls import WaitCalls, checked_decision
from ._connection import Database
from ._db import open_database
from ._encoding import StoredRequest
from ._schema import EVENT_CALLS_TABLE_NAME, EVENT_TABLE_NAME
from ._waits import pending_wait_calls, token_requests

__all__ = ('checked_for_wait', 'checked_against', 'what_the_wait_holds')


def checked_for_wait(results: Decision, database_url: str, token: str) -> Decision:
    """`results` checked against the open wait of `token` (`checked_decision`): the calls `DBOSEventWaiter` recorded
    with it, and its AskUser questions, of the question table (`ask_through_store`) or recorded with the wait. Only
    this wait's questions are looked at (by their tool call ids, which tell apart the calls of one run): another
    run's question with the same id is none of this decision's. `ValueError` naming what does not fit.
    """
    return checked_against(results, *what_the_wait_holds(database_url, token))


def what_the_wait_holds(database_url: str, token: str) -> tuple[WaitCalls | None, list[StoredRequest]]:
    """The calls the open wait of `token` recorded (`None`: none, or not open), and the AskUser questions
    `ask_through_store` published for it: what a decision is checked against, read in one connection's time.
    """
    database = open_database(database_url, pooled=False)
    try:
        return _recorded_calls(database, token), _stored_questions(database, token)
    finally:
        database.dispose()


def checked_against(results: Decision, recorded: WaitCalls | None, stored: list[StoredRequest]) -> Decision:
    """`results` checked (`checked_decision`) against what `what_the_wait_holds` read."""
    questions = {record.request.id: record.request for record in stored if record.request.id in results.calls}
    return checked_decision(results, recorded, questions)


def _recorded_calls(database: Database, token: str) -> WaitCalls | None:
    """The calls the open wait of `token` decides, as `DBOSEventWaiter` recorded them; `None` when it recorded none
    or is not open (then ending the wait says why).
    """
    if not database.has_table(EVENT_CALLS_TABLE_NAME):
        return None
    with database.connect() as conn:
        text = pending_wait_calls(conn, token)
    return None if text is None else WaitCalls.from_json(text)


def _stored_questions(database: Database, token: str) -> list[StoredRequest]:
    """The AskUser questions `ask_through_store` published for the wait of `token`."""
    if not database.has_table(EVENT_TABLE_NAME):
        return []
    database.ensure_columns()
    with database.connect() as conn:
        return list(token_requests(conn, token))
