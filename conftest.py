"""Repository-level pytest configuration for the plugin's own tests."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _lean_pytester(request: pytest.FixtureRequest) -> None:
    """Inner pytest runs skip hypothesis's plugin: its terminal summary costs ~3 s a run."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # pytester clears PYTEST_ADDOPTS first
        request.getfixturevalue("monkeypatch").setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
