"""The inline prompt_toolkit application that draws a `Menu` and turns keys into its methods."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import anyio
from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.styles import Style

from .._answers import AskUserResponse
from .._asking import shown_answers
from .._i18n import N_
from ._menu import NOTE_LABEL, Menu
from ._render import clean, to_fragments
from ._signals import MenuSignals
from ._terminal import Terminal

__all__ = ('ESCAPE_DELAY', 'WITHDRAWN_LINE', 'DECLINED_LINE', 'run_menu')

ESCAPE_DELAY = 0.05
"""Seconds to wait after a lone Esc for the rest of an escape sequence; short, so Esc declines at once."""

WITHDRAWN_LINE = N_('The question was withdrawn before you answered; no answer is needed any more.')
"""The one line left on the terminal when the wait is cancelled (an `AskUser` timeout or a cancelled run)."""

DECLINED_LINE = N_('You declined to answer.')
"""The line left on the terminal when the person declines."""

STYLE = Style.from_dict(
    {
        'title': 'bold',
        'context': 'ansibrightblack',
        'current': 'bold reverse',
        'description': 'ansibrightblack',
        'custom': 'italic',
        'caret': 'reverse',
        'counter': 'ansibrightblack',
        'message': 'ansiyellow bold',
        'help': 'ansibrightblack',
        'recommended': 'ansigreen bold',
        'note': 'italic',
        'time': 'ansibrightblack',
        'time-urgent': 'ansired bold',
    }
)
"""How each part of the menu is drawn."""


def _bindings(
    menu: Menu, finish: Callable[[AskUserResponse], None], redraw: Callable[[], None], suspend: Callable[[], None]
) -> KeyBindings:
    bindings = KeyBindings()

    def act(action: Callable[[], None]) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            action()
            redraw()

        return handler

    def enter() -> None:
        if (response := menu.enter()) is not None:
            finish(response)

    def decline() -> None:
        finish(menu.decline())

    def typed(event: KeyPressEvent) -> None:
        # Unbound control keys arrive here too; only printable text is typed.
        if event.data.isprintable() and clean(event.data) == event.data:
            menu.type(event.data)
            redraw()

    def pasted(event: KeyPressEvent) -> None:
        menu.paste(event.data)
        redraw()

    bindings.add('escape', eager=True)(act(decline))
    bindings.add('c-c')(act(decline))
    bindings.add('c-d')(act(decline))
    bindings.add('c-z')(act(suspend))
    bindings.add('up')(act(menu.up))
    bindings.add('down')(act(menu.down))
    bindings.add('left')(act(menu.left))
    bindings.add('right')(act(menu.right))
    bindings.add('s-tab')(act(menu.back))
    bindings.add('tab')(act(menu.note))
    bindings.add('home')(act(menu.home))
    bindings.add('end')(act(menu.end))
    bindings.add('backspace')(act(menu.backspace))
    bindings.add('delete')(act(menu.delete))
    bindings.add('enter')(act(enter))
    bindings.add(Keys.BracketedPaste)(pasted)
    bindings.add(Keys.Any)(typed)
    return bindings


_WITHDRAWN = AskUserResponse(cancelled=True)
"""The result the application is stopped with when the wait is cancelled; never returned to anyone."""


async def _stop(app: Application[AskUserResponse], task: asyncio.Future[AskUserResponse]) -> None:
    # The cancellation can come before the application has started; it is stopped once it runs, never abandoned
    # half-started in raw mode.
    while not task.done():
        if app.is_running and not app.future.done():  # pyright: ignore[reportOptionalMemberAccess]
            app.exit(result=_WITHDRAWN)
        await asyncio.wait({task}, timeout=0.01)
    if not task.cancelled():
        with contextlib.suppress(EOFError):
            task.result()


async def run_menu(
    terminal: Terminal, menu: Menu, on_redraw: Callable[[Callable[[], None] | None], None] | None = None
) -> AskUserResponse:
    """Show `menu` inline below what is on the terminal until the person answers or declines.

    When the wait is cancelled, the menu is erased, `WITHDRAWN_LINE` is printed, the terminal is
    left exactly as it was, and the cancellation propagates. `on_redraw` is given a function that
    redraws the menu while it is shown, and `None` once it is gone. TERM, HUP and TSTP are handled
    while the menu is shown (see `MenuSignals`): the terminal is never left in raw mode.
    """
    app: Application[AskUserResponse] | None = None
    signals: MenuSignals | None = None
    _ = menu.translator.gettext

    def finish(response: AskUserResponse) -> None:
        if app is not None and app.is_running and not app.future.done():  # pyright: ignore[reportOptionalMemberAccess]
            app.exit(result=response)

    def redraw() -> None:
        if app is not None:
            app.invalidate()

    def suspend() -> None:
        if signals is not None:
            signals.suspend()

    def fragments() -> StyleAndTextTuples:
        return list(to_fragments(menu.render(terminal.output.get_size().columns)))

    control = FormattedTextControl(fragments, focusable=True, show_cursor=False)
    window = Window(control, wrap_lines=False, dont_extend_height=True, always_hide_cursor=True)
    app = Application(
        layout=Layout(HSplit([window])),
        key_bindings=_bindings(menu, finish, redraw, suspend),
        style=STYLE,
        full_screen=False,
        erase_when_done=True,
        mouse_support=False,
        input=terminal.input,
        output=terminal.output,
    )
    app.ttimeoutlen = ESCAPE_DELAY
    app.timeoutlen = ESCAPE_DELAY
    signals = MenuSignals(terminal, app, end=lambda: _stop(app, task))
    with signals:
        task = asyncio.ensure_future(app.run_async(handle_sigint=False))
        if menu.request.deadline is not None:
            ticking = asyncio.ensure_future(_tick(menu, redraw))
            task.add_done_callback(lambda _: ticking.cancel())
        if on_redraw is not None:
            on_redraw(redraw)
            task.add_done_callback(lambda _: on_redraw(None))
        try:
            response = await asyncio.shield(task)
        except EOFError:
            response = menu.decline()
        except asyncio.CancelledError:
            # Stop the application ourselves and wait, shielded, until it has erased itself and restored the terminal.
            with anyio.CancelScope(shield=True):
                await _stop(app, task)
                terminal.say(_(WITHDRAWN_LINE))
            raise
        if signals.ended_by is not None:
            # Leaving the block ends the process by that signal, now that the terminal is restored.
            return response
    if response.cancelled:
        terminal.say(_(DECLINED_LINE))
    else:
        for shown in shown_answers(menu.request, response):
            # Exactly what the model gets; a typed answer's line breaks are drawn as spaces.
            text = ', '.join(shown.values).replace('\n', ' ')
            if shown.note is not None:
                text += f' · {_(NOTE_LABEL)} ' + shown.note.replace('\n', ' ')
            terminal.say(clean(f'{shown.header}: {text}'))
    return response


async def _tick(menu: Menu, redraw: Callable[[], None]) -> None:
    # Redraw just after each whole second of the time left goes, so the countdown never lags or skips.
    # prompt_toolkit redraws by difference: only the changed digits are written.
    while (left := menu.time_left()) is not None and left > 0:
        await asyncio.sleep((left % 1 or 1.0) + 0.01)
        redraw()
