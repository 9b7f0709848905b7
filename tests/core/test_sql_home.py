"""The store's SQL lives in its repository modules (issue 32): nowhere else in ``src/`` is a
SQLAlchemy statement built (``select(``, ``insert(``, ``update(``, ``delete(``, ``text(``, a
table's ``.insert()``) or run (``.execute(``). The service, the commands and the Store's own
façade call repository functions instead; each site found elsewhere is one line naming its
file and line.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path

import pytest_verial

SRC = Path(pytest_verial.__file__).parent

#: where SQL may be written: the repositories, the tables, the migrations, the engine's
#: connection set-up (SQLite's pragmas, ``BEGIN IMMEDIATE``), and the session writer's two
#: database seams (``store/_db.py``'s ``Db`` over SQLAlchemy, and over sqlite3 for an existing
#: SQLite store, issue 33) (``fnmatch`` patterns of paths below the package)
ALLOWED = (
    "store/_repo_*.py",
    "store/_tables.py",
    "store/_migrations/*",
    "store/_engine.py",
    "store/_sqla_db.py",
    "store/_lite.py",
)

#: modules allowed for a reason of their own (path -> reason)
EXCEPTIONS = {
    # a sandbox's portal snapshot, read with sqlite3: not the results store
    "sources/_portal.py": "reads a sandbox's SQLite snapshot, not the results store",
}

#: SQLAlchemy's statement constructors
STATEMENTS = frozenset(
    {"select", "insert", "update", "delete", "text", "union", "union_all", "exists", "values"}
)
#: methods that run SQL
RUNS = frozenset({"execute", "executemany", "exec_driver_sql"})
#: a table's statement methods (``sessions.insert()``), always called without arguments
TABLE_STATEMENTS = frozenset({"select", "insert", "update", "delete"})


def _sqlalchemy_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The statement constructors imported from SQLAlchemy (by their local names) and the
    local names of SQLAlchemy's modules (``import sqlalchemy as sa``)."""
    functions: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlalchemy":
            for alias in node.names:
                if alias.name in STATEMENTS:
                    functions.add(alias.asname or alias.name)
                else:  # ``from sqlalchemy import sql``: a module, maybe
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sqlalchemy":
                    modules.add(alias.asname or alias.name.split(".")[0])
    return functions, modules


def sql_sites(source: str) -> list[tuple[int, str]]:
    """Each statement built or run in ``source``: its line and what it is."""
    tree = ast.parse(source)
    functions, modules = _sqlalchemy_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in functions:
            found.append((node.lineno, f"{func.id}("))
        elif isinstance(func, ast.Attribute):
            base = func.value
            if func.attr in RUNS:
                found.append((node.lineno, f".{func.attr}("))
            elif func.attr in STATEMENTS and isinstance(base, ast.Name) and base.id in modules:
                found.append((node.lineno, f"{base.id}.{func.attr}("))
            elif func.attr in TABLE_STATEMENTS and not node.args and not node.keywords:
                found.append((node.lineno, f".{func.attr}()"))
    return sorted(found)


def _allowed(relative: Path) -> bool:
    name = relative.as_posix()
    return name in EXCEPTIONS or any(fnmatchcase(name, p) for p in ALLOWED)


def _outside(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root.parent.parent).as_posix()}:{line}: {what} outside the store's "
        "repository modules"
        for path in sorted(root.rglob("*.py"))
        if not _allowed(path.relative_to(root))
        for line, what in sql_sites(path.read_text(encoding="utf-8"))
    ]


def test_no_sql_outside_the_repository_modules() -> None:
    outside = _outside(SRC)
    assert outside == [], "\n".join(outside)


def test_every_exception_is_a_module_that_runs_sql() -> None:
    """An exception that no longer holds SQL (its SQL moved) is dropped from the list."""
    stale = [p for p in EXCEPTIONS if not sql_sites((SRC / p).read_text(encoding="utf-8"))]
    assert stale == []


def test_the_sites_a_service_module_could_hold_are_found() -> None:
    """What the service held before its SQL moved to the repositories, and what is not SQL."""
    source = """
import sqlalchemy as sa
from sqlalchemy import delete as remove, text, update

def work(conn, jobs, data):
    conn.execute(sa.select(jobs.c.id).where(jobs.c.state == "queued"))
    remove(jobs)
    update(jobs).values(state="done")
    text("SELECT 1")
    jobs.insert()
    conn.exec_driver_sql("BEGIN")
    data.update(state="done")  # a dict
    data.update({"a": 1})
    [].insert(0, 1)
"""
    assert sql_sites(source) == [
        (6, ".execute("),
        (6, "sa.select("),
        (7, "remove("),
        (8, "update("),
        (9, "text("),
        (10, ".insert()"),
        (11, ".exec_driver_sql("),
    ]


def test_allowed_modules() -> None:
    assert _allowed(Path("store/_repo_jobs.py"))
    assert _allowed(Path("store/_migrations/versions/0001_initial.py"))
    assert _allowed(Path("store/_migrations/env.py"))
    assert not _allowed(Path("store/_core.py"))
    assert not _allowed(Path("service/_jobs.py"))
