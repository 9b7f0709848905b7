"""The service in-process (FastAPI's TestClient over a SQLite store in tmp_path): health,
problem+json, the auth matrix, verify-task (equal to the plugin's result, idempotent, never
outside --runs-root) and the three levels read back with pagination."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from service_support import EXAMPLES, FILES, RUNS, Api, child_env, count_rows

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import revoke_key

BENCH = "sftp-drops@1"
TASKS = ["sftp-referral-packet", "sftp-claims-batch"]


def verify_body(task: str = TASKS[0], run_dir: str = "good-agent", **extra: Any) -> dict[str, Any]:
    return {"benchmark": BENCH, "task_id": task, "sandbox": {"run_dir": run_dir}, **extra}


#: two related task runs for POST /v1/consistency-checks (no judge here: its criterion errs)
CONSISTENCY = {
    "tasks": [
        {"name": "letter", "sandbox": {"files": {"output.md": "CPT 72148"}}},
        {"name": "summary", "sandbox": {"files": {"output.json": '{"cpt": "72148"}'}}},
    ]
}


def is_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert set(body) == {"type", "title", "status", "detail"}
    assert body["status"] == status
    assert body["detail"] and "\n" not in body["detail"]
    return dict(body)


def verify(api: Api, key: str | None = None, **body: Any) -> Any:
    return api.client.post(
        "/v1/verify-task", json=verify_body(**body), headers=api.h(key or api.org)
    )


# -- health and errors -------------------------------------------------------------------------
def test_health_and_readiness(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok"}
    ready = api.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_readiness_fails_when_the_schema_is_not_this_versions(api: Api) -> None:
    from sqlalchemy import column, table, update

    version = table("alembic_version", column("version_num"))  # alembic's own table
    api.app.state.store.write(
        "t", lambda conn: conn.execute(update(version).values(version_num="0001"))
    )
    body = is_problem(api.client.get("/readyz"), 503)
    assert "0001" in body["detail"]


def test_every_error_is_problem_json(api: Api) -> None:
    assert "/nope" in is_problem(api.client.get("/nope"), 404)["detail"]
    is_problem(api.client.delete("/healthz"), 405)
    h = {**api.h(api.org), "content-type": "application/json"}
    assert (
        "not valid JSON"
        in is_problem(api.client.post("/v1/verify-task", content=b"{oops", headers=h), 400)[
            "detail"
        ]
    )
    deep = b"[" * 5000 + b"]" * 5000
    assert (
        "nested"
        in is_problem(api.client.post("/v1/verify-task", content=deep, headers=h), 400)["detail"]
    )
    big = b'{"benchmark": "' + b"x" * (9 * 1024 * 1024) + b'"}'
    is_problem(api.client.post("/v1/verify-task", content=big, headers=h), 413)
    # wrong types, unknown and missing fields: 400 naming the field
    bad = verify_body(extra_field=1)
    assert (
        "extra_field"
        in is_problem(api.client.post("/v1/verify-task", json=bad, headers=api.h(api.org)), 400)[
            "detail"
        ]
    )
    wrong = {"benchmark": BENCH, "task_id": 3, "sandbox": "good-agent"}
    detail = is_problem(
        api.client.post("/v1/verify-task", json=wrong, headers=api.h(api.org)), 400
    )["detail"]
    assert "task_id" in detail and "sandbox" in detail
    unknown = {**verify_body(), "benchmark": "nope@9"}
    # schema-valid, but naming what this server does not have: 422
    response = api.client.post("/v1/verify-task", json=unknown, headers=api.h(api.org))
    assert "unknown benchmark" in is_problem(response, 422)["detail"]
    assert "no task" in is_problem(verify(api, task="no-such-task"), 422)["detail"]


def _flat(routes: Any) -> Any:
    """Every route, those of included routers too (FastAPI keeps those behind the router)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _flat(inner.routes)
        else:
            yield route


def test_openapi_lists_every_route(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    routes = {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}
    assert routes == {
        ("GET", "/healthz"),
        ("GET", "/readyz"),
        ("POST", "/verify-task"),
        ("POST", "/v1/verify-task"),
        ("GET", "/v1/jobs/{job_id}"),
        ("POST", "/v1/consistency-checks"),
        # the internal flow (an org key)
        ("POST", "/benchmark-runs"),
        ("POST", "/benchmark-runs/{run_id}/cancel"),
        ("GET", "/task-runs/{task_run_id}"),
        ("GET", "/criterion-runs"),
        ("GET", "/criterion-runs/{criterion_run_id}"),
        # the v1 flow (a solver key or the run's bearer token)
        ("GET", "/v1/benchmark-runs"),
        ("GET", "/v1/benchmark-runs/{run_id}"),
        ("GET", "/v1/benchmark-runs/{run_id}/report"),
        ("POST", "/v1/benchmark-runs"),
        ("POST", "/v1/task-runs/{task_run_id}/complete"),
        ("POST", "/v1/task-runs/{task_run_id}/start"),
        ("POST", "/v1/benchmark-runs/{run_id}/cancel"),
    }
    served = {
        (method, route.path)
        for route in _flat(api.app.routes)
        for method in getattr(route, "methods", ()) or ()
        if method != "HEAD"
        and not route.path.startswith(("/docs", "/openapi"))
        and getattr(route, "include_in_schema", True)  # the browser's pages (HTML)
    }
    assert served == routes


# -- auth --------------------------------------------------------------------------------------
def test_auth_matrix(api: Api) -> None:
    made = verify(api).json()
    ids = {
        "run": made["benchmark_run_id"],
        "task": made["task_run_id"],
        "crit": made["criterion_runs"][0]["id"],
    }
    job = api.client.post("/v1/verify-task?async=true", json=verify_body(), headers=api.h(api.org))
    routes = [
        ("POST", "/v1/verify-task", verify_body()),
        ("POST", "/v1/verify-task?async=true", verify_body()),
        ("GET", job.headers["location"], None),
        ("POST", "/v1/consistency-checks", CONSISTENCY),
        ("GET", "/v1/benchmark-runs", None),
        ("GET", f"/v1/benchmark-runs/{ids['run']}", None),
        ("GET", f"/v1/benchmark-runs/{ids['run']}/report", None),
        ("GET", f"/task-runs/{ids['task']}", None),
        ("GET", f"/criterion-runs/{ids['crit']}", None),
        ("GET", f"/criterion-runs?task_run_id={ids['task']}", None),
    ]
    revoked = api.solver + "x"  # a well-formed key nobody holds
    store = api.app.state.store
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.service._keys import create_key

    gone, gone_key = create_key(store, "solver")
    revoke_key(store, gone.id)
    cases = {
        "none": ({}, 401),
        "malformed": ({"Authorization": f"Token {api.org}"}, 401),
        "no bearer value": ({"Authorization": "Bearer "}, 401),
        "wrong": (api.h(revoked), 401),
        "revoked": (api.h(gone_key), 401),
        "org-looking solver": (api.h("vk_" + api.solver.removeprefix("vrl_slv_")), 401),
    }
    run = _create(api, api.org)
    lifecycle = [
        ("POST", "/v1/benchmark-runs", {"benchmark": BENCH}),
        (
            "POST",
            f"/v1/task-runs/{run['task_runs'][0]['id']}/complete",
            {"sandbox": {"run_dir": "good-agent"}},
        ),
        ("POST", f"/v1/task-runs/{run['task_runs'][1]['id']}/start", None),
        ("POST", f"/v1/benchmark-runs/{run['id']}/cancel", None),
        ("POST", "/benchmark-runs", {"benchmark": BENCH}),
    ]
    other_run = _create(api, api.org)
    lifecycle.append(("POST", f"/benchmark-runs/{other_run['id']}/cancel", None))
    for method, path, body in lifecycle:
        for headers, status in cases.values():
            is_problem(api.client.request(method, path, json=body, headers=headers), status)
        if "benchmark-runs/br_" in path or "task-runs" in path:  # the org's run: hidden
            is_problem(api.client.request(method, path, json=body, headers=api.h(api.solver)), 404)
        elif path == "/benchmark-runs":  # the internal flow creates with an org key only
            is_problem(api.client.request(method, path, json=body, headers=api.h(api.solver)), 403)
        ok = api.client.request(method, path, json=body, headers=api.h(api.org))
        assert ok.status_code in (200, 201), (path, ok.text)
    for method, path, body in routes:
        for name, (headers, status) in cases.items():
            response = api.client.request(method, path, json=body, headers=headers)
            problem = is_problem(response, status)
            assert response.headers.get("www-authenticate") == "Bearer", (name, path)
            assert api.org not in response.text and api.solver not in response.text
            assert gone_key not in problem["detail"]
        ok = api.client.request(method, path, json=body, headers=api.h(api.org))
        assert ok.status_code in (200, 201, 202), (path, ok.text)
        # the org made these objects: a solver key may not see them (404, not 403)
        other = api.client.request(method, path, json=body, headers=api.h(api.solver))
        if path.startswith(("/v1/verify-task", "/v1/consistency-checks")):
            assert other.status_code in (201, 202)
        elif path == "/v1/benchmark-runs":
            assert ids["run"] not in other.text
        else:
            is_problem(other, 404)


def test_solver_sees_its_own_runs_and_org_sees_all(api: Api) -> None:
    mine = verify(api, key=api.solver).json()
    theirs = verify(api, key=api.org).json()
    listed = api.client.get("/v1/benchmark-runs", headers=api.h(api.solver)).json()["data"]
    assert [r["id"] for r in listed] == [mine["benchmark_run_id"]]
    listed = api.client.get("/v1/benchmark-runs", headers=api.h(api.org)).json()["data"]
    assert {r["id"] for r in listed} == {mine["benchmark_run_id"], theirs["benchmark_run_id"]}
    # task runs are an org key's to read (Verial's internal endpoint), the solver's own too
    is_problem(api.client.get(f"/task-runs/{mine['task_run_id']}", headers=api.h(api.solver)), 404)
    got = api.client.get(f"/task-runs/{mine['task_run_id']}", headers=api.h(api.org))
    assert got.status_code == 200 and got.json()["score"] == mine["score"]


# -- verify-task -------------------------------------------------------------------------------
#: The tests reading ``plugin_reports`` (two child pytest sessions) run in one xdist group:
#: spread over both workers, as ungrouped tests are, each worker built the module fixture
#: again (twice, or more when its share of the module was interrupted by another module's).
@pytest.fixture(scope="module")
def plugin_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The plugin's --verial-report of files.verial.yaml on each captured run."""
    out: dict[str, dict[str, Any]] = {}
    base = tmp_path_factory.mktemp("plugin")
    for run in ("good-agent", "flawed-agent"):
        report = base / f"{run}.json"
        every = base / f"{run}-all.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                str(EXAMPLES),
                "--verial-run",
                str(RUNS / run),
                "--verial-report",
                str(every),
                "--verial-store",
                "none",
                "-q",
            ],
            cwd=base,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        out[f"{run}-all"] = json.loads(every.read_text())
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                str(FILES),
                "--verial-run",
                str(RUNS / run),
                "--verial-report",
                str(report),
                "--verial-store",
                "none",
                "-q",
            ],
            cwd=base,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert report.exists(), done.stdout + done.stderr
        out[run] = json.loads(report.read_text())
    return out


#: a sandbox's absolute path in the plugin's texts (the service names files relative to it)
_SANDBOX = re.compile(re.escape(str(RUNS.resolve())) + r"/[^/]+/[^/]+/")


def _relative(details: str | None) -> str | None:
    return None if details is None else _SANDBOX.sub("", details)


def _essence(task: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": task["status"],
        "verdict": task["verdict"],
        "score": task["score"],
        "axes": task["axes"],
        "all_passed": task["all_passed"],
        "counts": task["counts"],
        "criteria": [
            (c["criterion_id"], c["status"], c["score"], c["passed"], _relative(c["details"]))
            for c in task["criterion_runs"]
        ],
    }


@pytest.mark.xdist_group("plugin-reports")  # see plugin_reports
@pytest.mark.parametrize("run", ["good-agent", "flawed-agent"])
def test_verify_task_equals_the_plugin(
    api: Api, run: str, plugin_reports: dict[str, dict[str, Any]]
) -> None:
    expected = {
        t["task_key"]: t for r in plugin_reports[run]["benchmark_runs"] for t in r["task_runs"]
    }
    assert set(expected) == set(TASKS)
    verdicts = set()
    for task in TASKS:
        got = verify(api, task=task, run_dir=run)
        assert got.status_code == 201, got.text
        body = got.json()
        assert body["task_run_id"].startswith("tr_")
        assert _essence(body) == _essence(expected[task])
        verdicts.add(body["verdict"])
        assert body["confidence"] == 1.0  # deterministic criteria only
        # what was stored reads back the same
        again = api.client.get(f"/task-runs/{body['task_run_id']}", headers=api.h(api.org))
        assert _essence(again.json()) == _essence(expected[task])
        crit = body["criterion_runs"][0]
        level3 = api.client.get(f"/criterion-runs/{crit['id']}", headers=api.h(api.org))
        assert level3.json()["evidence"] == crit["evidence"]
    if run == "good-agent":
        assert verdicts == {"pass"}
    else:
        assert verdicts != {"pass"}


def test_scored_run_hides_the_rubric_from_the_answer_and_from_a_solver(api: Api) -> None:
    body = verify(api, key=api.solver, run_dir="flawed-agent", scored=True).json()
    for crit in body["criterion_runs"]:
        assert crit["details"] is None and crit["evidence"] is None and crit["assert"] is None
    assert body["feedback"] is None and body["snapshot"] is None
    solver = api.h(api.solver)
    is_problem(api.client.get(f"/task-runs/{body['task_run_id']}", headers=solver), 404)
    crit = api.client.get(f"/criterion-runs/{body['criterion_runs'][0]['id']}", headers=solver)
    is_problem(crit, 404)
    report = api.client.get(
        f"/v1/benchmark-runs/{body['benchmark_run_id']}/report", headers=solver
    ).json()
    for t in report["benchmark_runs"][0]["task_runs"]:
        assert all(c["evidence"] is None and c["assert"] is None for c in t["criterion_runs"])
    # the org key sees everything of the same run
    full = api.client.get(
        f"/criterion-runs/{body['criterion_runs'][0]['id']}", headers=api.h(api.org)
    ).json()
    assert full["evidence"] is not None and full["assert"]


def test_idempotent_replay_stores_nothing_twice(api: Api) -> None:
    h = {**api.h(api.org), "Idempotency-Key": "req-1"}
    first = api.client.post("/v1/verify-task", json=verify_body(), headers=h)
    before = count_rows(api.app.state.store)
    again = api.client.post("/v1/verify-task", json=verify_body(), headers=h)
    assert again.status_code == first.status_code == 201
    assert again.json() == first.json()
    assert count_rows(api.app.state.store) == before
    changed = api.client.post(
        "/v1/verify-task", json=verify_body(run_dir="flawed-agent"), headers=h
    )
    detail = is_problem(changed, 422)["detail"]
    assert "Idempotency-Key" in detail and "req-1" in detail
    assert count_rows(api.app.state.store) == before
    # keys are per API key: the solver's "req-1" is its own request
    other = api.client.post(
        "/v1/verify-task",
        json=verify_body(),
        headers={**api.h(api.solver), "Idempotency-Key": "req-1"},
    )
    assert other.status_code == 201 and other.json()["task_run_id"] != first.json()["task_run_id"]
    # without a key, each call is a new task run
    third = verify(api)
    assert third.json()["task_run_id"] != first.json()["task_run_id"]
    bad = {**api.h(api.org), "Idempotency-Key": "x" * 300}
    is_problem(api.client.post("/v1/verify-task", json=verify_body(), headers=bad), 400)


def test_run_dir_never_leaves_the_runs_root(api: Api, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / TASKS[0]).mkdir(parents=True)
    for run_dir in ("/etc", "../runs/good-agent", "good-agent/../../runs/good-agent", "a\\b"):
        is_problem(verify(api, run_dir=run_dir), 422)
    assert "no run folder" in is_problem(verify(api, run_dir="nobody"), 422)["detail"]
    assert count_rows(api.app.state.store)["task_runs"] == 0


def test_links_out_of_the_runs_root_are_refused(tmp_path: Path) -> None:
    """A run folder, a task folder or a file inside it that links outside --runs-root."""
    import shutil
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from pytest_verial.service import create_app

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.service._keys import create_key

    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret"
    shutil.copytree(RUNS / "good-agent", secret)
    (root / "linked-run").symlink_to(secret)
    task_link = root / "task-link"
    task_link.mkdir()
    (task_link / TASKS[0]).symlink_to(secret / TASKS[0])
    file_link = root / "file-link"
    shutil.copytree(RUNS / "good-agent", file_link)
    inner = next(p for p in (file_link / TASKS[0]).rglob("*") if p.is_file())
    inner.unlink()
    inner.symlink_to(tmp_path / "secret" / inner.relative_to(file_link))
    app = create_app(f"sqlite:///{tmp_path / 's.db'}", [FILES], root)
    _, key = create_key(app.state.store, "org")
    with TestClient(app) as client:
        for run_dir in ("linked-run", "task-link", "file-link"):
            response = client.post(
                "/v1/verify-task",
                json=verify_body(run_dir=run_dir),
                headers={"Authorization": f"Bearer {key}"},
            )
            assert "outside --runs-root" in is_problem(response, 422)["detail"], run_dir


# -- reading -----------------------------------------------------------------------------------
def test_pagination_and_bad_limits(api: Api) -> None:
    made = [verify(api, task=TASKS[i % 2]).json()["benchmark_run_id"] for i in range(5)]
    h = api.h(api.org)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = api.client.get("/v1/benchmark-runs", params=params, headers=h).json()
        assert len(page["data"]) <= 2
        seen += [r["id"] for r in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == made[::-1]  # newest first, each once
    for limit in ("0", "501", "-1", "abc", "1.5", ""):
        detail = is_problem(
            api.client.get("/v1/benchmark-runs", params={"limit": limit}, headers=h), 400
        )["detail"]
        assert "limit" in detail
    assert (
        "cursor"
        in is_problem(
            api.client.get("/v1/benchmark-runs", params={"cursor": "garbage!"}, headers=h), 422
        )["detail"]
    )
    one = api.client.get("/v1/benchmark-runs", params={"limit": 500}, headers=h).json()
    assert len(one["data"]) == 5 and one["next_cursor"] is None
    other = api.client.get(
        "/v1/benchmark-runs", params={"benchmark": "nothing@1"}, headers=h
    ).json()
    assert other == {"data": [], "next_cursor": None}


def test_benchmark_run_progress_and_report(api: Api) -> None:
    body = verify(api, task=TASKS[1], run_dir="flawed-agent").json()
    h = api.h(api.org)
    run = api.client.get(f"/v1/benchmark-runs/{body['benchmark_run_id']}", headers=h).json()
    assert run["progress"]["task_runs"] == 1 and run["progress"]["done"] == 1
    assert run["task_runs"][0]["id"] == body["task_run_id"]
    assert run["benchmark"]["ref"] == BENCH
    report = api.client.get(f"/v1/benchmark-runs/{body['benchmark_run_id']}/report", headers=h)
    data = report.json()
    assert data["schema"] and data["benchmark_runs"][0]["task_runs"][0]["score"] == body["score"]
    from pytest_verial import Report

    Report.from_json(data)  # the report's own schema
    junit = api.client.get(
        f"/v1/benchmark-runs/{body['benchmark_run_id']}/report",
        params={"format": "junit"},
        headers=h,
    )
    assert junit.headers["content-type"].startswith("application/xml")
    assert "<testsuites" in junit.text
    is_problem(
        api.client.get(
            f"/v1/benchmark-runs/{body['benchmark_run_id']}/report",
            params={"format": "pdf"},
            headers=h,
        ),
        400,
    )
    for path in ("v1/benchmark-runs/br_NOPE", "task-runs/tr_NOPE", "criterion-runs/cr_NOPE"):
        assert "NOPE" in is_problem(api.client.get(f"/{path}", headers=h), 404)["detail"]


@pytest.mark.xdist_group("plugin-reports")  # see plugin_reports
def test_runs_scored_by_pytest_read_the_same_way(
    api: Api, plugin_reports: dict[str, dict[str, Any]]
) -> None:
    from pytest_verial import Report

    result = api.app.state.store.import_report(Report.from_json(plugin_reports["good-agent"]))
    run_id = result.run_ids[0]
    h = api.h(api.org)
    run = api.client.get(f"/v1/benchmark-runs/{run_id}", headers=h).json()
    assert run["progress"]["task_runs"] == len(TASKS)
    task = api.client.get(f"/task-runs/{run['task_runs'][0]['id']}", headers=h).json()
    assert task["verdict"] == "pass"
    report = api.client.get(f"/v1/benchmark-runs/{run_id}/report", headers=h).json()
    assert (
        report["benchmark_runs"][0]["task_runs"]
        == plugin_reports["good-agent"]["benchmark_runs"][0]["task_runs"]
    )
    # a pytest run belongs to no solver key
    is_problem(api.client.get(f"/v1/benchmark-runs/{run_id}", headers=api.h(api.solver)), 404)


# -- Verial's run API --------------------------------------------------------------------------
def _create(api: Api, key: str, **body: Any) -> dict[str, Any]:
    made = api.client.post(
        "/v1/benchmark-runs", json={"benchmark": BENCH, **body}, headers=api.h(key)
    )
    assert made.status_code == 201, made.text
    return dict(made.json())


def _complete(api: Api, token: str, tr_id: str, run_dir: str) -> Any:
    return api.client.post(
        f"/v1/task-runs/{tr_id}/complete",
        json={"sandbox": {"run_dir": run_dir}},
        headers=api.h(token),
    )


@pytest.mark.xdist_group("plugin-reports")  # see plugin_reports
@pytest.mark.parametrize("run", ["good-agent", "flawed-agent"])
def test_a_run_completed_task_by_task_equals_the_plugins_run(
    api: Api, run: str, plugin_reports: dict[str, dict[str, Any]]
) -> None:
    made = _create(api, api.solver, agent="agent-x")
    token = made["bearer_token"]
    assert token.startswith("vrl_run_") and made["status"] == "running"
    assert made["phase"] == "created" and made["benchmark_run_id"] == made["id"]
    assert [t["task_key"] for t in made["task_runs"]] == TASKS
    assert all(t["phase"] == "created" for t in made["task_runs"])
    for index, task in enumerate(made["task_runs"]):
        done = _complete(api, token, task["id"], run)
        assert done.status_code == 200, done.text
        last = index == len(TASKS) - 1
        assert done.json()["benchmark_run_status"] == ("completed" if last else "running")
        # completing twice is refused, nothing changes
        assert (
            "already completed" in is_problem(_complete(api, token, task["id"], run), 409)["detail"]
        )
    got = api.client.get(f"/v1/benchmark-runs/{made['id']}", headers=api.h(token)).json()
    expected = plugin_reports[run]["benchmark_runs"][0]
    assert got["status"] == "completed" and got["progress"]["fraction"] == 1.0
    for name in ("score", "verdict", "axes", "strict_success", "counts"):
        assert got[name] == expected[name], name
    report = api.client.get(f"/v1/benchmark-runs/{made['id']}/report", headers=api.h(token))
    data = report.json()
    assert data["session"]["status"] == "completed"
    assert [_essence(t) for t in data["benchmark_runs"][0]["task_runs"]] == [
        _essence(t) for t in expected["task_runs"]
    ]


def test_run_tokens_see_their_run_only_and_expire(api: Api) -> None:
    from sqlalchemy import column, table, update

    run_tokens = table("run_tokens", column("expires_at"))  # the store's SQL schema

    one = _create(api, api.solver)
    two = _create(api, api.org)
    tok1 = one["bearer_token"]
    # another run's objects are invisible to this token
    is_problem(api.client.get(f"/v1/benchmark-runs/{two['id']}", headers=api.h(tok1)), 404)
    is_problem(_complete(api, tok1, two["task_runs"][0]["id"], "good-agent"), 404)
    listed = api.client.get("/v1/benchmark-runs", headers=api.h(tok1)).json()["data"]
    assert [r["id"] for r in listed] == [one["id"]]
    # a run token neither verifies nor creates
    assert "bearer token" in is_problem(verify(api, key=tok1), 403)["detail"]
    created = api.client.post("/v1/benchmark-runs", json={"benchmark": BENCH}, headers=api.h(tok1))
    is_problem(created, 403)
    # the solver that created run one sees it; the other solver-less org run is the org's
    assert api.client.get(f"/v1/benchmark-runs/{one['id']}", headers=api.h(api.solver)).is_success
    is_problem(api.client.get(f"/v1/benchmark-runs/{two['id']}", headers=api.h(api.solver)), 404)
    # expired: 401 like any bad key
    api.app.state.store.write(
        "t",
        lambda conn: conn.execute(update(run_tokens).values(expires_at=datetime(2000, 1, 1))),
    )
    is_problem(api.client.get(f"/v1/benchmark-runs/{one['id']}", headers=api.h(tok1)), 401)
    is_problem(_complete(api, tok1, one["task_runs"][0]["id"], "good-agent"), 401)


def test_cancel_keeps_completed_task_runs(api: Api) -> None:
    made = _create(api, api.org)
    first, second = made["task_runs"]
    assert _complete(api, made["bearer_token"], first["id"], "good-agent").status_code == 200
    cancelled = api.client.post(f"/v1/benchmark-runs/{made['id']}/cancel", headers=api.h(api.org))
    assert cancelled.status_code == 200, cancelled.text
    body = cancelled.json()
    assert body["status"] == "cancelled"
    states = {t["id"]: (t["status"], t["verdict"]) for t in body["task_runs"]}
    assert states[first["id"]] == ("completed", "pass")
    assert states[second["id"]][0] == "cancelled"
    is_problem(
        api.client.post(f"/v1/benchmark-runs/{made['id']}/cancel", headers=api.h(api.org)), 409
    )
    assert (
        "cancelled"
        in is_problem(_complete(api, made["bearer_token"], second["id"], "good-agent"), 409)[
            "detail"
        ]
    )
    report = api.client.get(f"/v1/benchmark-runs/{made['id']}/report", headers=api.h(api.org))
    assert report.json()["session"]["status"] == "cancelled"


def test_a_scored_run_completes_without_showing_its_rubric(api: Api) -> None:
    made = _create(api, api.solver, scored=True)
    done = _complete(api, made["bearer_token"], made["task_runs"][0]["id"], "flawed-agent").json()
    assert all(c["details"] is None and c["evidence"] is None for c in done["criterion_runs"])
    assert done["snapshot"] is None and done["feedback"] is None
    # task runs are read with an org key only, and then whole
    path = f"/task-runs/{made['task_runs'][0]['id']}"
    is_problem(api.client.get(path, headers=api.h(made["bearer_token"])), 404)
    task = api.client.get(path, headers=api.h(api.org)).json()
    assert all(c["assert"] and c["details"] for c in task["criterion_runs"])


def test_config_gives_the_task_runs_facts_and_nothing_else(api: Api) -> None:
    skipped = verify(api, config={"skip_verification": True, "cost": 0.5}).json()
    assert skipped["status"] == "skipped" and skipped["score"] is None
    assert {c["status"] for c in skipped["criterion_runs"]} == {"skipped"}
    scored = verify(api, config={"cost": 0.5, "task_type": "referral"}).json()
    assert scored["verdict"] == "pass"
    for bad, field in (
        ({"judge_base_url": "http://evil"}, "judge_base_url"),
        ({"judge_api_key_env": "HOME"}, "judge_api_key_env"),
        ({"cost": -1}, "cost"),
        ({"pass_threshold": 2}, "pass_threshold"),
    ):
        detail = is_problem(verify(api, config=bad), 400)["detail"]
        assert field in detail, (bad, detail)


def test_an_inline_task_scores_like_the_same_task_of_a_benchmark(api: Api) -> None:
    import yaml

    task = yaml.safe_load(FILES.read_text(encoding="utf-8"))["tasks"][1]
    for run_dir in ("good-agent", "flawed-agent"):
        named = verify(api, task=task["id"], run_dir=run_dir).json()
        inline = api.client.post(
            "/v1/verify-task",
            json={"task": task, "sandbox": {"run_dir": run_dir}},
            headers=api.h(api.org),
        )
        assert inline.status_code == 201, inline.text
        assert _essence(inline.json()) == _essence(named)
    broken = {**task, "criteria": [{**task["criteria"][0], "weight": "heavy"}]}
    detail = is_problem(
        api.client.post(
            "/v1/verify-task",
            json={"task": broken, "sandbox": {"run_dir": "good-agent"}},
            headers=api.h(api.org),
        ),
        422,
    )["detail"]
    assert "criterion" in detail and "weight" in detail
    for body in (
        {"sandbox": {"run_dir": "good-agent"}},
        {"task": task, "benchmark": BENCH, "task_id": "x", "sandbox": {"run_dir": "good-agent"}},
    ):
        detail = is_problem(
            api.client.post("/v1/verify-task", json=body, headers=api.h(api.org)), 400
        )["detail"]
        assert "benchmark and task_id, or task" in detail


def test_a_broken_store_is_a_503_that_names_no_path(api: Api) -> None:
    api.app.state.store.write("t", lambda conn: conn.exec_driver_sql("DROP TABLE run_owners"))
    response = api.client.get("/v1/benchmark-runs", headers=api.h(api.org))
    detail = is_problem(response, 503)["detail"]
    assert "store is unavailable" in detail
    assert "run_owners" not in response.text and "store.db" not in response.text
    assert "postgresql" not in response.text


@pytest.mark.xdist_group("plugin-reports")  # see plugin_reports
@pytest.mark.parametrize("run", ["good-agent", "flawed-agent"])
def test_every_example_task_scores_as_the_plugin_scores_it(
    api: Api, run: str, plugin_reports: dict[str, dict[str, Any]]
) -> None:
    """Each task run of every example benchmark, verified one by one over HTTP, equals the
    plugin's task run on the same run folder."""
    count = 0
    for bench in plugin_reports[f"{run}-all"]["benchmark_runs"]:
        for task in bench["task_runs"]:
            body = {
                "benchmark": bench["benchmark"]["ref"],
                "task_id": task["task_key"],
                "sandbox": {"run_dir": run},
            }
            got = api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))
            assert got.status_code == 201, got.text
            assert _essence(got.json()) == _essence(task), (
                bench["benchmark"]["ref"],
                task["task_key"],
            )
            count += 1
    assert count >= 20


@pytest.mark.xdist_group("plugin-reports")  # see plugin_reports
@pytest.mark.parametrize("run", ["good-agent", "flawed-agent"])
def test_every_example_benchmark_run_over_the_run_api_equals_the_plugins(
    api: Api, run: str, plugin_reports: dict[str, dict[str, Any]]
) -> None:
    for expected in plugin_reports[f"{run}-all"]["benchmark_runs"]:
        ref = expected["benchmark"]["ref"]
        made = api.client.post(
            "/v1/benchmark-runs", json={"benchmark": ref}, headers=api.h(api.solver)
        ).json()
        assert [t["task_key"] for t in made["task_runs"]] == [
            t["task_key"] for t in expected["task_runs"]
        ], ref
        for task in made["task_runs"]:
            assert _complete(api, made["bearer_token"], task["id"], run).status_code == 200
        got = api.client.get(f"/v1/benchmark-runs/{made['id']}", headers=api.h(api.solver)).json()
        for name in ("status", "score", "verdict", "axes", "strict_success", "counts"):
            assert got[name] == expected[name], (ref, name)
        report = api.client.get(
            f"/v1/benchmark-runs/{made['id']}/report", headers=api.h(api.solver)
        ).json()
        assert [_essence(t) for t in report["benchmark_runs"][0]["task_runs"]] == [
            _essence(t) for t in expected["task_runs"]
        ], ref


def test_start_gives_the_task_not_its_rubric(api: Api) -> None:
    made = _create(api, api.solver, scored=True)
    task = made["task_runs"][0]
    assert task["phase"] == "created" and task["start_url"].endswith("/start")
    token = api.h(made["bearer_token"])
    started = api.client.post(task["start_url"], headers=token)
    assert started.status_code == 200, started.text
    body = started.json()
    assert body["phase"] == "started" and body["task_item"]["instruction"]
    assert "criteria" not in started.text and "assertion" not in started.text
    again = api.client.post(task["start_url"], headers=token).json()
    assert again["started_at"] == body["started_at"]
    other = _create(api, api.org)
    is_problem(api.client.post(other["task_runs"][0]["start_url"], headers=token), 404)
    assert _complete(api, made["bearer_token"], task["id"], "good-agent").status_code == 200
    assert (
        "already completed"
        in is_problem(api.client.post(task["start_url"], headers=token), 409)["detail"]
    )


def test_every_answer_matches_the_schema_openapi_documents(api: Api) -> None:
    """Each success body of a user's flow (verify, async job, the run API, the three reads,
    the list, cancel) validates against /openapi.json's schema for its route and status."""
    import jsonschema

    spec = api.client.get("/openapi.json").json()

    def check(method: str, route: str, response: Any) -> dict[str, Any]:
        doc = spec["paths"][route][method]["responses"][str(response.status_code)]
        schema = {**doc["content"]["application/json"]["schema"], "components": spec["components"]}
        body: dict[str, Any] = response.json()
        jsonschema.Draft202012Validator(schema).validate(body)
        return body

    h = api.h(api.org)
    made = check("post", "/v1/verify-task", verify(api))
    queued = api.client.post("/v1/verify-task?async=true", json=verify_body(), headers=h)
    check("post", "/v1/verify-task", queued)
    for _ in range(200):
        job = check(
            "get", "/v1/jobs/{job_id}", api.client.get(queued.headers["location"], headers=h)
        )
        if job["status"] == "done":
            break
        time.sleep(0.05)
    assert job["status"] == "done" and job["result"]["criterion_runs"]
    run = check(
        "post",
        "/v1/benchmark-runs",
        api.client.post("/v1/benchmark-runs", json={"benchmark": BENCH}, headers=h),
    )
    first = run["task_runs"][0]["id"]
    check(
        "post",
        "/v1/task-runs/{task_run_id}/start",
        api.client.post(f"/v1/task-runs/{first}/start", headers=h),
    )
    body = {"sandbox": {"run_dir": "good-agent"}}
    check(
        "post",
        "/v1/task-runs/{task_run_id}/complete",
        api.client.post(f"/v1/task-runs/{first}/complete", json=body, headers=h),
    )
    check(
        "post",
        "/v1/benchmark-runs/{run_id}/cancel",
        api.client.post(f"/v1/benchmark-runs/{run['id']}/cancel", headers=h),
    )
    check("get", "/v1/benchmark-runs", api.client.get("/v1/benchmark-runs", headers=h))
    check(
        "get",
        "/v1/benchmark-runs/{run_id}",
        api.client.get(f"/v1/benchmark-runs/{made['benchmark_run_id']}", headers=h),
    )
    check(
        "get",
        "/task-runs/{task_run_id}",
        api.client.get(f"/task-runs/{made['task_run_id']}", headers=h),
    )
    crit = made["criterion_runs"][0]["id"]
    check(
        "get",
        "/criterion-runs/{criterion_run_id}",
        api.client.get(f"/criterion-runs/{crit}", headers=h),
    )
    check(
        "get",
        "/criterion-runs",
        api.client.get("/criterion-runs", params={"task_run_id": made["task_run_id"]}, headers=h),
    )
    internal = check(
        "post",
        "/benchmark-runs",
        api.client.post("/benchmark-runs", json={"benchmark": BENCH}, headers=h),
    )
    check(
        "post",
        "/benchmark-runs/{run_id}/cancel",
        api.client.post(f"/benchmark-runs/{internal['id']}/cancel", headers=h),
    )
    check(
        "get",
        "/v1/benchmark-runs/{run_id}/report",
        api.client.get(f"/v1/benchmark-runs/{made['benchmark_run_id']}/report", headers=h),
    )
    check("get", "/healthz", api.client.get("/healthz"))
    check("get", "/readyz", api.client.get("/readyz"))


def test_a_nul_character_in_the_url_is_a_400_not_a_store_failure(api: Api) -> None:
    """Found by the fuzzer on PostgreSQL (text cannot hold NUL): it answered 503."""
    h = api.h(api.org)
    for url in (
        "/v1/benchmark-runs?agent=a%00b",
        "/v1/benchmark-runs?benchmark=%00",
        "/task-runs/tr_%00",
        "/criterion-runs/%00",
        "/v1/jobs/job_%00",
        "/v1/benchmark-runs/br_%00/report",
    ):
        problem = is_problem(api.client.get(url, headers=h), 400)
        assert "NUL" in problem["detail"], url
    assert api.client.get("/readyz").status_code == 200


def test_the_verdict_threshold_is_the_task_s_then_the_callers(api: Api) -> None:
    """task > benchmark > the caller's ``config.pass_threshold`` > 0.9, as under pytest."""
    import yaml

    tasks = yaml.safe_load(FILES.read_text(encoding="utf-8"))["tasks"]
    partial = []
    for task in tasks:
        body = verify(api, task=task["id"], run_dir="flawed-agent").json()
        if 0 < body["score"] < 0.9:
            partial.append((task, body["score"]))
    assert partial, "the flawed agent scores no task between 0 and 0.9"
    task, score = partial[0]

    def verdict(task_body: dict[str, Any], config: dict[str, Any]) -> str:
        response = api.client.post(
            "/v1/verify-task",
            json={"task": task_body, "sandbox": {"run_dir": "flawed-agent"}, "config": config},
            headers=api.h(api.org),
        )
        assert response.status_code == 201, response.text
        return str(response.json()["verdict"])

    assert verdict(task, {}) == "partial"
    assert verdict(task, {"pass_threshold": score}) == "pass"
    assert verdict({**task, "pass_threshold": 1.0}, {"pass_threshold": score}) == "partial"
