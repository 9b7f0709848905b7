"""References in the code resolve (issue 32): every ``:mod:``, ``:func:``, ``:class:``,
``:meth:``, ``:attr:`` and ``:data:`` reference in ``src/`` names a module or a name that
exists, and no comment or docstring cites a document by a path outside this repository.

Read from the source, not imported: a module's names are what it defines, assigns or imports
(the faces' ``TYPE_CHECKING`` imports included), a class's are its methods and fields. A
reference resolves as Sphinx would look it up: absolute (``pytest_verial.store.Store``), from
the module it is written in, from that module's package and its parents (``_results.Report``,
``.checks``), or from the class it is written in (``:meth:`write```). One line per broken
reference, so the failure is the to-do list.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest_verial

SRC = Path(pytest_verial.__file__).parent
REPO = SRC.parents[1]
ROOT = "pytest_verial"
ROLE = re.compile(r":(mod|func|class|meth|attr|data):`~?([^`<>]+?)`", re.DOTALL)


def module_name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in SRC.rglob("*.py")}


def _targets(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Tuple | ast.List):
        for element in node.elts:
            yield from _targets(element)


def _names_of(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body binds, at its top level or under an ``if``/``try``."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(dict.fromkeys(_targets(target), node))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            names.update(dict.fromkeys(_targets(node.target), node))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names[(alias.asname or alias.name).partition(".")[0]] = node
        elif isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                names.update(_names_of(block))
            for handler in getattr(node, "handlers", []):
                names.update(_names_of(handler.body))
    return names


@cache
def _module_names(module: str) -> dict[str, ast.AST]:
    names = _names_of(ast.parse(MODULES[module].read_text(encoding="utf-8")).body)
    # the faces' lazy tables name what ``__getattr__`` loads; their TYPE_CHECKING imports
    # are already counted above
    return names


def _class_names(node: ast.ClassDef, module: str) -> set[str]:
    """A class's methods and fields, with those of the classes of this package it derives from
    (by their name in ``module``), and ``__init__`` assignments to ``self``."""
    names = set(_names_of(node.body))
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            for statement in ast.walk(item):
                if (
                    isinstance(statement, ast.Attribute)
                    and isinstance(statement.value, ast.Name)
                    and statement.value.id == "self"
                    and isinstance(statement.ctx, ast.Store)
                ):
                    names.add(statement.attr)
    for base in node.bases:
        if isinstance(base, ast.Name):
            found = _lookup(module, [base.id])
            if isinstance(found, tuple):
                names |= _class_names(*found)
    return names


def _lookup(module: str, parts: list[str]) -> tuple[ast.ClassDef, str] | bool:
    """Whether ``parts`` names something in ``module`` (following its imports into this
    package); a class comes back with its module, so that its members can be looked up."""
    if not parts:
        return True
    node = _module_names(module).get(parts[0])
    if node is None:
        submodule = f"{module}.{parts[0]}"
        return submodule in MODULES and _lookup(submodule, parts[1:])
    if isinstance(node, ast.ImportFrom):
        source = _resolve_import(module, node)
        name = next(a.name for a in node.names if (a.asname or a.name) == parts[0])
        if f"{source}.{name}" in MODULES:
            return _lookup(f"{source}.{name}", parts[1:])
        if source in MODULES:
            return _lookup(source, [name, *parts[1:]])
        return True  # a third-party name: not ours to check
    if isinstance(node, ast.Import):
        return True
    if isinstance(node, ast.ClassDef):
        if len(parts) == 1:
            return node, module
        return parts[1] in _class_names(node, module) and len(parts) == 2
    return len(parts) == 1


def _resolve_import(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def resolves(target: str, module: str, owner: str | None) -> bool:
    """Whether ``target``, written in ``module`` (inside class ``owner``), names something."""
    target = target.strip().rstrip("()")
    if target.startswith("."):  # ``.name`` from the module's package (or the module), ``..``
        level = len(target) - len(target.lstrip("."))
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(level - 1):
            package = package.rpartition(".")[0]
        bases = [package] if level > 1 else [package, module]
        return any(_resolves_from(base, target.lstrip(".")) for base in bases)
    package, bases = module, [module]
    while package:
        package = package.rpartition(".")[0]
        bases.append(package)
    if owner:
        bases.insert(0, f"{module}.{owner}")
    return _resolves_from("", target) or any(_resolves_from(base, target) for base in bases)


def _resolves_from(base: str, target: str) -> bool:
    full = f"{base}.{target}" if base else target
    if full in MODULES:
        return True
    parts = full.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in MODULES:
            return bool(_lookup(module, parts[cut:]))
    return False


def references(path: Path) -> Iterator[tuple[int, str, str, str | None]]:
    """``(line, role, target, enclosing class)`` for each reference in ``path``."""
    text = path.read_text(encoding="utf-8")
    classes = [
        (node.lineno, node.end_lineno or node.lineno, node.name)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ClassDef)
    ]
    for match in ROLE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        inside = [c for c in classes if c[0] <= line <= c[1]]
        owner = max(inside)[2] if inside else None
        yield line, match.group(1), " ".join(match.group(2).split()), owner


def broken_references() -> list[str]:
    broken = []
    for module, path in sorted(MODULES.items()):
        for line, role, target, owner in references(path):
            if not resolves(target, module, owner):
                where = path.relative_to(REPO).as_posix()
                broken.append(f"{where}:{line}: :{role}:`{target}` names nothing")
    return broken


def test_every_reference_in_the_code_resolves() -> None:
    broken = broken_references()
    assert not broken, f"{len(broken)} broken reference(s):\n" + "\n".join(broken)


def test_the_resolver_finds_a_broken_reference() -> None:
    # the check itself: a real name resolves, a stale one does not
    assert resolves("pytest_verial._errors.VerialError", ROOT, None)
    assert resolves("_errors.BenchmarkFileError", f"{ROOT}._loader", None)
    assert not resolves("pytest_verial.store.core", ROOT, None)
    assert not resolves("_errors.NoSuchError", f"{ROOT}._loader", None)


#: citations of documents that live beside the repository, not in it: the product's design
#: notes and the local copies of Verial's documents (cite README or docs/, or Verial's
#: documents by their published name). ``../shared/corpus`` and ``../shared/data`` are test
#: data read in place, named where a test looks for them.
OUTSIDE = re.compile(r"\bDESIGN(?:\.md)?\b|shared/(?:seeds|notes|DESIGN|STYLE)")
CITING = ("src", "tests", "bench", "scripts", "docs", "examples", "README.md", "BENCHMARKS.md")


def test_comments_cite_documents_in_this_repository() -> None:
    found = []
    for top in CITING:
        paths = [REPO / top] if (REPO / top).is_file() else sorted((REPO / top).rglob("*"))
        for path in paths:
            if path.suffix not in {".py", ".md", ".yaml", ".yml", ".ts", ".toml"}:
                continue
            if path == Path(__file__) or not path.is_file():
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if OUTSIDE.search(line):
                    where = path.relative_to(REPO).as_posix()
                    found.append(f"{where}:{number}: cites a document outside the repository")
    assert not found, "\n".join(found)
