"""`ask-user inbox`, serving: the web inbox (`create_app`) over the store, with uvicorn behind `serve()`'s limits,
until Ctrl-C or SIGTERM.

Imported by `inbox_serve` once the arguments are checked: it loads Starlette and uvicorn (the `web` extra).
"""

from __future__ import annotations

import argparse
import getpass
import inspect
import shlex
import signal
import socket
import sys
import webbrowser
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from .._audience import Person
from .._text import printable
from ..notify import InboxLinks, Notifier, ReceivingChannel
from ..store import page_inbox
from ..web import (
    AskUserApp,
    Authorize,
    ServerLimits,
    SignedLoginLinks,
    create_app,
    listens_everywhere,
    reachable_host,
    serve,
)
from .common import Store, cannot_read_questions, first_line, where
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _
from .inbox_keys import InboxKey, is_loopback, key_file, load_key, login_url, record_url, used_file, without_password
from .install import install_hint

__all__ = ('serve_inbox', 'LOGIN_HELP')

LOGIN_HELP = 'Ask whoever runs this inbox for a new link: ask-user inbox link YOUR-NAME prints one.'
"""What the sign-in pages of `ask-user inbox` say to a person whose link did not work."""


def _say(message: str) -> None:
    print(f'ask-user: {printable(message, allow_newline=False)}', file=sys.stderr, flush=True)


def serve_inbox(
    args: argparse.Namespace,
    store: Store,
    *,
    authorize: Callable[..., Any] | None,
    url: str | None,
    notify: Callable[..., Any] | None = None,
    receipt_key: bytes | None = None,
) -> int:
    """Serve the inbox over `store` until a signal stops it; 0, 2 when the `--notify` function fails or returns no
    `Notifier`, or 4 when the store cannot be read or the address cannot be served. `receipt_key` (from
    `$ASK_USER_RECEIPT_KEY`) verifies the receipts the History tab shows.
    """
    return anyio.run(_serve, args, store, authorize, url, notify, receipt_key)


async def _serve(
    args: argparse.Namespace,
    store: Store,
    authorize: Callable[..., Any] | None,
    url: str | None,
    notify: Callable[..., Any] | None = None,
    receipt_key: bytes | None = None,
) -> int:
    try:
        await page_inbox(store, limit=1)  # the store answers, and holds questions, before anyone is told to come
    except ImportError as error:  # the database's driver, or the Temporal SDK: their extra is missing
        _say(_('{error}; {hint}').format(error=error, hint=install_hint('temporal' if args.temporal else 'dbos')))
        return EXIT_CANNOT_ASK
    except Exception as error:  # unreachable, not a question database, a namespace without the search attribute
        _say(cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    options: dict[str, Any] = {} if args.title is None else {'title': args.title}
    if receipt_key is not None:
        options['receipt_key'] = receipt_key
    links = None
    key: InboxKey | None = None
    if authorize is not None:
        app = create_app(store, authorize=cast('Authorize', authorize), **options)
    else:
        try:
            key = load_key(key_file(args), create=True)
        except (OSError, ValueError) as error:
            _say(_('cannot read or make the inbox key: {error}').format(error=error))
            return EXIT_CANNOT_ASK
        if _shared(key):
            _say(
                _(
                    'warning: {path} may be read by other users of this machine, who could sign in as anyone with it: '
                    'chmod 600 {path}'
                ).format(path=key.path)
            )
        links = SignedLoginLinks(key.key, used_file=used_file(key.path))
        app = create_app(store, login_links=links, **options)
        app.login_help = LOGIN_HELP
    served_app = WithChannels(app)
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        try:
            limits = ServerLimits(
                max_connections=args.max_connections, max_connections_per_ip=args.max_connections_per_ip
            )
            served = serve(
                served_app,
                host=args.host,
                port=args.port,
                limits=limits,
                trusted=app.recognizes,
                forwarded_allow_ips=args.forwarded_allow_ips,
            )
            base = await served.__aenter__()
        except OSError as error:
            _say(
                _('cannot serve the inbox on {host}:{port}: {error}').format(
                    host=args.host, port=args.port, error=error
                )
            )
            return EXIT_CANNOT_ASK
        try:
            public = url or base
            if listens_everywhere(args.host):
                bound = base.rstrip('/').rsplit(':', 1)[1]
                _say(
                    _('listening on all interfaces, port {port} ({host} is this machine: {name})').format(
                        port=bound, host=reachable_host(args.host), name=socket.gethostname()
                    )
                )
            _say(_('the team inbox of {source} is at {url}').format(source=where(args), url=public))
            if key is not None and links is not None:
                _announce_links(args, key, links, public)
            else:
                _say(_('signing in is up to {hook}').format(hook=args.authorize))
            if public.startswith('http://') and not _local(public):
                _say(
                    _(
                        'warning: people reach this inbox over plain HTTP, where sign-in links and cookies can be read '
                        'on the way; put a proxy that ends HTTPS in front of it and give --url https://...'
                    )
                )
            notifier = None
            if notify is not None:
                inbox_links = InboxLinks(public, key=None if key is None else key.key)
                notifier = await _notifier(args, notify, store, inbox_links)
                if notifier is None:
                    return EXIT_INVALID
                mounted = served_app.mount(notifier, store)
                names = ', '.join(channel.name for channel in notifier.channels)
                if mounted:
                    _say(
                        _('telling people on {channels}; a channel that answers is at {url}').format(
                            channels=names, url=', '.join(public + path for path in mounted)
                        )
                    )
                else:
                    _say(_('telling people on {channels}').format(channels=names))
            _say(_('press Ctrl-C to stop'))
            async with anyio.create_task_group() as group:
                if notifier is not None:
                    group.start_soon(_keep_notifying, notifier)
                async for _signal in signals:
                    break
                group.cancel_scope.cancel()  # the notifier stops; what it had not sent is sent at the next start
            app.finish()  # every open page is told the server has finished
        finally:
            await served.__aexit__(None, None, None)
    _say(_('stopped'))
    return 0


async def _notifier(
    args: argparse.Namespace, notify: Callable[..., Any], store: Store, links: InboxLinks
) -> Notifier | None:
    """The `Notifier` the `--notify` function makes of the store and the links (it may be async); `None`, said, when
    it raises or returns something else.
    """
    try:
        made = notify(store, links)
        if inspect.isawaitable(made):
            made = await made
    except Exception as error:  # the application's code may raise anything: said in a line, not a traceback
        _say(
            _('--notify: {spec} failed: {error}').format(
                spec=args.notify, error=f'{type(error).__name__}: {first_line(error)}'
            )
        )
        return None
    if not isinstance(made, Notifier):
        _say(_('--notify: {spec} returned {what}, not a Notifier').format(spec=args.notify, what=type(made).__name__))
        return None
    return made


async def _keep_notifying(notifier: Notifier) -> None:
    """Run `notifier` until cancelled; when it fails (a store that cannot be read at a resync), say so and start it
    again after its `resync_seconds`: the inbox goes on serving, and its ledger keeps anyone from being told twice.
    """
    while True:
        try:
            await notifier.run()
        except Exception as error:
            _say(
                _('the notifier failed, starting it again in {seconds} s: {error}').format(
                    seconds=round(notifier.resync_seconds), error=f'{type(error).__name__}: {first_line(error)}'
                )
            )
            await anyio.sleep(notifier.resync_seconds)


class WithChannels:
    """The inbox app, with the endpoint of each `ReceivingChannel` of the notifier at `notify/<name>` beside it."""

    def __init__(self, app: AskUserApp) -> None:
        self.app = app
        """The inbox."""
        self.endpoints: dict[str, ASGIApp] = {}
        """The channels' endpoints, by the path under the inbox they are served at (`/notify/slack`)."""

    def mount(self, notifier: Notifier, store: Store) -> list[str]:
        """Serve each receiving channel's endpoint at `notify/<name>`; those paths, relative to the inbox."""
        for channel in notifier.channels:
            if isinstance(channel, ReceivingChannel):
                self.endpoints[f'/notify/{channel.name}'] = cast(ASGIApp, channel.endpoint(store))
        return [path.lstrip('/') for path in self.endpoints]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one connection: a channel's endpoint under its path, else the inbox."""
        if scope['type'] == 'http':
            path: str = scope.get('path', '')
            for prefix, endpoint in self.endpoints.items():
                if path == prefix or path.startswith(prefix + '/'):
                    inner = {**scope, 'root_path': scope.get('root_path', '') + prefix, 'path': path[len(prefix) :]}
                    await endpoint(inner, receive, send)
                    return
        await self.app(scope, receive, send)


def _announce_links(args: argparse.Namespace, key: InboxKey, links: SignedLoginLinks, public: str) -> None:
    """Record the address for `inbox link`, say how to make links, and on this machine print an administrator's."""
    try:
        record_url(key, public)
    except OSError as error:
        _say(_('warning: cannot record the address in {path}: {error}').format(path=key.path, error=error))
    if _local(public):  # only someone on this machine opens it: the one who started the inbox
        code = links.code(Person(_operator(), sees_all=True))
        admin = login_url(public, code)
        _say(
            _('sign in as an administrator, who sees every item (this link works once, within a day): {link}').format(
                link=admin
            )
        )
        if args.open and not webbrowser.open(admin):
            _say(_('could not open a browser; open the link above yourself'))
    # The database's password left out: the link command finds the key file by the URL without it.
    source = (
        ['--temporal', args.temporal, *(['--namespace', args.namespace] if args.namespace else [])]
        if args.temporal is not None
        else ['--db', without_password(args.db)]
    )
    file = ['--key-file', args.key_file] if args.key_file is not None else []
    _say(
        _('a sign-in link for a person: ask-user inbox link NAME [--group GROUP] {source}{file}').format(
            source=shlex.join(source), file=' ' + shlex.join(file) if file else ''
        )
    )


def _shared(key: InboxKey) -> bool:
    """Whether users other than its owner may read the key file (its mode lets the group or others in)."""
    try:
        return sys.platform != 'win32' and bool(key.path.stat().st_mode & 0o077)
    except OSError:
        return False


def _local(url: str) -> bool:
    """Whether `url` names this machine's loopback address: only someone on this machine opens it."""
    return is_loopback(urlsplit(url).hostname or '')


def _operator() -> str | None:
    """Who started the inbox (the login name), as the administrator's answers are recorded; `None` if unknown."""
    try:
        name = getpass.getuser()
        Person(name)
    except (KeyError, OSError, ValueError, TypeError):
        return None
    return name
