"""How to install a missing extra, said for where `ask-user` came from: the registry, a clone, or a built wheel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .._version import DISTRIBUTION

__all__ = ('install_hint', 'DISTRIBUTION')


def _direct_url() -> dict[str, Any] | None:
    """PEP 610's record of a distribution installed from a directory or a file; `None` from a registry."""
    # Here, not at the top: `importlib.metadata` costs some 15 ms, and `ask-user ask` imports this module to say how
    # to install a missing extra, which it rarely has to.
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution(DISTRIBUTION).read_text('direct_url.json')
    except PackageNotFoundError:  # run from a source tree on sys.path, not installed
        return None
    if not text:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None  # pyright: ignore[reportUnknownVariableType]


def _local_path(url: object) -> Path | None:
    if not isinstance(url, str):
        return None
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == 'file' else None


def install_hint(extra: str) -> str:
    """The command that installs `extra` where this copy of `ask-user` was installed from.

    From a clone synced with uv that is `uv sync --all-extras` (a plain `pip install` of the
    distribution would look for it in the registry); from a built wheel it is that wheel.
    """
    from .i18n import _

    record = _direct_url()
    path = _local_path(record.get('url')) if record is not None else None
    if record is not None and path is not None and 'dir_info' in record:
        if (path / 'uv.lock').exists():
            return _('install the {extra} extra: uv sync --all-extras (in {path}), or {command}').format(
                extra=extra, path=path, command=f"pip install -e '{path}[{extra}]'"
            )
        return _('install the {extra} extra: {command}').format(extra=extra, command=f"pip install '{path}[{extra}]'")
    if record is not None and path is not None and path.is_file():
        return _('install the {extra} extra: {command}').format(extra=extra, command=f"pip install '{path}[{extra}]'")
    return _('install the {extra} extra: {command}').format(
        extra=extra, command=f"pip install '{DISTRIBUTION}[{extra}]'"
    )
