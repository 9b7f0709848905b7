"""The import graph of pytest_verial: no circle, no upward import across the layers declared in
:data:`LAYERS`, no two packages importing each other, and the settings and results modules low.

Every import counts, including those inside functions (a deferred import is still a
dependency, it only moves the moment it runs). Imports under ``if TYPE_CHECKING:`` never run,
but a reader (and the type checker) still follows them: they count for circles and layers, not
for floors. A package's ``__init__`` is the module named by the package. A module's floor is
1 plus the highest floor among the modules it imports, so a module that imports nothing of the
package is on floor 1.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

import pytest_verial

SRC = Path(pytest_verial.__file__).parent
ROOT = "pytest_verial"

#: the highest floor each of these modules may sit on
FLOORS = {"pytest_verial._results": 2, "pytest_verial._config.settings": 4}


def _module_name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST, typing_too: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``node``, at any depth; under ``if TYPE_CHECKING:`` only with
    ``typing_too``."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
        return
    if isinstance(node, ast.If) and _is_type_checking(node.test) and not typing_too:
        children: list[ast.stmt] | Iterator[ast.AST] = node.orelse
    else:
        children = ast.iter_child_nodes(node)
    for child in children:
        yield from _import_nodes(child, typing_too)


def _imports(module: str, typing_too: bool = False) -> dict[str, int]:
    """The modules of pytest_verial that ``module`` imports, with the line of the first."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: dict[str, int] = {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in sorted(_import_nodes(tree, typing_too), key=lambda n: -n.lineno):
        if isinstance(node, ast.Import):
            found.update((a.name, node.lineno) for a in node.names if a.name in MODULES)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            name = ".".join([*base, *([node.module] if node.module else [])])
        else:
            name = node.module or ""
        for alias in node.names:
            if f"{name}.{alias.name}" in MODULES:
                found[f"{name}.{alias.name}"] = node.lineno
            elif name in MODULES:
                found[name] = node.lineno
    found.pop(module, None)
    return found


#: what runs: module -> the modules it imports
GRAPH = {module: set(_imports(module)) for module in MODULES}
#: what a reader follows: the same, with the imports under ``if TYPE_CHECKING:``
READ = {module: _imports(module, typing_too=True) for module in MODULES}

#: The layers, bottom to top: a module may import its own layer and those below, never one
#: above. A module belongs to the layer of the longest prefix that names it (a package names
#: its modules). The judge's client sits with the sandbox's I/O (a check calls it, as it reads
#: a server); the judge's plugin and the calibration above the store. The check contract sits
#: above the sources because a check context hands out typed sources.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "contracts, errors and results",
        (
            "_compare", "_display", "_errors", "_evidence", "_heap", "_interrupts", "_lazy",
            "_masking", "_models", "_names", "_nodeids", "_not_evaluated", "_paths",
            "_record", "_results", "_safeparse", "_sandbox_paths", "_scoring", "_secrets",
            "_version", "_walk", "_yamlsource", "_config.source_table",
        ),
    ),
    (
        "option declarations, formats, sandbox I/O and the judge's client",
        (
            "_config", "_config.options", "_config.run_folder", "_sandbox_io", "fhir",
            "hl7._parse", "hl7._paths", "x12",
            "judge._cache", "judge._client", "judge._consistency", "judge._gating",
            "judge._models", "judge._pool", "judge._prompt", "judge._reply", "judge._report",
            "judge._settings",
        ),
    ),
    ("sandbox contract", ("_contracts", "_contracts.sandbox")),
    ("sources", ("sources", "judge._source")),
    ("check contract", ("_contracts.check",)),
    ("checks", ("checks",)),
    ("engine", ("_engine", "_hooks", "_inline", "_loader", "_schema", "testing")),
    ("reporting", ("reporting", "hl7._capture")),
    ("store", ("store",)),
    ("judge", ("judge", "judge._calibrate", "_judge_concurrency")),
    (
        "configuration",
        ("_config.reading", "_config.selection", "_config.settings", "_config.stash",
         "_config.store_option"),
    ),
    (
        "plugin",
        (
            "_collect", "_recorder", "_xdist_scheduling", "hl7",
            "hl7._fixtures", "judge_plugin", "plugin", "reporting._baseline", "_store_session",
        ),
    ),
    ("pages", ("_ui",)),
    ("service", ("service",)),
    ("commands", ("_commands", "cli")),
    ("public face", ("",)),
)  # fmt: skip


def _layer(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer (-1: none names it)."""
    name = module.removeprefix(ROOT).removeprefix(".")
    best, length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            names = name == prefix or name.startswith(f"{prefix}.") or (prefix == "" == name)
            if names and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def _circles(graph: Mapping[str, Iterable[str]] = GRAPH) -> list[list[str]]:
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
        for other in sorted(graph[module]):
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

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


#: packages whose modules sit on different layers (the option declarations low, the session's
#: reading of them high; the sandbox contract below the sources, the check contract above):
#: each of their modules counts as a top-level module of its own
SPLIT = ("pytest_verial._config", "pytest_verial._contracts")


def _top(module: str) -> str:
    """The top-level subpackage (or module) of pytest_verial that ``module`` belongs to."""
    depth = 3 if module.startswith(tuple(f"{p}." for p in SPLIT)) else 2
    return ".".join(module.split(".")[:depth])


@cache
def _floor(module: str) -> int:
    return 1 + max((_floor(other) for other in GRAPH[module]), default=0)


def test_no_import_circle() -> None:
    assert _circles() == []


def test_no_import_circle_a_reader_follows() -> None:
    """Not even through imports made only for the type checker (a circle there is one module
    knowing another's class that knows it back: the judge scheduler knew the pytest item)."""
    assert _circles(READ) == []


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if _layer(m) < 0] == []


def test_no_import_runs_up_the_layers() -> None:
    """Each offending import in one line: file, line, importer's layer, imported layer. A
    package's face (its ``__init__``) may import its own modules: it re-exports them."""
    upward = [
        f"{MODULES[module].relative_to(SRC.parent)}:{line}: {module} ({LAYERS[_layer(module)][0]})"
        f" imports {other} ({LAYERS[_layer(other)][0]}), a higher layer"
        for module, others in sorted(READ.items())
        for other, line in sorted(others.items())
        if _layer(other) > _layer(module)
        and not (MODULES[module].name == "__init__.py" and other.startswith(f"{module}."))
    ]
    assert upward == [], "\n".join(upward)


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
