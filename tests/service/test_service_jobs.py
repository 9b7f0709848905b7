"""``POST /v1/verify-task?async=true`` (issue 20): 202 and a job any worker scores; the job
reads back as the synchronous answer; replays queue nothing twice; a job left by a dead worker
is claimed again once its lease has passed; on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

import pytest
from service_support import Api, count_rows

# private: the job queue's claim and lease protocol has no public face; tested below the HTTP API
from pytest_verial.service import _jobs as jobs
from pytest_verial.store import _repo_jobs as queue
from pytest_verial.store._repo_idempotency import Replay

BENCH = "sftp-drops@1"
TASK = "sftp-referral-packet"


def _body(run_dir: str = "flawed-agent") -> dict[str, Any]:
    return {"benchmark": BENCH, "task_id": TASK, "sandbox": {"run_dir": run_dir}}


def _poll(api: Api, location: str, key: str | None = None, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        got = api.client.get(location, headers=api.h(key or api.org))
        assert got.status_code == 200, got.text
        job: dict[str, Any] = got.json()
        if job["status"] in ("done", "failed"):
            assert "retry-after" not in got.headers
            return job
        assert got.headers["retry-after"] == "1"
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


def _essence(answer: dict[str, Any]) -> Any:
    return (
        answer["verdict"],
        answer["score"],
        [(c["criterion_id"], c["status"], c["score"]) for c in answer["criterion_runs"]],
    )


def test_an_async_verify_task_is_a_job_that_reads_back_as_the_sync_answer(api: Api) -> None:
    sync = api.client.post("/v1/verify-task", json=_body(), headers=api.h(api.solver))
    assert sync.status_code == 201, sync.text
    headers = {**api.h(api.solver), "Idempotency-Key": "job-1"}
    queued = api.client.post("/v1/verify-task?async=true", json=_body(), headers=headers)
    assert queued.status_code == 202, queued.text
    assert (
        queued.headers["location"] == queued.json()["location"] == f"/v1/jobs/{queued.json()['id']}"
    )
    assert queued.json()["status"] == "queued"
    job = _poll(api, queued.headers["location"], api.solver)
    assert job["status"] == "done" and job["attempts"] == 1 and job["error"] is None
    assert _essence(job["result"]) == _essence(sync.json())
    task_run = api.client.get(f"/task-runs/{job['result']['task_run_id']}", headers=api.h(api.org))
    assert task_run.status_code == 200 and task_run.json()["score"] == sync.json()["score"]
    again = api.client.post("/v1/verify-task?async=true", json=_body(), headers=headers)
    assert (again.status_code, again.json()) == (202, queued.json())
    assert count_rows(api.app.state.store)["task_runs"] == 2  # the sync one and the job's
    other = api.client.post("/v1/verify-task?async=true", json=_body("good-agent"), headers=headers)
    assert other.status_code == 422, other.text  # the key names another request
    assert "job-1" in other.json()["detail"]


def test_jobs_are_read_by_their_owner_or_an_org_key_only(api: Api) -> None:
    queued = api.client.post("/v1/verify-task?async=true", json=_body(), headers=api.h(api.solver))
    location = queued.headers["location"]
    _poll(api, location, api.solver)
    assert api.client.get(location, headers=api.h(api.org)).status_code == 200
    assert api.client.get(location).status_code == 401
    assert api.client.get(location, headers=api.h("vrl_slv_" + "x" * 40)).status_code == 401
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.service._keys import create_key

    _, stranger = create_key(api.app.state.store, "solver", "another agent")
    assert api.client.get(location, headers=api.h(stranger)).status_code == 404
    assert api.client.get("/v1/jobs/job_nothing", headers=api.h(api.org)).status_code == 404


def test_bad_requests_fail_at_once_or_as_a_failed_job(api: Api) -> None:
    unknown = {**_body(), "task_id": "no-such-task"}
    answer = api.client.post("/v1/verify-task?async=true", json=unknown, headers=api.h(api.org))
    assert answer.status_code == 422 and "no-such-task" in answer.json()["detail"]
    missing = api.client.post(
        "/v1/verify-task?async=true", json=_body("nobody"), headers=api.h(api.org)
    )
    assert missing.status_code == 202
    job = _poll(api, missing.headers["location"])
    assert job["status"] == "failed" and job["result"] is None
    assert job["error"]["status"] == 422 and "no run folder nobody" in job["error"]["detail"]
    assert (
        api.client.post(
            "/v1/verify-task?async=maybe", json=_body(), headers=api.h(api.org)
        ).status_code
        == 400
    )
    assert count_rows(api.app.state.store)["task_runs"] == 0


def test_a_job_left_by_a_dead_worker_is_claimed_again(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that claimed a job and died stops renewing its lease: once the lease has
    passed, this server's runner claims it (attempt 2) and stores it once."""
    store = api.app.state.store
    api.app.state.jobs.stop()  # this process's runner waits while the "dead" worker claims
    monkeypatch.setenv(jobs.LEASE_ENV, "0.5")
    key = next(k for k in _keys(api) if k.id == api.org_id)
    queued = queue.enqueue(store, key, _body(), jobs.accepted, idem=None, digest="d")
    claimed = queue.claim(store, "dead-host:1:abc", jobs.lease_seconds())
    assert claimed is not None and claimed.id == queued.body["id"] and claimed.attempts == 1
    assert queue.claim(store, "another:2:def", 60) is None  # held: nobody else takes it
    time.sleep(0.6)
    runner = jobs.JobRunner(store, api.app.state.jobs.run)
    runner.start()
    try:
        job = _poll(api, jobs.job_location(claimed.id))
    finally:
        runner.stop()
    assert job["status"] == "done" and job["attempts"] == 2
    assert count_rows(store)["task_runs"] == 1
    with pytest.raises(queue.LeaseLost):  # the dead worker's late result is refused
        store.write(
            "late",
            lambda conn: queue.finish(conn, store, claimed, "dead-host:1:abc", Replay(201, {})),
        )


def _keys(api: Api) -> list[Any]:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.service._keys import list_keys

    return list(list_keys(api.app.state.store))
