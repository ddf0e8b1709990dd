"""`pydantic_ai_ask_user.__version__`: the installed distribution's version, read from its metadata on first use."""

from __future__ import annotations

__all__ = ('__version__', 'DISTRIBUTION')

DISTRIBUTION = 'pydantic-ai-ask-user'
"""The distribution this package is installed as: its metadata holds the version, and its extras the front ends."""


def _installed_version() -> str:
    # Here, not at the top: `importlib.metadata` costs some 15 ms, and the commands that name the distribution (the
    # install hint of `ask-user ask`) need only `DISTRIBUTION`.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # imported from a source tree on sys.path, never installed
        return '0+unknown'


def __getattr__(name: str) -> str:
    """`__version__`, read from the metadata the first time it is looked up and then kept (PEP 562)."""
    if name != '__version__':
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = globals()['__version__'] = _installed_version()
    return value


__version__: str
"""The version of the installed distribution (`pyproject.toml`'s, as built), e.g. `0.1.0`; `0+unknown` from a bare
source tree. Read once, the first time `pydantic_ai_ask_user.__version__` is looked up, so `import
pydantic_ai_ask_user` stays free of `importlib.metadata`."""
