"""`typing.get_type_hints` works on every public class (and its public methods) and function of every public module.

Pydantic, FastAPI dependencies and docs generators read annotations at runtime: a name imported only for the type
checker would be a `NameError` for them.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import typing
from collections.abc import Iterator
from types import FunctionType
from typing import Any

import pytest

import pydantic_ai_ask_user


def _public_modules() -> list[str]:
    """The root and every module under it with no `_private` part in its name (each extra is installed here)."""
    found = ['pydantic_ai_ask_user']
    for module in pkgutil.walk_packages(pydantic_ai_ask_user.__path__, 'pydantic_ai_ask_user.'):
        if not any(part.startswith('_') for part in module.name.split('.')[1:]):
            found.append(module.name)
    return found


PUBLIC_MODULES = _public_modules()

OURS = 'pydantic_ai_ask_user'


def _ours(module: str) -> bool:
    return module == OURS or module.startswith(f'{OURS}.')


def _methods(cls: type) -> Iterator[tuple[str, FunctionType]]:
    """The functions our own code declares on a class: its public methods and properties, `__init__` and `__call__`.

    Those of the class and of each of its bases that is ours (a public class often takes its methods from a private
    base), so every method a public class offers from this package is checked. Not those a third-party base or
    metaclass gives it, even when they sit in the class's own namespace (Pydantic's `model_post_init`, which its
    metaclass sets on a model with private attributes; `typing.Protocol`'s `__init__`): their annotations are that
    library's, read in that library's module, and fixed (or not) there, not here; whether our annotations resolve
    is what this test is for.

    Not a dataclass's generated `__init__`: its fields are the class's own hints, checked with the class, and CPython
    evaluates the inherited ones in the subclass's module (a Pydantic AI event's `Literal`), a limit of `dataclasses`.
    """
    seen: set[str] = set()
    for owner in cls.__mro__:
        if not _ours(owner.__module__):
            continue
        for name, value in vars(owner).items():
            if name in seen or (name.startswith('_') and name not in ('__init__', '__call__')):
                continue
            seen.add(name)  # the first in the MRO is the one the class has
            if name == '__init__' and dataclasses.is_dataclass(owner):
                continue
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value) and _ours(value.__module__):
                yield name, value


def _annotated(module_name: str) -> Iterator[tuple[str, Any]]:
    module = importlib.import_module(module_name)
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value):
            yield name, value
            for method, function in _methods(value):
                yield f'{name}.{method}', function
        elif inspect.isfunction(value):
            yield name, value


def test_the_public_modules_are_found() -> None:
    assert {'pydantic_ai_ask_user', 'pydantic_ai_ask_user.web', 'pydantic_ai_ask_user.ui.ag_ui'} <= set(PUBLIC_MODULES)
    assert not [name for name in PUBLIC_MODULES if '._' in name]


@pytest.mark.parametrize('module_name', PUBLIC_MODULES)
def test_get_type_hints_works_on_every_public_class_method_and_function(module_name: str) -> None:
    failed: list[str] = []
    for name, value in _annotated(module_name):
        try:
            typing.get_type_hints(value)
        except Exception as error:  # each failure is listed, not just the first
            failed.append(f'{name}: {type(error).__name__}: {error}')
    assert failed == []


def test_get_type_hints_of_ask_user_names_its_fields_types() -> None:
    from pydantic_ai_ask_user import AskUser, Person, QuestionContext

    hints = typing.get_type_hints(AskUser)
    assert hints['answerer'] is not None
    assert typing.get_type_hints(Person.may_see)['return'] is bool
    assert QuestionContext in typing.get_args(hints['context'])
