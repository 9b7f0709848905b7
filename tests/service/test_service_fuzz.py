"""Fuzzing with schemathesis against /openapi.json (in-process, ASGI): whatever it sends,
with an org key, no answer is a 5xx, every status, content type and body is the one
/openapi.json documents (schemathesis's conformance checks), every error is problem+json and
every success is JSON; and no request the schema calls valid is refused for a rule it does not
state (``positive_data_acceptance``: never a 400; a 422 only for what the schema cannot say,
a benchmark, task or run folder this server does not have, an archive that does not unpack).

Schemathesis's strategies drive plain hypothesis tests, so its pytest plugin is not needed
(``-p no:schemathesis`` keeps its 0.4 s import out of every child pytest session). It is in
the test extra; skipped only where it is not installed."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import checks  # noqa: E402
from service_support import FILES, RUNS  # noqa: E402

from pytest_verial.service import create_app  # noqa: E402

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key  # noqa: E402

FOLDER = Path(tempfile.mkdtemp(prefix="verial-fuzz-"))
APP = create_app(f"sqlite:///{FOLDER / 'store.db'}", [FILES], RUNS)
KEY = create_key(APP.state.store, "org")[1]
#: the same app over each store: (schema, key)
#: what a schema-valid request may get: never a 400 (a rule the schema does not state)
ACCEPTED = ["2xx", "401", "403", "404", "409", "413", "422"]


def _fuzzed(app: Any) -> Any:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    schema.config.checks.positive_data_acceptance.expected_statuses = ACCEPTED
    return schema


FUZZED: dict[str, tuple[Any, str]] = {"sqlite": (_fuzzed(APP), KEY)}


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    APP.state.store.close()
    for schema, _ in list(FUZZED.values())[1:]:
        schema.app.state.store.close()
    shutil.rmtree(FOLDER, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def fuzzed(request: pytest.FixtureRequest) -> tuple[Any, str]:
    """The schema and an org key of the app over SQLite, or over the suite's PostgreSQL."""
    if request.param not in FUZZED:
        url = str(request.getfixturevalue("service_postgres").new_database())
        app = create_app(url, [FILES], RUNS)
        FUZZED[request.param] = (_fuzzed(app), create_key(app.state.store, "org")[1])
    return FUZZED[request.param]


CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.positive_data_acceptance,
]
OPERATIONS = sorted(
    (method.upper(), path) for path, item in APP.openapi()["paths"].items() for method in item
)


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_no_input_makes_the_service_fail(method: str, path: str, fuzzed: tuple[Any, str]) -> None:
    schema, key = fuzzed
    operation = schema[path][method]

    @given(case=operation.as_strategy())
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        response = case.call(headers={"Authorization": f"Bearer {key}"})
        # documented status, content type and body schema (errors: problem+json)
        case.validate_response(response, checks=CHECKS)
        assert response.status_code < 500, (case.method, case.path, response.text)
        kind = response.headers.get("content-type", "")
        kind = kind[0] if isinstance(kind, list) else kind
        if response.status_code >= 400:
            assert kind.startswith("application/problem+json"), (case.path, kind)
            body = response.json()
            assert {"type", "title", "status", "detail"} <= set(body)
            assert "\n" not in body["detail"]
        else:
            assert kind.startswith(("application/json", "application/xml")), (case.path, kind)

    check()
