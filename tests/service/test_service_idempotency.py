"""Idempotency-Key on every POST that creates or changes something (issue 30 item 4): the same
key and body answer the stored answer (status and body) and change nothing; the same key with
another body is a 422 naming the key; every 201 has a ``Location`` that reads what it made."""

from __future__ import annotations

from typing import Any

from service_support import Api, count_rows

BENCH = "sftp-drops@1"
SANDBOX = {"sandbox": {"run_dir": "good-agent"}}


def _post(api: Api, path: str, key: str, idem: str | None, body: Any = None) -> Any:
    headers = api.h(key)
    if idem is not None:
        headers["Idempotency-Key"] = idem
    return api.client.post(path, json=body, headers=headers)


def _runs(api: Api) -> int:
    return count_rows(api.app.state.store)["benchmark_runs"]


def _reused(response: Any, idem: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "Idempotency-Key" in response.json()["detail"] and idem in response.json()["detail"]


def test_verify_task_and_consistency_replay_and_locate(api: Api) -> None:
    body = {"benchmark": BENCH, "task_id": "sftp-claims-batch", **SANDBOX}
    for path in ("/verify-task", "/v1/verify-task"):
        first = _post(api, path, api.solver, f"v-{path}", body)
        assert first.status_code == 201, first.text
        location = first.headers["location"]
        assert location == f"/task-runs/{first.json()['task_run_id']}"
        read = api.client.get(location, headers=api.h(api.org))
        assert read.status_code == 200 and read.json()["score"] == first.json()["score"]
        before = count_rows(api.app.state.store)
        again = _post(api, path, api.solver, f"v-{path}", body)
        assert (again.status_code, again.json()) == (201, first.json())
        assert again.headers["location"] == location
        assert count_rows(api.app.state.store) == before
        _reused(_post(api, path, api.solver, f"v-{path}", {**body, "scored": True}), f"v-{path}")
    # the two paths are one operation: one key names one request on either
    replayed = _post(api, "/v1/verify-task", api.solver, "v-/verify-task", body)
    assert replayed.status_code == 201
    checks = {
        "tasks": [
            {"name": "a", "sandbox": {"files": {"output.md": "CPT 72148"}}},
            {"name": "b", "sandbox": {"files": {"output.md": "CPT 72148"}}},
        ]
    }
    first = _post(api, "/v1/consistency-checks", api.org, "c-1", checks)
    assert first.status_code == 201 and first.headers["location"].startswith("/task-runs/tr_")
    again = _post(api, "/v1/consistency-checks", api.org, "c-1", checks)
    assert again.json() == first.json() and again.headers["location"] == first.headers["location"]


def test_creating_a_run_twice_with_one_key_makes_one_run(api: Api) -> None:
    for path, key in (("/v1/benchmark-runs", api.solver), ("/benchmark-runs", api.org)):
        body = {"benchmark": BENCH, "agent": "idem"}
        first = _post(api, path, key, f"run-{path}", body)
        assert first.status_code == 201, first.text
        made = first.json()
        assert first.headers["location"] == f"/v1/benchmark-runs/{made['benchmark_run_id']}"
        assert api.client.get(first.headers["location"], headers=api.h(key)).status_code == 200
        runs = _runs(api)
        again = _post(api, path, key, f"run-{path}", body)
        assert again.status_code == 201 and again.headers["location"] == first.headers["location"]
        assert _runs(api) == runs
        # the same run and task runs; the bearer token is never stored, so a replay carries a
        # fresh one for that run
        fresh = again.json()
        token_fields = ("bearer_token", "bearer_token_expires_at")
        assert {k: v for k, v in fresh.items() if k not in token_fields} == {
            k: v for k, v in made.items() if k not in token_fields
        }
        for token in (made["bearer_token"], fresh["bearer_token"]):
            got = api.client.get(f"/v1/benchmark-runs/{made['id']}", headers=api.h(token))
            assert got.status_code == 200
        _reused(_post(api, path, key, f"run-{path}", {**body, "scored": True}), f"run-{path}")
        assert _runs(api) == runs


def test_start_complete_and_cancel_replay_their_first_answer(api: Api) -> None:
    made = _post(api, "/v1/benchmark-runs", api.solver, None, {"benchmark": BENCH}).json()
    token = made["bearer_token"]
    first, second = (t["id"] for t in made["task_runs"])
    start = f"/v1/task-runs/{first}/start"
    started = _post(api, start, token, "s-1")
    assert started.status_code == 200 and started.json()["phase"] == "started"
    assert _post(api, start, token, "s-1").json() == started.json()
    _reused(_post(api, f"/v1/task-runs/{second}/start", token, "s-1"), "s-1")
    complete = f"/v1/task-runs/{first}/complete"
    done = _post(api, complete, token, "done-1", SANDBOX)
    assert done.status_code == 200, done.text
    rows = count_rows(api.app.state.store)
    # a retried complete (the answer was lost on the way) gets the stored answer, not a 409
    again = _post(api, complete, token, "done-1", SANDBOX)
    assert (again.status_code, again.json()) == (200, done.json())
    assert count_rows(api.app.state.store) == rows
    _reused(
        _post(api, complete, token, "done-1", {"sandbox": {"run_dir": "flawed-agent"}}), "done-1"
    )
    assert _post(api, complete, token, None, SANDBOX).status_code == 409  # no key: done already
    assert _post(api, complete, token, "done-2", SANDBOX).status_code == 409
    cancel = f"/v1/benchmark-runs/{made['id']}/cancel"
    cancelled = _post(api, cancel, token, "x-1")
    assert cancelled.status_code == 200 and cancelled.json()["phase"] == "cancelled"
    assert _post(api, cancel, token, "x-1").json() == cancelled.json()
    assert _post(api, cancel, token, None).status_code == 409
    internal = _post(api, "/benchmark-runs", api.org, None, {"benchmark": BENCH}).json()
    path = f"/benchmark-runs/{internal['id']}/cancel"
    first_cancel = _post(api, path, api.org, "x-2")
    assert first_cancel.status_code == 200
    assert _post(api, path, api.org, "x-2").json() == first_cancel.json()
    _reused(_post(api, f"/benchmark-runs/{made['id']}/cancel", api.org, "x-2"), "x-2")


def test_a_malformed_idempotency_key_is_a_400_the_schema_states(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        if "post" not in item:
            continue
        (header,) = [p for p in item["post"]["parameters"] if p["name"] == "Idempotency-Key"]
        assert header["in"] == "header" and header["schema"]["pattern"], path
    bad = _post(
        api, "/verify-task", api.org, "x" * 300, {"benchmark": BENCH, "task_id": "x", **SANDBOX}
    )
    assert bad.status_code == 400 and "Idempotency-Key" in bad.json()["detail"]
