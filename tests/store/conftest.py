"""Fixtures of the store's tests: ``store_url`` runs a test on SQLite and on a real PostgreSQL
(``postgres``, one per test process: tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store's URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / '.verial' / 'results.db'}"
    server: Any = request.getfixturevalue("postgres")
    return str(server.new_database())
