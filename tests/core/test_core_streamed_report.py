"""The streamed JSON report and JUnit file are the typed writers' files, byte for byte.

At a session's end the recorder no longer builds the typed report whole (every criterion run
a pydantic model) to write the JSON report and the JUnit file: it builds the figures
(``reporting._build.build_light``) and writes each task run's criterion runs from the session's
plain records as it goes (issue 33, BENCHMARKS.md "wave 6"). Here one report input holds every
criterion status (passed, failed, error, gated, skipped, deselected, never run, not evaluated),
points and penalties, a critical failure, three run folders (two trials of one agent, a scored
one), a secret, a lone surrogate, an escape and a bidi override in the details; both ways
write their files, which must be equal, unsigned and signed. The light report's figures must
be the typed report's, and its terminal summary the same lines. (The reports are named
``*.report``: the suite's store round trip of every ``*.json`` report cannot hold a lone
surrogate, which SQLite's driver refuses to encode; a file name that is not UTF-8 puts one there.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from core_support import Project

# private: the writers and the report builder have no public face (issue 32: a test is not a
# user); the record is the engine's
from pytest_verial import _secrets as secrets
from pytest_verial._config.run_folder import RunDir
from pytest_verial._engine import identity
from pytest_verial._loader import load_benchmark
from pytest_verial._nodeids import criterion_nodeid, task_name, task_nodeid
from pytest_verial._record import CriterionRecord
from pytest_verial.checks import default_registry
from pytest_verial.reporting._build import ReportInput, build_light, build_report
from pytest_verial.reporting._json_report import write_json_report, write_json_stream
from pytest_verial.reporting._junit import write_junit, write_junit_stream
from pytest_verial.reporting._terminal import summary

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
EVIDENCE = {"phraseResults": [{"phrase": "hi", "found": False, "turn": 0}], "turns": 1}


def _record(who: dict[str, Any], outcome: str, n: int) -> CriterionRecord:
    times = {
        "started_at": f"2026-01-01T00:00:{n:02d}.000Z",
        "completed_at": f"2026-01-01T00:00:{n:02d}.250Z",
        "duration": 0.25 + n / 1000,
        "outcome": "failed" if outcome in ("failed", "error") else "passed",
    }
    if outcome == "passed":
        return CriterionRecord.scored(who, 1.0, True, details="said hi", evidence={}, **times)
    if outcome == "failed":
        return CriterionRecord.scored(who, 0.0, False, details=DETAILS, evidence=EVIDENCE, **times)
    if outcome == "error":
        return CriterionRecord.errored(who, f"cannot read turns: {DETAILS}", **times)
    if outcome == "unverified":
        return CriterionRecord.unverified(who, "judge unreachable", "no answer", **times)
    if outcome == "gated":
        return CriterionRecord.gated(who, "a deterministic criterion failed", **times)
    return CriterionRecord.skipped(who, "skip_verification", **times)


def _input(path: Path) -> ReportInput:
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
                who = {**identity(criterion, task), "nodeid": nodeid, "task_run": node}
                who |= {"file": "streamed.verial.yaml", "benchmark": "streamed", "run": run.label}
                records[nodeid] = _record(who, outcome, n)
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
    data = _input(tmp_path / "project")
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
    data = _input(tmp_path / "project")
    typed = build_report(data)
    light = build_light(data).report

    def figures(report: Any) -> dict[str, Any]:
        whole = report.to_json()
        for run in whole["benchmark_runs"]:
            for task in run["task_runs"]:
                task.pop("criterion_runs")
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
    data = _input(tmp_path / "project")
    data.selected = set()
    data.criterion_runs = {}
    write_junit(tmp_path / "typed.xml", build_report(data), False)
    write_junit_stream(tmp_path / "streamed.xml", build_light(data), False)
    write_json_report(tmp_path / "typed.report", build_report(data))
    write_json_stream(tmp_path / "streamed.report", build_light(data))
    assert (tmp_path / "streamed.xml").read_bytes() == (tmp_path / "typed.xml").read_bytes()
    assert b"<testsuite " not in (tmp_path / "typed.xml").read_bytes()
    assert (tmp_path / "streamed.report").read_bytes() == (tmp_path / "typed.report").read_bytes()
