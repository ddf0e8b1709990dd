"""PEP 562 helpers for the package's modules: names loaded on first use, older names served with a warning.

`lazy_names` and `names_in_modules` are the one place a module is imported by its name as a string, and only for
a name its package lists: in a table a test holds equal to `__all__` (`lazy_names`), or in `__all__` itself, looked
up in the package's private modules in a fixed order (`names_in_modules`). Each package also imports every such
name statically under `TYPE_CHECKING`, so readers and type checkers see the structure.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

__all__ = ('LazyModule', 'lazy_names', 'names_in_modules', 'renamed_names')


def lazy_names(package: str, namespace: dict[str, Any], defined_in: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` (PEP 562) for `package`: a name in `defined_in` is imported from its submodule.

    `defined_in` maps each name to the submodule of `package` that defines it (`'_answers'`). The value is then
    kept in `namespace` (the package's `globals()`), so later lookups are plain attribute reads. Any other name is
    the usual `AttributeError`.
    """

    def __getattr__(name: str) -> Any:
        where = defined_in.get(name)
        if where is None:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        value = getattr(importlib.import_module(f'{package}.{where}'), name)
        namespace[name] = value
        return value

    return __getattr__


def names_in_modules(
    package: str,
    namespace: dict[str, Any],
    names: Collection[str],
    modules: Sequence[str],
    *,
    also: Mapping[str, str] | None = None,
) -> Callable[[str], Any]:
    """A module `__getattr__` (PEP 562) for `package`: a name in `names` is taken from the first of `modules` with it.

    `modules` are submodules of `package` listed so that each comes after every one of them it imports: looking a
    name up then imports only what its own module would have imported anyway, and the first module that has the name
    defines it (a later one could only have imported it). So `names` (the package's `__all__`) need not say where
    each is defined; the static imports under `TYPE_CHECKING` say that for readers. `also` maps a few more names to
    their submodule, looked up there alone (`{'__version__': '_version'}`). The value is then kept in `namespace`.
    Any other name is the usual `AttributeError`.
    """

    def __getattr__(name: str) -> Any:
        where = (also or {}).get(name)
        candidates = (where,) if where is not None else modules if name in names else ()
        for candidate in candidates:
            module = importlib.import_module(f'{package}.{candidate}')
            if hasattr(module, name):
                value = getattr(module, name)
                namespace[name] = value
                return value
        raise AttributeError(f'module {package!r} has no attribute {name!r}')

    return __getattr__


def renamed_names(
    module: str, renamed: Mapping[str, tuple[Any, Callable[..., object], tuple[Any, ...]]]
) -> Callable[[str], Any]:
    """A module `__getattr__` (PEP 562) for `module`: an old name in `renamed` gives its value, with a warning.

    `renamed` maps each old name to `(value, warn, args)`; reading the name calls `warn(*args)` straight from the
    `__getattr__`, so a warning's `stacklevel` of 3 points at the line that read the old name. Any other name is
    the usual `AttributeError`.
    """

    def __getattr__(name: str) -> Any:
        if name not in renamed:
            raise AttributeError(f'module {module!r} has no attribute {name!r}')
        value, warn, args = renamed[name]
        warn(*args)
        return value

    return __getattr__


class LazyModule:
    """A module imported the first time one of its attributes is read.

    For annotations read at runtime (`typing.get_type_hints`) in a module that must not import a heavy library up
    front: `_messages.ToolCallPart`, with `_messages = LazyModule('pydantic_ai.messages')` at runtime and the real
    module under `TYPE_CHECKING`, resolves when the annotation is evaluated, not when the module is imported.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f'LazyModule({self._name!r})'
