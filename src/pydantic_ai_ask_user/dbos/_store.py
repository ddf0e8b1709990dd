"""`DBOSQuestionStore`: every question waiting in the database, answered from any process."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import anyio.to_thread

from .._answers import AskUserRequest, AskUserResponse, check_response
from .._approvals import ApprovalDecision, PendingApproval, check_decision
from .._audience import Person, audience_includes
from .._escalation import Handoff
from .._history import (
    ALL_FINISHED,
    FinishedRecord,
    HistoryFilter,
    check_handoff,
    decode_history_position,
    encode_history_position,
    history_order,
)
from .._question_store import (
    DEFAULT_PAGE_SIZE,
    EVERYTHING,
    MAX_PAGE_SIZE,
    AlreadyAnsweredError,
    PendingFilter,
    PendingPage,
    StoreError,
    StoreEvent,
    UnknownRequestError,
    UnreadableRequestError,
    WithdrawnError,
    approval_order,
    check_limit,
    decode_approval_position,
    decode_position,
    encode_approval_position,
)
from ._addressees import has_addressees
from ._approvals import (
    StoredApproval,
    approval_changes_since,
    claim_approval,
    count_pending_approvals,
    select_approvals,
)
from ._changes import (
    CHANGES_RETENTION_SECONDS,
    DEFAULT_GAP_SECONDS,
    Change,
    Position,
    changes_after,
    changes_with_ids,
    first_change_id,
    has_change_log,
    last_change_ids,
    prune_changes,
)
from ._connection import Database, execute
from ._db import DEFAULT_DATABASE_URL, check_sqlite_file, open_database
from ._encoding import (
    WITHDRAWN_MESSAGE,
    Status,
    StoredRequest,
    UnreadableRowError,
    answer_message,
    encode_response,
    message_topic,
)
from ._handoffs import forward_item, select_handoffs
from ._history import (
    backfill_history_index,
    columns_decide_history,
    count_finished_approvals,
    count_finished_questions,
    history_index_state,
    indexed_history_page,
    select_finished_approvals,
    select_finished_questions,
)
from ._inbox import completed_results, event_topic
from ._pending_rows import SEARCH_BATCH, SEARCH_COUNT_ROWS, ReadRows, count_pending, read_pending_page
from ._pending_statements import columns_decide
from ._questions import (
    changes_since,
    claim_answer,
    prune_finished,
    request_status,
    select_pending_page,
    select_requests,
    withdraw_pending,
)
from ._schema import EVENT_APPROVALS_TABLE_NAME, EVENT_TABLE_NAME, TABLE_NAME
from ._sqlite import check_plain_sqlite_file
from ._waits import claim_wait, lock_event_token, lock_token, token_requests
from ._workflows import active_workflows, send_message

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ('DBOSQuestionStore', 'DEFAULT_EVENTS_POLL_SECONDS', 'DEFAULT_FINISHED_RETENTION_SECONDS')

_log = logging.getLogger('pydantic_ai_ask_user.dbos')
"""The DBOS package's logger, which its warnings go to."""

DEFAULT_EVENTS_POLL_SECONDS = 0.25
"""How often `events()` reads the table for questions that started waiting, were answered or withdrawn."""

DEFAULT_FINISHED_RETENTION_SECONDS = 7 * 24 * 3600.0
"""How long an answered or withdrawn question is kept (a week): long enough that a late answer, or a form left open
over a weekend, is told "already answered" or "no longer waiting" rather than "no such question", and that
`ask-user` and the rows themselves can be looked at after the fact; short enough that the table does not grow forever.
"""

_PRUNE_EVERY_SECONDS = 3600.0
"""How often (at most) a store that follows the events deletes the finished questions past their retention."""

_NEW_CHUNK = 500
"""How many questions new since the last poll `events()` reads in one statement (one bound parameter each)."""

_LOG_BATCH = 1000
"""How many changes of the log one statement reads."""

_CATCH_UP_LIMIT = 1000
"""How many changes a resumed iteration reads back at most; one further behind starts from now (a page reloads its
list when it reconnects anyway): so a reconnect costs at most this, never a read of everything waiting."""

_BASELINE_IDS = 1000
"""How many of the last changes a feed reads when it begins, to know the gaps among them."""

_MAX_GAPS = 10_000
"""How many skipped ids a feed waits for at most (the oldest are given up first)."""

_T = TypeVar('_T')


@dataclass
class DBOSQuestionStore:
    """The answering side of `DBOSAnswerer`: a `QuestionStore` over every workflow sharing the database.

    Use it from any process (a web server, the command line, another machine); it needs no DBOS
    launch, client or import, only the database: it reads and writes the questions table and sends DBOS
    its messages with plain SQL (`send_message`, DBOS's own SQL interface), on a SQLite file through the
    standard library's `sqlite3` (no SQLAlchemy, unless it creates the tables), elsewhere through SQLAlchemy.
    An answer is checked with `check_response`, recorded, and sent to the waiting workflow in one
    transaction, so a request is answered once, however many processes try at the same time.

    Questions are identified by their `AskUserRequest.key` (their run and their tool call): every
    `request_id` taken or given here is such a key. `ask-user pending` shows it.

    It is an `ApprovalStore` too: the tool approvals `ask_through_store` published with a wait's questions are
    listed (`pending_approvals`), looked up by `PendingApproval.key` (their wait and their call) and decided
    (`decide`, `decide_wait`) here, checked first, recorded once, and sent with the wait's other items.
    """

    database_url: str = DEFAULT_DATABASE_URL
    """The DBOS system database the workers use: `sqlite:///FILE` or `postgresql://...`."""

    _: KW_ONLY

    events_poll_seconds: float = DEFAULT_EVENTS_POLL_SECONDS
    """How often `events()` looks for changes."""

    events_gap_seconds: float = DEFAULT_GAP_SECONDS
    """How long `events()` waits for a change whose id was skipped (its transaction not committed yet) before taking
    it for a rolled-back one; a change committed later than that is not seen. See `_changes`."""

    finished_retention_seconds: float | None = DEFAULT_FINISHED_RETENTION_SECONDS
    """How long answered and withdrawn questions are kept before `prune_finished` (run by `events()` once an hour,
    so by every web inbox on this store) deletes them; `None` keeps them forever.

    It is where the history (`history_page`) ends: a question or approval finished longer ago than this is gone.
    """

    create_table: bool = True
    """Create the questions table on first use when the database has none, as `DBOSAnswerer` does.

    `False` writes no schema: on a DBOS database where no question was asked yet the store sees no
    questions, and a SQLite file that does not exist, or a database with neither the questions table nor
    DBOS's tables, raises `NotAQuestionDatabaseError` on first use. `ask-user pending` and `ask-user answer`
    open their store so, since a typo in `--db` must not create a database.
    """

    pooled: bool = True
    """Keep the connections to a PostgreSQL server in SQLAlchemy's pool, for a long-lived process (a web inbox) that
    reads again and again. `False` connects through psycopg alone, importing no SQLAlchemy, which a short-lived
    process starts much sooner with: `ask-user pending` and `ask-user answer` open their store so. A SQLite file is read
    through the standard library either way; a URL with options (`?...`) goes through SQLAlchemy either way.
    """

    _database: Database | None = field(default=None, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    _has_table: bool = field(default=False, init=False, repr=False, compare=False)
    _has_event_table: bool = field(default=False, init=False, repr=False, compare=False)
    _has_approvals_table: bool = field(default=False, init=False, repr=False, compare=False)
    # Whether a person's page and count read the addressees (`has_addressees`), or, where this database user could
    # not make them, every pending question's audience.
    _has_addressees: bool = field(default=False, init=False, repr=False, compare=False)
    # Whether the change log (`_changes`) is there: `events()` reads it, or else the questions by time.
    _has_change_log: bool = field(default=False, init=False, repr=False, compare=False)
    # Whether the history reads the history's index (`_history_index`): known once it is complete; until then each
    # history page looks again, and the first starts the back-fill (`_backfilling`) where it is needed.
    _history_indexed: bool = field(default=False, init=False, repr=False, compare=False)
    _backfilling: threading.Thread | None = field(default=None, init=False, repr=False, compare=False)
    _closing: threading.Event = field(default_factory=threading.Event, init=False, repr=False, compare=False)
    _decoded: _DecodedRequests = field(
        default_factory=lambda: _DecodedRequests(), init=False, repr=False, compare=False
    )
    _pruned_at: float = field(default=0.0, init=False, repr=False, compare=False)
    _feed: _Feed = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._feed = _Feed(self)

    async def __aenter__(self) -> DBOSQuestionStore:
        await self._in_thread(self._connect)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the database connections; the store reconnects if used again. A back-fill of the history's index
        running in the background stops after its batch (the next store goes on from there).
        """
        with self._lock:
            backfilling, self._backfilling = self._backfilling, None
        if backfilling is not None:
            self._closing.set()
            backfilling.join()
            self._closing.clear()
        with self._lock:
            if self._database is not None:
                self._database.dispose()
                self._database = None

    def _connect(self) -> Database:
        with self._lock:
            if self._database is None:
                if not self.create_table and not check_plain_sqlite_file(self.database_url):
                    check_sqlite_file(self.database_url)
                # A plain SQLite file through `sqlite3`, without SQLAlchemy; unpooled, a plain PostgreSQL URL through
                # psycopg alone; anything else through SQLAlchemy.
                database = open_database(self.database_url, pooled=self.pooled)
                try:
                    if self.create_table:
                        database.ensure_table()
                        self._has_table = True
                    else:
                        self._has_table = database.table_exists()
                        if self._has_table:
                            # No table is created, but one an earlier version made gets the columns added since.
                            database.ensure_columns()
                    # Questions asked through the waiting handler resolve their run's token; older databases have none.
                    self._has_event_table = database.has_table(EVENT_TABLE_NAME)
                    self._has_approvals_table = database.has_table(EVENT_APPROVALS_TABLE_NAME)
                    self._has_addressees = self._has_table and _addressees_ready(database)
                    with database.connect() as conn:
                        self._has_change_log = self._has_table and has_change_log(conn)
                except BaseException:
                    database.dispose()
                    raise
                self._database = database
            return self._database

    async def _in_thread(self, function: Callable[[], _T]) -> _T:
        return await anyio.to_thread.run_sync(function)

    async def pending(self, *, visible_to: Person | None = None) -> Sequence[AskUserRequest]:
        """Every request waiting for an answer, across all workflows, oldest first (all of them: see `pending_page`);
        only `visible_to`'s, if given.
        """
        return [stored.request for stored in await self.pending_records(visible_to=visible_to)]

    async def pending_records(self, *, visible_to: Person | None = None) -> Sequence[StoredRequest]:
        """Every waiting request with its workflow id and the time it was asked, oldest first.

        Read a page (`MAX_PAGE_SIZE`) at a time; a front end shows one page (`pending_page`) instead. A request whose
        workflow has ended without it (cancelled, failed, deleted) is withdrawn here rather than shown: nobody is
        waiting for its answer any more. With `visible_to`, only the requests addressed to that person (or to nobody
        in particular) are read.
        """
        records: list[StoredRequest] = []
        cursor: str | None = None
        while True:
            page = await self.pending_page(limit=MAX_PAGE_SIZE, cursor=cursor, visible_to=visible_to)
            records.extend(page.records)
            if (cursor := page.next_cursor) is None:
                break
        records.sort(key=lambda record: (record.created_at, record.key))
        return records

    async def pending_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: PendingFilter = EVERYTHING,
        visible_to: Person | None = None,
    ) -> PendingPage[StoredRequest]:
        """At most `limit` waiting requests in deadline order after `cursor`, and how many wait (see `QuestionStore`);
        with `visible_to`, only that person's, in the page and the count alike (one SQL condition serves both).

        One range of the table's pending-order index per page; only the page's rows are decoded, and only their
        workflows are checked (one bound parameter per row of the page, never per waiting question). A request whose
        workflow has ended is withdrawn here rather than shown, and the next row takes its place.
        """
        check_limit(limit)
        after = None if cursor is None else decode_position(cursor)
        return await self._in_thread(partial(self._page, limit, after, where, visible_to))

    async def count_pending(self, where: PendingFilter = EVERYTHING, *, visible_to: Person | None = None) -> int:
        """How many requests are pending (that pass `where`, and that `visible_to` may see): one count, nothing decoded.

        A request whose workflow ended but which no listing has withdrawn yet is counted until one does.
        """
        return await self._in_thread(partial(self._count, where, visible_to))

    def _count(self, where: PendingFilter, visible_to: Person | None) -> int:
        database = self._connect()
        if not self._table_ready(database):
            return 0
        with database.connect() as conn:
            return count_pending(
                conn, self._reader(where, visible_to), where, visible_to, addressees=self._has_addressees
            )[0]

    def _page(
        self, limit: int, after: tuple[float, float, str] | None, where: PendingFilter, visible_to: Person | None
    ) -> PendingPage[StoredRequest]:
        database = self._connect()
        if not self._table_ready(database):
            return PendingPage((), None, 0)
        read = self._reader(where, visible_to)

        def withdraw(rows: list[StoredRequest]) -> None:
            conn.commit()  # end the read before the withdrawal writes (SQLite takes its lock then)
            self._withdraw_ended(rows)

        # One connection for the page, its workflows' check and the count: a round trip saved is a few ms on a server.
        with database.connect() as conn:
            page, next_cursor = read_pending_page(
                conn,
                read,
                limit=limit,
                after=after,
                where=where,
                # A search the SQL does not decide narrows after it (`_search`): wider ranges, fewer round trips.
                searched=not columns_decide(where),
                withdraw=withdraw,
            )
            total, exact = count_pending(conn, read, where, visible_to, addressees=self._has_addressees)
        return PendingPage(page, next_cursor, total, total_exact=exact)

    def _reader(self, where: PendingFilter, visible_to: Person | None) -> ReadRows:
        """How the page and the count read a range of rows: decoded into the question models, each once a store."""

        def read(conn: Connection, after: tuple[float, float, str] | None, limit: int) -> list[StoredRequest]:
            return select_pending_page(
                conn,
                after=after,
                limit=limit,
                where=where,
                visible_to=visible_to,
                decoded=self._decoded,
                addressees=self._has_addressees,
            )

        return read

    async def history_page(
        self,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        where: HistoryFilter = ALL_FINISHED,
        visible_to: Person | None = None,
    ) -> PendingPage[FinishedRecord]:
        """At most `limit` finished questions and approvals after `cursor`, the newest first, and how many there are
        (the `HistoryStore` contract); with `visible_to`, only what that person may see, in the page and the count.

        Each table is read as one range of an index of its finished rows (a person's questions: a range for the
        unaddressed ones, one for their own answers, and one per name through the addressees), at most `limit` + 1
        rows each, and the two merged. History ends where `prune_finished` deleted the rows
        (`finished_retention_seconds`).
        """
        check_limit(limit)
        before = None if cursor is None else decode_history_position(cursor)
        return await self._in_thread(partial(self._history, limit, before, where, visible_to))

    def _history(
        self, limit: int, before: tuple[float, str] | None, where: HistoryFilter, visible_to: Person | None
    ) -> PendingPage[FinishedRecord]:
        everyone = visible_to is None or visible_to.sees_all
        # A person's page, and everyone's search, read the history's index (`_history_index`); everyone's unfiltered
        # page reads the items' finished indexes, as before (one range each, merged, and an exact count).
        indexed = not everyone or where.searching
        if indexed and self._history_index_ready():
            return self._indexed_history(limit, before, where, None if everyone else visible_to)
        page = self._history_from_items(limit, before, where, visible_to)
        if indexed and self._history_index_ready():
            # The back-fill completed while the items' tables were read, and deleted the finished questions' addressee
            # rows that read may have needed: read the index instead.
            return self._indexed_history(limit, before, where, None if everyone else visible_to)
        return page

    def _indexed_history(
        self, limit: int, before: tuple[float, str] | None, where: HistoryFilter, person: Person | None
    ) -> PendingPage[FinishedRecord]:
        with self._connect().connect() as conn:
            return indexed_history_page(conn, person, where, before, limit, decoded=self._decoded)

    def _history_from_items(
        self, limit: int, before: tuple[float, str] | None, where: HistoryFilter, visible_to: Person | None
    ) -> PendingPage[FinishedRecord]:
        """The history page read from the items' own tables: everyone's unsearched page, and any page until the
        history's index is complete.
        """
        if not where.searching:
            return self._history_read(limit, before, where, visible_to)
        # A search narrows after the SQL (`_search`): read the person's finished items in ranges, newest first, and
        # match each in memory, to a full page; the total reads from the newest (`_history_total`). The agent and the
        # conversation are the questions' columns, which the SQL decides (`columns_decide_history`).
        taken: list[FinishedRecord] = []
        position = before
        next_cursor: str | None = None
        while True:
            batch = self._history_read(max(limit + 1, SEARCH_BATCH), position, where, visible_to, counted=False)
            taken += [record for record in batch.records if where.takes(record)]
            if len(taken) > limit:
                next_cursor = encode_history_position(history_order(taken[limit - 1]))
                break
            if batch.next_cursor is None:
                break
            position = decode_history_position(batch.next_cursor)
        total, exact = self._history_total(where, visible_to)
        return PendingPage(taken[:limit], next_cursor, total, total_exact=exact)

    def _history_index_ready(self) -> bool:
        """Whether the history may read the history's index: its tables are there and complete. Where they are there
        but not complete (a database whose items finished before them), the back-fill is started in a thread of its
        own (`_backfill`), and the history is read from the items' tables until it is done.
        """
        if self._history_indexed:
            return True
        database = self._connect()
        if not self._table_ready(database):
            return False
        state = history_index_state(database)
        if state == 'incomplete':
            with self._lock:
                if self._backfilling is None:
                    self._backfilling = threading.Thread(
                        target=self._backfill, args=(database,), name='ask-user history back-fill', daemon=True
                    )
                    self._backfilling.start()
        self._history_indexed = state == 'complete'
        return self._history_indexed

    def _backfill(self, database: Database) -> None:
        """Write the entries of the items that finished before the history's index (`backfill_history_index`), once
        a process; a database user who may not (a read-only one) gets a warning, and the history is read as before.
        """
        try:
            backfill_history_index(database, approvals=self._approvals_ready(), stop=self._closing.is_set)
        except Exception as error:  # the driver's own (permissions, a read-only file), whichever way to the database
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            _log.warning(
                "a person's history is read from the questions and approvals themselves, slower, until the history's "
                'index is complete; this process could not complete it (%s)',
                reason,
            )

    def _history_total(self, where: HistoryFilter, visible_to: Person | None) -> tuple[int, bool]:
        """How many finished items a search takes and `visible_to` sees, and whether exactly: the questions in one SQL
        count where their columns decide the search (`columns_decide_history`); else, and for the approvals, the
        matches among at most `SEARCH_COUNT_ROWS` of the person's finished items, the newest first (beyond: a lower
        bound).
        """
        counted = 0
        if columns_decide_history(where) and where.kind != 'approval':
            database = self._connect()
            if self._table_ready(database):
                with database.connect() as conn:
                    counted = count_finished_questions(conn, where, visible_to, addressees=self._has_addressees)
            if where.kind == 'question' or not self._approvals_ready():
                return counted, True
            where = replace(where, kind='approval')  # the approvals left, matched in memory
        read = 0
        position: tuple[float, str] | None = None
        while True:
            batch = self._history_read(MAX_PAGE_SIZE, position, where, visible_to, counted=False)
            counted += sum(1 for record in batch.records if where.takes(record))
            read += len(batch.records)
            if batch.next_cursor is None:
                return counted, True
            if read >= SEARCH_COUNT_ROWS:
                return counted, False
            position = decode_history_position(batch.next_cursor)

    def _history_read(
        self,
        limit: int,
        before: tuple[float, str] | None,
        where: HistoryFilter,
        visible_to: Person | None,
        *,
        counted: bool = True,
    ) -> PendingPage[FinishedRecord]:
        """At most `limit` finished items after `before` (of `where`'s kind, times, agent and conversation), and, if
        `counted`, how many there are (else 0: a search counts its own way, `_history_total`).
        """
        database = self._connect()
        if not self._table_ready(database):
            return PendingPage((), None, 0)
        approvals = where.kind != 'question' and self._approvals_ready()
        records: list[FinishedRecord] = []
        # Where each table's read stopped when it read all it was asked for (it may hold more): the page holds nothing
        # below the highest of them, which nothing read yet of that table could come before.
        ends: list[tuple[float, str]] = []
        total = 0
        with database.connect() as conn:
            if where.kind != 'approval':
                found, end = select_finished_questions(
                    conn,
                    before=before,
                    limit=limit + 1,
                    where=where,
                    visible_to=visible_to,
                    addressees=self._has_addressees,
                    decoded=self._decoded,
                )
                records += found
                ends += [] if end is None else [end]
                if counted:
                    total += count_finished_questions(conn, where, visible_to, addressees=self._has_addressees)
            if approvals:
                found, end = select_finished_approvals(
                    conn, before=before, limit=limit + 1, where=where, visible_to=visible_to
                )
                records += found
                ends += [] if end is None else [end]
                if counted:
                    total += count_finished_approvals(conn, where, visible_to)
            handoffs = select_handoffs(conn, [record.key for record in records])
        if handoffs:
            records = [
                replace(record, handoffs=handoffs[record.key]) if record.key in handoffs else record
                for record in records
            ]
        cutoff = max(ends, default=None)
        known = sorted(
            (record for record in records if cutoff is None or history_order(record) >= cutoff),
            key=history_order,
            reverse=True,
        )
        if len(known) > limit:
            return PendingPage(known[:limit], encode_history_position(history_order(known[limit - 1])), total)
        # A short page over a table that holds more (rows it left out: damaged, or not theirs after all): go on below.
        return PendingPage(known, None if cutoff is None else encode_history_position(cutoff), total)

    async def prune_finished(self, *, older_than: float | None = None) -> int:
        """Delete the questions answered or withdrawn more than `older_than` seconds ago (by default
        `finished_retention_seconds`), and the tool approvals decided or withdrawn as long ago; how many questions
        were deleted. `events()` calls it once an hour.
        """
        keep = self.finished_retention_seconds if older_than is None else older_than
        if keep is None:
            return 0
        return await self._in_thread(partial(self._prune, time.time() - keep))

    def _prune(self, before: float) -> int:
        database = self._connect()
        if not self._table_ready(database):
            return 0
        with database.begin() as conn:
            if self._has_change_log:
                prune_changes(conn, min(before, time.time() - CHANGES_RETENTION_SECONDS))
            return prune_finished(
                conn,
                before,
                has_event_tables=self._has_event_table,
                has_addressees=self._has_addressees,
                has_approvals=self._approvals_ready(),
            )

    def _ended_workflows(self, workflow_ids: set[str], conn: Connection | None = None) -> set[str]:
        """Those of these workflows that wait no more: ended (cancelled, failed, finished) or deleted."""
        if not workflow_ids:
            return set()
        if conn is not None:
            return workflow_ids - active_workflows(conn, sorted(workflow_ids))
        with self._connect().connect() as own:
            return workflow_ids - active_workflows(own, sorted(workflow_ids))

    def _withdraw_ended(self, records: Sequence[StoredRequest]) -> None:
        """Withdraw the pending questions of workflows that ended, and tell each workflow, in case it is resumed.

        A cancelled workflow can be resumed (`DBOS.resume_workflow`); it then reads `WITHDRAWN_MESSAGE` at once,
        and its model is told the question was withdrawn, rather than waiting a recheck to find the row so.
        """
        database = self._connect()
        with database.begin() as conn:
            withdrawn = {record.key for record in records if withdraw_pending(conn, [record.key]) == 1}
        for record in records:
            if record.key in withdrawn:
                # Best effort, after the withdrawal committed: a workflow deleted since has nobody to tell, and one
                # that misses the message finds the row withdrawn at its next recheck all the same.
                with contextlib.suppress(Exception), database.begin() as conn:
                    send_message(
                        conn,
                        record.workflow_id,
                        WITHDRAWN_MESSAGE,
                        message_topic(record.key),
                        f'{record.key}:withdrawn',
                    )

    def _table_ready(self, database: Database) -> bool:
        if not self._has_table:
            # A DBOS database where no question was asked yet, opened without creating the table.
            if not database.table_exists():
                return False
            database.ensure_columns()
            self._has_addressees = _addressees_ready(database)
            self._has_table = True
        return True

    def _select(
        self,
        *,
        status: Status | None = None,
        request_id: str | None = None,
        request_ids: Sequence[str] | None = None,
        visible_to: Person | None = None,
    ) -> list[StoredRequest]:
        database = self._connect()
        if not self._table_ready(database):
            return []
        with database.connect() as conn:
            # Each request is decoded (and validated) once, the first time this store reads it.
            try:
                return select_requests(
                    conn,
                    status=status,
                    request_id=request_id,
                    request_ids=request_ids,
                    decoded=self._decoded,
                    visible_to=visible_to,
                )
            except UnreadableRowError as error:  # asked for by its key: listings leave it out
                raise UnreadableRequestError(error.request_id).for_audience(error.audience) from None

    def _changes_since(self, since: float) -> list[tuple[str, Status, float]]:
        database = self._connect()
        if not self._table_ready(database):
            return []
        with database.connect() as conn:
            return changes_since(conn, since)

    async def record(self, key: str) -> StoredRequest:
        """The request with this key in whatever state it is; `UnknownRequestError` if there is none."""
        found = await self._in_thread(lambda: self._select(request_id=key))
        if not found:
            raise UnknownRequestError(key)
        return found[0]

    async def get(self, key: str) -> AskUserRequest:
        """The pending request with this key (`AskUserRequest.key`).

        Raises `UnknownRequestError`, `AlreadyAnsweredError` or `WithdrawnError` when it is not pending.
        """
        stored = await self.record(key)
        _raise_unless_pending(stored)
        return stored.request

    async def respond(self, key: str, response: AskUserResponse) -> None:
        """Answer (or decline) the pending request with this key, once, and wake the workflow waiting for it.

        Raises `ValueError` if `check_response` rejects the response (nothing is recorded then), and
        the errors of `get` when the request is not pending, including when another process answered
        it a moment before, and `WithdrawnError` when its workflow has ended (cancelled, say), even a moment
        before: the claim and that check are one statement. Who answered, `response.answered_by`, is recorded
        with the answer (the `answered_by` column); front ends set it (the web inbox: the name of the login;
        `ask-user answer`: the OS user and host).
        """
        await self._in_thread(lambda: self._respond(key, response))

    def _respond(self, request_id: str, response: AskUserResponse) -> None:
        self._decide({}, {request_id: response})

    async def forward(
        self, key: str, to: Sequence[str], *, note: str = '', by: str | None = None, replace: bool = True
    ) -> Handoff:
        """Hand the pending question or approval `key` on to `to` (names or groups), with `note`: the `QuestionHub`
        contract. In one transaction: the item's audience (its column and, for a question, its addressee rows), the
        hand-off's row (`ask_user_handoffs`), and a change of the log, which open inboxes read as the item requested
        anew. The workflow waiting for it is not touched. `ValueError` for bad names or a bad note; the store errors
        when it is not pending.
        """
        names, checked = check_handoff(to, note)
        return await self._in_thread(partial(self._forward, key, names, checked, by, replace))

    def _forward(self, key: str, names: tuple[str, ...], note: str, by: str | None, replace: bool) -> Handoff:
        database = self._connect()
        if not self._table_ready(database):
            raise UnknownRequestError(key)
        with database.begin() as conn:
            found = execute(conn, f'SELECT 1 FROM {TABLE_NAME} WHERE id = :id', {'id': key}).fetchone()
            item: Literal['question', 'approval'] = (
                'question' if found is not None or not self._approvals_ready() else 'approval'
            )
            handoff = forward_item(conn, item, key, names, note, by, replace=replace)
        self._decoded.pop(key, None)
        assert handoff is not None  # a new row each forward: never one there already
        return handoff

    async def handoffs(self, key: str) -> Sequence[Handoff]:
        """The hand-offs of the question or approval `key`, the oldest first (none if it has none)."""

        def read() -> Sequence[Handoff]:
            with self._connect().connect() as conn:
                return select_handoffs(conn, [key]).get(key, ())

        return await self._in_thread(read)

    async def pending_approvals(self, *, visible_to: Person | None = None) -> Sequence[PendingApproval]:
        """Every tool call waiting for approval, across all workflows, oldest first (its wait still open, its
        workflow still waiting); with `visible_to`, only those addressed to that person, as `pending` filters.
        """
        return await self._in_thread(lambda: self._pending_approvals(visible_to))

    def _pending_approvals(self, visible_to: Person | None) -> list[PendingApproval]:
        if not self._approvals_ready():
            return []
        with self._connect().connect() as conn:
            stored = select_approvals(conn, pending=True)
        stored = [record for record in stored if audience_includes(record.approval.audience, visible_to)]
        ended = self._ended_workflows({record.approval.workflow_id for record in stored})
        return [record.approval for record in stored if record.approval.workflow_id not in ended]

    async def pending_approvals_page(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None, visible_to: Person | None = None
    ) -> PendingPage[PendingApproval]:
        """A page of the tool calls waiting for approval (`visible_to`'s only, in the page and its total), the oldest
        first, read with one keyset query and counted with another, whatever the number waiting.

        An approval of a workflow that ended (cancelled) while it waited is left out of the page, which is then short
        by it, as a question's is.
        """
        check_limit(limit)
        after = None if cursor is None else decode_approval_position(cursor)
        return await self._in_thread(lambda: self._approvals_page(limit, after, visible_to))

    def _approvals_page(
        self, limit: int, after: tuple[float, str] | None, visible_to: Person | None
    ) -> PendingPage[PendingApproval]:
        if not self._approvals_ready():
            return PendingPage([], None, 0)
        with self._connect().connect() as conn:
            stored = select_approvals(conn, pending=True, visible_to=visible_to, after=after, limit=limit + 1)
            total = count_pending_approvals(conn, visible_to)
            page = stored[:limit]
            ended = self._ended_workflows({record.approval.workflow_id for record in page}, conn)
        next_cursor = encode_approval_position(approval_order(page[-1].approval)) if len(stored) > limit else None
        approvals = [
            record.approval
            for record in page
            if record.approval.workflow_id not in ended and audience_includes(record.approval.audience, visible_to)
        ]
        return PendingPage(approvals, next_cursor, total)

    def _approvals_ready(self) -> bool:
        if not self._has_approvals_table:
            # Made since this store connected, by a worker of this version.
            self._has_approvals_table = self._connect().has_table(EVENT_APPROVALS_TABLE_NAME)
        return self._has_approvals_table

    async def get_approval(self, key: str) -> PendingApproval:
        """The pending approval with this key (`PendingApproval.key`).

        Raises `UnknownRequestError`, `AlreadyAnsweredError` (decided) or `WithdrawnError` (its wait is over: its
        deadline passed, it was resolved from elsewhere, or its workflow ended) when it is not pending.
        """
        return (await self._in_thread(lambda: self._approval(key))).approval

    def _approval(self, key: str) -> StoredApproval:
        found: list[StoredApproval] = []
        ended: set[str] = set()
        if self._approvals_ready():
            with self._connect().connect() as conn:
                found = select_approvals(conn, key=key)
                # The same two queries whether the key names a row or not, in one connection: a person who may not
                # see a pending approval is told it is unknown (the web's `seen_by`), and must not tell it from a
                # missing one by how long the answer took (a second query ran only for a row that exists).
                ended = self._ended_workflows({found[0].approval.workflow_id if found else key}, conn)
        if not found:
            raise UnknownRequestError(key)
        stored = found[0]
        audience = stored.approval.audience
        if stored.status == 'decided':
            raise AlreadyAnsweredError(key).for_audience(audience)
        if stored.status == 'withdrawn' or not stored.wait_open or ended:
            raise WithdrawnError(key).for_audience(audience)
        return stored

    async def wait_items(self, token: str) -> tuple[Sequence[PendingApproval], Sequence[AskUserRequest]]:
        """The approvals and questions of the wait of `token` still pending, oldest first (none when it is over)."""
        return await self._in_thread(lambda: self._wait_items(token))

    def _wait_items(self, token: str) -> tuple[list[PendingApproval], list[AskUserRequest]]:
        database = self._connect()
        approvals: list[StoredApproval] = []
        questions: list[StoredRequest] = []
        with database.connect() as conn:
            if self._approvals_ready():
                approvals = select_approvals(conn, token=token, pending=True)
            if self._has_event_table and self._table_ready(database):
                questions = [row for row in token_requests(conn, token) if row.status == 'pending']
        workflows = {stored.approval.workflow_id for stored in approvals} | {row.workflow_id for row in questions}
        if self._ended_workflows(workflows):
            return [], []
        questions.sort(key=lambda row: (row.created_at, row.key))
        return [stored.approval for stored in approvals], [row.request for row in questions]

    async def decide(self, key: str, decision: ApprovalDecision) -> None:
        """Decide the pending approval with this key, once; the decision that completes its wait resumes the run.

        Raises `ValueError` saying what is wrong if `check_decision` refuses it (nothing is recorded then), and
        the errors of `get_approval` when it is not pending, even if decided from elsewhere a moment before.
        """
        await self._in_thread(lambda: self._decide({key: decision}, {}))

    async def decide_wait(
        self, approvals: Mapping[str, ApprovalDecision], answers: Mapping[str, AskUserResponse]
    ) -> None:
        """Decide these approvals and answer these questions (by key), all of one wait, in one transaction.

        Every item is checked first; then all are claimed together, or none is (a `StoreError` for the first one
        that is not pending any more). The run is resumed when this completes its wait. `ValueError` when an item
        is refused, or the items are not all of one wait.
        """
        await self._in_thread(lambda: self._decide(approvals, answers))

    def _decide(self, approvals: Mapping[str, ApprovalDecision], answers: Mapping[str, AskUserResponse]) -> None:
        if not approvals and not answers:
            raise ValueError('nothing to decide: give at least one approval or answer')
        database = self._connect()
        # Each item looked up once and checked, before anything is written.
        approved = {key: self._approval(key) for key in approvals}
        for key, decision in approvals.items():
            check_decision(approved[key].approval, decision)
        questions: dict[str, StoredRequest] = {}
        for request_id, response in answers.items():
            found = self._select(request_id=request_id)
            if not found:
                raise UnknownRequestError(request_id)
            questions[request_id] = found[0]
            _raise_unless_pending(found[0])
            check_response(found[0].request, response)
        encoded = {request_id: encode_response(response) for request_id, response in answers.items()}
        try:
            with database.begin() as conn:
                self._claim_all(conn, approved, approvals, questions, answers, encoded)
        except _WorkflowEnded as ended:
            # Still pending, but its workflow waits no more: nobody would read the answer. Nothing was recorded.
            self._withdraw_ended([ended.stored])
            raise WithdrawnError(ended.stored.key) from None

    def _claim_all(
        self,
        conn: Connection,
        approved: Mapping[str, StoredApproval],
        approvals: Mapping[str, ApprovalDecision],
        questions: Mapping[str, StoredRequest],
        answers: Mapping[str, AskUserResponse],
        encoded: Mapping[str, str],
    ) -> None:
        """Claim every item in the transaction of `conn` and send what the run gets, or raise (and so write nothing)."""
        # The questions of one wait are claimed with their token's rows locked, so exactly one decision sees the
        # wait complete and resolves it.
        tokens = {stored.approval.token for stored in approved.values()}
        tokens |= {self._event_token(conn, request_id) for request_id in answers}
        if len(tokens) > 1 or (None in tokens and len(approvals) + len(answers) > 1):
            raise ValueError('the items decided together must all be of one wait (their run is waiting on it)')
        token = next(iter(tokens))
        if token is not None:
            lock_token(conn, token)
        for key, stored in approved.items():
            if not claim_approval(conn, stored.approval, approvals[key]):
                raise _not_claimed(self._approval, key)
        for request_id, stored in questions.items():
            # The claim: one conditional UPDATE moves the row out of `pending`, and only while its workflow still
            # waits, so of two answers, or of an answer and a cancellation or a withdrawal, exactly one wins.
            response = answers[request_id]
            if not claim_answer(
                conn, request_id, encoded[request_id], response.answered_by, workflow_id=stored.workflow_id
            ):
                status = request_status(conn, request_id)
                if status != 'pending':
                    _raise_for_status(request_id, status, stored.request)
                raise _WorkflowEnded(stored)
        # In the same transaction: the answers are recorded and sent together, or not at all.
        if token is None:
            [(request_id, stored)] = questions.items()
            message = answer_message(encoded[request_id])
            send_message(conn, stored.workflow_id, message, message_topic(request_id), request_id)
        elif (results := completed_results(conn, token, with_approvals=self._approvals_ready())) is not None:
            # The last item of a waiting handler's wait: resolve its token with every answer and decision, claiming
            # the wait in this transaction; if it was resolved or expired first, nothing is taken.
            workflows = [stored.approval.workflow_id for stored in approved.values()]
            workflows += [stored.workflow_id for stored in questions.values()]
            if not claim_wait(conn, token):
                raise WithdrawnError(next(iter([*approvals, *answers])))
            send_message(conn, workflows[0], results, event_topic(token), token)

    def _event_token(self, conn: Connection, request_id: str) -> str | None:
        if not self._has_event_table:
            return None
        return lock_event_token(conn, request_id)

    async def events(self) -> AsyncIterator[StoreEvent]:
        """Events from now on (`events_after(None)`)."""
        async for event in self.events_after(None):
            yield event

    async def events_after(self, position: str | None) -> AsyncIterator[StoreEvent]:
        """Events from `position` on (a `StoreEvent.position` this store gave), or from now on for `None`.

        Read from the change log (`_changes`) every `events_poll_seconds`: ordered by an id that a late commit
        cannot overtake, so a question whose transaction commits late is still seen (unless later than
        `events_gap_seconds`). Each event's `position` says where the iteration stands after it; one resumed there
        gets every change after it that the log still holds (an hour: `CHANGES_RETENTION_SECONDS`; at most
        `_CATCH_UP_LIMIT`, 1,000, changes back), each once. A position that is not one, or is older than that,
        starts from now.

        Every iteration on this store shares one poll (an inbox with a thousand open pages reads the log as often as
        one with a single page), and holds nothing but its position. A question is decoded once, the first time it
        is read; each event carries its question or approval, so a stream decides who may see it from the event.
        On a database where the log could not be made, the table is read by time as before, and events carry no
        position.
        """
        feed = self._feed
        queue = await feed.subscribe()
        try:
            mine = queue.position
            if position is not None and mine is not None and (resumed := Position.decode(position)) is not None:
                caught = await self._catch_up(resumed, mine)
                if caught is not None:
                    for change_id, event in caught:
                        if not resumed.has(change_id):
                            resumed.add(change_id)
                            yield replace(event, position=resumed.encode())
                    resumed.raise_floor(mine.floor)
                    mine = queue.position = resumed
            while True:
                while queue.items:
                    change_id, event = queue.items.popleft()
                    if mine is None:
                        if event is not None:
                            yield event
                    elif event is None:
                        mine.raise_floor(change_id)
                    elif not mine.has(change_id):
                        mine.add(change_id)
                        yield replace(event, position=mine.encode())
                await feed.next_poll(queue)
        finally:
            feed.unsubscribe(queue)

    async def _catch_up(self, resumed: Position, now: Position) -> list[tuple[int, StoreEvent]] | None:
        """The events after `resumed` up to the feed's position `now` and beyond; `None` when they cannot all be
        told (a position ahead of the log, or one older than it, or too far behind).
        """
        if resumed.high > now.high:
            return None

        def read() -> list[Change] | None:
            with self._connect().connect() as conn:
                first = first_change_id(conn)
                if first is not None and first > resumed.floor + 1 and now.high >= first:
                    return None  # pruned past it
                found = changes_after(conn, resumed.floor, _CATCH_UP_LIMIT + 1)
            if len(found) > _CATCH_UP_LIMIT:
                return None
            return [change for change in found if not resumed.has(change.id)]

        changes = await self._in_thread(read)
        if changes is None:
            return None
        return await self._events_of(changes)

    async def _events_of(self, changes: Sequence[Change]) -> list[tuple[int, StoreEvent]]:
        """The event of each change, in order, with the question or approval it is about (decoded once)."""
        keys = list(dict.fromkeys(change.key for change in changes if change.item == 'question'))
        requests: dict[str, AskUserRequest] = {}
        for start in range(0, len(keys), _NEW_CHUNK):
            decoded = await self._in_thread(partial(self._select, request_ids=keys[start : start + _NEW_CHUNK]))
            requests.update((stored.key, stored.request) for stored in decoded)
        approval_keys = list(dict.fromkeys(change.key for change in changes if change.item == 'approval'))
        approvals = await self._in_thread(partial(self._approvals_by_key, approval_keys)) if approval_keys else {}
        events: list[tuple[int, StoreEvent]] = []
        for change in changes:
            kind: Literal['requested', 'answered', 'withdrawn'] = (
                'requested'
                if change.status == 'pending'
                else 'withdrawn'
                if change.status == 'withdrawn'
                else 'answered'
            )
            if change.item == 'approval':
                approval = approvals.get(change.key)
                if kind == 'requested' and approval is None:
                    continue  # pruned since: nothing to show
                events.append((change.id, StoreEvent(kind, change.key, item='approval', approval=approval)))
            else:
                request = requests.get(change.key)
                if kind == 'requested' and request is None:
                    continue
                events.append((change.id, StoreEvent(kind, change.key, request)))
        return events

    async def _poll_log(self, poll: _LogPoll) -> list[tuple[int, StoreEvent | None]]:
        """One poll of the change log: the new changes, and the gaps filled since the last poll, as events in id
        order, then the feed's floor (`(floor, None)`); `poll` holds where the feed stands.
        """
        await self._prune_now_and_then(time.time())
        position = poll.position
        gaps = sorted(poll.gaps)

        filled, new = await self._in_thread(partial(self._read_log, gaps, position.high))
        changes = sorted([*filled, *new], key=lambda change: change.id)
        events = await self._events_of(changes)
        # Only now, with no await since the read: a poll cancelled before this point changed nothing.
        now = anyio.current_time()
        high = position.high
        for change in new:
            skipped = range(max(high + 1, change.id - _MAX_GAPS), change.id)
            poll.gaps.update((gap, now) for gap in skipped)
            high = change.id
        for change in filled:
            poll.gaps.pop(change.id, None)
        for change in changes:
            position.add(change.id)
        expired = {gap for gap, noticed in poll.gaps.items() if now - noticed > self.events_gap_seconds}
        if len(poll.gaps) - len(expired) > _MAX_GAPS:
            expired.update(sorted(poll.gaps)[: len(poll.gaps) - _MAX_GAPS])
        for gap in expired:
            del poll.gaps[gap]  # given up: a rolled-back write (a sequence never hands an id out twice)
        position.raise_floor(min(poll.gaps, default=position.high + 1) - 1)
        return [*events, (position.floor, None)]

    def _read_log(self, gaps: Sequence[int], high: int) -> tuple[list[Change], list[Change]]:
        """The changes of the ids `gaps` that are there now, and every change above `high`."""
        with self._connect().connect() as conn:
            filled: list[Change] = []
            for start in range(0, len(gaps), _NEW_CHUNK):
                filled += changes_with_ids(conn, gaps[start : start + _NEW_CHUNK])
            new: list[Change] = []
            while True:
                batch = changes_after(conn, high, _LOG_BATCH)
                new += batch
                if len(batch) < _LOG_BATCH:
                    return filled, new
                high = batch[-1].id

    async def _log_baseline(self) -> _LogPoll:
        """Where the feed of the log begins: after the last change; the ids skipped among the last ones are gaps."""

        def read() -> list[int]:
            with self._connect().connect() as conn:
                return last_change_ids(conn, _BASELINE_IDS)

        ids = await self._in_thread(read)
        if not ids:
            return _LogPoll(Position(), {})  # a new log (pruning keeps the last change): ids start at 1
        now = anyio.current_time()
        present = set(ids)
        gaps = {each: now for each in range(ids[0], ids[-1]) if each not in present}
        return _LogPoll(Position(ids[0] - 1, present - {ids[0] - 1}), gaps)

    def _uses_log(self) -> bool:
        self._connect()
        return self._has_change_log

    async def _poll_changes(self, poll: _Poll) -> list[StoreEvent]:
        """One poll of the changes since the previous one, as events; `poll` holds what the polls have seen."""
        now = time.time()
        await self._prune_now_and_then(now)
        changed = await self._in_thread(partial(self._changes_since, poll.since))
        known = poll.known
        new = [
            request_id
            for request_id, status, created_at in changed
            if request_id not in known and (status == 'pending' or created_at >= poll.started)
        ]
        requests: dict[str, AskUserRequest] = {}
        for start in range(0, len(new), _NEW_CHUNK):
            decoded = await self._in_thread(partial(self._select, request_ids=new[start : start + _NEW_CHUNK]))
            requests.update((stored.key, stored.request) for stored in decoded)
        # The approvals beside them, read the same way from their own table (none before it exists).
        moved = await self._in_thread(partial(self._approval_changes_since, poll.since))
        fresh = [key for key, status, _ in moved if key not in poll.known_approvals and status == 'pending']
        approvals = await self._in_thread(partial(self._approvals_by_key, fresh)) if fresh else {}
        events = _moves(changed, known, now, lambda key: requests.get(key), 'question')
        events += _moves(moved, poll.known_approvals, now, lambda key: approvals.get(key), 'approval')
        events = await self._with_items(events)
        # Only now, with no await since the read: a poll cancelled before this point changed nothing.
        poll.since = now - 1.0  # overlap, as another machine's clock or a slow commit may lag
        return events

    async def _with_items(self, events: list[StoreEvent]) -> list[StoreEvent]:
        """`events` with their question or approval on the finished ones too, as the change log's events have them."""
        finished = [event for event in events if event.kind != 'requested']
        if not finished:
            return events
        changes = [
            Change(-1, event.item, event.request_id, 'withdrawn' if event.kind == 'withdrawn' else 'answered')
            for event in finished
        ]
        told = iter(event for _, event in await self._events_of(changes))
        return [next(told) if event.kind != 'requested' else event for event in events]

    def _approval_changes_since(self, since: float) -> list[tuple[str, str, float]]:
        if not self._approvals_ready():
            return []
        with self._connect().connect() as conn:
            return [(key, status, created_at) for key, status, created_at in approval_changes_since(conn, since)]

    def _approvals_by_key(self, keys: Sequence[str]) -> dict[str, PendingApproval]:
        """The approvals of `keys`, one indexed read each (a few new ones a poll; never one query of them all)."""
        with self._connect().connect() as conn:
            return {stored.key: stored.approval for key in keys for stored in select_approvals(conn, key=key)}

    async def _poll_baseline(self) -> _Poll:
        """What the polls start from: no listing of every pending question, only what changed in the last second.

        A row changed after it that the polls have not seen was pending when they began (a status moves once).
        `known` holds each row seen changing, with when it was last seen so, for a minute: well past the overlap.
        """
        started = time.time() - 1.0
        changed = await self._in_thread(partial(self._changes_since, started))
        moved = await self._in_thread(partial(self._approval_changes_since, started))
        return _Poll(
            started=started,
            since=started,
            known={key: (status, started) for key, status, _ in changed},
            known_approvals={key: (status, started) for key, status, _ in moved},
        )

    async def _prune_now_and_then(self, now: float) -> None:
        if self.finished_retention_seconds is None or now - self._pruned_at < _PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = now
        await self.prune_finished()


@dataclass
class _Poll:
    """What the shared poll of a store's events has seen so far."""

    started: float
    """When the polls began (less the overlap): a row created before it and unseen is no news."""

    since: float
    """The time the next poll reads changes from."""

    known: dict[str, tuple[Status, float]]
    """Each row seen changing: its status, and when it was last seen so."""

    known_approvals: dict[str, tuple[str, float]] = field(default_factory=dict[str, tuple[str, float]])
    """Each approval seen changing, the same way (its status `pending`, `decided` or `withdrawn`)."""


def _moves(
    changed: Sequence[tuple[str, str, float]],
    known: dict[str, tuple[Any, float]],
    now: float,
    new: Callable[[str], Any],
    item: Literal['question', 'approval'],
) -> list[StoreEvent]:
    """The events of one poll's `changed` rows of one table (questions or approvals), given what `known` has seen;
    `new(key)` is a row's decoded item when it was read as new. Updates `known`, forgetting rows unseen for a minute.
    """
    events: list[StoreEvent] = []
    for key, status, _ in changed:
        before = known.get(key)
        found = new(key) if before is None else None
        if found is not None:
            # Asked since we started, perhaps answered between two polls: it was requested first.
            if item == 'question':
                events.append(StoreEvent('requested', key, found))
            else:
                events.append(StoreEvent('requested', key, item='approval', approval=found))
            before = ('pending', now)
        if status != 'pending' and (before is None or before[0] == 'pending'):
            # Unseen until now and finished: it waited, untouched, since before the polls began.
            events.append(StoreEvent('withdrawn' if status == 'withdrawn' else 'answered', key, item=item))
        known[key] = (status, now)
    cutoff = now - 60.0
    for key in [key for key, (_, seen) in known.items() if seen < cutoff]:
        del known[key]
    return events


@dataclass
class _LogPoll:
    """Where the shared poll of the change log stands."""

    position: Position
    """Every change taken so far (delivered, or a gap given up)."""

    gaps: dict[int, float]
    """The ids skipped below the highest seen (a transaction holding them had not committed), with when each was
    noticed (`anyio.current_time()`), read again at each poll until they appear or `events_gap_seconds` pass."""


@dataclass(eq=False)
class _Subscriber:
    """One `events()` iteration: the events the shared poll has found for it and it has not yet taken."""

    generation: int
    """The poll it has last seen."""

    position: Position | None
    """Where it stands in the change log (`None` when the store reads by time): its only state, whatever waits."""

    items: deque[tuple[int, StoreEvent | None]] = field(default_factory=deque[tuple[int, StoreEvent | None]])
    """Found, not yet taken: each change's id and event, and `(floor, None)` after each poll of the log."""


class _Feed:
    """One poll for every `events()` iteration of a store, each given every event found.

    No background task: whichever iteration runs out of events first when a poll is due makes it, under a lock;
    the others, waiting on the lock, find the poll made and take what it found. An iteration cancelled while it
    polls (its page closed) leaves the poll to the next. With no iteration left, the feed forgets what it has seen,
    and the next one begins from its own moment, as a first one would.
    """

    def __init__(self, store: DBOSQuestionStore) -> None:
        self._store = store
        self._lock = anyio.Lock()
        self._subscribers: set[_Subscriber] = set()
        self._poll: _Poll | _LogPoll | None = None
        self._generation = 0
        self._polled_at = 0.0

    async def _baseline(self) -> _Poll | _LogPoll:
        store = self._store
        if await store._in_thread(store._uses_log):  # pyright: ignore[reportPrivateUsage]
            return await store._log_baseline()  # pyright: ignore[reportPrivateUsage]
        return await store._poll_baseline()  # pyright: ignore[reportPrivateUsage]

    async def subscribe(self) -> _Subscriber:
        """A new iteration's queue, from this poll on; the first iteration sets where the polls begin."""
        async with self._lock:
            if self._poll is None:
                self._poll = await self._baseline()
                self._polled_at = anyio.current_time()
            poll = self._poll
            position = poll.position.copy() if isinstance(poll, _LogPoll) else None
            subscriber = _Subscriber(self._generation, position)
            self._subscribers.add(subscriber)
            return subscriber

    def unsubscribe(self, subscriber: _Subscriber) -> None:
        """End an iteration; the last one leaves the feed to start over."""
        self._subscribers.discard(subscriber)
        if not self._subscribers:
            self._poll = None

    async def next_poll(self, subscriber: _Subscriber) -> None:
        """Wait for the next poll, making it when no other iteration has; its events are in every queue then."""
        async with self._lock:
            if self._generation != subscriber.generation:  # made by another iteration while this one waited
                subscriber.generation = self._generation
                return
            await anyio.sleep_until(self._polled_at + self._store.events_poll_seconds)
            if self._poll is None:  # every other iteration ended meanwhile
                self._poll = await self._baseline()
            store = self._store
            items: list[tuple[int, StoreEvent | None]]
            if isinstance(self._poll, _LogPoll):
                items = await store._poll_log(self._poll)  # pyright: ignore[reportPrivateUsage]
            else:
                found = await store._poll_changes(self._poll)  # pyright: ignore[reportPrivateUsage]
                items = [(-1, event) for event in found]
            self._polled_at = anyio.current_time()
            self._generation += 1
            for each in self._subscribers:
                each.items.extend(items)
            subscriber.generation = self._generation


class _DecodedRequests(MutableMapping[str, AskUserRequest]):
    """The requests a store has decoded, by key, the most recent `_REMEMBER_DECODED`; safe across threads.

    Two threads may decode the same request at once; both get equal requests, and either is kept.
    """

    def __init__(self) -> None:
        self._items: OrderedDict[str, AskUserRequest] = OrderedDict()
        self._lock = threading.Lock()

    def __getitem__(self, key: str) -> AskUserRequest:
        with self._lock:
            return self._items[key]

    def __setitem__(self, key: str, value: AskUserRequest) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > _REMEMBER_DECODED:
                self._items.popitem(last=False)

    def __delitem__(self, key: str) -> None:
        with self._lock:
            del self._items[key]

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)


_REMEMBER_DECODED = 1000
"""How many decoded requests a `DBOSQuestionStore` keeps, so that reading one again does not validate it again."""


class _WorkflowEnded(Exception):
    """A question's workflow waits no more: the transaction claiming it is rolled back, then it is withdrawn."""

    def __init__(self, stored: StoredRequest) -> None:
        super().__init__(stored.key)
        self.stored = stored


def _not_claimed(look_up: Callable[[str], StoredApproval], key: str) -> Exception:
    """Why the approval `key` could not be claimed: the store error its state now says (read outside the failed
    transaction's writes), `WithdrawnError` when it looks pending still (its workflow waits no more).
    """
    try:
        look_up(key)
    except Exception as error:
        return error
    return WithdrawnError(key)


def _raise_unless_pending(stored: StoredRequest) -> None:
    _raise_for_status(stored.key, stored.status, stored.request)


def _raise_for_status(request_id: str, status: Status | None, request: AskUserRequest | None = None) -> None:
    if status == 'answered':
        raise _about(AlreadyAnsweredError(request_id), request)
    if status == 'withdrawn':
        raise _about(WithdrawnError(request_id), request)
    if status is None:
        raise UnknownRequestError(request_id)


def _about(error: StoreError, request: AskUserRequest | None) -> StoreError:
    """`error`, saying whom `request` was for when it is known."""
    return error if request is None else error.for_audience(request.audience)


def _addressees_ready(database: Database) -> bool:
    """Whether `database` has the addressees, complete (`ensure_columns` made them, unless it could not)."""
    with database.connect() as conn:
        return has_addressees(conn)
