"""Whether the uvicorn server the app runs in was told to stop, before the app's lifespan ends.

uvicorn stops in this order: it closes its listening sockets, waits for every open connection to close, and only then
runs the application's lifespan shutdown (where a `WebAnswerer` withdraws its questions and tells its pages
`finished`). A browser keeps its keep-alive connections busy on its own: each `EventSource` whose stream ended at
the signal reconnects within seconds, and the inbox page counts its items as it does, so a connection that uvicorn
did not close at the signal (one accepted in the same moment) served request after request and the server waited
for it forever (seen in CI: five minutes, then the test's bound). While the server stops, the app therefore answers
`Connection: close` on every response, and its event stream says `finished` at once, which stops the pages.
"""

from __future__ import annotations

import signal

__all__ = ('server_stopping',)


def server_stopping() -> bool:
    """Whether the uvicorn server serving this process was told to stop (its `should_exit`), read through the
    SIGTERM handler uvicorn installs (a bound method of its `Server`): `False` when no uvicorn server installed one
    (a server run in a thread, another server, tests over ASGI).

    Per server, never a process-wide flag: one server that stopped does not make the next one in the same process
    look stopping (sse-starlette's `AppStatus.should_exit` is never reset).
    """
    try:
        handler = signal.getsignal(signal.SIGTERM)
    except ValueError:  # pragma: no cover - signals unsupported here
        return False
    return getattr(getattr(handler, '__self__', None), 'should_exit', False) is True
