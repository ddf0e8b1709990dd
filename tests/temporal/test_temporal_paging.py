"""The cursor of `TemporalQuestionStore.pending_page`: Temporal's page token inside, anything else refused."""

from __future__ import annotations

import pytest

from pydantic_ai_ask_user._question_store import encode_cursor, encode_position
from pydantic_ai_ask_user.store import BadCursorError
from pydantic_ai_ask_user.temporal._store import _page_token  # pyright: ignore[reportPrivateUsage]


def test_a_temporal_cursor_carries_the_page_token_and_a_foreign_one_is_refused() -> None:
    assert _page_token(encode_cursor(['temporal', 'AAEC'])) == b'\x00\x01\x02'
    for cursor in (
        encode_position((1.0, 2.0, 'key')),  # a DBOS store's cursor
        encode_cursor(['temporal', 'not base64!']),
        encode_cursor(['temporal', 5]),
        encode_cursor(['other', 'AAEC']),
        'garbage',
    ):
        with pytest.raises(BadCursorError, match='not one this server gave out'):
            _page_token(cursor)
