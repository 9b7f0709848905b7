"""No server path in any answer (issue 30): a whole session of the service, every key scope
(org key, solver key, run token), sync and async, run-folder, archive and inline sandboxes,
successes and errors, the judge absent and unreachable; every body and every header of every
answer is read for an absolute path of the server (its runs root, benchmark folder, working
directory, home, temporary folders, the store's folder) or its judge's endpoint."""

from __future__ import annotations

import base64
import io
import re
import shutil
import tarfile
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from service_support import EXAMPLES, RUNS

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

#: an endpoint nothing listens on: the judge is unreachable
JUDGE_URL = "http://127.0.0.1:9/v1"
BENCH = "sftp-drops@1"
TASKS = ("sftp-referral-packet", "sftp-claims-batch")


@dataclass
class Recorder:
    """A client that keeps every answer it got."""

    client: Any
    seen: list[tuple[str, str, Any]] = field(default_factory=list)

    def __call__(self, method: str, url: str, key: str | None = None, **kw: Any) -> Any:
        headers = dict(kw.pop("headers", {}))
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        response = self.client.request(method, url, headers=headers, **kw)
        self.seen.append((method, url, response))
        return response


def _tar(folder: Path) -> str:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                tar.add(path, arcname=path.relative_to(folder).as_posix())
    return base64.b64encode(out.getvalue()).decode()


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Recorder, list[str]]]:
    """The service over a runs root of its own (the examples' run folders, one with a broken
    run.yaml) with an unreachable judge; the server's folders a client must never see."""
    root = tmp_path / "runs-root"
    shutil.copytree(RUNS, root)
    broken = root / "broken-agent"
    shutil.copytree(RUNS / "good-agent", broken)
    (broken / "run.yaml").write_text("agent: [unclosed\n", encoding="utf-8")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store' / 'results.db'}"
        (tmp_path / "store").mkdir()
    else:
        url = str(request.getfixturevalue("service_postgres").new_database())
    judge = {"judge_model": "gpt-4o-mini", "judge_base_url": JUDGE_URL}
    app = create_app(url, [EXAMPLES], root, judge=judge)
    with TestClient(app) as client:
        forbidden = [
            str(tmp_path),
            str(root),
            str(EXAMPLES.resolve()),
            str(Path.cwd()),
            str(Path.home()) + "/",
            tempfile.gettempdir() + "/",
            JUDGE_URL,
            "127.0.0.1:9",
        ]
        yield Recorder(client), forbidden
        app.state.store.close()


def _poll(call: Recorder, location: str, key: str) -> dict[str, Any]:
    for _ in range(600):
        job = call("GET", location, key).json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(job)


def _drive(call: Recorder, org: str, solver: str) -> None:
    """A session that touches every route with every principal, successes and errors."""
    good = RUNS / "good-agent"
    sandboxes: list[dict[str, Any]] = []
    for task in TASKS:
        sandboxes += [
            {"run_dir": "good-agent"},
            {"run_dir": "flawed-agent"},
            {"archive": {"format": "tar.gz", "data": _tar(good / task)}},
            {"files": _files(good / task)},
        ]
    crits: list[str] = []
    tasks: list[str] = []
    for key in (org, solver):
        for n, sandbox in enumerate(sandboxes):
            body = {"benchmark": BENCH, "task_id": TASKS[n // 4], "sandbox": sandbox}
            for scored in (False, True):
                made = call("POST", "/verify-task", key, json={**body, "scored": scored})
                assert made.status_code == 201, made.text
                tasks.append(made.json()["task_run_id"])
                crits += [c["id"] for c in made.json()["criterion_runs"]]
            queued = call("POST", "/v1/verify-task?async=true", key, json=body)
            assert queued.status_code == 202, queued.text
            assert _poll(call, queued.headers["location"], key)["status"] == "done"
        # what cannot be used: each a problem (sync, and async: a failed job)
        for sandbox in (
            {"run_dir": "nobody"},
            {"run_dir": "/etc"},
            {"run_dir": "../.."},
            {"run_dir": "broken-agent"},
            {"archive": {"format": "tar.gz", "data": "bm90IGFuIGFyY2hpdmU="}},
            {"files": {"/abs/path": "x"}},
        ):
            body = {"benchmark": BENCH, "task_id": TASKS[0], "sandbox": sandbox}
            assert call("POST", "/verify-task", key, json=body).status_code == 422
            queued = call("POST", "/verify-task?async=true", key, json=body)
            assert queued.status_code == 202
            assert _poll(call, queued.headers["location"], key)["status"] == "failed"
        call(
            "POST", "/verify-task", key, json={"benchmark": "nope@1", "task_id": "x", "sandbox": {}}
        )
        call(
            "POST",
            "/verify-task",
            key,
            content=b"{oops",
            headers={"content-type": "application/json"},
        )
        # judge criteria with the judge unreachable, and a consistency check
        call(
            "POST",
            "/verify-task",
            key,
            json={
                "benchmark": "verification@1",
                "task_id": "verify-pa-letter",
                "sandbox": {"run_dir": "good-agent"},
                "config": {"cost": 5},
            },
        )
        call(
            "POST",
            "/v1/consistency-checks",
            key,
            json={
                "tasks": [
                    {"name": "a", "sandbox": {"files": {"output.md": "CPT 72148"}}},
                    {"name": "b", "sandbox": {"run_dir": "good-agent"}},
                ]
            },
        )
        # the run API, task by task, with the run's bearer token
        for scored in (False, True):
            run = call(
                "POST", "/v1/benchmark-runs", key, json={"benchmark": BENCH, "scored": scored}
            )
            assert run.status_code == 201, run.text
            made = run.json()
            token = made["bearer_token"]
            first, second = made["task_runs"]
            call("POST", first["start_url"], token)
            call("POST", second["start_url"], token)  # 409: one started at a time
            done = call(
                "POST",
                first["complete_url"],
                token,
                json={"sandbox": {"files": _files(good / TASKS[0])}},
            )
            assert done.status_code == 200, done.text
            call("POST", first["complete_url"], token, json={"sandbox": {"run_dir": "good-agent"}})
            call(
                "POST", second["complete_url"], token, json={"sandbox": {"run_dir": "broken-agent"}}
            )
            call("GET", f"/v1/benchmark-runs/{made['id']}", token)
            call("GET", f"/v1/benchmark-runs/{made['id']}/report", token)
            call("GET", f"/v1/benchmark-runs/{made['id']}/report?format=junit", token)
            call("GET", "/v1/benchmark-runs", token)
            call("POST", f"/v1/benchmark-runs/{made['id']}/cancel", token)
            call("GET", f"/task-runs/{first['id']}", token)  # 404: an org key's
            call("GET", f"/task-runs/{first['id']}", org)
            call("GET", f"/criterion-runs?task_run_id={first['id']}", org)
            call("GET", f"/ui/runs/{made['id']}", org)
        call("GET", "/v1/benchmark-runs?limit=500", key)
    for task in tasks:
        call("GET", f"/task-runs/{task}", org)
        call("GET", f"/task-runs/{task}", solver)
    for crit in crits:
        call("GET", f"/criterion-runs/{crit}", org)
    internal = call("POST", "/benchmark-runs", org, json={"benchmark": BENCH}).json()
    call("POST", f"/benchmark-runs/{internal['id']}/cancel", org)
    call("POST", "/benchmark-runs", solver, json={"benchmark": BENCH})
    for path in ("/healthz", "/readyz", "/openapi.json", "/", "/v1/benchmark-runs"):
        call("GET", path, org)
    call("GET", "/v1/benchmark-runs", "vk_unknown")
    call("GET", "/task-runs/tr_NOPE", org)


def test_no_answer_names_a_path_of_the_server(session: tuple[Recorder, list[str]]) -> None:
    call, forbidden = session
    client = call.client
    store = client.app.state.store
    _, org = create_key(store, "org")
    _, solver = create_key(store, "solver")
    _drive(call, org, solver)
    assert len(call.seen) > 150
    statuses = {response.status_code for _, _, response in call.seen}
    assert {200, 201, 202, 401, 403, 404, 409, 422} <= statuses, statuses
    # a temporary folder the service made (tempfile adds 8 random characters)
    temp_name = re.compile(r"verial-(?:sandbox-|task-|inline-)?[a-z0-9_]{8}(?![a-z0-9_-])")
    for method, url, response in call.seen:
        texts = [response.text, *(f"{k}: {v}" for k, v in response.headers.items())]
        for text in texts:
            for path in forbidden:
                assert path not in text, (method, url, response.status_code, path, text[:2000])
            assert not temp_name.search(text), (method, url, text[:2000])
