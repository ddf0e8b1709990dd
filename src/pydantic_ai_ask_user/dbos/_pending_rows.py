"""A page of waiting questions and its count, read the one way `DBOSQuestionStore` reads them, and the questions
table's pending rows decoded without the question models, for `ask-user pending` on a SQLite file.

`read_pending_page` and `count_pending` are the store's page and count: the page's ranges of the pending order, the
ended workflows' rows left out (and withdrawn, by the caller), a search the SQL does not decide matched on the decoded
rows. They take how a range of rows is read and decoded (`ReadRows`): the store decodes into the question models
(`_questions.select_pending_page`); `PlainPendingReader` runs the same statements (`_pending_statements`) through
`sqlite3` and decodes each row by the same checks into plain records (`decode_plain_row`), and gives up
(`NeedsTheStore`) on anything only the store may do or say: a row the fast rules do not accept (the store names its
problem, or accepts it), an ended workflow's question (the store withdraws it), a database an earlier version made
(the store adds what it lacks), an approval waiting (the store reads them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._audience import Person, addressed_to, audience_from_json, check_audience, context_from_json
from .._escalation import Escalation, check_escalation, escalation_from_json
from .._plain_questions import PlainRequest, plain_questions
from .._question_limits import LATEST_DEADLINE
from .._question_store import (
    EVERYTHING,
    MAX_PAGE_SIZE,
    PendingFilter,
    PendingPage,
    PendingRecord,
    check_limit,
    decode_position,
    encode_position,
    order_key,
)
from ._addressees import has_addressees
from ._changes import change_log_made
from ._connection import dialect_of, execute, fetch_one, has_table, json_value
from ._handoffs import HANDOFFS_TABLE_NAME
from ._history_index import HISTORY_TABLE_NAME, HISTORY_VIEWERS_TABLE_NAME
from ._pending_statements import (
    columns_decide,
    count_pending_approvals_statement,
    count_pending_statement,
    pending_page_statement,
)
from ._postgres import PsycopgDatabase, plain_postgres_url
from ._schema import ADDED_COLUMNS, DBOS_TABLE, EVENT_APPROVALS_TABLE_NAME, TABLE_NAME, index_statements
from ._sqlite import SqliteDatabase, check_plain_sqlite_file, sqlite_file
from ._workflows import active_workflows

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = (
    'SEARCH_BATCH',
    'SEARCH_COUNT_ROWS',
    'RequestFields',
    'request_fields',
    'ReadRows',
    'read_pending_page',
    'count_pending',
    'NeedsTheStore',
    'PlainStored',
    'decode_plain_row',
    'PlainPendingReader',
)

SEARCH_BATCH = 200
"""How many candidate rows a searched page reads at least per statement: a title, an addressee or free text narrow
after the SQL (`columns_decide`), so a range of the page's size alone could take many round trips to fill a page."""

SEARCH_COUNT_ROWS = 5000
"""How many candidate rows the total of a searched page reads at most (`PendingFilter.searching`,
`HistoryFilter.searching`): beyond, the total is the matches among them, marked not exact (`total_exact`)."""


@dataclass(frozen=True)
class RequestFields:
    """What a stored request's JSON (`_encoding.encode_request`) holds beside the call's arguments, read leniently."""

    arguments: dict[str, Any]
    """The call's arguments: `{"questions": [...]}` as the model gave them (what the tool's validator reads)."""

    notes: bool
    """Whether a note may go with each answer (only `true` says so)."""

    deadline: float | None
    """The deadline, `None` when there is none or it is out of range (a row not written by this package)."""

    run_step: int | None
    """The run step, kept only for a request of a run and when it is a step number."""

    escalate: tuple[Escalation, ...]
    """The escalation policy (rows of earlier versions have none)."""


def request_fields(data: dict[str, Any], run_id: str | None) -> RequestFields:
    """The fields of a stored request's JSON object `data` (which it takes apart: what is left are the arguments), as
    `_encoding.decode_request` and `decode_plain_row` both read them. `ValueError` for a damaged escalation policy.
    """
    notes = data.pop('notes', False)
    deadline = data.pop('deadline', None)
    step = data.pop('run_step', None)
    escalate = escalation_from_json(data.pop('escalate', None))
    run_step = step if isinstance(step, int) and not isinstance(step, bool) and step >= 0 and run_id else None
    in_range = (
        isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 <= deadline <= LATEST_DEADLINE
    )
    return RequestFields(data, notes is True, float(deadline) if in_range else None, run_step, escalate)


class _Row(Protocol):
    """A decoded pending row, as both ways decode one: its request, when it was asked, and its workflow."""

    @property
    def request(self) -> Any: ...

    @property
    def created_at(self) -> float: ...

    @property
    def workflow_id(self) -> str: ...


ReadRows = Callable[['Connection', 'tuple[float, float, str] | None', int], Sequence[Any]]
"""Reads at most `limit` pending rows after a position (`order_key`), decoded, those the person may see."""


def read_pending_page(
    conn: Connection,
    read: ReadRows,
    *,
    limit: int,
    after: tuple[float, float, str] | None,
    where: PendingFilter,
    searched: bool,
    withdraw: Callable[[list[Any]], None],
) -> tuple[list[Any], str | None]:
    """At most `limit` live rows after `after` that `where` takes, and the next page's cursor (`None` on the last).

    `searched`: the SQL does not decide all of `where` (`columns_decide`), so wider ranges are read. Rows whose
    workflow has ended are handed to `withdraw` (before the next range is read) and the next row takes their place.
    """
    live: list[_Row] = []
    position = after
    batch = SEARCH_BATCH if searched else 0
    while len(live) <= limit:
        wanted = max(limit + 1 - len(live), batch)
        rows = cast('Sequence[_Row]', read(conn, position, wanted))
        if not rows:
            break
        ended = _ended_workflows(conn, {row.workflow_id for row in rows})
        live.extend(
            row for row in rows if row.workflow_id not in ended and where.takes_item(row.request, row.created_at)
        )
        if ended:
            withdraw([row for row in rows if row.workflow_id in ended])
        position = order_key(rows[-1].request, rows[-1].created_at)
        if len(rows) < wanted:
            break
    page = live[:limit]
    more = len(live) > limit
    return page, encode_position(order_key(page[-1].request, page[-1].created_at)) if more else None


def count_pending(
    conn: Connection,
    read: ReadRows,
    where: PendingFilter,
    visible_to: Person | None,
    *,
    addressees: bool,
) -> tuple[int, bool]:
    """How many waiting questions `where` takes and `visible_to` sees, and whether exactly: one SQL count (the agent,
    the conversation and the kind are columns' conditions), or with a title, an addressee or free text, a read of the
    person's candidate rows (those the SQL narrows to), each matched in memory (`_search`), at most
    `SEARCH_COUNT_ROWS` of them (beyond, the matches among those: a lower bound, not exact).
    """
    if columns_decide(where):  # nothing to match: one SQL count
        statement, parameters = count_pending_statement(conn, where, visible_to, addressees=addressees)
        return int(fetch_one(conn, statement, parameters)[0]), True
    counted = 0
    done = 0
    position: tuple[float, float, str] | None = None
    while True:
        rows = cast('Sequence[_Row]', read(conn, position, MAX_PAGE_SIZE))
        counted += sum(1 for row in rows if where.takes_item(row.request, row.created_at))
        done += len(rows)
        if len(rows) < MAX_PAGE_SIZE:
            return counted, True
        if done >= SEARCH_COUNT_ROWS:
            return counted, False
        position = order_key(rows[-1].request, rows[-1].created_at)


def _ended_workflows(conn: Connection, workflow_ids: set[str]) -> set[str]:
    """Those of these workflows that wait no more: ended (cancelled, failed, finished) or deleted."""
    if not workflow_ids:
        return set()
    return workflow_ids - active_workflows(conn, sorted(workflow_ids))


class NeedsTheStore(Exception):
    """What `PlainPendingReader` found needs `DBOSQuestionStore`: to name a damaged row, to withdraw an ended
    workflow's question, to upgrade the database, or to read approvals. Nothing was printed or written.
    """


@dataclass(frozen=True)
class PlainStored:
    """A pending row decoded without the question models: what a page of `pending` shows of it."""

    request: PlainRequest
    """The request, its questions plain objects."""

    workflow_id: str
    """The DBOS workflow that waits for the answer."""

    created_at: float
    """When the question was first published, in seconds since the epoch."""


def decode_plain_row(row: Sequence[Any]) -> PlainStored:
    """A pending row of `_pending_statements.REQUEST_COLUMNS`, read by the checks `_encoding.decode_row` makes, into
    plain records; `NeedsTheStore` for any row those checks might refuse or read otherwise.
    """
    (request_id, workflow_id, questions, status, response, created_at, _, run_id, tool_call_id) = row[:9]
    audience, context = row[9:]
    try:
        if status != 'pending' or response is not None or not isinstance(questions, str):
            raise ValueError('not a plain pending row')
        data = json.loads(questions)
        if not isinstance(data, dict):
            raise ValueError('not a JSON object')
        run = run_id or None
        fields = request_fields(cast(dict[str, Any], data), run)
        found = plain_questions(fields.arguments)
        call_id = tool_call_id or request_id
        if found is None or not isinstance(call_id, str) or not call_id or not isinstance(workflow_id, str):
            raise ValueError('questions the fast rules do not take')
        if run is not None and not isinstance(run, str):
            raise ValueError('a run id that is not text')
        request = PlainRequest(
            questions=found,
            id=call_id,
            notes=fields.notes,
            deadline=fields.deadline,
            run_id=run,
            run_step=fields.run_step,
            audience=check_audience(None if audience is None else audience_from_json(json_value(audience))),
            context=None if context is None else context_from_json(json_value(context)),
            escalate=check_escalation(fields.escalate, 'AskUserRequest.escalate'),
        )
        return PlainStored(request, workflow_id, float(created_at))
    except (ValueError, TypeError, RecursionError):
        raise NeedsTheStore(f'row {request_id!r}') from None


class PlainPendingReader:
    """The pending questions of a SQLite file or a PostgreSQL database a DBOS question store has written, read through
    the driver alone (`sqlite3`, psycopg) and decoded into plain records, for `ask-user pending`: the store's page and
    count (`read_pending_page`, `count_pending`) on the store's statements. Reads only; `NeedsTheStore` for anything
    more.
    """

    def __init__(self, database: SqliteDatabase | PsycopgDatabase) -> None:
        self.database = database
        """The database, through its driver alone."""

    @classmethod
    def of(cls, database_url: str) -> PlainPendingReader | None:
        """The reader of the SQLite file a plain `sqlite:///FILE` URL names, or of the database a plain PostgreSQL URL
        names (`postgresql://USER:PASSWORD@HOST:PORT/DB`, no options); `None` for any other URL (the store reads
        those). `NotAQuestionDatabaseError` when the SQLite file does not exist, as the store says it, before anything
        heavy.
        """
        if (conninfo := plain_postgres_url(database_url)) is not None:
            return cls(PsycopgDatabase(database_url, conninfo))
        if not check_plain_sqlite_file(database_url):
            return None
        path = sqlite_file(database_url)
        return None if path is None else cls(SqliteDatabase(f'sqlite:///{path}', path))

    def page(
        self,
        *,
        limit: int,
        cursor: str | None,
        where: PendingFilter = EVERYTHING,
        visible_to: Person | None = None,
    ) -> PendingPage[PendingRecord]:
        """The page `DBOSQuestionStore.pending_page` gives for the same arguments, and its count (`BadCursorError`
        for a bad cursor, as there). `NeedsTheStore` when only the store can give it.
        """
        check_limit(limit)
        after = None if cursor is None else decode_position(cursor)
        try:
            with self.database.connect() as conn:
                return self._page(conn, limit, after, where, visible_to)
        except NeedsTheStore:
            raise
        except Exception as error:  # the driver's own (`sqlite3.Error`, `psycopg.Error`): the store reports it
            raise NeedsTheStore(type(error).__name__) from None
        finally:
            self.database.dispose()

    def _page(
        self,
        conn: Connection,
        limit: int,
        after: tuple[float, float, str] | None,
        where: PendingFilter,
        visible_to: Person | None,
    ) -> PendingPage[PendingRecord]:
        if not _up_to_date(conn):
            raise NeedsTheStore('a database an earlier version made, or no questions table')
        if has_table(conn, EVENT_APPROVALS_TABLE_NAME):
            statement, parameters = count_pending_approvals_statement(conn, visible_to)
            if int(fetch_one(conn, statement, parameters)[0]):
                raise NeedsTheStore('approvals wait')

        def read(conn: Connection, position: tuple[float, float, str] | None, wanted: int) -> list[PlainStored]:
            statement, parameters = pending_page_statement(
                conn, after=position, limit=wanted, where=where, visible_to=visible_to
            )
            rows = [decode_plain_row(row) for row in execute(conn, statement, parameters).fetchall()]
            return [row for row in rows if addressed_to(row.request, visible_to)]

        def withdraw(rows: list[Any]) -> None:
            raise NeedsTheStore('a question whose workflow ended')

        records, next_cursor = read_pending_page(
            conn,
            read,
            limit=limit,
            after=after,
            where=where,
            searched=not columns_decide(where),
            withdraw=withdraw,
        )
        total, exact = count_pending(conn, read, where, visible_to, addressees=True)
        return PendingPage(cast('list[PendingRecord]', records), next_cursor, total, total_exact=exact)


def _catalog(conn: Connection) -> tuple[bool, set[str], set[str]]:
    """Whether DBOS's own tables are there, and the names of the questions table's columns and of every index."""
    if dialect_of(conn) == 'postgresql':
        dbos = "SELECT 1 FROM pg_tables WHERE tablename = :name AND schemaname = 'dbos'"
        columns = (
            'SELECT column_name FROM information_schema.columns '
            'WHERE table_name = :table AND table_schema = ANY (current_schemas(false))'
        )
        indexes = 'SELECT indexname FROM pg_indexes WHERE schemaname = ANY (current_schemas(false))'
    else:
        dbos = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"
        columns = 'SELECT name FROM pragma_table_info(:table)'
        indexes = "SELECT name FROM sqlite_master WHERE type = 'index'"
    return (
        execute(conn, dbos, {'name': DBOS_TABLE}).fetchone() is not None,
        {str(row[0]) for row in execute(conn, columns, {'table': TABLE_NAME}).fetchall()},
        {str(row[0]) for row in execute(conn, indexes).fetchall()},
    )


def _up_to_date(conn: Connection) -> bool:
    """Whether `DBOSQuestionStore` would find nothing to add when it opens the database
    (`_upgrade.add_missing_columns`): the questions table with every column, the addressees, every index, the change
    log, the hand-offs and the history's index.
    """
    if not has_table(conn, TABLE_NAME):
        return False
    dbos, columns, indexes = _catalog(conn)
    if not dbos or any(name not in columns for name, _ in ADDED_COLUMNS) or not has_addressees(conn):
        return False
    approvals = has_table(conn, EVENT_APPROVALS_TABLE_NAME)
    if any(name not in indexes for name, _, _ in index_statements(approvals=approvals)):
        return False
    return change_log_made(conn) and all(
        has_table(conn, name) for name in (HANDOFFS_TABLE_NAME, HISTORY_TABLE_NAME, HISTORY_VIEWERS_TABLE_NAME)
    )
