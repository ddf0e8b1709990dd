"""The package's own import graph: circles, imports that run back up a layer, and function-local imports.

`python scripts/import_graph.py` prints the figures; `tests/test_layers.py` holds them. Every import of the
package's own modules counts, `TYPE_CHECKING` ones included: a circle through type hints is still a circle for
a reader. The layers are written down in `docs/development.md`; `LAYERS` below is their one source.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = 'pydantic_ai_ask_user'
"""The package whose graph this is."""

SOURCE = Path(__file__).resolve().parent.parent / 'src' / PACKAGE
"""Where its source is."""

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ('core', ('',)),
    ('stores and engines', ('hub', 'dbos', 'temporal', 'prefect')),
    ('front ends', ('testing', 'terminal', 'web', 'ui', 'mcp', 'notify')),
    ('command line', ('_cli',)),
)
"""The layers, lowest first, each named by the module prefixes it holds (`''`: the package's own modules). A module
may import its own layer and those below; `docs/development.md` says what each holds."""


@dataclass
class Module:
    """One module of the package and what of the package it imports."""

    name: str
    """Dotted, without the package: `_cli.pending`, `dbos._store`; `''` is the package's `__init__`."""
    lines: int
    """Its length in lines."""
    top: set[str] = field(default_factory=lambda: set[str]())
    """Own modules imported at module level (under `TYPE_CHECKING` too)."""
    local: list[tuple[int, str]] = field(default_factory=lambda: list[tuple[int, str]]())
    """Own-module import statements inside a function: (line, first module it names)."""
    lazy: set[str] = field(default_factory=lambda: set[str]())
    """Every own module imported inside a function."""


def _name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom | ast.Import, known: set[str]) -> Iterator[str]:
    """The own modules an import statement names (a `from . import x` of a submodule names the submodule)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == PACKAGE or alias.name.startswith(PACKAGE + '.'):
                yield _known(alias.name.removeprefix(PACKAGE).lstrip('.'), known)
        return
    if node.level == 0:
        if node.module is None or not (node.module == PACKAGE or node.module.startswith(PACKAGE + '.')):
            return
        base = node.module.removeprefix(PACKAGE).lstrip('.')
    else:
        parts = module.split('.') if module else []
        if not is_package:
            parts = parts[:-1]
        up = node.level - 1
        if up:
            parts = parts[:-up]
        base = '.'.join([*parts, *([node.module] if node.module else [])])
    for alias in node.names:
        candidate = f'{base}.{alias.name}' if base else alias.name
        yield candidate if candidate in known else _known(base, known)


def _known(name: str, known: set[str]) -> str:
    while name and name not in known:
        name = name.rpartition('.')[0]
    return name


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == 'TYPE_CHECKING') or (
        isinstance(test, ast.Attribute) and test.attr == 'TYPE_CHECKING'
    )


def read() -> dict[str, Module]:
    """Every module of the package, with its own imports."""
    paths = sorted(SOURCE.rglob('*.py'))
    known = {_name(path) for path in paths}
    modules: dict[str, Module] = {}
    for path in paths:
        name = _name(path)
        text = path.read_text()
        module = Module(name, text.count('\n'))
        is_package = path.name == '__init__.py'

        def visit(node: ast.AST, in_function: bool, module: Module = module, is_package: bool = is_package) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Import | ast.ImportFrom):
                    targets = {t for t in _resolve(module.name, is_package, child, known) if t != module.name}
                    if in_function:
                        # One statement is one local import, however many names it takes.
                        module.local.extend((child.lineno, target) for target in sorted(targets)[:1])
                        module.lazy.update(targets)
                    else:
                        module.top.update(targets)
                inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                visit(child, inner)

        visit(ast.parse(text), False)
        modules[name] = module
    return modules


def circles(modules: dict[str, Module]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), over every own import: module-level,
    under `TYPE_CHECKING` and function-local alike (a circle hidden in a function is still one).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(10_000)

    def connect(name: str) -> None:
        nonlocal counter
        index[name] = low[name] = counter
        counter += 1
        stack.append(name)
        on_stack.add(name)
        for target in sorted(modules[name].top | modules[name].lazy):
            if target not in modules:
                continue
            if target not in index:
                connect(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for name in sorted(modules):
        if name not in index:
            connect(name)
    return found


def layer_of(name: str) -> int:
    """The index in `LAYERS` of the layer a module belongs to."""
    best = (-1, -1)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + '.') or (prefix == '' and '.' not in name):
                best = max(best, (len(prefix), rank))
    if best[1] < 0:
        raise ValueError(f'module {name!r} is in no layer: add it to LAYERS in scripts/import_graph.py')
    return best[1]


def upward(modules: dict[str, Module]) -> list[tuple[str, str]]:
    """Imports (module-level or local) from a module to one in a higher layer."""
    found: list[tuple[str, str]] = []
    for module in modules.values():
        for target in sorted(module.top | module.lazy):
            if layer_of(target) > layer_of(module.name):
                found.append((module.name, target))
    return found


def main() -> int:
    modules = read()
    lines = sum(module.lines for module in modules.values())
    local = sum(len(module.local) for module in modules.values())
    print(f'{len(modules)} modules, {lines} lines')
    print(f'function-local imports of own modules: {local} ({local / lines * 1000:.2f} per 1,000 lines)')
    for module in sorted(modules.values(), key=lambda m: -len(m.local)):
        if module.local:
            print(f'  {len(module.local):3d}  {module.name}')
    groups = circles(modules)
    print(f'import circles: {len(groups)}')
    for group in groups:
        print('  ' + ' <-> '.join(group))
    if LAYERS:
        ups = upward(modules)
        print(f'upward imports: {len(ups)}')
        for source, target in ups:
            print(f'  {source} -> {target}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
