"""The public/private line (issues 21 and 32; README, "Public API").

Public are the modules in :data:`PUBLIC` and the names in their ``__all__``; every other
module's path has a segment starting with ``_``. A name is public only when a user outside its
package needs it (README, "Public API", says why for each group): a test is not such a user,
so unit tests of internals import the private module, each saying why at the import.

Each face writes its names in one table: eager imports, or, where the import is heavy, the
``_PUBLIC`` table a lazy ``__getattr__`` reads; its ``TYPE_CHECKING`` imports (what editors and
type checkers follow, to the defining module) and ``__all__`` repeat it, and
:func:`test_each_face_names_its_names_alike_everywhere` fails when the three disagree.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

SRC = Path(__file__).parents[2] / "src" / "pytest_verial"
TESTS = Path(__file__).parents[1]

#: the public import paths; everything else is private
PUBLIC = (
    "pytest_verial",
    "pytest_verial.checks",
    "pytest_verial.cli",
    "pytest_verial.fhir",
    "pytest_verial.hl7",
    "pytest_verial.judge",
    "pytest_verial.judge_plugin",
    "pytest_verial.plugin",
    "pytest_verial.reporting",
    "pytest_verial.service",
    "pytest_verial.sources",
    "pytest_verial.store",
    "pytest_verial.testing",
    "pytest_verial.x12",
)
#: packages whose ``__all__`` is the public face of the modules behind them
FACES = tuple(m for m in PUBLIC if (SRC.parent / m.replace(".", "/") / "__init__.py").is_file())

#: how many test files import a private module, each saying why at the import. Issue 21 held it
#: at 10 while the faces exported whatever tests needed; issue 32 shrank the faces to the names
#: a user needs (245 -> 70), and the unit tests of internals now import them where they live.
#: Lower it as tests move to the public API, never raise it without a reason. 86: issue 33's
#: plain criterion record (test_core_plain_record.py) is internal and has no public face. 90:
#: issue 33's running sums (test_service_complete_sums.py, test_store_session_sums.py: the
#: statements a complete reads, the sums' arithmetic), the service's kept sandbox indexes
#: (test_core_kept_limits.py: its switch) and the xdist scheduler's dead-worker race
#: (test_core_xdist_scheduling.py: a stand-in worker) are internals with no public face. 93:
#: issue 33's streamed end, the store's report digest made one task run at a time
#: (test_store_light_end.py), the light report's figures from the records
#: (test_core_light_figures.py) and the evidence path rewriter's one JSON scan
#: (test_core_sandbox_paths_json.py): each is checked equal to the whole path it replaces.
CEILING = 93


def private(module: str) -> bool:
    return any(part.startswith("_") and part != "__init__" for part in module.split("."))


def modules_in_src() -> list[str]:
    names = []
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def private_importers() -> dict[str, set[str]]:
    """Test file -> the private pytest_verial modules it imports."""
    found: dict[str, set[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                # ``from pytest_verial.x import _mod`` imports a private module too
                names = [node.module]
                names += [
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if a.name[:1] == "_" != a.name[1:2]
                ]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("pytest_verial.") and private(name):
                    found.setdefault(str(path.relative_to(TESTS)), set()).add(name)
    return found


def test_every_module_outside_the_public_list_is_private() -> None:
    public = [m for m in modules_in_src() if not private(m)]
    assert sorted(public) == sorted(PUBLIC)


@pytest.mark.parametrize("face", FACES)
def test_every_public_name_resolves(face: str) -> None:
    module = importlib.import_module(face)
    names = module.__all__
    assert len(names) == len(set(names)), f"{face}.__all__ names a name twice"
    for name in names:
        assert getattr(module, name) is not None, f"{face}.{name}"
    assert set(names) <= set(dir(module))


def test_the_public_names_are_the_pinned_ones() -> None:
    """Every face's ``__all__`` equals ``public_api.txt``: adding or removing a public name
    is a deliberate change to that file (and to README's "Public API"), never a side effect."""
    pinned = Path(__file__).with_name("public_api.txt").read_text(encoding="utf-8").splitlines()
    current = [
        f"{face}.{name}" for face in FACES for name in sorted(importlib.import_module(face).__all__)
    ]
    expected = [line for line in pinned if line and not line.startswith("#")]
    missing, added = sorted(set(expected) - set(current)), sorted(set(current) - set(expected))
    assert not missing and not added, f"gone from the public API: {missing}; new: {added}"


def test_faces_name_no_private_name() -> None:
    for face in FACES:
        module = importlib.import_module(face)
        assert not [n for n in module.__all__ if n.startswith("_") and n != "__version__"], face


def test_few_test_files_import_a_private_module() -> None:
    importers = private_importers()
    assert len(importers) <= CEILING, "\n".join(
        f"{file}: {', '.join(sorted(names))}" for file, names in sorted(importers.items())
    )


def _face_imports(face: str) -> tuple[dict[str, str], dict[str, str]]:
    """The names a face's ``__init__`` imports at its top level from its own package, each with
    the module it names: ``(eager, under TYPE_CHECKING)``; the lazy-loading helper aside."""
    path = SRC.parent / face.replace(".", "/") / "__init__.py"
    eager: dict[str, str] = {}
    typing: dict[str, str] = {}

    def collect(body: list[ast.stmt], into: dict[str, str]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.level:
                base = face.split(".")[: len(face.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    if alias.name != "_lazy" and module != "pytest_verial._lazy":
                        into[alias.asname or alias.name] = module
            elif isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                collect(node.body, typing)

    collect(ast.parse(path.read_text(encoding="utf-8")).body, eager)
    return eager, typing


@pytest.mark.parametrize("face", FACES)
def test_each_face_names_its_names_alike_everywhere(face: str) -> None:
    """``__all__``, the imports and the lazy table name the same names, from the same module,
    and that module is the one that defines each class or function ("go to definition" lands
    on it); a face that loads nothing lazily has no table."""
    module = importlib.import_module(face)
    eager, typing = _face_imports(face)
    table = getattr(module, "_PUBLIC", {})
    defined = {n for n in vars(module) if callable(getattr(module, n)) and n in module.__all__}
    defined = {n for n in defined if getattr(module, n).__module__ == face}
    assert set(module.__all__) == set(eager) | set(typing) | defined, face
    assert not set(eager) & set(typing), face
    lazy = {name: f"{face}.{target}" for name, target in table.items()}
    assert lazy == typing, f"{face}: _PUBLIC and the TYPE_CHECKING imports differ"
    for name, source in {**eager, **typing}.items():
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(source), name), f"{face}.{name}"
        if isinstance(value, type) or callable(value):
            assert value.__module__ == source, f"{face}.{name} is defined in {value.__module__}"


def heads_a_private_block(lines: list[str], number: int) -> bool:
    """Whether the nearest comment above line ``number``, with no blank line between, has a
    line ``# private...`` (a reason may take several lines)."""
    above = [text.strip() for text in reversed(lines[:number])]
    for index, text in enumerate(above):
        if not text:
            return False
        if text.startswith("#"):
            block = []
            for line in above[index:]:
                if not line.startswith("#"):
                    break
                block.append(line)
            return any(line.startswith("# private") for line in block)
    return False


def test_every_private_import_in_a_test_says_why() -> None:
    """Each import of a private module in a test says why: a ``# private:`` comment on its line
    or heading the block of imports it is in."""
    unexplained = []
    for file in private_importers():
        lines = (TESTS / file).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "pytest_verial" not in line or not line.lstrip().startswith(("from ", "import ")):
                continue
            module = line.split()[1]
            names = line.split(" import ", 1)[-1] if line.lstrip().startswith("from ") else ""
            if not (
                private(module)
                or any(n.strip()[:1] == "_" != n.strip()[1:2] for n in names.split(","))
            ):
                continue
            if "# private" not in line and not heads_a_private_block(lines, number):
                unexplained.append(f"{file}:{number + 1}: {line.strip()}")
    assert not unexplained, "\n".join(unexplained)


def _imported_names(path: Path, package: str | None) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` for each ``from pytest_verial... import name`` of ``path``;
    ``package`` resolves relative imports (None: a file outside ``src/``, whose relative
    imports are its own)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if package is None:
                continue
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        if module == "pytest_verial" or module.startswith("pytest_verial."):
            found += [(node.lineno, module, alias.name) for alias in node.names]
    return found


def test_every_imported_name_exists_where_it_is_imported_from() -> None:
    """A face's lazy ``__getattr__`` hides a missing name from mypy (any attribute type-checks),
    so an import of a name a face no longer exports fails only when that line runs: a command
    or a bench that nothing else runs. Every ``from pytest_verial... import name`` in src/,
    bench/ and scripts/ must find its name (a submodule counts)."""
    project = SRC.parents[1]
    missing = []
    files = [(p, "src") for p in SRC.rglob("*.py")]
    files += [
        (p, None) for folder in ("bench", "scripts") for p in (project / folder).rglob("*.py")
    ]
    for path, where in files:
        package = None
        if where:
            parts = path.relative_to(SRC.parent).with_suffix("").parts
            package = ".".join(parts if parts[-1] == "__init__" else parts[:-1])
            package = package.removesuffix(".__init__")
        for line, module, name in _imported_names(path, package):
            target = importlib.import_module(module)
            if hasattr(target, "__path__") and importlib.util.find_spec(f"{module}.{name}"):
                continue
            if not hasattr(target, name):
                missing.append(f"{path.relative_to(project)}:{line}: {module} has no {name}")
    assert not missing, "\n".join(missing)
