"""Fixtures of the service's tests: an app over a fresh store (SQLite in tmp_path, and a real
PostgreSQL shared by every test of the process: ``postgres`` in tests/conftest.py) served
in-process by FastAPI's TestClient, with an org key and a solver key."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs the [serve] extra")

with warnings.catch_warnings():  # starlette suggests another HTTP client; httpx is ours
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from service_support import EXAMPLES, RUNS, Api

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))


@pytest.fixture(scope="session")
def service_postgres(postgres: Any) -> Any:
    """The test process's PostgreSQL (tests/conftest.py), shared with the store's tests."""
    return postgres


@pytest.fixture(params=["sqlite", "postgresql"])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Api]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = str(request.getfixturevalue("service_postgres").new_database())
    app = create_app(url, [EXAMPLES], RUNS)
    org, org_key = create_key(app.state.store, "org", "ci")
    solver, solver_key = create_key(app.state.store, "solver", "agent")
    with TestClient(app) as client:
        yield Api(client, app, org_key, solver_key, solver.id, org.id, url)
