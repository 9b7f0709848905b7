"""Repository-level pytest configuration for the plugin's own tests."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _lean_pytester(request: pytest.FixtureRequest) -> None:
    """Inner pytest runs skip hypothesis's plugin (its terminal summary costs ~3 s a run) and
    assertion rewriting: in-process runs re-import the plugin's modules, and CPython 3.11's
    ``ast.parse`` then fails now and then with "AST constructor recursion depth mismatch"
    (seen once in a loaded -n 2 run, importing a module at the start of the inner run loop).
    Benchmark criteria use no ``assert`` statements, so nothing is lost."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # pytester clears PYTEST_ADDOPTS first
        request.getfixturevalue("monkeypatch").setenv(
            "PYTEST_ADDOPTS", "-p no:hypothesispytest --assert=plain"
        )
