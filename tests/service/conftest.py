"""Fixtures of the service's tests: an app over a SQLite store in tmp_path (FastAPI's
in-process TestClient) with an org key and a solver key."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service needs the [serve] extra")

with warnings.catch_warnings():  # starlette suggests another HTTP client; httpx is ours
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from service_support import FILES, RUNS, Api

from pytest_verial.service.app import create_app
from pytest_verial.service.keys import create_key


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    app = create_app(url, [FILES], RUNS)
    org, org_key = create_key(app.state.store, "org", "ci")
    solver, solver_key = create_key(app.state.store, "solver", "agent")
    with TestClient(app) as client:
        yield Api(client, app, org_key, solver_key, solver.id, org.id, url)
