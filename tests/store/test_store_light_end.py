"""The store's end from the light report (issue 33): the session's ``report_digest`` made one
task run at a time, and the task runs no batch stored read whole from the session's records.

With the results store on, the session's end used to build the whole typed report (every
criterion run a pydantic model) because the store digested the whole report's canonical JSON.
It now takes the light report (``reporting._build.LightReport``): the digest is fed as the
JSON report is written (``reporting._canonical.CanonicalDigest``), or made in one pass when
there is no JSON report, and must be ``store._rows.digest_of`` of the whole canonical report,
byte for byte: ``verial import`` of the session's own report finds the session by it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from store_support import Project, greeting_project, run_pytest, run_verial

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial import _secrets as secrets
from pytest_verial._config.run_folder import RunDir
from pytest_verial._engine import identity as criterion_identity
from pytest_verial._loader import load_benchmark
from pytest_verial._nodeids import criterion_nodeid, task_name, task_nodeid
from pytest_verial._record import CriterionRecord
from pytest_verial._secrets import redact_json
from pytest_verial.checks import default_registry
from pytest_verial.reporting._build import ReportInput, build_light, build_report
from pytest_verial.reporting._canonical import CanonicalDigest, digest_report, head_of
from pytest_verial.reporting._json_report import (
    load_report,
    write_json_report,
    write_json_stream,
)
from pytest_verial.store import open_store
from pytest_verial.store._rows import canonical, digest_of

SECRET = "sk-light-end-0a1b2c3d4e5f"
#: a secret, a lone surrogate (a file name that is not UTF-8), non-ASCII, an escape, bidi
DETAILS = f"agent said {SECRET} \udcff é 日本 \x1b[31m \u202e"


def _says(cid: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        **extra,
        "assertion": {"assert": "voice-transcript", "speaker": "agent", "contains": ["hi"]},
    }


BENCH: dict[str, Any] = {
    "benchmark": "light-ünïcode",
    "version": 3,
    "tasks": [
        {
            "id": "weighted",
            "name": "Zürich — 東京",
            "criteria": [
                _says("passes", axis="accuracy", weight=2),
                _says("fails", critical=True),
                _says("errs"),
                _says("gated"),
                _says("skipped"),
                _says("unverified", axis="safety"),
                _says("never-run"),
                _says("deselected"),
            ],
        },
        {
            "id": "points",
            "criteria": [
                _says("earned", points=5, axis="accuracy"),
                _says("missed", points=3),
                _says("penalty-applied", points=-2),
                _says("penalty-avoided", points=-1),
            ],
        },
        {"id": "clean", "criteria": [_says("only")]},
        {"id": "cancelled", "criteria": [_says("ran"), _says("not-yet")]},
        {"id": "all-skipped", "criteria": [_says("s1"), _says("s2")]},
    ],
}

OUTCOME = {
    "passes": "passed",
    "fails": "failed",
    "errs": "error",
    "gated": "gated",
    "skipped": "skipped",
    "unverified": "unverified",
    "deselected": "deselected",
    "earned": "passed",
    "missed": "failed",
    "penalty-applied": "passed",
    "penalty-avoided": "failed",
    "only": "passed",
    "ran": "passed",
    "s1": "skipped",
    "s2": "skipped",
}


def _record(who: dict[str, Any], outcome: str, n: int) -> CriterionRecord:
    times = {
        "started_at": f"2026-01-01T00:00:{n:02d}.000Z",
        "completed_at": f"2026-01-01T00:00:{n:02d}.250Z",
        "duration": 0.25 + n / 1000,
        "outcome": "failed" if outcome in ("failed", "error") else "passed",
    }
    evidence = {"phraseResults": [{"phrase": "hi", "found": False, "turn": 0}], "turns": 1}
    if outcome == "passed":
        return CriterionRecord.scored(who, 1.0, True, details="said hi", evidence={}, **times)
    if outcome == "failed":
        return CriterionRecord.scored(who, 0.0, False, details=DETAILS, evidence=evidence, **times)
    if outcome == "error":
        return CriterionRecord.errored(who, f"cannot read turns: {DETAILS}", **times)
    if outcome == "unverified":
        return CriterionRecord.unverified(who, "judge unreachable", DETAILS, **times)
    if outcome == "gated":
        return CriterionRecord.gated(who, "a deterministic criterion failed", **times)
    return CriterionRecord.skipped(who, "skip_verification", **times)


def _input(path: Path, trials: bool, interrupted: bool) -> ReportInput:
    """Every criterion status, two agents' trials (r1, r2) and a scored run folder (r3)."""
    path.mkdir(parents=True, exist_ok=True)
    project = Project(path)
    bench = project.benchmark("light", BENCH)
    for label, run in (("r1", {"agent": "a"}), ("r2", {"agent": "a"}), ("r3", {"scored": True})):
        project.run_yaml({**run, "agent": run.get("agent", "b")}, run=label)
    display = "light-é.verial.yaml"
    plan = load_benchmark(bench, default_registry(), display)
    runs = [RunDir(path / label) for label in ("r1", "r2", "r3")]
    records: dict[str, CriterionRecord] = {}
    selected: set[str] = set()
    n = 0
    for run in runs:
        for task in plan.tasks:
            node = task_nodeid(display, task_name(task.key, run.label, True))
            for criterion in task.criteria:
                nodeid = criterion_nodeid(node, criterion.id)
                outcome = OUTCOME.get(criterion.id)
                if outcome == "deselected":
                    continue
                selected.add(nodeid)
                if outcome is None:
                    continue
                n += 1
                who = {**criterion_identity(criterion, task), "nodeid": nodeid, "task_run": node}
                who |= {"file": display, "benchmark": "light-ünïcode", "run": run.label}
                records[nodeid] = _record(who, outcome, n)
    return ReportInput(
        files=[(display, plan)],
        file_runs={display: runs},
        runs=runs,
        selected=selected,
        criterion_runs=records,
        pass_threshold=None,
        scored=False,
        started_at="2026-01-01T00:00:00.000Z",
        completed_at="2026-01-01T00:01:00.000Z",
        duration=60.25,
        interrupted=interrupted,
        collection_errors=[{"nodeid": "broken.verial.yaml", "message": f"bad {SECRET} é"}],
        trials=trials,
        exit_status=2 if interrupted else 1,
        extra_warnings=["an assert no check knows: ünïcode"],
    )


@contextmanager
def _secret() -> Iterator[None]:
    """SECRET registered (the registry is process-wide: restored after)."""
    saved = set(secrets._SECRETS)
    secrets.register(SECRET)
    try:
        yield
    finally:
        secrets.reset()
        for value in saved:
            secrets.register(value)


def _blocks(light: Any) -> Iterator[Iterator[dict[str, Any]]]:
    report = light.report
    for r, run in enumerate(report.benchmark_runs):
        yield (redact_json(light.task_json(r, i, t)) for i, t in enumerate(run.task_runs))


@pytest.mark.parametrize("trials", [False, True], ids=["agents", "trials"])
@pytest.mark.parametrize("interrupted", [False, True], ids=["completed", "interrupted"])
def test_the_streamed_digest_is_the_whole_canonical_reports(
    tmp_path: Path, trials: bool, interrupted: bool
) -> None:
    """Fed as the JSON report is written (its seal then in the report), and in one pass with
    no JSON report: the same digest as ``digest_of`` of the whole typed report's canonical
    JSON, secrets masked, every status, non-ASCII and a lone surrogate in it."""
    data = _input(tmp_path / "project", trials, interrupted)
    with _secret():
        typed = build_report(data)
        whole_unsealed = canonical(typed)
        light = build_light(data)
        assert digest_report(head_of(light.report), _blocks(light)) == digest_of(whole_unsealed)

        fed = CanonicalDigest(head_of(light.report))
        write_json_stream(tmp_path / "streamed.report", light, fed)
        write_json_report(tmp_path / "typed.report", typed)
        whole = canonical(typed)  # now with the file's seal, as the store's end has it
        sizes = [len(r.task_runs) for r in light.report.benchmark_runs]
        streamed = fed.hexdigest(head_of(light.report), sizes)

    text = json.dumps(whole, ensure_ascii=False)
    assert SECRET not in text and "\udcff" in text and "日本" in text and "integrity" in whole
    tasks = [t for r in whole["benchmark_runs"] for t in r["task_runs"]]
    statuses = {t["status"] for t in tasks} | {
        c["status"] for t in tasks for c in t["criterion_runs"]
    }
    assert statuses >= {"passed", "failed", "error", "gated", "skipped", "deselected", "not_run"}
    assert "cancelled" in statuses  # a task run the session never finished
    # agents: r1 + r2 (agent a) one run, r3 (agent b) another; trials: all three one run
    assert len(whole["benchmark_runs"]) == (1 if trials else 2)
    assert whole["benchmark_runs"][0]["trials"] is not None
    assert streamed == digest_of(whole)
    assert streamed != digest_of(whole_unsealed)


def test_a_digest_fed_out_of_order_or_short_is_refused(tmp_path: Path) -> None:
    """A JSON report not written whole (a full disk half way): the store's end digests the
    report afresh rather than storing a digest of part of it."""
    data = _input(tmp_path / "project", False, False)
    light = build_light(data)
    head = head_of(light.report)
    sizes = [len(r.task_runs) for r in light.report.benchmark_runs]
    blocks = [list(b) for b in _blocks(light)]
    short = CanonicalDigest(head)
    for task in blocks[0][:-1]:
        short.task(0, task)
    assert short.hexdigest(head, sizes) is None
    backwards = CanonicalDigest(head)
    backwards.task(1, blocks[1][0])
    backwards.task(0, blocks[0][0])
    assert backwards.hexdigest(head, sizes) is None


#: the judge's plugin annotates the typed report whole (feedback, the verification summary):
#: with it registered, the session's end builds the whole report (``_recorder._typed``)
NO_JUDGE = ("-p", "no:verial-judge")


def _default(path: Path) -> str:
    return f"sqlite:///{path / '.verial' / 'results.db'}"


#: Ctrl-C at t002's second criterion, a batch boundary after each task run (t001 is stored
#: by its batch, t002 and t003 are cancelled: the end stores them); the store's end says what
#: it was handed
INTERRUPTED = """
import json
import pytest
# private: the recorder's batch size, and a look at what the store's end is handed
import pytest_verial._recorder as recorder
from pytest_verial.store._core import SessionWriter

recorder.BATCH_TASK_RUNS = 1
finish = SessionWriter.finish


def spied(self, report, hooked=True, plain=None, light=None):
    with open("end.json", "w") as out:
        json.dump({
            "light": light is not None,
            "criterion_runs": sum(len(t.criterion_runs) for t in report.task_runs()),
            "stored_by_batches": sorted(self.written),
        }, out)
    return finish(self, report, hooked, plain, light)


SessionWriter.finish = spied


def pytest_runtest_setup(item):
    if item.nodeid.endswith("t002::c2"):
        raise KeyboardInterrupt
"""


@pytest.mark.parametrize("report", [True, False], ids=["json-report", "no-report"])
def test_an_interrupted_session_stores_its_cancelled_task_runs_whole(
    tmp_path: Path, report: bool
) -> None:
    """The task runs no batch stored (cancelled by the Ctrl-C) are stored by the end with
    every criterion run, read from the session's records; the end is handed the light report
    (not every criterion run typed) and the session's digest is the whole report's: with a
    JSON report, importing it finds the session."""
    project = greeting_project(tmp_path, tasks=3, criteria=2)
    project.conftest(INTERRUPTED)
    args = ["--verial-report", "report.json"] if report else []
    done = run_pytest(tmp_path, "-n", "0", *NO_JUDGE, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    end = json.loads((tmp_path / "end.json").read_text())
    assert end["light"] and end["criterion_runs"] < 6
    assert [t.rpartition("::")[2] for t in end["stored_by_batches"]] == ["t001"]
    with open_store(_default(tmp_path), create=False) as store:
        (row,) = store.list_runs()
        stored = store.report_of_session(row.session_id)
    tasks = {t.id.rpartition("::")[2]: t for t in stored.task_runs()}
    assert {k: t.status.value for k, t in tasks.items()} == {
        "t001": "completed",
        "t002": "cancelled",
        "t003": "cancelled",
    }
    assert [(c.criterion_id, c.status.value) for c in tasks["t002"].criterion_runs] == [
        ("c1", "passed"),
        ("c2", "not_run"),
    ]
    assert [c.status.value for c in tasks["t003"].criterion_runs] == ["not_run", "not_run"]
    db = sqlite3.connect(tmp_path / ".verial" / "results.db")
    (criterion_rows,) = db.execute("select count(*) from criterion_runs").fetchone()
    (digest,) = db.execute("select report_digest from sessions").fetchone()
    assert criterion_rows == 6
    if report:
        written = load_report(tmp_path / "report.json")
        assert stored.to_json() == written.to_json()
        assert digest == digest_of(canonical(written))
        again = run_verial(tmp_path, "import", "report.json")
        assert again.returncode == 0 and "already stored as " + row.session_id in again.stdout
    else:
        assert stored.integrity is None
        assert digest == digest_of(canonical(stored))


def test_a_completed_session_stores_the_light_end_as_the_whole_one(tmp_path: Path) -> None:
    """No Ctrl-C: every task run stored by its batch, the end handed the light report; the
    store's report is the JSON report, and `verial export` writes it back."""
    project = greeting_project(tmp_path, tasks=4, criteria=3)
    project.conftest(INTERRUPTED.split("def pytest_runtest_setup")[0])
    done = run_pytest(tmp_path, "-n", "0", *NO_JUDGE, "--verial-report", "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    end = json.loads((tmp_path / "end.json").read_text())
    assert end["light"] and end["criterion_runs"] < 12 and len(end["stored_by_batches"]) == 4
    written = load_report(tmp_path / "report.json")
    with open_store(_default(tmp_path), create=False) as store:
        (row,) = store.list_runs()
        assert store.report_of_session(row.session_id).to_json() == written.to_json()
    (digest,) = (
        sqlite3.connect(tmp_path / ".verial" / "results.db")
        .execute("select report_digest from sessions")
        .fetchone()
    )
    assert digest == digest_of(canonical(written))
    out = run_verial(tmp_path, "export", "latest", "-o", "exported.json")
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "exported.json").read_text()) == json.loads(
        (tmp_path / "report.json").read_text()
    )
