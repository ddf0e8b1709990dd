"""Who a question is for (`AskUser(audience=...)`) and where it comes from (`AskUser(context=...)`)."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, replace
from typing import Any

import anyio
import pytest
from ask_user_support import Watch, ask_call, make_request, question, script
from pydantic import TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.exceptions import UserError
from waits import wait_until

from pydantic_ai_ask_user import (
    AskUser,
    AskUserAnswer,
    AskUserRequest,
    AskUserRequestedEvent,
    AskUserResponse,
    Person,
    QuestionContext,
)
from pydantic_ai_ask_user._audience import audience_from_json, context_from_json, context_to_json
from pydantic_ai_ask_user.store import addressed_to

pytestmark = pytest.mark.anyio


@dataclass
class Customer:
    user: str
    ticket: int


def _pick(request: AskUserRequest) -> AskUserResponse:
    return AskUserResponse(answers=(AskUserAnswer(header=request.questions[0].header, selected=('PostgreSQL',)),))


async def _asked(capability: AskUser[Any], deps: Any = None, **run: Any) -> AskUserRequest:
    watch = Watch()
    agent = Agent(script([ask_call(question())]).model, name='support-bot', capabilities=[capability, watch])
    await agent.run('go', deps=deps, **run)
    requested = [event for event in watch.events if isinstance(event, AskUserRequestedEvent)]
    assert len(requested) == 1
    return requested[0].request


async def test_a_function_of_the_run_addresses_each_question_and_the_run_fills_the_context() -> None:
    seen: list[AskUserRequest] = []

    async def answer(request: AskUserRequest) -> AskUserResponse:
        seen.append(request)
        return _pick(request)

    capability: AskUser[Customer] = AskUser(
        answer,
        audience=lambda ctx: ctx.deps.user,
        context=lambda ctx: QuestionContext(
            title=f'Ticket {ctx.deps.ticket}', summary='The **refund** is late', link='https://example.com/t/7'
        ),
    )
    request = await _asked(capability, Customer('alice', 7), conversation_id='conv-1')
    assert seen == [request]
    assert seen[0].audience == ('alice',)
    assert request.context == QuestionContext(
        title='Ticket 7',
        summary='The **refund** is late',
        link='https://example.com/t/7',
        agent_name='support-bot',
        conversation_id='conv-1',
    )


async def test_an_unaddressed_question_is_for_anyone_and_says_which_agent_asked() -> None:
    request = await _asked(AskUser(lambda request: _async(_pick(request))))
    assert request.audience is None
    assert request.context is not None
    assert request.context.agent_name == 'support-bot'
    assert request.context.conversation_id  # Pydantic AI gives every run one
    assert addressed_to(request, Person('anyone'))


async def _async(value: Any) -> Any:
    return value


async def test_an_audience_function_that_finds_nobody_fails_the_run_rather_than_asking_everyone() -> None:
    capability: AskUser[Any] = AskUser(lambda request: _async(_pick(request)), audience=lambda ctx: [])
    with pytest.raises(UserError, match='at least one person or group'):
        await _asked(capability)


def test_settings_are_checked_when_the_capability_is_made() -> None:
    with pytest.raises(UserError, match=r'audience=.*at least one'):
        AskUser(None, audience=())
    with pytest.raises(UserError, match='control or format character'):
        AskUser(None, audience='ali\x1b[31mce')
    with pytest.raises(UserError, match='QuestionContext'):
        AskUser(None, context={'title': 'x'})  # pyright: ignore[reportArgumentType]
    assert AskUser(None, audience=['b', 'a', 'b']).audience == ['b', 'a', 'b']


def test_a_person_sees_what_is_addressed_to_their_name_or_a_group_and_what_is_unaddressed() -> None:
    base = make_request()
    alice, bob = Person('alice', groups=['team:billing']), Person('bob')
    for_alice = replace(base, audience=('alice',))
    for_billing = replace(base, audience=['team:billing', 'carol'])
    assert for_billing.audience == ('carol', 'team:billing')
    assert alice.may_see(for_alice)
    assert alice.may_see(for_billing)
    assert alice.may_see(base)
    assert not bob.may_see(for_alice)
    assert not bob.may_see(for_billing)
    assert bob.may_see(base)
    assert not Person().may_see(for_alice)
    assert Person(sees_all=True).may_see(for_alice)
    assert addressed_to(for_alice, None)  # the administrative view


def test_hostile_context_is_refused_with_a_message_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r'QuestionContext\.title'):
        QuestionContext(title='a\nb')
    with pytest.raises(ValueError, match='http'):
        QuestionContext(link='javascript:alert(1)')
    with pytest.raises(ValueError, match='http'):
        QuestionContext(link='//evil.example/x')
    with pytest.raises(ValueError, match='space'):
        QuestionContext(link='https://example.com/a b')
    with pytest.raises(ValueError, match='control or format'):
        QuestionContext(summary='bold \x1b]8;;https://evil\x07')
    with pytest.raises(ValueError, match='control or format'):
        QuestionContext(summary='right-to-left \u202e override')
    assert QuestionContext(summary='line\r\nbreak').summary == 'line\nbreak'


def test_a_store_reads_back_what_it_wrote_and_never_widens_a_damaged_audience() -> None:
    context = QuestionContext(title='T', summary='S', link='http://localhost/x', agent_name='a', conversation_id='c')
    assert context_from_json(context_to_json(context)) == context
    # A damaged field is left out; the rest stays.
    assert context_from_json({'title': 'T\x1b', 'link': 'https://ok.example'}) == QuestionContext(
        link='https://ok.example'
    )
    assert context_from_json('nonsense') is None
    assert audience_from_json(None) is None
    assert audience_from_json(['b', 'a']) == ('a', 'b')
    for damaged in ([], ['\x1b'], 'alice', [1]):
        narrowed = audience_from_json(damaged)
        assert narrowed is not None
        assert not Person('alice', groups=['a', 'b']).may_see(replace(make_request(), audience=narrowed))


def test_the_new_fields_are_not_part_of_what_is_asked_and_survive_pickling() -> None:
    request = replace(make_request(), audience=('alice',), context=QuestionContext(title='T'))
    assert request == make_request(id=request.id)
    assert pickle.loads(pickle.dumps(request)).audience == ('alice',)
    assert pickle.loads(pickle.dumps(request)).context == QuestionContext(title='T')
    # A request pickled before the fields existed reads as unaddressed, with no context.
    state = dict(make_request().__dict__)
    state.pop('audience')
    state.pop('context')
    old = object.__new__(AskUserRequest)
    old.__dict__.update(state)
    assert old.audience is None
    assert old.context is None


async def test_the_hub_lists_each_person_only_what_is_theirs() -> None:
    from pydantic_ai_ask_user.hub import QuestionHub

    hub = QuestionHub()
    for_alice = replace(make_request(id='a'), audience=('alice',))
    for_anyone = make_request(id='b')
    async with anyio.create_task_group() as group:
        group.start_soon(hub.ask, for_alice)
        group.start_soon(hub.ask, for_anyone)
        await wait_until(lambda: _async(len(hub) == 2), 'both questions waiting')
        assert [request.id for request in await hub.pending(visible_to=Person('bob'))] == ['b']
        assert {request.id for request in await hub.pending(visible_to=Person('alice'))} == {'a', 'b'}
        assert {record.request.id for record in await hub.pending_records(visible_to=Person('bob'))} == {'b'}
        assert len(await hub.pending()) == 2
        group.cancel_scope.cancel()


async def test_a_deferred_question_keeps_its_audience_and_context_across_processes() -> None:
    capability: AskUser[Customer] = AskUser(
        None, audience=lambda ctx: ctx.deps.user, context=QuestionContext(title='Ticket', link='https://x.example/1')
    )
    agent = Agent(script([ask_call(question())]).model, name='bot', capabilities=[capability])
    result = await agent.run('go', deps=Customer('alice', 1), output_type=[str, DeferredToolRequests])
    requests = result.output
    assert isinstance(requests, DeferredToolRequests)
    # As a host stores them between processes: JSON.
    stored = TypeAdapter(DeferredToolRequests).validate_json(TypeAdapter(DeferredToolRequests).dump_json(requests))
    request = AskUserRequest.from_deferred(stored, stored.calls[0])
    assert request.audience == ('alice',)
    assert request.context is not None
    assert (request.context.title, request.context.link, request.context.agent_name) == (
        'Ticket',
        'https://x.example/1',
        'bot',
    )


def test_the_temporal_memo_carries_the_audience_and_context() -> None:
    from temporalio.contrib.pydantic import pydantic_data_converter

    from pydantic_ai_ask_user.temporal._visibility import WaitingQuestion

    request = replace(make_request(), audience=('alice', 'team:x'), context=QuestionContext(title='T', summary='*s*'))
    converter = pydantic_data_converter.payload_converter
    payloads = converter.to_payloads([{request.key: WaitingQuestion(request, 1.0)}])
    [back] = converter.from_payloads(payloads, [dict[str, WaitingQuestion]])
    assert back[request.key].request.audience == ('alice', 'team:x')
    assert back[request.key].request.context == QuestionContext(title='T', summary='*s*')


def test_a_receipt_signs_and_shows_who_the_question_was_for_and_where_it_came_from() -> None:
    from pydantic_ai_ask_user.receipts import (
        SignatureError,
        receipt_from_json,
        receipt_to_json,
        sign_receipt,
        verify_receipt,
    )

    key = b'k' * 32
    request = replace(make_request(), audience=('team:billing',), context=QuestionContext(title='Order 7'))
    response = replace(_pick(request), answered_by='alice')
    receipt = sign_receipt(request, response, key=key)
    assert receipt.addressing == {'audience': ['team:billing'], 'context': {'title': 'Order 7'}}
    stored = receipt_from_json(json.loads(json.dumps(receipt_to_json(receipt))))
    verify_receipt(stored, request, response, key)
    with pytest.raises(SignatureError, match='audience or context differ'):
        verify_receipt(stored, replace(request, audience=('bob',)), response, key)
    # Changing what the receipt says it was for breaks its signature.
    tampered = replace(stored, addressing={'audience': ['bob']})
    with pytest.raises(SignatureError, match='signature does not match'):
        verify_receipt(tampered, replace(request, audience=('bob',), context=None), response, key)
    # A request with neither gets a receipt without it, signed as before.
    plain = sign_receipt(make_request(), replace(_pick(make_request()), answered_by='alice'), key=key)
    assert plain.addressing is None
    assert 'addressing' not in receipt_to_json(plain)


def test_a_webhook_says_who_the_question_is_for_and_where_it_comes_from_filtered() -> None:
    from pydantic_ai_ask_user.webhooks import question_waiting_payload

    request = replace(make_request(), audience=('alice',), context=QuestionContext(title='Order 7', agent_name='bot'))
    payload = json.loads(question_waiting_payload(request, link='https://inbox.example/'))
    assert payload['audience'] == ['alice']
    assert payload['context'] == {'title': 'Order 7', 'agent_name': 'bot'}
    object.__setattr__(request.context, 'title', 'evil\x1b[2J')  # past the checks, as a damaged store might hold
    payload = json.loads(question_waiting_payload(request, link='https://inbox.example/'))
    assert payload['context']['title'] == 'evil\ufffd[2J'
    plain = json.loads(question_waiting_payload(make_request(), link='https://inbox.example/'))
    assert (plain['audience'], plain['context']) == (None, None)
