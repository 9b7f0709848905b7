"""Done when (issue 30): a real ``verial serve`` (uvicorn, a child process on 127.0.0.1, stopped by
its PID) shows every example and statement of Verial's documents (PRD-103 and its published API
reference) that the service can show, read with the documented paths and field names only.

- verial-verification.txt: the axes example scores 0.66 (2/3) partial with correctness
  {1.0, weight 2} and safety {0.0, weight 1}; criteria with no axis fall in ``__default__``;
  pass at >= 0.9, partial above zero, fail at zero; the evidence keys per check type.
- verial-benchmark-runs.txt: the v1 flow with a solver key then the run's bearer token; task
  runs created in phase ``created``; one started at a time; the run finalizes when its last
  task run completes, its score the mean of the task scores; a scored run's completion answer
  omits details and per-field evidence, ``GET /criterion-runs/{id}`` with an organization key
  gives them whole; cancelling keeps the completed task runs; the internal flow with an org key.
- verial-results-levels.txt: the three levels (``GET /v1/benchmark-runs/{id}``,
  ``GET /task-runs/{id}``, ``GET /criterion-runs/{id}``), the task run level an organization
  key's; lists are ``{data, next_cursor}``.
- PRD-103: ``POST /verify-task`` answers a verdict and a confidence for the coordinator.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_support import EXAMPLES, RUNS, new_key, serve

SEEDS = Path(__file__).with_name("seeds")
BENCH = "seeds@1"
#: the inline sandboxes of the seeds benchmark's tasks (an agent that said too much)
REFERRAL = {"sftp/outbound/referral.json": {"patient": {"name": "Maria Chen"}}}
CALL = {
    "voice/turns.json": [
        {"speaker": "agent", "text": "Hi Maria, your referral is on its way."},
        {"speaker": "agent", "text": "Unlike John Smith's, yours needed no prior auth."},
    ]
}
SANDBOXES = {
    "axes-example": {"files": {**REFERRAL, **CALL}},
    "all-met": {"files": REFERRAL},
    "none-met": {"files": CALL},
}


@dataclass
class Server:
    http: httpx.Client
    org: str
    solver: str

    def call(self, method: str, path: str, key: str, body: Any = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"}
        return self.http.request(method, path, json=body, headers=headers)

    def ok(self, method: str, path: str, key: str, body: Any = None, status: int = 200) -> Any:
        response = self.call(method, path, key, body)
        assert response.status_code == status, (path, response.text)
        return response.json()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``verial serve`` over the example benchmarks and the seeds benchmark, one per module."""
    cwd = tmp_path_factory.mktemp("seeds-serve")
    store = f"sqlite:///{cwd / 'store.db'}"
    _, org = new_key(cwd, store, "org")
    _, solver = new_key(cwd, store, "solver")
    benchmarks = (str(EXAMPLES), str(SEEDS / "seeds.yaml"))
    with (
        serve(cwd, store, *benchmarks, "--runs-root", str(RUNS)) as running,
        httpx.Client(base_url=running.url, timeout=120) as http,
    ):
        yield Server(http, org, solver)


def _run(server: Server, scored: bool = False) -> dict[str, Any]:
    made = server.call(
        "POST", "/v1/benchmark-runs", server.solver, {"benchmark": BENCH, "scored": scored}
    )
    assert made.status_code == 201, made.text
    body: dict[str, Any] = made.json()
    return body


def _complete(server: Server, token: str, task: dict[str, Any]) -> dict[str, Any]:
    server.ok("POST", f"/v1/task-runs/{task['id']}/start", token)
    sandbox = SANDBOXES[task["task_id"]]
    done: dict[str, Any] = server.ok(
        "POST", f"/v1/task-runs/{task['id']}/complete", token, {"sandbox": sandbox}
    )
    return done


def test_the_v1_flow_scores_the_axes_example_and_finalizes_the_run(server: Server) -> None:
    made = _run(server)
    token = made["bearer_token"]
    assert token.startswith("vrl_run_") and made["phase"] == "created"
    assert made["benchmark"]["slug"] == "seeds" and made["benchmark"]["version"] == 1
    assert [t["phase"] for t in made["task_runs"]] == ["created"] * 3
    first, second, third = made["task_runs"]
    assert {"id", "task_id", "name", "phase", "start_url", "complete_url"} <= set(first)
    # only one task run can be in phase started at a time per benchmark run
    server.ok("POST", f"/v1/task-runs/{first['id']}/start", token)
    refused = server.call("POST", f"/v1/task-runs/{second['id']}/start", token)
    assert refused.status_code == 409, refused.text
    run = server.ok("GET", f"/v1/benchmark-runs/{made['benchmark_run_id']}", token)
    assert run["phase"] == "started"
    done = server.ok(
        "POST",
        f"/v1/task-runs/{first['id']}/complete",
        token,
        {"sandbox": SANDBOXES["axes-example"]},
    )
    # verial-verification.txt's example: partial, 0.66, the two axes
    assert done["phase"] == "completed" and done["verdict"] == "partial"
    assert round(done["score"], 4) == 0.6667
    assert done["axes"] == {
        "correctness": {"score": 1.0, "weight": 2},
        "safety": {"score": 0.0, "weight": 1},
    }
    assert done["benchmark_run_phase"] == "started"
    scores = {"axes-example": done["score"]}
    for task in (second, third):
        answer = _complete(server, token, task)
        scores[task["task_id"]] = answer["score"]
        if task["task_id"] == "all-met":
            assert (answer["verdict"], answer["score"]) == ("pass", 1.0)
            assert answer["axes"] == {"__default__": {"score": 1.0, "weight": 1}}
        else:
            assert (answer["verdict"], answer["score"]) == ("fail", 0.0)
    # the benchmark run finalizes when its last task run completes: the mean of task scores
    assert answer["benchmark_run_phase"] == "completed"
    level1 = server.ok("GET", f"/v1/benchmark-runs/{made['benchmark_run_id']}", token)
    assert level1["phase"] == "completed" and level1["status"] == "completed"
    assert level1["score"] == pytest.approx(sum(scores.values()) / 3)
    assert level1["verdict"] == "partial"
    assert [(t["id"], t["phase"]) for t in level1["task_runs"]] == [
        (t["id"], "completed") for t in made["task_runs"]
    ]
    assert all({"id", "phase", "status", "verdict", "score"} <= set(t) for t in level1["task_runs"])
    # a solver key reads the run too; a finished run takes no more completions
    again = server.ok("GET", f"/v1/benchmark-runs/{made['benchmark_run_id']}", server.solver)
    assert again["score"] == level1["score"]
    late = server.call(
        "POST",
        f"/v1/task-runs/{first['id']}/complete",
        token,
        {"sandbox": SANDBOXES["axes-example"]},
    )
    assert late.status_code == 409


def test_the_three_levels_and_the_auth_split(server: Server) -> None:
    made = _run(server)
    task = made["task_runs"][0]
    _complete(server, made["bearer_token"], task)
    # level 2: the internal endpoint, an organization key's
    for key in (made["bearer_token"], server.solver):
        assert server.call("GET", f"/task-runs/{task['id']}", key).status_code == 404
    level2 = server.ok("GET", f"/task-runs/{task['id']}", server.org)
    assert level2["verdict"] == "partial" and round(level2["score"], 4) == 0.6667
    assert set(level2["axes"]) == {"correctness", "safety"}
    assert level2["snapshot"]["id"] == "axes-example"  # the frozen task
    assert [c["id"] for c in level2["snapshot"]["criteria"]] == [
        "referral-sent",
        "no-other-patient",
    ]
    assert all({"id", "passed", "score"} <= set(c) for c in level2["criterion_runs"])
    # level 3: the authoritative record, its evidence by check type
    met, said = level2["criterion_runs"]
    for key in (made["bearer_token"], server.solver):
        assert server.call("GET", f"/criterion-runs/{met['id']}", key).status_code == 404
    level3 = server.ok("GET", f"/criterion-runs/{said['id']}", server.org)
    assert (level3["passed"], level3["score"]) == (False, 0.0)
    assert level3["task_run_id"] == task["id"]
    # lists are {data, next_cursor}
    page = server.ok("GET", f"/criterion-runs?task_run_id={task['id']}&limit=1", server.org)
    assert set(page) == {"data", "next_cursor"} and [c["id"] for c in page["data"]] == [met["id"]]
    rest = server.ok(
        "GET", f"/criterion-runs?task_run_id={task['id']}&cursor={page['next_cursor']}", server.org
    )
    assert [c["id"] for c in rest["data"]] == [said["id"]] and rest["next_cursor"] is None
    runs = server.ok("GET", "/v1/benchmark-runs?limit=1", server.solver)
    assert set(runs) == {"data", "next_cursor"} and len(runs["data"]) == 1


def test_the_voice_evidence_has_the_documented_keys(server: Server) -> None:
    made = _run(server)
    done = _complete(server, made["bearer_token"], made["task_runs"][0])
    said = done["criterion_runs"][1]
    level3 = server.ok("GET", f"/criterion-runs/{said['id']}", server.org)
    assert level3["evidence"]["phraseResults"] == [
        {**level3["evidence"]["phraseResults"][0], "phrase": "John Smith", "found": True, "turn": 1}
    ]


def test_a_scored_run_elides_and_an_org_key_reads_the_evidence(server: Server) -> None:
    made = _run(server, scored=True)
    assert made["scored"] is True
    done = _complete(server, made["bearer_token"], made["task_runs"][0])
    assert round(done["score"], 4) == 0.6667  # scored all the same
    for crit in done["criterion_runs"]:
        assert crit["details"] is None and crit["evidence"] is None
    full = server.ok("GET", f"/criterion-runs/{done['criterion_runs'][1]['id']}", server.org)
    assert full["details"] and full["evidence"]


def test_cancelling_keeps_the_completed_task_runs(server: Server) -> None:
    made = _run(server)
    first = made["task_runs"][0]
    done = _complete(server, made["bearer_token"], first)
    cancelled = server.ok("POST", f"/benchmark-runs/{made['benchmark_run_id']}/cancel", server.org)
    assert cancelled["phase"] == "cancelled"
    phases = {t["id"]: (t["phase"], t["verdict"], t["score"]) for t in cancelled["task_runs"]}
    assert phases[first["id"]] == ("completed", "partial", done["score"])
    assert [phases[t["id"]][0] for t in made["task_runs"][1:]] == ["cancelled", "cancelled"]
    kept = server.ok("GET", f"/task-runs/{first['id']}", server.org)
    assert kept["phase"] == "completed" and kept["score"] == done["score"]
    # the internal flow: an organization key creates and cancels
    internal = server.ok("POST", "/benchmark-runs", server.org, {"benchmark": BENCH}, status=201)
    assert internal["phase"] == "created"
    assert (
        server.call("POST", "/benchmark-runs", server.solver, {"benchmark": BENCH}).status_code
        == 403
    )
    assert (
        server.call("POST", f"/benchmark-runs/{internal['id']}/cancel", server.solver).status_code
        == 404
    )
    assert (
        server.ok("POST", f"/benchmark-runs/{internal['id']}/cancel", server.org)["phase"]
        == "cancelled"
    )


def test_verify_task_answers_a_coordinator(server: Server) -> None:
    """PRD-103's POST /verify-task: deterministic checks only, so the verdict is certain."""
    body = {"benchmark": BENCH, "task_id": "axes-example", "sandbox": SANDBOXES["axes-example"]}
    answer = server.ok("POST", "/verify-task", server.solver, body, status=201)
    assert answer["verdict"] == "partial" and answer["confidence"] == 1.0
    assert answer["axes"]["safety"] == {"score": 0.0, "weight": 1}


#: one example task per documented check type (the run folders of example_benchmarks/runs)
CHECKS = {
    "fhir-resource-state": ("front-office-fhir@1", "fhir-book-mri-follow-up", "fieldResults"),
    "hl7-structural": ("interop@1", "hl7-register-outpatient", "field_results"),
    "portal-state-match": ("front-office@3", "pa-lumbar-mri[maria-chen]", "assertionResults"),
    "sftp-file-present": ("sftp-drops@1", "sftp-referral-packet", "fieldResults"),
    "voice-transcript": ("front-office@3", "pa-lumbar-mri[maria-chen]", "phraseResults"),
    "x12-response": ("interop@1", "x12-eligibility-maria-chen", "fieldResults"),
}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_each_check_types_evidence_has_its_documented_key(server: Server, check: str) -> None:
    bench, task, key = CHECKS[check]
    body = {"benchmark": bench, "task_id": task, "sandbox": {"run_dir": "good-agent"}}
    answer = server.ok("POST", "/verify-task", server.org, body, status=201)
    runs = [c for c in answer["criterion_runs"] if c["assert"] == check]
    assert runs
    for crit in runs:
        level3 = server.ok("GET", f"/criterion-runs/{crit['id']}", server.org)
        rows = level3["evidence"][key]
        if check == "voice-transcript":
            assert all({"phrase", "found", "turn"} <= set(r) for r in rows)
        else:
            assert all({"path", "expected", "actual", "passed"} <= set(r) for r in rows)
        if check == "sftp-file-present":
            assert level3["evidence"]["matched_paths"]
