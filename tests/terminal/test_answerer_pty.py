"""`TerminalAnswerer` in a real pseudo-terminal: the conformance kit, the queue, and the terminal left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
import termios
from collections.abc import Iterator

import anyio
import pytest
from pydantic_ai import Agent

from pydantic_ai_ask_user import AskUser, AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption
from pydantic_ai_ask_user._cli.demo_agent import TASK, demo_model
from pydantic_ai_ask_user.receipts import os_user_at_host
from pydantic_ai_ask_user.terminal import TerminalAnswerer
from pydantic_ai_ask_user.testing import CONFORMANCE_SCENARIOS, ConformanceScenario, Driver, run_conformance

from ._pty_pair import PtyPair
from ._screen import ESC, UP, paste

pytestmark = [pytest.mark.anyio, pytest.mark.pty]


@pytest.fixture
def pty() -> Iterator[PtyPair]:
    pair = PtyPair()
    yield pair
    pair.close()


def _title(request: AskUserRequest, index: int) -> str:
    return f'{index + 1}/{len(request.questions)} {request.questions[index].header} ·'


def make_driver(pty: PtyPair) -> Driver:
    async def driver(request: AskUserRequest, response: AskUserResponse | None) -> None:
        await pty.wait_for(_title(request, 0))
        if response is None:
            return
        if response.cancelled:
            pty.send(ESC)
            return
        by_header = {answer.header: answer for answer in response.answers}
        for index, question in enumerate(request.questions):
            await pty.wait_for(_title(request, index))
            answer = by_header[question.header]
            if answer.note is not None:
                # Tab opens the note of the focused question; pasted, it may span lines; Enter closes it.
                pty.send('\t')
                await pty.wait_for('Enter or Tab done')
                pty.send(paste(answer.note) + '\r')
                await pty.wait_for('+ Note: ')
            if answer.custom_answer is not None:
                pty.send(UP)
                await pty.wait_for('Type my own answer:')
                pty.send(answer.custom_answer + '\r')
                continue
            labels = [option.label for option in question.options]
            pty.send(''.join(str(labels.index(label) + 1) for label in answer.selected) + '\r')
        # The next request may only be driven once this one's menu has gone.
        await pty.wait_for(lambda pair: _title(request, len(request.questions) - 1) not in pair.text)

    return driver


@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda s: s.name)
async def test_the_terminal_answerer_passes_the_conformance_kit(scenario: ConformanceScenario, pty: PtyPair) -> None:
    answerer = TerminalAnswerer(tty=pty.path)
    try:
        await run_conformance(scenario, answerer, make_driver(pty))
    finally:
        answerer.close()


def _question(header: str) -> Question:
    return Question(
        header=header,
        question=f'Question {header}?',
        options=(QuestionOption(label='yes'), QuestionOption(label='no')),
    )


async def test_concurrent_requests_are_shown_one_at_a_time_in_arrival_order(pty: PtyPair) -> None:
    answerer = TerminalAnswerer(tty=pty.path)
    first, second = AskUserRequest(questions=(_question('First'),)), AskUserRequest(questions=(_question('Second'),))
    got: dict[str, AskUserResponse] = {}

    async def ask(request: AskUserRequest) -> None:
        got[request.id] = await answerer(request)

    async with anyio.create_task_group() as group:
        group.start_soon(ask, first)
        await anyio.sleep(0)
        group.start_soon(ask, second)
        await pty.wait_for('1/1 First · pick one · 1 more request waiting')
        assert 'Second' not in pty.text
        pty.send('2\r')
        await pty.wait_for('1/1 Second')
        assert 'waiting' not in pty.text
        pty.send('\r')
    answerer.close()
    me = os_user_at_host()
    assert got[first.id] == AskUserResponse(answers=(AskUserAnswer(header='First', selected=('no',)),), answered_by=me)
    assert got[second.id] == AskUserResponse(
        answers=(AskUserAnswer(header='Second', selected=('yes',)),), answered_by=me
    )


async def test_a_withdrawn_question_restores_the_terminal_and_swallows_no_later_keys(pty: PtyPair) -> None:
    before = termios.tcgetattr(pty.slave)
    answerer = TerminalAnswerer(tty=pty.path)
    with anyio.move_on_after(30) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(answerer, AskUserRequest(questions=(_question('Gone'),)))
            await pty.wait_for('1/1 Gone')
            group.cancel_scope.cancel()
    assert not scope.cancelled_caught
    await pty.wait_for('withdrawn')
    assert 'Question Gone?' not in pty.text
    assert not pty.screen.cursor.hidden
    assert termios.tcgetattr(pty.slave) == before
    # Typed after the cancellation, the line reaches whoever reads the terminal next, whole.
    pty.send('abc 1\n')
    with anyio.fail_after(10):
        while not (data := await anyio.to_thread.run_sync(os.read, pty.slave, 100)).endswith(b'\n'):
            pass
    assert data == b'abc 1\n'
    answerer.close()


async def test_a_model_string_with_escape_sequences_cannot_reach_the_terminal(pty: PtyPair) -> None:
    # Validation rejects control characters; build the question without it, as a buggy caller could.
    hostile = Question.model_construct(
        header='Evil\x1b[2J',
        question='Wipe \x1b]0;pwned\x07 the screen?',
        options=(QuestionOption.model_construct(label='ok\x1b[31m', description=None), QuestionOption(label='no')),
        multi_select=False,
    )
    request = AskUserRequest.__new__(AskUserRequest)
    object.__setattr__(request, 'questions', (hostile,))
    object.__setattr__(request, 'id', 'hostile')
    raw = bytearray()
    feed = pty.stream.feed

    def record(data: bytes) -> None:
        raw.extend(data)
        feed(data)

    pty.stream.feed = record  # type: ignore[method-assign]
    answerer = TerminalAnswerer(tty=pty.path)
    async with anyio.create_task_group() as group:
        group.start_soon(answerer, request)
        await pty.wait_for('Wipe')
        group.cancel_scope.cancel()
    answerer.close()
    assert b'\x1b[2J' not in raw
    assert b'\x1b]0;' not in raw
    assert b'\x07' not in raw
    assert 'Evil\ufffd[2J' in pty.text


async def test_an_ask_user_timeout_withdraws_the_menu_and_the_next_prompt_works(pty: PtyPair) -> None:
    answerer = TerminalAnswerer(tty=pty.path)
    agent = Agent(demo_model(), capabilities=[AskUser(answerer=answerer, timeout=1.0)])
    result = await agent.run(TASK)
    assert result.output.startswith('You did not pick')
    await pty.wait_for('withdrawn')
    assert 'Database ·' not in pty.text
    follow_up = AskUserRequest(questions=(_question('Again'),))
    async with anyio.create_task_group() as group:
        got: list[AskUserResponse] = []

        async def ask() -> None:
            got.append(await answerer(follow_up))

        group.start_soon(ask)
        await pty.wait_for('1/1 Again')
        pty.send('2\r')
    answerer.close()
    assert got == [
        AskUserResponse(answers=(AskUserAnswer(header='Again', selected=('no',)),), answered_by=os_user_at_host())
    ]


def test_without_a_terminal_the_call_raises_cannot_ask_naming_the_alternatives() -> None:
    program = (
        'import anyio\n'
        'from pydantic_ai_ask_user import AskUserRequest, CannotAskError\n'
        'from pydantic_ai_ask_user.terminal import TerminalAnswerer\n'
        'request = AskUserRequest.from_tool_args({"questions": [{"header": "h", "question": "q?", '
        '"options": [{"label": "a"}, {"label": "b"}]}]})\n'
        'try:\n'
        '    anyio.run(TerminalAnswerer(), request)\n'
        'except CannotAskError as error:\n'
        '    print("CannotAskError:", error)\n'
    )
    result = subprocess.run(
        [sys.executable, '-c', program],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=60,
    )
    assert result.stdout.startswith('CannotAskError: the terminal answerer needs a terminal'), result.stderr
    assert 'ask-user ask --web' in result.stdout


async def test_keys_typed_ahead_carry_over_to_the_next_question_and_the_next_request(pty: PtyPair) -> None:
    answerer = TerminalAnswerer(tty=pty.path)
    first = AskUserRequest(questions=(_question('One'), _question('Two')))
    second = AskUserRequest(questions=(_question('Three'),))
    got: dict[str, AskUserResponse] = {}

    async def ask(request: AskUserRequest) -> None:
        got[request.id] = await answerer(request)

    async with anyio.create_task_group() as group:
        group.start_soon(ask, first)
        await anyio.sleep(0)
        group.start_soon(ask, second)
        await pty.wait_for('1/2 One')
        pty.send('2\r\r2\r')
    answerer.close()
    assert got[first.id] == AskUserResponse(
        answers=(AskUserAnswer(header='One', selected=('no',)), AskUserAnswer(header='Two', selected=('yes',))),
        answered_by=os_user_at_host(),
    )
    assert got[second.id] == AskUserResponse(
        answers=(AskUserAnswer(header='Three', selected=('no',)),), answered_by=os_user_at_host()
    )


async def test_a_request_cancelled_before_the_menu_started_still_leaves_the_terminal_as_it_was(pty: PtyPair) -> None:
    before = termios.tcgetattr(pty.slave)
    answerer = TerminalAnswerer(tty=pty.path)
    with anyio.fail_after(30), anyio.move_on_after(0):
        await answerer(AskUserRequest(questions=(_question('Early'),)))
    await pty.wait_for('withdrawn')
    assert termios.tcgetattr(pty.slave) == before
    assert not pty.screen.cursor.hidden
    answerer.close()
