"""Every malformed identifier, cursor, path, number and form is a 4xx problem, never a 500
(issue 31): hypothesis properties over the app in-process (TestClient), over SQLite and the
suite's PostgreSQL. A request that breaks the published schema is a 400; one the schema
accepts but that names what this server did not return or does not have (a forged cursor, an
unknown id, a run folder that is not there) is a 422 or a 404, as README's Errors says.

Ids, cursors and run folders are drawn from arbitrary unicode (NUL, surrogates escaped as the
client must, very long), and the cursors also forged as this service would make them but with
timestamps and positions out of every range the stores hold (years 1 and 9999 with offsets
that push them past either end, positions of 30 digits)."""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from service_support import FILES, RUNS

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

with warnings.catch_warnings():  # starlette suggests another HTTP client; httpx is ours
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
FOLDER = Path(tempfile.mkdtemp(prefix="verial-malformed-"))


class Served:
    """One app over one store, with an org key, a solver key and a run it may read."""

    def __init__(self, url: str) -> None:
        self.app = create_app(url, [FILES], RUNS)
        self.org = {"Authorization": f"Bearer {create_key(self.app.state.store, 'org')[1]}"}
        self.solver = {"Authorization": f"Bearer {create_key(self.app.state.store, 'solver')[1]}"}
        self.client = TestClient(self.app)
        made = self.client.post(
            "/v1/verify-task",
            json={
                "benchmark": "sftp-drops@1",
                "task_id": "sftp-claims-batch",
                "sandbox": {"run_dir": "flawed-agent"},
            },
            headers=self.solver,
        )
        assert made.status_code == 201, made.text
        self.task_run = made.json()["task_run_id"]


SERVED: dict[str, Served] = {}


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    for served in SERVED.values():
        served.client.close()
        served.app.state.store.close()
    shutil.rmtree(FOLDER, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest) -> Served:
    if request.param not in SERVED:
        if request.param == "sqlite":
            url = f"sqlite:///{FOLDER / 'store.db'}"
        else:
            url = str(request.getfixturevalue("service_postgres").new_database())
        SERVED[request.param] = Served(url)
    return SERVED[request.param]


def problem(answer: Any, *allowed: int) -> dict[str, Any]:
    """The answer is one of the ``allowed`` 4xx statuses, as problem+json, and not a 500."""
    assert answer.status_code < 500, answer.text
    assert answer.status_code in allowed, (answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("application/problem+json"), answer.text
    body: dict[str, Any] = answer.json()
    assert {"type", "title", "status", "detail"} <= set(body), body
    assert body["status"] == answer.status_code and "\n" not in body["detail"]
    return body


#: arbitrary text a client can send (any code point UTF-8 holds), long at times
TEXT = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=50),
    st.text(st.characters(codec="utf-8"), min_size=300, max_size=3000),
    st.sampled_from(["\x00", "a\x00b", "../..", "%00", "/", "a/b", "x" * 20_000]),
)
#: raw bytes no text is (invalid UTF-8, a lone surrogate's bytes), percent-encoded in a path
RAW = st.sampled_from(["%FF", "%ED%A0%80", "br_%C0%80", "%00", "a%2Fb", "%2E%2E"])


def _path_part(text: str) -> str:
    """``text`` as one path segment, percent-encoded as a client sends it."""
    return quote(text, safe="")


def _encoded(value: Any) -> str:
    text = json.dumps(value)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


#: timestamps that overflow a store's range once their offset is applied, or none at all
FAR = st.sampled_from(
    [
        "9999-12-31T23:59:59.999999-23:59",
        "0001-01-01T00:00:00+23:59",
        "0001-01-01T00:00:00+00:00",
        "9999-12-31T23:59:59+00:00",
        "2026-01-01T00:00:00",
        "2026-13-01T00:00:00+00:00",
        "",
    ]
)
#: cursors of the runs listing: arbitrary text, and forged ones of this service's form
RUN_CURSORS = st.one_of(
    TEXT,
    st.builds(lambda when, run: _encoded([when, run]), FAR, TEXT),
    st.builds(
        lambda when, run: _encoded([when.isoformat(), run]),
        st.datetimes(timezones=st.timezones()),
        TEXT,
    ),
    st.builds(_encoded, st.recursive(st.none() | st.integers() | st.text(), st.lists)),
)


@given(cursor=RUN_CURSORS)
@example(cursor=_encoded(["9999-12-31T23:59:59.999999-23:59", "br_x"]))
@example(cursor=_encoded(["0001-01-01T00:00:00+23:59", "br_x"]))
@SETTINGS
def test_a_forged_or_malformed_runs_cursor_is_a_problem(served: Served, cursor: str) -> None:
    answer = served.client.get("/v1/benchmark-runs", params={"cursor": cursor}, headers=served.org)
    if answer.status_code == 200:  # a forged cursor of the right form lists what follows it
        assert "data" in answer.json()
        return
    problem(answer, 400, 422)


@given(owner=st.one_of(st.none(), TEXT), position=st.integers() | st.floats() | TEXT)
@example(owner=None, position=10**30)
@example(owner=None, position=-(10**30))
@SETTINGS
def test_a_forged_or_malformed_criterion_cursor_is_a_problem(
    served: Served, owner: str | None, position: Any
) -> None:
    cursor = _encoded([served.task_run if owner is None else owner, position])
    answer = served.client.get(
        "/criterion-runs",
        params={"task_run_id": served.task_run, "cursor": cursor},
        headers=served.org,
    )
    if answer.status_code == 200:
        assert "data" in answer.json()
        return
    problem(answer, 400, 422)


#: the routes that take an id in their path: (method, path with {})
ID_ROUTES = [
    ("GET", "/v1/benchmark-runs/{}"),
    ("GET", "/v1/benchmark-runs/{}/report"),
    ("POST", "/v1/benchmark-runs/{}/cancel"),
    ("POST", "/benchmark-runs/{}/cancel"),
    ("GET", "/task-runs/{}"),
    ("GET", "/criterion-runs/{}"),
    ("POST", "/v1/task-runs/{}/start"),
    ("POST", "/v1/task-runs/{}/complete"),
    ("GET", "/v1/jobs/{}"),
]


@pytest.mark.parametrize(("method", "route"), ID_ROUTES)
@given(ident=TEXT.filter(lambda t: t.strip("/") not in ("", ".", "..")).map(_path_part) | RAW)
@example(ident="br_" + "9" * 10_000)
@settings(SETTINGS, max_examples=20)  # nine routes, two stores
def test_any_id_in_a_path_is_a_problem(served: Served, method: str, route: str, ident: str) -> None:
    """(An empty id, ``.`` and ``..`` are left out: a client resolves them in the URL before
    sending it, to another route; so is an id of slashes only, ``/`` percent-encoded or not,
    since the server's ASGI path is decoded: the route without its id.)"""
    body = {"sandbox": {"run_dir": "good-agent"}} if route.endswith("complete") else None
    answer = served.client.request(method, route.format(ident), json=body, headers=served.org)
    problem(answer, 400, 404, 405, 422)


@given(run_dir=TEXT)
@example(run_dir="a" * 300)  # one name longer than any filesystem allows (ENAMETOOLONG)
@example(run_dir="/".join(["a" * 200] * 30))
@example(run_dir="good-agent/" + "\u00e9" * 200)
@SETTINGS
def test_any_run_dir_is_a_problem(served: Served, run_dir: str) -> None:
    body = json.dumps(
        {
            "benchmark": "sftp-drops@1",
            "task_id": "sftp-claims-batch",
            "sandbox": {"run_dir": run_dir},
        }
    )
    answer = served.client.post(
        "/v1/verify-task",
        content=body,
        headers={**served.solver, "Content-Type": "application/json"},
    )
    if answer.status_code == 201:  # a name that does lead to a run folder
        return
    problem(answer, 400, 413, 422)


#: number texts as JSON carries them: huge, tiny, non-finite, overlong
NUMBERS = st.one_of(
    st.floats().map(repr).map(lambda t: t.replace("inf", "Infinity").replace("nan", "NaN")),
    st.integers().map(str),
    st.sampled_from(
        ["1e999", "-1e999", "1" * 5000, "1e-999", "5e-324", "-0", "0.1e400", '"Infinity"', '"1"']
    ),
)


@given(number=NUMBERS, field=st.sampled_from(["cost", "pass_threshold"]))
@example(number="1" + "0" * 400, field="cost")
@SETTINGS
def test_any_config_number_is_a_problem_or_accepted(
    served: Served, number: str, field: str
) -> None:
    body = (
        '{"benchmark": "sftp-drops@1", "task_id": "sftp-claims-batch", '
        '"sandbox": {"run_dir": "flawed-agent"}, "scored": false, '
        f'"config": {{"{field}": {number}}}}}'
    )
    answer = served.client.post(
        "/v1/verify-task",
        content=body,
        headers={**served.solver, "Content-Type": "application/json"},
    )
    if answer.status_code == 201:
        stored = answer.json()
        assert stored["score"] is None or 0 <= stored["score"] <= 1
        return
    problem(answer, 400, 422)


def _inline(weight: str) -> str:
    criterion = (
        '{"id": "c%d", "assert": "sftp-file-present", "description": "d", '
        '"path_glob": "sftp/*.txt", "weight": %s}'
    )
    criteria = ", ".join(criterion % (n, weight if n == 0 else "1") for n in range(2))
    task = f'{{"id": "t", "description": "d", "environments": ["sftp"], "criteria": [{criteria}]}}'
    return (
        f'{{"benchmark": "sftp-drops@1", "task": {task}, '
        '"sandbox": {"run_dir": "flawed-agent"}, "scored": false}'
    )


@given(weight=NUMBERS)
@example(weight="1e308")
@example(weight="1e-320")
@SETTINGS
def test_any_criterion_weight_is_a_problem_or_accepted(served: Served, weight: str) -> None:
    answer = served.client.post(
        "/v1/verify-task",
        content=_inline(weight),
        headers={**served.solver, "Content-Type": "application/json"},
    )
    if answer.status_code == 201:
        score = answer.json()["score"]
        assert score is None or 0 <= score <= 1
        return
    problem(answer, 400, 422)


def _sign_in_form(client: TestClient) -> str:
    page = client.get("/ui/login")
    assert page.status_code == 200
    return str(client.cookies.get("verial_form", path="/ui") or page.cookies.get("verial_form"))


FIELD = st.text(st.characters(codec="utf-8"), max_size=30)


@given(
    fields=st.lists(st.tuples(FIELD, FIELD), max_size=3000),
    huge=st.integers(min_value=0, max_value=3_000_000),
    token=st.booleans(),
)
@example(fields=[("key", "vk_x")] * 5000, huge=0, token=True)
@example(fields=[("a", "b")] * 100, huge=0, token=True)
@example(fields=[], huge=9_000_000, token=True)
@SETTINGS
def test_any_sign_in_form_is_refused_or_answered_without_a_500(
    served: Served, fields: list[tuple[str, str]], huge: int, token: bool
) -> None:
    with TestClient(served.app, base_url="http://127.0.0.1") as client:
        held = _sign_in_form(client)
        pairs = [*fields, ("key", "vk_" + "x" * huge)]
        if token:
            pairs.insert(0, ("form_token", held))
        body = "&".join(f"{quote(k)}={quote(v)}" for k, v in pairs)
        answer = client.post(
            "/ui/login",
            content=body,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            follow_redirects=False,
        )
    assert answer.status_code < 500, answer.text[:300]
    assert answer.status_code in (400, 401, 403, 413), answer.status_code
    assert "verial_key" not in answer.headers.get("set-cookie", "")
