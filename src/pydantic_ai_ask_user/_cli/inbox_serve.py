"""What `ask-user inbox` runs first: the arguments checked, the `--authorize` hook loaded, the key file read (or
made), the store opened; then the web extra is imported and `inbox_web` serves.

Everything a person can get wrong is said here, before Starlette, uvicorn or a database driver is imported: a bad
`--url`, a hook that cannot be loaded (exit 2), a non-loopback address without `--url` (exit 2), a key file that
a missing extra (exit 4). The store is only opened here; `inbox_web` reads it first (a store that cannot be read is
exit 4 there), then reads or makes the key file: a typo in `--db` leaves no key file behind.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from ..dbos import DBOSQuestionStore
from .common import Store, dbos_source, fail, first_line, open_temporal_store, receipt_key
from .exit_codes import EXIT_CANNOT_ASK, EXIT_INVALID
from .i18n import _
from .inbox_keys import is_loopback, public_url
from .install import install_hint

__all__ = ('run_inbox', 'load_authorize', 'load_function')


def run_inbox(args: argparse.Namespace) -> int:
    """Serve the inbox until Ctrl-C or SIGTERM; return the exit code."""
    if args.temporal is None and (problem := dbos_source(args)) is not None:
        fail(problem)
        return EXIT_INVALID
    url = None
    if args.url is not None and (url := public_url(args.url)) is None:
        fail(_('--url takes the address of the inbox, http(s)://HOST[:PORT]/, not {url!r}').format(url=args.url))
        return EXIT_INVALID
    authorize = None
    if args.authorize is not None:
        authorize = load_authorize(args.authorize, args.app_dir)
        if isinstance(authorize, str):
            fail(authorize)
            return EXIT_INVALID
    notify = None
    if args.notify is not None:
        notify = load_function(args.notify, args.app_dir, option='--notify', example='myapp.mail:notifier')
        if isinstance(notify, str):
            fail(notify)
            return EXIT_INVALID
    elif url is None and not is_loopback(args.host):
        # A link must name an address people can open, and the default one names this very host as --host gave it.
        fail(
            _(
                '{host} is reached from other machines: give --url, the address people open (https://... behind a '
                'proxy that ends HTTPS), for the sign-in links to name; or --authorize MODULE:FUNCTION'
            ).format(host=args.host)
        )
        return EXIT_INVALID
    try:
        key = receipt_key(os.environ)
    except ValueError as error:
        fail(str(error))
        return EXIT_INVALID
    try:
        # Here, not at the top: the pages and the server are the `web` extra's (Starlette, uvicorn).
        from .inbox_web import serve_inbox
    except ImportError as error:
        fail(_('{error}; {hint}').format(error=error, hint=install_hint('web')))
        return EXIT_CANNOT_ASK
    store = _open(args)
    if isinstance(store, str):
        fail(store)
        return EXIT_CANNOT_ASK
    try:
        return serve_inbox(args, store, authorize=authorize, url=url, notify=notify, receipt_key=key)
    finally:
        store.close()


def _open(args: argparse.Namespace) -> Store | str:
    """The store to serve: a Temporal namespace's, or the DBOS database's, pooled (a server reads it again and again)
    and never created.
    """
    if args.temporal is not None:
        return open_temporal_store(args)
    try:
        return DBOSQuestionStore(args.db, create_table=False)
    except ValueError as error:
        return str(error)


def load_authorize(spec: str, app_dir: str) -> Callable[..., Any] | str:
    """The function `MODULE:FUNCTION` names (`FUNCTION` may be dotted: `Auth.check`), imported with `app_dir` first
    on the path; or what stops it, in one line.
    """
    return load_function(spec, app_dir, option='--authorize', example='myapp.auth:authorize')


def load_function(spec: str, app_dir: str, *, option: str, example: str) -> Callable[..., Any] | str:
    """The function `MODULE:FUNCTION` names for `option` (`--authorize`, `--notify`), imported with `app_dir` first
    on the path; or what stops it, in one line.
    """
    module_name, colon, attribute = spec.partition(':')
    names = attribute.split('.')
    if not colon or not module_name or not all(name.isidentifier() for name in names):
        return _('{option} takes MODULE:FUNCTION (for example {example}), not {spec!r}').format(
            option=option, example=example, spec=spec
        )
    directory = os.path.abspath(app_dir)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as error:  # the module's own code may raise anything: said, not a traceback
        return _('cannot import {module} for {option}: {error}').format(
            module=module_name, option=option, error=f'{type(error).__name__}: {first_line(error)}'
        )
    for name in names:
        try:
            found = getattr(found, name)
        except AttributeError:
            return _('{option}: {module} has no {name}').format(option=option, module=module_name, name=attribute)
    if not callable(found):
        return _('{option}: {spec} is not a function').format(option=option, spec=spec)
    return found
