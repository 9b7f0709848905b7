"""Fixtures of the store's tests: ``store_url`` runs a test on SQLite and on a real PostgreSQL
(started once per session by ``pg_server.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_server import PgServer, pg_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[PgServer]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'pytest-verial[postgres]')")
    try:
        server = pg_server()
        running = server.__enter__()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    try:
        yield running
    finally:
        server.__exit__(None, None, None)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store's URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / '.verial' / 'results.db'}"
    server: Any = request.getfixturevalue("postgres")
    return str(server.new_database())
