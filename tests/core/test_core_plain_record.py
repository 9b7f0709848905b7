"""The plain criterion record (issue 33) writes exactly what the typed criterion run wrote.

The engine returns a :class:`CriterionRecord` instead of a validated ``CriterionRun``; the
journal line, the xdist JSON, the store's rows and the report all come from its ``to_json()``.
Every shape a criterion run can have (each status, points and penalties, not evaluated, the
evidence of each check family) is built both ways here and the two JSON forms compared key by
key, in order. A check's bad value is still refused, now by the record and the evidence model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from core_support import Project, portal_criterion, run_subprocess

from pytest_verial import EVIDENCE_MODELS, CriterionRun

# private: internals with no public face (issue 32: a test is not a user); the streamed
# report's writers and builder too, and the judge's annotations of it
from pytest_verial import _secrets as secrets
from pytest_verial._config.run_folder import RunDir
from pytest_verial._engine import evidence_json as _engine_evidence
from pytest_verial._engine import identity as criterion_identity
from pytest_verial._loader import load_benchmark
from pytest_verial._nodeids import criterion_nodeid, task_name, task_nodeid
from pytest_verial._record import CriterionRecord
from pytest_verial.checks import default_registry
from pytest_verial.judge_plugin import JudgeReporting
from pytest_verial.reporting._build import ReportInput, build_light, build_report
from pytest_verial.reporting._json_report import write_json_report, write_json_stream
from pytest_verial.reporting._junit import write_junit, write_junit_stream
from pytest_verial.reporting._terminal import summary

IDENTITY: dict[str, Any] = {
    "criterion_id": "c1",
    "label": "appointment booked",
    "assert": "fhir-resource-state",
    "axis": "safety",
    "weight": 2.0,
    "points": None,
    "critical": True,
    "judge": False,
    "line": 12,
    "task_key": "book",
    "task_id": "book",
    "entity": None,
    "nodeid": "bench.yaml::book::c1",
    "task_run": "bench.yaml::book",
    "file": "bench.yaml",
    "benchmark": "bench",
    "run": "run-1",
    "pass_threshold": 1.0,
}
TIMES = {"started_at": "2026-01-01T00:00:00.000Z", "completed_at": "2026-01-01T00:00:00.010Z"}
ROW = {"path": "status", "expected": "booked", "actual": "pending", "passed": False}

#: evidence as a check of each family writes it (keys out of model order, extra keys, ints
#: where the model has floats): the record must write what the typed run's model wrote
EVIDENCE: dict[str, dict[str, Any]] = {
    "fhir-resource-state": {
        "total": 1,
        "fieldResults": [ROW, {"path": "x", "op": "exists", "passed": True, "quantifier": "all"}],
        "resource": {"type": "Appointment", "id": "a1"},
        "query": "Appointment?patient=p1",
        "mine": [1, 2],
    },
    "hl7-structural": {"field_results": [ROW], "candidates": 2, "message": None},
    "portal-state-match": {"assertionResults": [ROW], "row_key": "r1", "row_index": 0},
    "sftp-file-present": {"matched_paths": ["a.csv"], "fieldResults": [], "matched_count": 1},
    "voice-transcript": {
        "phraseResults": [{"phrase": "hello", "found": True, "turn": 0, "similarity": 1}],
        "turns": 3,
    },
    "x12-response": {"fieldResults": [ROW], "transaction": {"st": "271"}, "candidates": 1},
    "output-match": {"output": "text", "fieldResults": [ROW], "words": 1},
    "llm-rubric": {
        "rubric_results": [{"principle": "p", "rating": 4, "reasoning": "ok", "score": 1}],
        "judge": {"model": "m", "called": True},
        "confidence": 1,
        "threshold": 0.5,
    },
    "my-conftest-check": {"anything": {"nested": [1, "two"]}, "error": "ValueError"},
}


def _both(kind: str, identity: dict[str, Any], *args: Any, **result: Any) -> tuple[Any, Any]:
    """The typed run's JSON form and the record's, built by the same constructor."""
    typed = getattr(CriterionRun, kind)(identity, *args, **result)
    if "evidence" in result:
        result = {**result, "evidence": _engine_evidence(identity["assert"], result["evidence"])}
    record = getattr(CriterionRecord, kind)(identity, *args, **result)
    return typed.to_json(), record.to_json()


def _same(typed: dict[str, Any], record: dict[str, Any]) -> None:
    assert list(record) == list(typed)
    assert record == typed
    # the same text: a float stays a float (1.0, not 1), and so on
    assert json.dumps(record) == json.dumps(typed)


@pytest.mark.parametrize("assertion", sorted(EVIDENCE))
@pytest.mark.parametrize("passed", [True, False])
def test_a_scored_run_of_each_check_family_writes_what_the_typed_run_wrote(
    assertion: str, passed: bool
) -> None:
    identity = {**IDENTITY, "assert": assertion}
    typed, record = _both(
        "scored",
        identity,
        0.75,
        passed,
        details="1 of 2 fields",
        evidence=EVIDENCE[assertion],
        duration=0.01,
        **TIMES,
    )
    _same(typed, record)


@pytest.mark.parametrize(
    "kind, args, extra",
    [
        ("errored", ("source unusable",), {"evidence": {"error": "SourceError"}}),
        ("errored", ("source unusable",), {}),
        ("unverified", ("judge unreachable", "not evaluated: judge unreachable"), {}),
        ("gated", ("gated: c0 failed",), {"evidence": EVIDENCE["llm-rubric"]}),
        ("skipped", ("verification skipped",), {"evidence": {}}),
        ("deselected", (), None),
        ("not_run", (), None),
    ],
)
@pytest.mark.parametrize("points", [None, 3, -2])
def test_every_status_writes_what_the_typed_run_wrote(
    kind: str, args: tuple[Any, ...], extra: dict[str, Any] | None, points: int | None
) -> None:
    identity = {**IDENTITY, "assert": "llm-rubric", "judge": True, "points": points}
    result = {} if extra is None else {**extra, "duration": 0.0, **TIMES}
    _same(*_both(kind, identity, *args, **result))


@pytest.mark.parametrize("points", [3, -2])
@pytest.mark.parametrize("passed", [True, False])
def test_met_follows_from_the_status_as_on_the_typed_run(points: int, passed: bool) -> None:
    identity = {**IDENTITY, "points": points, "entity": "patient-1", "label": None}
    typed, record = _both("scored", identity, 1.0 if passed else 0.0, passed, details="")
    _same(typed, record)
    assert record["met"] is passed


def test_an_xdist_record_round_trips_and_keeps_its_outcome() -> None:
    record = CriterionRecord.scored(
        IDENTITY, 0.5, False, details="d", evidence=_engine_evidence("x", {"k": 1}), **TIMES
    )
    record.outcome = "failed"
    back = CriterionRecord.from_json(json.loads(json.dumps(record.to_json())))
    assert back == record
    typed = CriterionRun.of(back)
    assert typed.outcome == "failed" and typed.to_json() == record.to_json()


def test_a_typed_run_read_from_a_report_becomes_the_same_record() -> None:
    typed = CriterionRun.scored(
        IDENTITY, 1.0, True, details="ok", evidence=EVIDENCE["x12-response"]
    )
    typed.outcome = "passed"
    assert CriterionRecord.of(typed).to_json() == typed.to_json()


def test_a_non_finite_number_is_kept_as_the_typed_run_kept_it() -> None:
    identity = {**IDENTITY, "weight": math.inf}
    typed, record = _both("scored", identity, 0.5, True, duration=math.nan, details="")
    assert list(record) == list(typed)
    assert record["weight"] == typed["weight"] == math.inf
    assert math.isnan(record["duration"]) and math.isnan(typed["duration"])
    for key in set(record) - {"duration"}:
        assert record[key] == typed[key], key


@pytest.mark.parametrize(
    "field, value",
    [("details", 12), ("label", ["a"]), ("score", "high"), ("points", 1.5), ("evidence", [1])],
)
def test_a_bad_value_is_refused_naming_its_field(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"field {field}"):
        CriterionRecord({**IDENTITY, "status": "passed", field: value})


def test_evidence_of_the_wrong_type_for_its_check_is_refused() -> None:
    with pytest.raises(ValueError, match="total"):
        _engine_evidence("fhir-resource-state", {"total": "many"})


@pytest.mark.parametrize("assertion", sorted({*EVIDENCE_MODELS, "my-conftest-check"}))
def test_empty_evidence_is_empty_in_every_model(assertion: str) -> None:
    """The engine skips the evidence model for ``{}`` (most passing checks): every model
    writes ``{}`` for it too."""
    typed = CriterionRun.scored({**IDENTITY, "assert": assertion}, 1.0, True, evidence={})
    assert typed.to_json()["evidence"] == {} == _engine_evidence(assertion, {})


def test_collect_only_loads_no_result_or_evidence_model(project: Project) -> None:
    """``pytest --co`` builds no criterion run, so the result and evidence models (the bulk of
    the plugin's pydantic classes) stay unimported: issue 33's start-up target."""
    project.benchmark("pa", {"tasks": [{"id": "pa", "criteria": [portal_criterion(
        "submitted", "prior_auth_requests", None, None, [{"path": "status", "expected": "x"}]
    )]}]})  # fmt: skip
    project.sandbox("pa", {"portal/prior_auth_requests.json": [{"status": "x"}]})
    (project.path / "conftest.py").write_text(LOADED_MODULES, encoding="utf-8")
    code, output = run_subprocess(project.path, "--co", "--verial-report", "r.json")
    assert code == 0, output[-2000:]
    loaded = set(json.loads((project.path / "modules.json").read_text(encoding="utf-8")))
    assert "pytest_verial._record" in loaded  # the plugin did load
    heavy = {"pytest_verial._results", "pytest_verial._evidence", "pytest_verial.reporting._build"}
    assert not loaded & heavy, sorted(loaded & heavy)


LOADED_MODULES = """
import json, sys

def pytest_sessionfinish(session):
    with open("modules.json", "w") as out:
        json.dump(sorted(m for m in sys.modules if m.startswith("pytest_verial")), out)
"""

# -- the streamed report: the session's end writes the files from the records ---------------
# At a session's end the recorder no longer builds the typed report whole (every criterion
# run a pydantic model) to write the JSON report and the JUnit file: it builds the figures
# (``reporting._build.build_light``) and writes each task run's criterion runs from the
# session's plain records as it goes (issue 33, BENCHMARKS.md "wave 6"). One report input
# holds every criterion status (passed, failed, error, gated, skipped, deselected, never run,
# not evaluated), points and penalties, a critical failure, three run folders (two trials of
# one agent, a scored one), a secret, a lone surrogate, an escape and a bidi override in the
# details; both ways write their files, which must be equal, unsigned and signed. The light
# report's figures must be the typed report's, and its terminal summary the same lines. (The
# reports are named ``*.report``: the suite's store round trip of every ``*.json`` report
# cannot hold a lone surrogate, which SQLite's driver refuses to encode.)

SECRET = "sk-streamed-9f8e7d6c5b4a"


def _says(cid: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        **extra,
        "assertion": {"assert": "voice-transcript", "speaker": "agent", "contains": ["hi"]},
    }


BENCH: dict[str, Any] = {
    "benchmark": "streamed",
    "version": 2,
    "tasks": [
        {
            "id": "weighted",
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

#: each criterion's outcome (absent: never run; "deselected": not in the session)
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
#: details quoting the sandbox: a secret, a lone surrogate, an escape, a bidi override
DETAILS = f"agent said {SECRET} \udcff \x1b[31m \u202e é"
SAID_EVIDENCE = {"phraseResults": [{"phrase": "hi", "found": False, "turn": 0}], "turns": 1}


def _said_record(who: dict[str, Any], outcome: str, n: int) -> CriterionRecord:
    times = {
        "started_at": f"2026-01-01T00:00:{n:02d}.000Z",
        "completed_at": f"2026-01-01T00:00:{n:02d}.250Z",
        "duration": 0.25 + n / 1000,
        "outcome": "failed" if outcome in ("failed", "error") else "passed",
    }
    if outcome == "passed":
        return CriterionRecord.scored(who, 1.0, True, details="said hi", evidence={}, **times)
    if outcome == "failed":
        return CriterionRecord.scored(
            who, 0.0, False, details=DETAILS, evidence=SAID_EVIDENCE, **times
        )
    if outcome == "error":
        return CriterionRecord.errored(who, f"cannot read turns: {DETAILS}", **times)
    if outcome == "unverified":
        return CriterionRecord.unverified(who, "judge unreachable", "no answer", **times)
    if outcome == "gated":
        return CriterionRecord.gated(who, "a deterministic criterion failed", **times)
    return CriterionRecord.skipped(who, "skip_verification", **times)


def _stream_input(path: Path) -> ReportInput:
    path.mkdir(parents=True, exist_ok=True)
    project = Project(path)
    bench = project.benchmark("streamed", BENCH)
    for label, run in (("r1", {"agent": "a"}), ("r2", {"agent": "a"}), ("r3", {"scored": True})):
        project.run_yaml({**run, "agent": run.get("agent", "b")}, run=label)
    plan = load_benchmark(bench, default_registry(), "streamed.verial.yaml")
    runs = [RunDir(path / label) for label in ("r1", "r2", "r3")]
    records: dict[str, CriterionRecord] = {}
    selected: set[str] = set()
    n = 0
    for run in runs:
        for task in plan.tasks:
            node = task_nodeid("streamed.verial.yaml", task_name(task.key, run.label, True))
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
                who |= {"file": "streamed.verial.yaml", "benchmark": "streamed", "run": run.label}
                records[nodeid] = _said_record(who, outcome, n)
    return ReportInput(
        files=[("streamed.verial.yaml", plan)],
        file_runs={"streamed.verial.yaml": runs},
        runs=runs,
        selected=selected,
        criterion_runs=records,
        pass_threshold=None,
        scored=False,
        started_at="2026-01-01T00:00:00.000Z",
        completed_at="2026-01-01T00:01:00.000Z",
        duration=60.25,
        interrupted=False,
        collection_errors=[{"nodeid": "broken.verial.yaml", "message": f"bad {SECRET}"}],
        exit_status=1,
        extra_warnings=["an assert no check knows"],
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


@pytest.mark.parametrize("whole", [False, True], ids=["light", "whole"])
@pytest.mark.parametrize("signed", [False, True], ids=["sha256", "hmac"])
def test_streamed_files_are_the_typed_writers_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signed: bool, whole: bool
) -> None:
    """``whole``: the light report built with every criterion run (the store is on)."""
    if signed:
        monkeypatch.setenv("VERIAL_SIGNING_KEY", "a-signing-key-for-the-test")
    data = _stream_input(tmp_path / "project")
    out = tmp_path / "out"
    with _secret():
        typed = build_report(data)
        light = build_light(data, whole=whole)
        write_json_report(out / "typed.report", typed)
        write_json_stream(out / "streamed.report", light)
        write_junit(out / "typed.xml", typed, False)
        write_junit_stream(out / "streamed.xml", light, False)
        write_junit(out / "typed-scored.xml", typed, True)
        write_junit_stream(out / "streamed-scored.xml", light, True)

    report = (out / "typed.report").read_bytes()
    statuses = {
        c["status"] for t in typed.task_runs() for c in [c.to_json() for c in t.criterion_runs]
    }
    assert statuses == {"passed", "failed", "error", "gated", "skipped", "deselected", "not_run"}
    assert {t.status.value for t in typed.task_runs()} == {
        "completed",
        "incomplete",
        "cancelled",
        "skipped",
    }
    assert SECRET.encode() not in report and b"\\udcff" in report
    assert (b'"digest":"hmac-sha256:' in report) is signed
    assert (out / "streamed.report").read_bytes() == report
    assert light.report.integrity == typed.integrity
    assert (out / "streamed.xml").read_bytes() == (out / "typed.xml").read_bytes()
    assert (out / "streamed-scored.xml").read_bytes() == (out / "typed-scored.xml").read_bytes()
    assert b"failure" in (out / "typed.xml").read_bytes()


def test_the_light_reports_figures_and_summary_are_the_typed_reports(tmp_path: Path) -> None:
    data = _stream_input(tmp_path / "project")
    typed = build_report(data)
    streamed = build_light(data)
    light = streamed.report

    def figures(report: Any) -> dict[str, Any]:
        whole = report.to_json()
        for r, run in enumerate(whole["benchmark_runs"]):
            for i, task in enumerate(run["task_runs"]):
                task.pop("criterion_runs")
                if report is light:  # its snapshots are the plan's: the writers dump them
                    task["snapshot"] = streamed.task_head(
                        r, i, light.benchmark_runs[r].task_runs[i]
                    )["snapshot"]
        return dict(whole)

    assert figures(light) == figures(typed)
    assert light.benchmark_runs[0].trials is not None  # r1 and r2: trials of agent a
    kept = sum(len(t.criterion_runs) for t in light.task_runs())
    assert 0 < kept < sum(len(t.criterion_runs) for t in typed.task_runs())
    for verbosity in (-2, -1, 0, 1):
        for failures in (False, True):
            how = {"verbosity": verbosity, "width": 100, "failures": failures}
            assert summary(light, **how) == summary(typed, **how)


def test_a_task_with_no_runs_left_writes_the_empty_junit_file(tmp_path: Path) -> None:
    """Nothing selected: the report has no benchmark run; both JUnit files are empty."""
    data = _stream_input(tmp_path / "project")
    data.selected = set()
    data.criterion_runs = {}
    write_junit(tmp_path / "typed.xml", build_report(data), False)
    write_junit_stream(tmp_path / "streamed.xml", build_light(data), False)
    write_json_report(tmp_path / "typed.report", build_report(data))
    write_json_stream(tmp_path / "streamed.report", build_light(data))
    assert (tmp_path / "streamed.xml").read_bytes() == (tmp_path / "typed.xml").read_bytes()
    assert b"<testsuite " not in (tmp_path / "typed.xml").read_bytes()
    assert (tmp_path / "streamed.report").read_bytes() == (tmp_path / "typed.report").read_bytes()


# The judge's reporting plugin is registered whenever pytest-verial is installed, and its
# ``annotate`` writes each failed or partial task run's ``feedback`` and the session's
# verification summary. The session's end streams a light report also with the judge on,
# keeping typed the criterion runs ``annotate`` reads (``JudgeReporting.keeps``): the JSON
# report written from it must be the one the whole typed report writes.

#: criterion runs made judged: a judge criterion that ran, one gated, one not evaluated
JUDGED = {"passes", "gated", "unverified", "earned"}


def _judged(data: ReportInput) -> ReportInput:
    for nodeid, record in list(data.criterion_runs.items()):
        if nodeid.rsplit("::", 1)[-1] in JUDGED:
            data.criterion_runs[nodeid] = CriterionRecord.from_json(
                {**record.to_json(), "judge": True}
            )
    return data


def _annotator() -> JudgeReporting:
    return JudgeReporting(config=None, options={})  # type: ignore[arg-type]


def test_the_judges_annotations_of_the_light_report_are_the_whole_reports(
    tmp_path: Path,
) -> None:
    data = _judged(_stream_input(tmp_path / "project"))
    judge = _annotator()
    with _secret():
        typed = build_report(data)
        judge.annotate(typed)
        whole_summary = judge.summary
        light = build_light(data, keep=JudgeReporting.keeps)
        judge.annotate(light.report)
        write_json_report(tmp_path / "typed.report", typed)
        write_json_stream(tmp_path / "streamed.report", light)

    assert judge.summary == whole_summary
    judged = sum(1 for r in data.criterion_runs.values() if r.judge)
    assert whole_summary is not None and whole_summary["judge_criteria"] == judged > 0
    feedback = [t.feedback for t in typed.task_runs() if t.feedback]
    assert feedback and [t.feedback for t in light.report.task_runs() if t.feedback] == feedback
    assert (tmp_path / "streamed.report").read_bytes() == (tmp_path / "typed.report").read_bytes()


def test_without_the_judges_keep_the_light_report_loses_what_annotate_reads(
    tmp_path: Path,
) -> None:
    """The keep matters: light without it, the summary counts fewer judged runs."""
    data = _judged(_stream_input(tmp_path / "project"))
    judge = _annotator()
    typed = build_report(data)
    judge.annotate(typed)
    whole: Any = judge.summary
    judge.annotate(build_light(data).report)
    assert judge.summary is not None and judge.summary["judge_criteria"] < whole["judge_criteria"]
