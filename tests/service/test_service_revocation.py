"""Revocation is total (issue 31): revoking a key ends every run token it minted, at once, in
every worker process of a real `verial serve --workers 2` (each worker keeps the principals it
found, but checks the key's row in the store on each request, so no process keeps a revoked
key or token alive), over SQLite and the suite's
PostgreSQL; a job the key queued and no worker has run yet is not run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_support import FILES, RUNS, Api, new_key, run_verial, serve

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key, revoke_key
from pytest_verial.store import open_store

BENCH = "sftp-drops@1"
#: requests of each kind after the revocation: each on a new connection, so both workers of
#: the server answer some of them
TRIES = 6


def _store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("service_postgres").new_database())


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_revoking_a_key_ends_its_run_tokens_in_every_worker(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    store = _store(backend, tmp_path, request)
    solver_id, solver = new_key(tmp_path, store, "solver")
    opened = open_store(store)  # the other keys made in-process: the CLI's own start-up is slow
    try:
        other = create_key(opened, "solver")[1]
        org = create_key(opened, "org")[1]
    finally:
        opened.close()
    args = (str(FILES), "--runs-root", str(RUNS), "--workers", "2")
    with serve(tmp_path, store, *args) as server:

        def create(key: str) -> dict[str, Any]:
            made = httpx.post(
                server.url + "/v1/benchmark-runs",
                json={"benchmark": BENCH, "agent": "e2e"},
                headers={"Authorization": f"Bearer {key}"},
                timeout=60,
            )
            assert made.status_code == 201, made.text
            return dict(made.json())

        run, kept = create(solver), create(other)
        token = {"Authorization": f"Bearer {run['bearer_token']}"}
        first, second = run["task_runs"][0], run["task_runs"][1]
        read = f"{server.url}/v1/benchmark-runs/{run['id']}"
        # before: the token reads, starts and completes its run
        assert httpx.get(read, headers=token).status_code == 200
        started = httpx.post(first["start_url"], headers=token, timeout=60)
        assert started.status_code == 200, started.text
        done = httpx.post(
            first["complete_url"],
            json={"sandbox": {"run_dir": "good-agent"}},
            headers=token,
            timeout=60,
        )
        assert done.status_code == 200, done.text

        # each worker keeps the key and the token once it has found them (issue 33): both
        # workers answer some of these, so both hold them when the key is revoked
        for _ in range(TRIES):
            assert httpx.get(read, headers=token).status_code == 200
            mine = httpx.get(read, headers={"Authorization": f"Bearer {solver}"})
            assert mine.status_code == 200

        revoked = run_verial(tmp_path, "keys", "revoke", solver_id, "--store", store)
        assert revoked.returncode == 0, revoked.stderr

        # at once, whichever worker answers: every use of the token is a 401
        attempts = {
            "read": lambda: httpx.get(read, headers=token),
            "start": lambda: httpx.post(second["start_url"], headers=token),
            "complete": lambda: httpx.post(
                second["complete_url"],
                json={"sandbox": {"run_dir": "good-agent"}},
                headers=token,
                timeout=60,
            ),
            "cancel": lambda: httpx.post(f"{read}/cancel", headers=token),
        }
        for name, attempt in attempts.items():
            for _ in range(TRIES):
                answer = attempt()
                assert answer.status_code == 401, (name, answer.text)
                assert answer.headers["content-type"].startswith("application/problem+json")
                assert answer.headers["www-authenticate"] == "Bearer"
        # verify-task with the key both workers kept: refused in the transaction that would
        # store it (issue 33: no read of its own before scoring), at once too
        verify = {
            "benchmark": BENCH,
            "task_id": first["task_id"],
            "sandbox": {"run_dir": "good-agent"},
        }
        for _ in range(TRIES):
            refused = httpx.post(
                server.url + "/v1/verify-task",
                json=verify,
                headers={"Authorization": f"Bearer {solver}"},
                timeout=60,
            )
            assert refused.status_code == 401, refused.text
            assert refused.headers["www-authenticate"] == "Bearer"
        assert httpx.get(read, headers={"Authorization": f"Bearer {solver}"}).status_code == 401
        # nothing changed through it: the second task run is still waiting
        seen = httpx.get(read, headers={"Authorization": f"Bearer {org}"}).json()
        assert [t["phase"] for t in seen["task_runs"]][:2] == ["completed", "created"]
        # another key's run token is untouched
        theirs = {"Authorization": f"Bearer {kept['bearer_token']}"}
        assert httpx.get(f"{server.url}/v1/benchmark-runs/{kept['id']}", headers=theirs).is_success


def test_a_job_queued_by_a_key_revoked_before_it_runs_is_not_run(api: Api) -> None:
    api.app.state.jobs.stop()  # nothing claims the job until the key is revoked
    queued = api.client.post(
        "/v1/verify-task?async=true",
        json={
            "benchmark": BENCH,
            "task_id": "sftp-referral-packet",
            "sandbox": {"run_dir": "good-agent"},
        },
        headers=api.h(api.solver),
    )
    assert queued.status_code == 202, queued.text
    revoke_key(api.app.state.store, api.solver_id)
    runner = api.app.state.jobs
    runner.start()  # the server's runner again: it claims the job now
    try:
        deadline = time.monotonic() + 30
        while (job := api.client.get(queued.headers["location"], headers=api.h(api.org)).json())[
            "status"
        ] not in ("done", "failed"):
            assert time.monotonic() < deadline, job
            time.sleep(0.05)
    finally:
        runner.stop()
    assert job["status"] == "failed", job
    assert job["error"]["status"] == 401 and "revoked" in job["error"]["detail"]
    listed = api.client.get("/v1/benchmark-runs", headers=api.h(api.org)).json()
    assert listed["data"] == []
