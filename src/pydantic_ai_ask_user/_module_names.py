"""PEP 562 helpers for the package's modules: names loaded on first use, older names served with a warning.

`lazy_names` is the one place a module is imported by its name as a string, and only a name its package
lists, beside the module that defines it, in a table a test holds equal to `__all__`; each package also
imports every such module statically under `TYPE_CHECKING`, so readers and type checkers see the structure.
The alternative, a chain of static `from . import x` branches per package, said the same thing three times.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ('lazy_names', 'renamed_names')


def lazy_names(
    package: str, namespace: dict[str, Any], defined_in: Mapping[str, str], *, moved: Mapping[str, str] | None = None
) -> Callable[[str], Any]:
    """A module `__getattr__` (PEP 562) for `package`: a name in `defined_in` is imported from its submodule.

    `defined_in` maps each name to the submodule of `package` that defines it (`'_answers'`). The value is then
    kept in `namespace` (the package's `globals()`), so later lookups are plain attribute reads. `moved` maps
    names the package used to export to the public submodule that holds them now (`'webhooks'`): reading one
    gives its value with a `DeprecationWarning` naming the new import, every time (it is not kept). Any other
    name is the usual `AttributeError`.
    """

    def __getattr__(name: str) -> Any:
        where = defined_in.get(name)
        if where is None:
            new_home = (moved or {}).get(name)
            if new_home is None:
                raise AttributeError(f'module {package!r} has no attribute {name!r}')
            warnings.warn(
                f'importing {name} from {package} is deprecated and stops working in the next release; '
                f'import it from {package}.{new_home}: from {package}.{new_home} import {name}',
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(f'{package}.{new_home}'), name)
        value = getattr(importlib.import_module(f'{package}.{where}'), name)
        namespace[name] = value
        return value

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
