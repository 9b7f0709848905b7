"""What the service does per request, counted (issue 33): a key is looked up once per process
and then checked by one read per request, revocation still taking effect on the next request;
``complete`` keeps the benchmark run's aggregates equal to a full recomputation over its task
runs however many there are, criteria not evaluated and unverified task runs included."""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import AfterValidator, BaseModel, computed_field, field_serializer, field_validator
from service_support import EXAMPLES, RUNS
from sqlalchemy import event

# private: what a request reads is counted below the HTTP API, on internals with no public face
from pytest_verial._results import Report, RunCounts, TaskStatus
from pytest_verial.service import create_app
from pytest_verial.service._answers import (
    answer_of,
    declarations,
    project,
    projectable,
    task_answer,
    task_data,
    task_out,
)
from pytest_verial.service._hide import kept_relative_to, relative_to
from pytest_verial.service._http import Problem
from pytest_verial.service._keys import create_key, revoke_key
from pytest_verial.service._requests import VerifyTaskIn
from pytest_verial.service._schemas import CriterionRunOut, TaskRunOut
from pytest_verial.store._repo_keys import ApiKey
from pytest_verial.store._repo_runs import StoredTaskRun, read_report
from pytest_verial.store._rows import (
    SessionMeta,
    canonical,
    digest_of,
    report_split,
    session_row,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

#: task runs in the run whose aggregates are compared
TASKS = 24
#: a report with judge evidence
FIXTURE = Path(__file__).parents[1] / "fixtures" / "report-v2" / "flawed-agent.json"


class Statements:
    """The SQL statements the store's engine runs, as text (a cursor-level listener)."""

    def __init__(self, engine: Any) -> None:
        self.seen: list[str] = []
        event.listen(engine, "before_cursor_execute", self._add)

    def _add(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self.seen.append(" ".join(statement.split()))

    def on(self, table: str) -> list[str]:
        return [s for s in self.seen if f"FROM {table}" in s]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(f"sqlite:///{tmp_path / 's.db'}", [EXAMPLES], RUNS)
    with TestClient(app) as client:
        yield client


def test_a_key_is_looked_up_once_per_process_and_checked_on_every_request(
    client: TestClient,
) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    record, key = create_key(store, "org")
    statements = Statements(store.engine)
    auth = {"Authorization": f"Bearer {key}"}
    for _ in range(5):
        assert client.get("/v1/benchmark-runs", headers=auth).status_code == 200
    keys = statements.on("api_keys")
    by_hash = [s for s in keys if "api_keys.hash =" in s]
    by_id = [s for s in keys if "api_keys.id =" in s]
    assert len(by_hash) == 1  # found once, then kept by this process
    assert len(by_id) == 4  # every later request checks the key's row, by primary key
    revoke_key(store, record.id)
    answer = client.get("/v1/benchmark-runs", headers=auth)
    assert answer.status_code == 401  # the next request, not some time later
    # a key that is not ours is never kept: each request looks it up again
    made_up = {"Authorization": "Bearer vk_" + "x" * 43}
    for _ in range(3):
        assert client.get("/v1/benchmark-runs", headers=made_up).status_code == 401
    assert len([s for s in statements.on("api_keys") if "api_keys.hash =" in s]) == 1 + 3


#: a verify-task of the example sftp task on the good agent's run
VERIFY = {
    "benchmark": "sftp-drops@1",
    "task_id": "sftp-referral-packet",
    "sandbox": {"run_dir": "good-agent"},
}


def _task_runs(store: Any) -> int:
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM task_runs").scalar_one())


def test_verify_task_with_a_kept_key_runs_one_transaction_that_checks_the_key(
    client: TestClient,
) -> None:
    """A key this process found before is not read in a transaction of its own: verify-task
    reads its row inside the one write transaction that stores the task run, and does not
    look its new report up by digest (the digest is stored: an import of it is deduped)."""
    store = client.app.state.store  # type: ignore[attr-defined]
    _, key = create_key(store, "solver")
    auth = {"Authorization": f"Bearer {key}"}
    assert client.post("/v1/verify-task", json=VERIFY, headers=auth).status_code == 201
    statements = Statements(store.engine)
    for _ in range(2):
        assert client.post("/v1/verify-task", json=VERIFY, headers=auth).status_code == 201
    begins = [s for s in statements.seen if s.startswith("BEGIN")]
    assert begins == ["BEGIN IMMEDIATE"] * 2  # one write transaction per request, no read
    by_id = [s for s in statements.on("api_keys") if "api_keys.id =" in s]
    assert len(by_id) == 2 and not [s for s in statements.on("api_keys") if "hash" in s]
    starts = [i for i, s in enumerate(statements.seen) if s.startswith("BEGIN")]
    assert starts[0] < statements.seen.index(by_id[0]) < starts[1]  # inside the first one
    assert _task_runs(store) == 3
    # a new report is not looked up by its digest, but its digest is kept: imported again,
    # it is found
    assert not [s for s in statements.seen if "report_digest =" in s]
    made = client.post("/v1/verify-task", json=VERIFY, headers=auth).json()
    again = store.import_report(store.report_of_run(made["benchmark_run_id"]))
    assert not again.created
    assert again.run_ids == [made["benchmark_run_id"]]


@pytest.mark.parametrize(
    "path", ["stored", "invalid body", "unknown task", "replay", "async", "unknown benchmark"]
)
def test_a_kept_key_revoked_is_refused_by_verify_task_on_every_path(
    client: TestClient, path: str
) -> None:
    """A key revoked after this process kept it gets verify-task's 401 (problem+json, a
    Bearer challenge) whatever its request would have got, and nothing it asked for is stored
    or answered: not the task run, not a replay of its earlier answer, not a job."""
    store = client.app.state.store  # type: ignore[attr-defined]
    record, key = create_key(store, "solver")
    auth = {"Authorization": f"Bearer {key}", "Idempotency-Key": "kept-1"}
    assert client.post("/v1/verify-task", json=VERIFY, headers=auth).status_code == 201
    before = _task_runs(store)
    revoke_key(store, record.id)
    body: Any = dict(VERIFY)
    headers = {"Authorization": f"Bearer {key}"}
    url = "/v1/verify-task"
    if path == "invalid body":
        body = {**VERIFY, "sandbox": {"run_dir": 7}}
    elif path == "unknown task":
        body = {**VERIFY, "task_id": "no-such-task"}
    elif path == "unknown benchmark":
        body = {**VERIFY, "benchmark": "no-such@1"}
    elif path == "replay":
        headers = auth
    elif path == "async":
        url += "?async=true"
    answer = client.post(url, json=body, headers=headers)
    assert answer.status_code == 401, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.json()["detail"] == "unknown, revoked or expired key"
    assert _task_runs(store) == before
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM jobs").scalar_one() == 0
    # forgotten once found revoked: the next request looks the key up (and is refused)
    statements = Statements(store.engine)
    assert client.post("/v1/verify-task", json=VERIFY, headers=headers).status_code == 401
    assert [s for s in statements.on("api_keys") if "api_keys.hash =" in s]


def test_a_run_token_is_kept_but_its_expiry_and_owner_checked_each_time(
    client: TestClient,
) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    owner, key = create_key(store, "solver")
    made = client.post(
        "/v1/benchmark-runs",
        json={"benchmark": "sftp-drops@1", "agent": "e2e"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert made.status_code == 201, made.text
    run = made.json()
    token = {"Authorization": f"Bearer {run['bearer_token']}"}
    statements = Statements(store.engine)
    for _ in range(3):
        assert client.get(f"/v1/benchmark-runs/{run['id']}", headers=token).status_code == 200
    tokens = statements.on("run_tokens")
    assert len([s for s in tokens if "run_tokens.hash =" in s]) == 1
    assert len([s for s in tokens if "run_tokens.id =" in s]) == 2
    revoke_key(store, owner.id)  # the key that minted it: the token ends with it
    assert client.get(f"/v1/benchmark-runs/{run['id']}", headers=token).status_code == 401


# -- complete: the run's aggregates as a full recomputation gives them ---------------------------
def _many_tasks(tmp_path: Path) -> tuple[Path, Path]:
    """A benchmark of TASKS copies of verify-pa-letter (its judge criterion not evaluated
    when asked with no judge), and a runs root with each copy's folder in a good and a flawed
    run."""
    data = yaml.safe_load((EXAMPLES / "verification.verial.yaml").read_text())
    task = next(t for t in data["tasks"] if t["id"] == "verify-pa-letter")
    tasks = [{**task, "id": f"letter-{n:02d}"} for n in range(TASKS)]
    bench = tmp_path / "many.verial.yaml"
    bench.write_text(yaml.safe_dump({"benchmark": "many", "version": 1, "tasks": tasks}))
    root = tmp_path / "runs"
    for agent in ("good-agent", "flawed-agent"):
        for t in tasks:
            shutil.copytree(RUNS / agent / "verify-pa-letter", root / agent / t["id"])
    return bench, root


def _aggregates_equal_recomputed(store: Any, run_id: str) -> None:
    org = ApiKey("org", "org", None, datetime(2000, 1, 1, tzinfo=UTC), None)
    report, _scored = read_report(store, org, run_id)
    (stored,) = report.benchmark_runs
    running = any(t.status is TaskStatus.RUNNING for t in stored.task_runs)
    again = stored.rescored(running=running)
    assert stored.model_dump(exclude={"task_runs"}) == again.model_dump(exclude={"task_runs"})
    if not running:
        assert report.session.counts == RunCounts.of(stored.task_runs)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_complete_keeps_the_aggregates_a_full_recomputation_gives(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    bench, root = _many_tasks(tmp_path)
    url = (
        f"sqlite:///{tmp_path / 's.db'}"
        if backend == "sqlite"
        else str(request.getfixturevalue("service_postgres").new_database())
    )
    app = create_app(url, [bench], root)
    store = app.state.store
    _, key = create_key(store, "solver")
    with TestClient(app) as client:
        made = client.post(
            "/v1/benchmark-runs",
            json={"benchmark": "many@1", "agent": "e2e"},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert made.status_code == 201, made.text
        run = made.json()
        token = {"Authorization": f"Bearer {run['bearer_token']}"}
        seen = set()
        not_evaluated = 0
        for n, task in enumerate(run["task_runs"]):
            sandbox = {"run_dir": "flawed-agent" if n % 4 == 1 else "good-agent"}
            body: dict[str, Any] = {"sandbox": sandbox}
            if n % 3 == 0:  # the judge criterion asked, with no judge: not evaluated
                body["config"] = {"cost": 5}
            done = client.post(task["complete_url"], json=body, headers=token)
            assert done.status_code == 200, done.text
            seen.add((done.json()["verification"], done.json()["verdict"]))
            not_evaluated += len(done.json()["not_evaluated"])
            if n in (0, 1, TASKS // 2, TASKS - 2):
                _aggregates_equal_recomputed(store, run["id"])
        _aggregates_equal_recomputed(store, run["id"])
        final = client.get(f"/v1/benchmark-runs/{run['id']}", headers=token).json()
    # the run mixed what the aggregates count: unverified and verified task runs
    assert ("incomplete", None) in seen
    assert ("complete", "partial") in seen
    assert final["phase"] == "completed"
    assert final["verification"] == "incomplete"
    assert final["counts"]["criteria_not_evaluated"] == not_evaluated > 0


# -- sandbox indexes: kept while the files stay as they are ---------------------------------------
def test_a_fhir_snapshot_is_indexed_once_while_unchanged_and_again_when_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # private: the snapshot indexer is counted, and it has no public face
    from pytest_verial.fhir import _snapshot

    loads: list[Path] = []
    real = _snapshot._load

    def counted(directory: Path, reads: Any) -> Any:
        loads.append(directory)
        return real(directory, reads)

    monkeypatch.setattr(_snapshot, "_load", counted)
    task = "fhir-prior-auth-mri"
    root = tmp_path / "runs"
    shutil.copytree(RUNS / "good-agent" / task, root / "good-agent" / task)
    app = create_app(f"sqlite:///{tmp_path / 's.db'}", [EXAMPLES], root)
    _, key = create_key(app.state.store, "solver")
    body = {
        "benchmark": "front-office-fhir@1",
        "task_id": task,
        "sandbox": {"run_dir": "good-agent"},
    }

    def verdicts() -> dict[str, str]:
        answer = client.post("/verify-task", json=body, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 201, answer.text
        return {c["criterion_id"]: c["status"] for c in answer.json()["criterion_runs"]}

    with TestClient(app) as client:
        first = verdicts()
        assert verdicts() == first
        assert len(loads) == 1  # the second request used the index the first one made
        assert first["claim-created"] == "passed"
        # the agent's write changed in place, same size: the snapshot is read again
        writes = root / "good-agent" / task / "fhir" / "10-agent-writes.ndjson"
        text = writes.read_text()
        writes.write_text(text.replace("72148", "72149"))
        changed = verdicts()
        assert len(loads) == 2
        assert changed["claim-created"] == "failed"
        assert verdicts() == changed and len(loads) == 2


def test_an_answer_sent_as_made_equals_its_replay_through_the_response_model(
    client: TestClient,
) -> None:
    """verify-task and complete send the body they made as it is; a replay of the same
    Idempotency-Key goes through the response model: both are the same JSON."""
    store = client.app.state.store  # type: ignore[attr-defined]
    _, key = create_key(store, "solver")
    auth = {"Authorization": f"Bearer {key}", "Idempotency-Key": "lean-verify-1"}
    body = {
        "benchmark": "sftp-drops@1",
        "task_id": "sftp-referral-packet",
        "sandbox": {"run_dir": "good-agent"},
    }
    made = client.post("/v1/verify-task", json=body, headers=auth)
    again = client.post("/v1/verify-task", json=body, headers=auth)
    assert made.status_code == again.status_code == 201, made.text
    assert made.json() == again.json()
    assert made.headers["location"] == again.headers["location"]
    run = client.post(
        "/v1/benchmark-runs",
        json={"benchmark": "sftp-drops@1", "agent": "e2e"},
        headers={"Authorization": f"Bearer {key}"},
    ).json()
    token = {"Authorization": f"Bearer {run['bearer_token']}", "Idempotency-Key": "lean-c-1"}
    url = run["task_runs"][0]["complete_url"]
    done = client.post(url, json={"sandbox": {"run_dir": "good-agent"}}, headers=token)
    replayed = client.post(url, json={"sandbox": {"run_dir": "good-agent"}}, headers=token)
    assert done.status_code == replayed.status_code == 200, done.text
    assert done.json() == replayed.json()


def _example_bodies() -> Iterator[dict[str, Any]]:
    """Every task of every example benchmark on both captured runs, scored and not."""
    for path in sorted(EXAMPLES.glob("*.verial.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for task in data["tasks"]:
            for run in ("good-agent", "flawed-agent"):
                for scored in (False, True):
                    yield {
                        "benchmark": data["benchmark"],
                        "task_id": task["id"],
                        "sandbox": {"run_dir": run},
                        "scored": scored,
                    }


def _answers_equal(made: StoredTaskRun, typed: StoredTaskRun) -> None:
    """The answer verify-task sends (projected from the JSON form, not validated) is the
    response model's, byte for byte as JSON, elided and not, and so is the typed run's."""
    for elide in (False, True):
        model = task_out(typed, elide=elide).model_dump(mode="json")
        assert task_out(made, elide=elide).model_dump(mode="json") == model
        sent = task_answer(made, elide=elide)
        assert json.dumps(sent, ensure_ascii=False) == json.dumps(model, ensure_ascii=False)


def test_the_answer_projected_equals_the_models_for_the_report_fixtures_task_runs() -> None:
    """Judge evidence (llm-rubric, with its judge block and confidence) and every other check
    of the report fixture: the projected answer is the response model's."""
    report = Report.from_json(json.loads(FIXTURE.read_text(encoding="utf-8")))
    plain = report.to_json()
    checked = 0
    for run, run_json in zip(report.benchmark_runs, plain["benchmark_runs"], strict=True):
        for task, task_json in zip(run.task_runs, run_json["task_runs"], strict=True):
            ids = [f"cr_{i}" for i in range(len(task.criterion_runs))]
            typed = StoredTaskRun("tr_1", "br_1", task, ids, "completed", None, run.scored)
            _answers_equal(replace(typed, json=task_json), typed)
            checked += 1
    assert checked >= 5
    assert "rubric_results" in FIXTURE.read_text(encoding="utf-8")
    # what no fixture holds: an int where a float is declared, keys an open model keeps (a
    # task snapshot's own) and keys a closed one drops
    data = task_data(replace(typed, json=task_json), elide=False)
    data["criterion_runs"][0]["weight"] = 2
    data["criterion_runs"][0]["extra_key"] = "dropped"
    data["snapshot"] = {"id": "t", "own_key": {"kept": [1, 2.5]}, "criteria": [{"assertion": {}}]}
    model = TaskRunOut.model_validate(data).model_dump(mode="json")
    assert json.dumps(project(TaskRunOut, data)) == json.dumps(model)
    assert model["criterion_runs"][0]["weight"] == 2.0 and "own_key" in model["snapshot"]


def test_the_answer_and_rows_made_from_the_reports_json_equal_those_made_from_its_types(
    client: TestClient,
) -> None:
    """verify-task makes its report's JSON once and builds both the store's rows and its
    answer from it: for every example task run (scored and not) the answer equals the one
    built from the typed task run, and the session's canonical JSON, digest and row equal
    those made from the report itself."""
    app: Any = client.app
    checked = 0
    for body in _example_bodies():
        try:
            report = app.state.verifier.verify(VerifyTaskIn.model_validate(body))
        except Problem:
            continue  # a task this server cannot score here: no answer to compare
        plain = report.to_json()
        task = report.benchmark_runs[0].task_runs[0]
        ids = [f"cr_{i}" for i in range(len(task.criterion_runs))]
        typed = StoredTaskRun("tr_1", "br_1", task, ids, "completed", None, body["scored"])
        made = replace(typed, json=plain["benchmark_runs"][0]["task_runs"][0])
        _answers_equal(made, typed)
        data, extra = report_split(report, plain)
        assert (data, extra) == report_split(report)
        assert digest_of(data) == digest_of(canonical(report))
        meta = SessionMeta(started_at=report.session.started_at, source="service")
        assert session_row("ses_1", report.session, meta, extra, data["session"]) == session_row(
            "ses_1", report.session, meta, extra
        )
        assert plain == report.to_json()  # left as it was: the rows and answer share it
        checked += 1
    assert checked >= 40


class _Row(BaseModel):
    name: str

    @field_serializer("name")
    def _upper(self, value: str) -> str:
        return value.upper()


class _Nested(BaseModel):
    """A serializer two levels down: in the model of a list's items."""

    rows: list[_Row]


class _Validated(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()


class _Computed(BaseModel):
    name: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def size(self) -> int:
        return len(self.name)


class _Annotated(BaseModel):
    name: Annotated[str, AfterValidator(str.lower)]


class _CriterionWithMore(CriterionRunOut):
    """The projected validator inherited, and one of its own."""

    @field_validator("criterion_id")
    @classmethod
    def _trim(cls, value: str) -> str:
        return value.strip()


@pytest.mark.parametrize(
    ("model", "data", "named"),
    [
        (_Nested, {"rows": [{"name": "a"}]}, "_Row._upper"),
        (_Validated, {"name": " a "}, "_Validated._strip"),
        (_Computed, {"name": "abc"}, "_Computed.size"),
        (_Annotated, {"name": "ABC"}, "_Annotated.name"),
    ],
)
def test_a_model_declaring_a_validator_or_serializer_is_answered_through_the_model(
    model: type[BaseModel], data: dict[str, Any], named: str
) -> None:
    """A validator, serializer or computed field anywhere in an answer's models sends its
    answers through the model: project would answer something else."""
    assert not projectable(model)
    assert any(d.startswith(named) for d in declarations(model)), declarations(model)
    dumped = model.model_validate(data).model_dump(mode="json")
    assert project(model, data) != dumped  # what the guard keeps from being answered
    assert answer_of(model, data) == dumped


def test_the_answer_models_project_and_a_new_validator_in_them_is_found() -> None:
    """verify-task's answer is projected (its one validator is one project stands for); a
    validator added to a criterion run's model is found through the task run's list."""
    assert projectable(TaskRunOut) and declarations(TaskRunOut) == []

    class Answer(TaskRunOut):
        criterion_runs: list[_CriterionWithMore]  # type: ignore[assignment]

    assert not projectable(Answer)
    assert declarations(Answer) == ["_CriterionWithMore._trim: field validator"]


def test_a_kept_sandboxs_rewrite_names_paths_as_one_resolved_per_request(tmp_path: Path) -> None:
    """verify-task on a run folder under --runs-root resolves no folder again for its rewrite
    of paths (the confinement check resolved the sandbox): a sandbox that is a link (to a
    folder elsewhere under --runs-root) is named as relative_to names it, through the link
    and through its target, and the kept rewrite is made once."""
    root = tmp_path.resolve() / "runs"
    target = root / "shared" / "task-a"
    target.mkdir(parents=True)
    run = root / "run-1"
    run.mkdir()
    sandbox = run / "task-a"
    sandbox.symlink_to(target)
    texts = [
        f"{sandbox}/sftp/x.json",
        f"{target}/sftp/x.json",
        f"read {run}/run.yaml and {root}/other/y",
        f"{sandbox}",
        f"{target}",
        "http://judge.internal:8080/v1 said no",
    ]
    judge = "http://judge.internal:8080/v1/"
    fresh = relative_to(sandbox, run, root, judge)
    kept = kept_relative_to(sandbox, sandbox.resolve(), run, root, judge)
    assert [kept.text(t) for t in texts] == [fresh.text(t) for t in texts]
    assert kept.text(texts[1]) == "sftp/x.json"  # the target's own path: hidden too
    assert kept_relative_to(sandbox, sandbox.resolve(), run, root, judge) is kept
