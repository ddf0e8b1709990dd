"""The in-process hub's history: every finished question and approval it remembers, newest first, paged, addressed."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import anyio
import pytest
from ask_user_support import ask_one, wait_pending, wait_until

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, Person, QuestionWithdrawn
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.receipts import sign_receipt
from pydantic_ai_ask_user.store import (
    ApprovalDecision,
    BadCursorError,
    FinishedRecord,
    HistoryFilter,
    HistoryStore,
    NoHistoryError,
    PendingApproval,
    page_history,
    record_receipt,
)

pytestmark = pytest.mark.anyio

PICK = AskUserResponse(answers=(AskUserAnswer(header='Database', selected=('SQLite',)),))
SCHEMA = {'type': 'object', 'properties': {'env': {'type': 'string'}}, 'required': ['env']}


def _question(name: str, audience: tuple[str, ...] | None = None) -> AskUserRequest:
    return replace(ask_one(), id=name, run_id=None, audience=audience)


def _approval(token: str, audience: tuple[str, ...] | None = None) -> PendingApproval:
    return PendingApproval(token, 'deploy-bob', 'deploy', {'env': 'prod'}, parameters=SCHEMA, audience=audience)


async def _answer(hub: QuestionHub, request: AskUserRequest, response: AskUserResponse) -> None:
    """Ask `request` in the hub and answer it with `response`, waiting for each step."""
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        await hub.respond(request.key, response)


async def _withdraw(hub: QuestionHub, request: AskUserRequest) -> None:
    """Ask `request` and cancel the asker once it waits: the question is withdrawn."""
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, request)
        await wait_pending(hub, request.id)
        group.cancel_scope.cancel()


async def _decide(hub: QuestionHub, approval: PendingApproval, decision: ApprovalDecision | None) -> None:
    """Open a wait for `approval` and decide it (`None`: the wait gives up, withdrawing it)."""
    results: list[Any] = []

    async def wait() -> None:
        results.append(await hub.ask_wait(approval.token, [], [approval], timeout=None if decision else 0.05))

    async def waiting() -> bool:
        return any(each.key == approval.key for each in await hub.pending_approvals())

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        if decision is not None:
            await wait_until(waiting, f'{approval.key} to wait')
            await hub.decide(approval.key, decision)
    assert results


async def _all(hub: QuestionHub, limit: int, **kwargs: Any) -> list[FinishedRecord]:
    records: list[FinishedRecord] = []
    cursor = None
    while True:
        page = await hub.history_page(limit=limit, cursor=cursor, **kwargs)
        records += page.records
        if (cursor := page.next_cursor) is None:
            return records


async def test_every_outcome_is_kept_with_who_when_and_what_newest_first() -> None:
    hub = QuestionHub()
    assert isinstance(hub, HistoryStore)
    await _answer(hub, _question('answered'), replace(PICK, answered_by='alice'))
    await _answer(hub, _question('declined'), AskUserResponse(cancelled=True, answered_by='bob'))
    await _withdraw(hub, _question('withdrawn'))
    await _decide(hub, _approval('approved'), ApprovalDecision.approve(decided_by='ann'))
    await _decide(hub, _approval('edited'), ApprovalDecision.edit({'env': 'staging'}, decided_by='ann'))
    await _decide(hub, _approval('denied'), ApprovalDecision.deny('not now'))
    await _decide(hub, _approval('responded'), ApprovalDecision.respond('use staging'))
    await _decide(hub, _approval('ignored'), ApprovalDecision.ignore())
    await _decide(hub, _approval('a-withdrawn'), None)

    page = await hub.history_page()
    assert page.total == 9
    assert page.next_cursor is None
    outcomes = [(record.kind, record.outcome) for record in page.records]
    assert outcomes == [
        ('approval', 'withdrawn'),
        ('approval', 'ignored'),
        ('approval', 'responded'),
        ('approval', 'denied'),
        ('approval', 'edited'),
        ('approval', 'approved'),
        ('question', 'withdrawn'),
        ('question', 'declined'),
        ('question', 'answered'),
    ]
    finished = [record.finished_at for record in page.records]
    assert finished == sorted(finished, reverse=True)
    by_outcome = {(record.kind, record.outcome): record for record in page.records}
    answered = by_outcome['question', 'answered']
    assert (answered.by, answered.response, answered.request) == (
        'alice',
        replace(PICK, answered_by='alice'),
        answered.request,
    )
    assert answered.request is not None
    assert answered.request.id == 'answered'
    assert answered.asked_at <= answered.finished_at
    assert by_outcome['question', 'declined'].by == 'bob'
    withdrawn = by_outcome['question', 'withdrawn']
    assert (withdrawn.by, withdrawn.response) == (None, None)
    edited = by_outcome['approval', 'edited']
    assert edited.decision is not None
    assert edited.decision.override_args == {'env': 'staging'}
    assert (edited.by, edited.approval and edited.approval.tool_name) == ('ann', 'deploy')
    assert by_outcome['approval', 'responded'].decision == ApprovalDecision.respond('use staging')
    assert by_outcome['approval', 'withdrawn'].decision is None

    only = await hub.history_page(where=HistoryFilter(kind='question'))
    assert (only.total, {record.kind for record in only.records}) == (3, {'question'})
    middle = finished[4]
    older = await hub.history_page(where=HistoryFilter(finished_before=middle))
    assert older.total == 4
    newer = await hub.history_page(where=HistoryFilter(finished_after=middle))
    assert newer.total == 5


async def test_pages_neither_repeat_nor_skip_with_items_finishing_between_them() -> None:
    hub = QuestionHub()
    for index in range(5):
        await _answer(hub, _question(f'q{index}'), PICK)
    first = await hub.history_page(limit=2)
    assert [record.key for record in first.records] == ['q4', 'q3']
    await _answer(hub, _question('late'), PICK)  # newer than every page: not on the next ones
    second = await hub.history_page(limit=2, cursor=first.next_cursor)
    assert [record.key for record in second.records] == ['q2', 'q1']
    assert second.total == 6
    third = await hub.history_page(limit=2, cursor=second.next_cursor)
    assert ([record.key for record in third.records], third.next_cursor) == (['q0'], None)
    assert [record.key for record in await _all(hub, 1)] == ['late', 'q4', 'q3', 'q2', 'q1', 'q0']


async def test_a_person_sees_what_was_addressed_to_them_or_what_they_finished() -> None:
    hub = QuestionHub()
    await _answer(hub, _question('for-alice', ('alice',)), PICK)
    await _answer(hub, _question('for-team', ('team:billing',)), PICK)
    await _answer(hub, _question('for-anyone'), PICK)
    # Addressed to bob, but alice (who sees all in another front end) answered it: it is in her history too.
    await _answer(hub, _question('for-bob', ('bob',)), replace(PICK, answered_by='alice'))
    await _decide(hub, _approval('deploy-bob', ('bob',)), ApprovalDecision.approve(decided_by='bob'))

    async def keys(person: Person | None) -> tuple[int, set[str]]:
        page = await hub.history_page(visible_to=person)
        return page.total, {
            record.approval.token if record.approval is not None else record.key for record in page.records
        }

    assert await keys(None) == (5, {'for-alice', 'for-team', 'for-anyone', 'for-bob', 'deploy-bob'})
    assert await keys(Person('alice')) == (3, {'for-alice', 'for-anyone', 'for-bob'})
    assert await keys(Person('carol', groups=['team:billing'])) == (2, {'for-team', 'for-anyone'})
    assert await keys(Person('bob')) == (3, {'for-anyone', 'for-bob', 'deploy-bob'})
    assert await keys(Person('x', sees_all=True)) == (
        5,
        {'for-alice', 'for-team', 'for-anyone', 'for-bob', 'deploy-bob'},
    )
    assert await keys(Person()) == (1, {'for-anyone'})


async def test_a_foreign_cursor_is_refused_and_a_store_without_history_is_told() -> None:
    hub = QuestionHub()
    await _answer(hub, _question('a'), PICK)
    await _answer(hub, _question('b'), PICK)
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, _question('c'))
        group.start_soon(hub.ask, _question('d'))
        await wait_pending(hub, 'd')
        await wait_pending(hub, 'c')
        pending_cursor = (await hub.pending_page(limit=1)).next_cursor
        assert pending_cursor is not None
        for cursor in (pending_cursor, 'not-a-cursor', ''):
            with pytest.raises(BadCursorError):
                await hub.history_page(cursor=cursor)
        with pytest.raises(BadCursorError):  # and a history cursor is no pending list's
            await hub.pending_page(cursor=(await hub.history_page(limit=1)).next_cursor)
        with pytest.raises(ValueError, match='1 to 500'):
            await hub.history_page(limit=0)
        group.cancel_scope.cancel()

    class Earlier:
        async def pending(self, *, visible_to: Person | None = None) -> list[AskUserRequest]:
            return []

    with pytest.raises(NoHistoryError, match='keeps no history'):
        await page_history(Earlier())
    assert (await page_history(hub, limit=1)).total == 4


async def test_history_ends_at_remember_finished_and_a_question_asked_again_leaves_it() -> None:
    hub = QuestionHub(remember_finished=3)
    for index in range(5):
        await _answer(hub, _question(f'q{index}'), PICK)
    page = await hub.history_page()
    assert ([record.key for record in page.records], page.total) == (['q4', 'q3', 'q2'], 3)
    await _withdraw(hub, _question('again'))
    assert [record.key for record in (await hub.history_page()).records] == ['again', 'q4', 'q3']

    # Asked again under its key (a replay of a withdrawn question): it waits, so it is history no more.
    async def ask_again() -> None:
        with pytest.raises(QuestionWithdrawn):
            await hub.ask(_question('again'))

    async with anyio.create_task_group() as group:
        group.start_soon(ask_again)
        await wait_pending(hub, 'again')
        assert [record.key for record in (await hub.history_page()).records] == ['q4', 'q3']
        hub.withdraw_all()
    assert next((r.key, r.outcome) for r in (await hub.history_page()).records) == ('again', 'withdrawn')


RECEIPT_KEY = b'the key the runs sign receipts with'


async def test_a_kept_receipt_verifies_as_asked_after_a_hand_off_and_the_first_kept_stays() -> None:
    hub = QuestionHub()
    asked = _question('handed', audience=('alice',))
    answer = replace(PICK, answered_by='bob')
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, asked)
        await wait_pending(hub, asked.id)
        await hub.forward(asked.key, ['bob'], note='yours now', by='alice')
        await hub.respond(asked.key, answer)
    # The run signs the request it asked (for alice); the hub's record is addressed as the hand-off left it (bob).
    receipt = sign_receipt(asked, answer, key=RECEIPT_KEY)
    assert await hub.keep_receipt(asked, receipt) == receipt
    again = sign_receipt(asked, answer, key=RECEIPT_KEY, at=receipt.answered_at + timedelta(seconds=1))
    assert await hub.keep_receipt(asked, again) == receipt  # a replay's receipt: the first stays
    [record] = (await hub.history_page()).records
    assert record.audience == ('bob',)
    status = record_receipt(record, RECEIPT_KEY)
    assert status is not None
    assert (status.check, status.receipt) == ('verified', receipt)
    # Without the hand-off's record of whom it was for, it would not verify: the audience is signed.
    unhanded = record_receipt(replace(record, handoffs=()), RECEIPT_KEY)
    assert unhanded is not None
    assert unhanded.check == 'not_verified'
    # A question the hub never answered keeps nothing.
    other = _question('never')
    assert await hub.keep_receipt(other, receipt) == receipt
    assert [each.key for each in (await hub.history_page()).records] == [asked.key]
