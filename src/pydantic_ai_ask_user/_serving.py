"""Serving an ASGI app with uvicorn behind our own accept loop, so that no flood of connections keeps a person out.

Used by the web answerer (`web.serve`, `ask-user ask --web`) and by `ask-user mcp --http`. Imported only
by them: it loads uvicorn.

uvicorn's own limits do not hold against a flood (measured on `ask-user ask --web` with 256 files
allowed and 600 connections that never finish their headers: 93 MB of tracebacks on the terminal in
25 s, and the person's page answered after 20 s):

- `limit_concurrency` counts open connections, so connections that never send a request make every
  request, the person's too, a 503;
- asyncio's accept loop, on running out of file descriptors, logs a traceback for every remaining
  accept of its batch (2,048 per readiness by default), once a second or more;
- there is no header deadline, and no limit per client address.

So the accept loop is ours: it accepts only while the connections stay below the file limit, makes
room for a new connection by closing the one that has waited longest without a request in progress
(kept alive after a response, or not done sending its headers; one that carried the person's
credentials only when no other is left), bounds each client address, and says what happened in
one rate-limited log line, never a traceback. A connection accepted past a limit with nothing to
close is on probation: only a request carrying the person's credentials is served on it, others get 503.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ('ServerLimits', 'GuardedServer', 'Trusted', 'bind', 'connection_budget', 'LOG_EVERY_SECONDS')

Trusted = Callable[[dict[str, Any]], bool]
"""Whether a request (its ASGI scope) carries the person's own credentials: served even over a limit."""

FILE_RESERVE = 64
"""File descriptors kept free of connections, for what the server itself opens (its files, a database, webhooks)."""

ACCEPT_BATCH = 16
"""How many connections are accepted at each readiness of the listening socket, at most.

Fewer when the limits are low: an eighth of the smaller one. A new connection's headers are read a
few turns of the loop after it is accepted, so the connections accepted meanwhile, each closing the
longest-waiting one at the limit, must not reach a new one before its headers are read.
"""

OVER_LIMIT = 16
"""How many connections beyond a limit are accepted on probation: each serves only a trusted request."""

ACCEPT_PAUSE_SECONDS = 0.25
"""How long accepting pauses when the process is out of file descriptors anyway."""

LOG_EVERY_SECONDS = 60.0
"""How often one kind of warning (a limit reached, a bad request) is logged, at most; the rest are counted."""

_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""What `accept()` fails with when the process or the system has no descriptor or memory left."""

_log = logging.getLogger('pydantic_ai_ask_user.server')


@dataclass(frozen=True)
class ServerLimits:
    """How long and how many: what a server allows its clients, so that slow, idle or many connections cannot pile up.

    The app itself bounds each request body (`max_body_bytes`, `body_seconds`); these bound the connections.
    """

    header_seconds: float = 10.0
    """How long a client may take to send a request's headers, from connecting or from its previous response."""

    keep_alive_seconds: int = 5
    """How long an idle connection is kept open for the next request."""

    max_connections: int = 512
    """How many connections at once, at most; lowered to stay `FILE_RESERVE` (64) below the process's file limit.

    At the limit, a new connection closes the one that has waited longest without a request in progress.
    """

    max_connections_per_ip: int = 128
    """How many connections one client address may hold; a new one past it closes that address's idlest."""

    max_header_bytes: int = 32 * 1024
    """The largest request line and headers; bigger gets 400."""

    def __post_init__(self) -> None:
        for name in ('header_seconds', 'keep_alive_seconds', 'max_connections', 'max_connections_per_ip'):
            if not getattr(self, name) > 0:
                raise ValueError(f'ServerLimits.{name} must be positive, not {getattr(self, name)!r}')


def connection_budget(max_connections: int) -> int:
    """`max_connections`, lowered to keep `FILE_RESERVE` descriptors (and room for probation) under the file limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(1, min(max_connections, soft - FILE_RESERVE - OVER_LIMIT - ACCEPT_BATCH))


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` (0: any free port), not yet listening; `OSError` when it cannot be bound."""
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    # With the protocol named, asyncio sets TCP_NODELAY on every accepted connection (it checks `proto`,
    # which accepted sockets inherit); with protocol 0 it does not, and each response's second write on
    # a kept-alive connection waits for the client's delayed ACK, about 40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


class RateLimit:
    """A `logging.Filter` letting one record of each message through per `LOG_EVERY_SECONDS`, counting the rest."""

    def __init__(self, every: float = LOG_EVERY_SECONDS) -> None:
        self.every = every
        """The least time between two records of one message."""
        self._last: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether `record` is logged; when it is after others were held back, it says how many."""
        key = str(record.msg)
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last[0] < self.every:
            self._last[key] = (last[0], last[1] + 1)
            return False
        self._last[key] = (now, 0)
        if last is not None and last[1]:
            record.msg = f'{record.msg} ({last[1]} more like it in the last {self.every:g} s)'
        return True


def _rate_limited(parent: logging.Logger, limit: RateLimit) -> logging.Logger:
    """A logger of its own (not registered by name) whose records pass `limit`, then `parent`'s handlers."""
    logger = logging.Logger(parent.name)
    logger.parent = parent
    logger.setLevel(parent.getEffectiveLevel())
    logger.addFilter(limit)
    return logger


class _Connection:
    """What the guard knows of one connection: its protocol, its client address, whether it served a request."""

    __slots__ = ('closing', 'ip', 'protocol', 'trusted')

    def __init__(self, protocol: _GuardedProtocol, ip: str) -> None:
        self.protocol = protocol
        self.ip = ip
        self.closing = False
        self.trusted = False
        """Whether a request on it carried the person's credentials: it is closed to make room only last."""


class _Guard:
    """The connections of one server: how many, from where, and which can be closed to make room."""

    def __init__(self, limits: ServerLimits) -> None:
        self.limits = limits
        self.max_total = connection_budget(limits.max_connections)
        self.open = 0
        """Connections accepted and not yet gone (their descriptors are in use), closing ones included."""
        self.closing = 0
        """Connections closed to make room whose descriptors are not free yet (they are, on the loop's next turn)."""
        self.per_ip: dict[str, int] = {}
        self.waiting_since: OrderedDict[_Connection, None] = OrderedDict()
        """Connections without a request in progress, the one waiting longest first: kept alive after a response,
        or not done sending their headers. A busy connection is never closed to make room."""
        self.trusted_waiting: OrderedDict[_Connection, None] = OrderedDict()
        """The same, for connections that carried the person's credentials: closed only when no other can be."""
        self.on_room: Callable[[], None] | None = None
        """Called when a connection is gone: the acceptor resumes if it paused for room."""
        self.batch = max(1, min(ACCEPT_BATCH, self.max_total // 8, limits.max_connections_per_ip // 8))
        """How many connections to accept at each readiness of the listening socket."""
        self.limit = RateLimit()
        self.log = _rate_limited(_log, self.limit)

    def admit(self, ip: str) -> bool | None:
        """Make room for a new connection from `ip`: `False` admitted, `True` on probation, `None` no room now."""
        over = False
        if self.per_ip.get(ip, 0) >= self.limits.max_connections_per_ip:
            if not self._evict(lambda connection: connection.ip == ip, trusted_too=False):
                over = True
            else:
                self.log.warning(
                    'one client address holds %d connections (the limit per address); closing its idlest',
                    self.limits.max_connections_per_ip,
                )
        if self.open - self.closing >= self.max_total:
            if not self._evict(lambda _: True, trusted_too=True):
                over = True
            else:
                self.log.warning('%d connections are open (the limit); closing the idlest to make room', self.max_total)
        if over and self.open >= self.max_total + OVER_LIMIT:
            self.log.warning('%d connections are open and none is idle; waiting for one to close', self.open)
            return None
        if self.open >= self.max_total + OVER_LIMIT + ACCEPT_BATCH:
            return None  # the closed ones free their descriptors on the next turn of the loop
        self.open += 1
        self.per_ip[ip] = self.per_ip.get(ip, 0) + 1
        return over

    def _evict(self, matches: Callable[[_Connection], bool], *, trusted_too: bool) -> bool:
        """Close the connection waiting longest for a request among those that `match`, a trusted one last."""
        for waiting in (self.waiting_since, self.trusted_waiting) if trusted_too else (self.waiting_since,):
            for connection in waiting:
                if matches(connection):
                    del waiting[connection]
                    connection.closing = True
                    self.closing += 1
                    connection.protocol.transport.close()
                    return True
        return False

    def waiting(self, connection: _Connection) -> None:
        """`connection` waits for a request's headers: it may be closed to make room."""
        waiting = self.trusted_waiting if connection.trusted else self.waiting_since
        if not connection.closing and connection not in waiting:
            waiting[connection] = None

    def busy(self, connection: _Connection) -> None:
        """`connection` has a request in progress: never closed to make room."""
        self.waiting_since.pop(connection, None)
        self.trusted_waiting.pop(connection, None)

    def closed(self, connection: _Connection) -> None:
        """`connection` is gone; its descriptor is free."""
        self.busy(connection)
        if connection.closing:
            self.closing -= 1
        self.release(connection.ip)

    def release(self, ip: str) -> None:
        """One connection from `ip` is gone (or never became one)."""
        self.open -= 1
        left = self.per_ip.get(ip, 1) - 1
        if left:
            self.per_ip[ip] = left
        else:
            self.per_ip.pop(ip, None)
        if self.on_room is not None:
            self.on_room()

    def out_of_files(self) -> None:
        """`accept()` found no descriptor left (something else holds them): close the idlest connection."""
        self.log.warning('out of file descriptors with %d connections open; closing the idlest', self.open)
        self._evict(lambda _: True, trusted_too=True)


class _GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol under the guard: a header deadline, its place in the guard, probation."""

    guard: _Guard
    trusted: Trusted | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logger = _rate_limited(logging.getLogger('uvicorn.error'), self.guard.limit)
        self.header_deadline: asyncio.TimerHandle | None = None
        self.entry: _Connection | None = None
        self.seen: dict[str, Any] | None = None
        """The request whose credentials were last looked at."""

    def join(self, ip: str, probation: bool) -> None:
        """Before `connection_made`: which address it is from, and whether it is over a limit."""
        self.entry = _Connection(self, ip)
        if probation:
            self.app = _only_trusted(self.app, self.trusted, self)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.watch_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self.watch_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.watch_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self.stop_deadline()
        if self.entry is not None:
            self.guard.closed(self.entry)
            self.entry = None
        super().connection_lost(exc)

    def watch_headers(self) -> None:
        # The client owes headers while h11 waits for a request; once one has arrived, the app's own
        # body deadline takes over, and a long answer (the live inbox stream) is the server's doing.
        waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if self.entry is not None:
            if waiting:
                self.guard.waiting(self.entry)
            else:
                scope: dict[str, Any] | None = self.scope  # type: ignore[assignment]
                if not self.entry.trusted and self.trusted is not None and scope is not None and scope is not self.seen:
                    self.seen = scope
                    self.entry.trusted = self.trusted(scope)
                self.guard.busy(self.entry)
        if waiting and self.header_deadline is None:
            self.header_deadline = self.loop.call_later(self.guard.limits.header_seconds, self.too_slow)
        elif not waiting:
            self.stop_deadline()

    def stop_deadline(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
            self.header_deadline = None

    def too_slow(self) -> None:
        self.header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def _only_trusted(app: Any, trusted: Trusted | None, protocol: _GuardedProtocol) -> Any:
    """`app` for a connection accepted over a limit: a trusted request is served (and frees it), others get 503."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if trusted is not None and scope['type'] == 'http' and trusted(scope):
            protocol.app = app  # proven: the rest of this connection is served as usual
            await app(scope, receive, send)
            return
        protocol.guard.log.warning('a request over the connection limit got 503 (it carried no credentials)')
        body = b'the server is busy; try again in a moment'
        await send(
            {
                'type': 'http.response.start',
                'status': 503,
                'headers': [
                    (b'content-type', b'text/plain; charset=utf-8'),
                    (b'content-length', str(len(body)).encode()),
                    (b'connection', b'close'),
                    (b'retry-after', b'1'),
                ],
            }
        )
        await send({'type': 'http.response.body', 'body': body})

    return guarded


class _Acceptor:
    """Accepts connections on a listening socket while the guard has room, and hands them to the protocol."""

    def __init__(
        self,
        sock: socket.socket,
        factory: Callable[[], _GuardedProtocol],
        guard: _Guard,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.sock = sock
        self.factory = factory
        self.guard = guard
        self.loop = loop
        self.reading = False
        self.stopped = False
        self.waiting_for_room = False
        self.retry: asyncio.TimerHandle | None = None
        self.connecting: set[asyncio.Task[None]] = set()
        guard.on_room = self.room

    def start(self) -> None:
        if not self.reading and not self.stopped:
            self.sock.setblocking(False)
            self.loop.add_reader(self.sock.fileno(), self.ready)
            self.reading = True

    def pause(self) -> None:
        if self.reading:
            self.loop.remove_reader(self.sock.fileno())
            self.reading = False

    def stop(self) -> None:
        self.stopped = True
        self.pause()
        if self.retry is not None:
            self.retry.cancel()

    def room(self) -> None:
        if self.waiting_for_room:
            self.waiting_for_room = False
            self.loop.call_soon(self.start)

    def ready(self) -> None:
        for _ in range(self.guard.batch):
            try:
                conn, address = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno in _OUT_OF_RESOURCES:
                    self.guard.out_of_files()
                    self.pause()
                    self.retry = self.loop.call_later(ACCEPT_PAUSE_SECONDS, self.start)
                return  # anything else (the client reset before it was accepted) concerns that client only
            ip = _host_of(address)
            probation = self.guard.admit(ip)
            if probation is None:
                conn.close()
                self.pause()
                self.waiting_for_room = True
                return
            task = self.loop.create_task(self.connect(conn, ip, probation))
            self.connecting.add(task)
            task.add_done_callback(self.connecting.discard)

    async def connect(self, conn: socket.socket, ip: str, probation: bool) -> None:
        protocol: _GuardedProtocol | None = None

        def made() -> _GuardedProtocol:
            nonlocal protocol
            protocol = self.factory()
            protocol.join(ip, probation)
            return protocol

        try:
            await self.loop.connect_accepted_socket(made, conn)
        except Exception as error:
            conn.close()
            if protocol is None or protocol.entry is not None:
                # No connection_lost will come for it: the guard forgets it here.
                if protocol is not None:
                    protocol.entry = None
                self.guard.release(ip)
            self.guard.log.warning('a connection could not be set up: %s', type(error).__name__)


def _host_of(address: object) -> str:
    """The client's address (its host part) of what `accept()` returned."""
    if isinstance(address, tuple) and address:
        return str(cast(tuple[object, ...], address)[0])
    return ''


class GuardedServer(uvicorn.Server):
    """uvicorn serving `app` on the bound socket `sock` through our accept loop, within `limits`.

    `trusted(scope)` says whether a request carries the person's own credentials: over a limit, with
    no connection left to close, only such a request is served (others get 503). `config` are more
    `uvicorn.Config` arguments. Run it with `await server.serve()`; `should_exit = True` stops it.
    """

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        *,
        limits: ServerLimits | None = None,
        trusted: Trusted | None = None,
        **config: Any,
    ) -> None:
        limits = limits or ServerLimits()
        self.guard = _Guard(limits)
        self.listening = sock
        protocol: type[_GuardedProtocol] = type(
            'GuardedH11Protocol',
            (_GuardedProtocol,),
            # staticmethod: a plain function as a class attribute would be called as a method, with the protocol.
            {'guard': self.guard, 'trusted': None if trusted is None else staticmethod(trusted)},
        )
        self.protocol = protocol
        super().__init__(
            uvicorn.Config(
                app,
                http=protocol,
                ws='none',
                access_log=False,
                timeout_keep_alive=limits.keep_alive_seconds,
                h11_max_incomplete_event_size=limits.max_header_bytes,
                **config,
            )
        )
        self.acceptor: _Acceptor | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # no asyncio server: the acceptor below takes its place
        loop = asyncio.get_running_loop()
        config = self.config

        def factory() -> _GuardedProtocol:
            return self.protocol(
                config=config, server_state=self.server_state, app_state=self.lifespan.state, _loop=loop
            )

        self.listening.listen(2048)
        self.acceptor = _Acceptor(self.listening, factory, self.guard, loop)
        self.acceptor.start()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.acceptor is not None:
            self.acceptor.stop()
        await super().shutdown(sockets=None)
