"""The package's import graph holds its shape: no circles, no import back up a layer, few function-local imports.

The figures come from `scripts/import_graph.py` (its `LAYERS` is the one list of layers, which
`docs/development.md` explains); these tests fail with the offending modules named.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / 'scripts' / 'import_graph.py'

MAX_LOCAL_PER_THOUSAND_LINES = 3.0
"""At most this many function-local imports of the package's own modules per 1,000 lines (the issue's bar)."""


@pytest.fixture(scope='module')
def graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location('import_graph', SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules['import_graph'] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_no_import_circles_type_only_and_function_local_ones_included(graph: ModuleType) -> None:
    assert graph.circles(graph.read()) == []


def test_no_module_imports_a_layer_above_its_own(graph: ModuleType) -> None:
    assert graph.upward(graph.read()) == []


def test_every_module_is_in_a_layer(graph: ModuleType) -> None:
    for name in graph.read():
        graph.layer_of(name)  # raises, naming the module, for one in no layer


def test_function_local_imports_of_own_modules_stay_rare(graph: ModuleType) -> None:
    modules = graph.read()
    lines = sum(module.lines for module in modules.values())
    local = {name: module.local for name, module in modules.items() if module.local}
    count = sum(len(found) for found in local.values())
    assert count / lines * 1000 <= MAX_LOCAL_PER_THOUSAND_LINES, sorted(local.items())


def test_the_checker_finds_what_it_is_for(graph: ModuleType, tmp_path: Path) -> None:
    # A circle through a type-only import and one through a function-local import, an upward import, and a local
    # import, in a package written for the test: the checker must see each, or the tests above prove nothing.
    package = tmp_path / 'src' / graph.PACKAGE
    (package / '_cli').mkdir(parents=True)
    (package / 'web').mkdir()
    (package / '__init__.py').write_text('')
    (package / '_a.py').write_text('from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._b import B\n')
    (package / '_b.py').write_text('from ._a import A\n')
    (package / '_c.py').write_text('def f():\n    from ._d import D\n')
    (package / '_d.py').write_text('from ._c import C\n')
    (package / '_e.py').write_text('def g():\n    from .web import W\n')
    (package / 'web' / '__init__.py').write_text('')
    (package / '_cli' / '__init__.py').write_text('')
    saved = graph.SOURCE
    graph.SOURCE = package
    try:
        modules = graph.read()
        assert graph.circles(modules) == [['_a', '_b'], ['_c', '_d']]
        assert ('_e', 'web') in graph.upward(modules)
        assert [target for _, target in modules['_c'].local] == ['_d']
    finally:
        graph.SOURCE = saved
