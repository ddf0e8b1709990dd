"""The history: the History page (`GET /history`) and its JSON (`GET /api/history`), the finished questions and
approvals a person may see, newest first, a page at a time.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pydantic_ai_ask_user._history import finished_json, record_receipt, visible_in_history
from pydantic_ai_ask_user._i18n import N_, Translator
from pydantic_ai_ask_user._receipt import ReceiptStatus
from pydantic_ai_ask_user._text import utc_iso
from pydantic_ai_ask_user.store import BadCursorError, FinishedRecord, HistoryFilter, NoHistoryError, page_history

from ._api import error_json
from ._approvals import argument_rows
from ._context import AppContext
from ._pages import Pages, language
from ._rows import BadPaging, ago, kind_from_query, limit_from_query, search_from_query, search_link, search_query
from ._security import person

__all__ = ('History', 'HistoryRow', 'OUTCOME_TEXTS', 'RECEIPT_TEXTS', 'history_query')

OUTCOME_TEXTS = {
    'answered': N_('Answered'),
    'declined': N_('Declined'),
    'withdrawn': N_('Withdrawn'),
    'approved': N_('Approved'),
    'edited': N_('Approved with edited arguments'),
    'denied': N_('Denied'),
    'responded': N_('Replied instead'),
    'ignored': N_('Ignored'),
}
"""What the History page calls each outcome (`FinishedRecord.outcome`), for the catalogs."""

NO_HISTORY = 'this store keeps no history of finished questions and approvals'
"""The message of the API's 501 `no_history`, for a store without `history_page`."""


RECEIPT_TEXTS = {
    'verified': N_('Signed by the run, verified'),
    'not_verified': N_('Receipt does not verify'),
    'not_checked': N_('Signed, not checked (no key)'),
}
"""What the History page says of a kept receipt, by what its check found (`ReceiptStatus.check`), for the catalogs."""


@dataclass(frozen=True)
class HistoryRow:
    """One finished item as the History page draws it."""

    record: FinishedRecord
    """The item."""

    receipt: ReceiptStatus | None = None
    """Its kept receipt, checked with the app's `receipt_key` (`record_receipt`); `None` when it has none."""

    def receipt_text(self, language: Translator) -> str:
        """What its receipt's check found, in words, in `language` (empty without a receipt)."""
        return '' if self.receipt is None else language.gettext(RECEIPT_TEXTS[self.receipt.check])

    @property
    def receipt_signed_iso(self) -> str | None:
        """When the receipt says the answer was given, as an ISO 8601 UTC time; `None` when it does not read."""
        if self.receipt is None or self.receipt.receipt is None:
            return None
        return utc_iso(self.receipt.receipt.answered_at.timestamp())

    @property
    def finished_iso(self) -> str:
        """When it finished, as an ISO 8601 UTC time, for a `<time datetime>`."""
        return utc_iso(self.record.finished_at)

    @property
    def asked_iso(self) -> str:
        """When it was asked, as an ISO 8601 UTC time."""
        return utc_iso(self.record.asked_at)

    def finished_ago(self, language: Translator) -> str:
        """How long ago it finished, in words, in `language`."""
        return ago(time.time() - self.record.finished_at, language)

    def outcome_text(self, language: Translator) -> str:
        """Its outcome in words, in `language`."""
        return language.gettext(OUTCOME_TEXTS[self.record.outcome])

    @property
    def answers(self) -> list[tuple[str, list[str], str | None]]:
        """Per question of an answered question: its header, the labels picked or the words written, and the note."""
        response = self.record.response
        if response is None or response.cancelled:
            return []
        return [
            (
                answer.header,
                [answer.custom_answer] if answer.custom_answer is not None else list(answer.selected),
                answer.note,
            )
            for answer in response.answers
        ]

    @property
    def arguments(self) -> list[tuple[str, str]]:
        """An approval's arguments as the model gave them, as rows of a table."""
        approval = self.record.approval
        return [] if approval is None else argument_rows(approval.args)

    @property
    def edited_arguments(self) -> list[tuple[str, str]]:
        """The arguments an approval was approved with instead, as rows of a table; none when not edited."""
        decision = self.record.decision
        return [] if decision is None or decision.override_args is None else argument_rows(decision.override_args)


def history_query(query: Mapping[str, str]) -> tuple[int, str | None, HistoryFilter]:
    """The page size, cursor and filter of `?limit=&cursor=&kind=` (`question` or `approval`) and
    of the search (`?agent=&title=&conversation=&addressee=&q=`); `BadPaging` for a
    value that is not one.
    """
    limit = limit_from_query(query)
    kind = kind_from_query(query)
    search = search_from_query(query)
    cursor = query.get('cursor') or None
    return (
        limit,
        cursor,
        HistoryFilter(
            kind=kind,
            agent=search['agent'],
            title=search['title'],
            conversation=search['conversation'],
            addressee=search['addressee'],
            text=search['text'],
        ),
    )


class History:
    """The History page and `GET /api/history` of one app."""

    def __init__(self, context: AppContext, pages: Pages) -> None:
        self.context = context
        """The store, gate and options."""
        self.pages = pages
        """The app's pages, which draw this one and its errors."""

    async def _page(self, request: Request) -> tuple[list[FinishedRecord], str | None, int, int, HistoryFilter]:
        """The page the query asks for, of what the person may see (filtered by the store, and again here)."""
        who = person(request)
        limit, cursor, where = history_query(request.query_params)
        page = await page_history(self.context.store, limit=limit, cursor=cursor, where=where, visible_to=who)
        records = [record for record in page.records if visible_in_history(record, who)]
        return records, page.next_cursor, page.total, limit, where

    async def json(self, request: Request) -> Response:
        """`GET /api/history[?limit=N&cursor=C&kind=question|approval]`: a page of the finished questions and
        approvals the person asking may see (narrowed by `agent=`, `title=`, `conversation=`, `addressee=` and `q=`,
        free text), newest first (see `finished_json` for each record's fields, each kept receipt checked with the
        app's `receipt_key`), with `next_cursor` (`null` on the last page) and `total`.

        A `limit` or `kind` that is not one is a 400 `bad_query`, a cursor this server did not give a 400
        `bad_cursor`; a store that keeps no history a 501 `no_history`.
        """
        try:
            records, next_cursor, total, _, _ = await self._page(request)
        except BadPaging as error:
            return error_json(400, 'bad_query', str(error))
        except BadCursorError as error:
            return error_json(400, 'bad_cursor', str(error))
        except NoHistoryError:
            return error_json(501, 'no_history', NO_HISTORY)
        key = self.context.options.receipt_key
        return JSONResponse(
            {
                'history': [finished_json(record, receipt_key=key) for record in records],
                'next_cursor': next_cursor,
                'total': total,
            }
        )

    async def page(self, request: Request) -> Response:
        """`GET /history[?cursor=C&limit=N&kind=K]`: the History page, newest first, a "More" link to the next, and
        a search form (`agent=`, `title=`, `conversation=`, `addressee=`, `q=`), kept in the link.
        """
        _ = language(request).gettext
        try:
            records, next_cursor, total, limit, where = await self._page(request)
        except (BadPaging, BadCursorError):
            return self.pages.status(
                request,
                400,
                _('This page of the history does not exist'),
                _('The address of the page was changed or is too old. Start again from the first page.'),
                show_inbox=True,
            )
        except NoHistoryError:
            return self.pages.status(
                request,
                501,
                _('No history here'),
                _('This inbox keeps no history of answered questions and decided tool calls.'),
                show_inbox=True,
            )
        return self.pages.page(
            request,
            'history.html',
            200,
            rows=[HistoryRow(record, record_receipt(record, self.context.options.receipt_key)) for record in records],
            total=total,
            next_cursor=next_cursor,
            limit=limit,
            kind=where.kind or '',
            search=search_query(where),
            search_link=search_link(where),
            search_action='history',
        )
