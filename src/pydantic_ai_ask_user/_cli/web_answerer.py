"""The answerer of `ask-user ask --web`: the question page served on this machine, its link printed in the terminal.

Imported only when `ask --web` runs: it loads Starlette and uvicorn.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import webbrowser
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TextIO

import anyio

from .._answers import Answerer, AskUserRequest, AskUserResponse, CannotAskError
from .._text import printable
from .._webhooks import WebhookNotifier
from ..web import WebAnswerer, listens_everywhere, reachable_host, serve

__all__ = (
    'open_web_answerer',
    'web_notifier',
    'LINGER_SECONDS',
    'NEW_LINK_HELP',
    'NO_NEW_LINK_HELP',
    'WEBHOOK_KEY_VARIABLE',
)

LINGER_SECONDS = 5.0
"""How long `ask-user ask --web` keeps serving after the answer, before it exits.

Meanwhile "Back to the waiting questions" and a reload still work, and every open page has been
told that the server has finished (so it stops trying to reconnect once the server is gone).
"""

NEW_LINK_HELP = 'For a new link, press Enter in the terminal where ask-user is running.'
"""What the sign-in pages of `ask-user ask --web` say when it prints a new link on Enter."""

NO_NEW_LINK_HELP = 'Use the browser you signed in with: this ask-user has no terminal to print a new link in.'
"""What they say when it cannot (no terminal, and the questions came on stdin)."""


@asynccontextmanager
async def open_web_answerer(
    *,
    host: str = '127.0.0.1',
    port: int = 0,
    open_browser: bool = False,
    out: TextIO | None = None,
    linger_seconds: float = LINGER_SECONDS,
    new_links: int | None = None,
    notify: WebhookNotifier | None = None,
) -> AsyncGenerator[Answerer]:
    """The answerer of `ask-user ask --web`: serves the form, prints its one-time link, opens a browser if asked.

    Each line that arrives on the file descriptor `new_links` (a terminal, a pipe) prints a new one-time
    link, for a person whose link was used up. After an answer the server keeps serving for
    `linger_seconds`; when the block ends, every open page is told the server has finished. Raises
    `CannotAskError` when the address cannot be served. `notify` sends a `question_waiting` webhook
    with the question's link on this server as the question starts waiting.
    """
    stream = out if out is not None else sys.stderr
    web = WebAnswerer(title='ask-user', notify=notify)
    watching = new_links is not None and _can_watch(new_links)
    web.app.login_help = NEW_LINK_HELP if watching else NO_NEW_LINK_HELP
    try:
        served = serve(web.app, host=host, port=port)
        base = await served.__aenter__()
    except OSError as error:
        raise CannotAskError(f'cannot serve the question page on {host}:{port}: {error}') from None
    answered = False
    web.base_url = base

    def say(message: str) -> None:
        # The host is the caller's --host, printed as given: keep what a terminal would act on out of it.
        print(f'ask-user: {printable(message, allow_newline=False)}', file=stream, flush=True)

    try:

        async def ask(request: AskUserRequest) -> AskUserResponse:
            nonlocal answered
            if listens_everywhere(host):
                bound = base.rstrip('/').rsplit(':', 1)[1]
                say(
                    f"listening on all interfaces, port {bound}; from another machine, put this machine's name "
                    f'({socket.gethostname()}) in place of {reachable_host(host)} in the link'
                )
            url = web.login_url(base, request.key)
            say(f'answer in your browser (the link works once): {url}')
            if watching:
                say('press Enter here for a new link')
            if open_browser and not await anyio.to_thread.run_sync(webbrowser.open, url):
                say('could not open a browser; open the link above yourself')
            response: AskUserResponse | None = None
            async with anyio.create_task_group() as group:
                if new_links is not None and watching:
                    group.start_soon(_print_new_links, new_links, lambda: web.login_url(base, request.key), say)
                response = await web(request)
                group.cancel_scope.cancel()
            assert response is not None
            answered = True
            return response

        yield ask
        with anyio.move_on_after(linger_seconds):  # a webhook still being retried, as long as the linger at most
            await web.wait_sent()
        if answered:
            web.app.finish()
            await anyio.sleep(linger_seconds)
    finally:
        web.app.finish()
        web.hub.close()
        await served.__aexit__(None, None, None)


def _can_watch(fd: int) -> bool:
    """Whether lines can be awaited on `fd`: a terminal, a pipe or a socket, on a system with `add_reader`."""
    if sys.platform == 'win32':  # pragma: no cover - the proactor event loop waits on sockets only
        return False
    try:
        mode = os.fstat(fd).st_mode
        return os.isatty(fd) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
    except OSError:
        return False


async def _print_new_links(fd: int, new_link: Callable[[], str], say: Callable[[str], None]) -> None:
    """Print a new one-time link each time a line arrives on `fd`, until it ends."""
    while True:
        try:
            await anyio.wait_readable(fd)
            data = os.read(fd, 4096)
        except OSError:
            return
        if not data:
            return
        if b'\n' in data or b'\r' in data:
            say(f'a new link (it works once): {new_link()}')


WEBHOOK_KEY_VARIABLE = 'ASK_USER_WEBHOOK_KEY'
"""The environment variable `ask-user ask --web --notify-url URL` reads the webhook signing key from."""


def web_notifier(url: str | None, environ: Mapping[str, str]) -> WebhookNotifier | None:
    """The notifier of `--notify-url URL`, signing with `$ASK_USER_WEBHOOK_KEY`; `CannotAskError` if it cannot be."""
    if url is None:
        return None
    key = environ.get(WEBHOOK_KEY_VARIABLE, '')
    if not key:
        raise CannotAskError(f'--notify-url needs the webhook signing key in ${WEBHOOK_KEY_VARIABLE}')
    try:
        return WebhookNotifier(url, key=key)
    except ValueError as error:
        raise CannotAskError(f'--notify-url: {error}') from None
