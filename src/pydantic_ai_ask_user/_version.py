"""`pydantic_ai_ask_user.__version__`: the installed distribution's version, read from its metadata on first use."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ('__version__', 'DISTRIBUTION')

DISTRIBUTION = 'pydantic-ai-ask-user'
"""The distribution this package is installed as: its metadata holds the version, and its extras the front ends."""


def _installed_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # imported from a source tree on sys.path, never installed
        return '0+unknown'


__version__ = _installed_version()
"""The version of the installed distribution (`pyproject.toml`'s, as built), e.g. `0.1.0`; `0+unknown` from a bare
source tree. Read once, the first time `pydantic_ai_ask_user.__version__` is looked up, so `import
pydantic_ai_ask_user` stays free of `importlib.metadata`."""
