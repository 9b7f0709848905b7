"""The import graph of pytest_verial: no circle, no two packages importing each other, and the
settings and results modules low in it.

Every import counts, including those inside functions (a deferred import is still a
dependency, it only moves the moment it runs); imports under ``if TYPE_CHECKING:`` do not, since
they never run. A package's ``__init__`` is the module named by the package. A module's floor is
1 plus the highest floor among the modules it imports, so a module that imports nothing of the
package is on floor 1.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest_verial

SRC = Path(pytest_verial.__file__).parent
ROOT = "pytest_verial"

#: the highest floor each of these modules may sit on
FLOORS = {"pytest_verial._results": 2, "pytest_verial._settings": 4}


def _module_name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``node``, at any depth, except under ``if TYPE_CHECKING:``."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
        return
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        children: list[ast.stmt] | Iterator[ast.AST] = node.orelse
    else:
        children = ast.iter_child_nodes(node)
    for child in children:
        yield from _import_nodes(child)


def _imports(module: str) -> set[str]:
    """The modules of pytest_verial that ``module`` imports."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            name = ".".join([*base, *([node.module] if node.module else [])])
        else:
            name = node.module or ""
        for alias in node.names:
            if f"{name}.{alias.name}" in MODULES:
                found.add(f"{name}.{alias.name}")
            elif name in MODULES:
                found.add(name)
    found.discard(module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _circles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(GRAPH[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return found


def _top(module: str) -> str:
    """The top-level subpackage (or module) of pytest_verial that ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


@cache
def _floor(module: str) -> int:
    return 1 + max((_floor(other) for other in GRAPH[module]), default=0)


def test_no_import_circle() -> None:
    assert _circles() == []


def test_no_two_packages_import_each_other() -> None:
    imports = {
        (_top(module), _top(other))
        for module, others in GRAPH.items()
        for other in others
        if _top(module) != _top(other)
    }
    mutual = sorted({tuple(sorted(pair)) for pair in imports if pair[::-1] in imports})
    assert mutual == []


def test_settings_and_results_sit_low() -> None:
    assert not _circles(), "a floor is defined only in a graph without circles"
    floors = {module: _floor(module) for module in FLOORS}
    too_high = {module: floor for module, floor in floors.items() if floor > FLOORS[module]}
    assert too_high == {}, (
        f"bounds {FLOORS}; the graph's highest floor is {max(map(_floor, GRAPH))}"
    )
