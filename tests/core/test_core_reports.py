"""Reports (README, "The JSON report"): JSON, task-level JUnit, pytest's junitxml and the terminal
summary.

Every test runs at ``-n 0`` and ``-n 2``; one child run per worker count serves the module.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from core_support import (
    JUNIT_XSD,
    PRIOR_AUTH_SCORES,
    LazyRuns,
    build_prior_auth_project,
    criterion_runs,
    shared_project,
    strip_timing,
    task_runs,
)

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import report_schema

WORKERS = pytest.mark.parametrize("workers", [0, 2], ids=["n0", "n2"])


@pytest.fixture(scope="module")
def runs(shared_base: Path) -> LazyRuns:
    return LazyRuns(shared_project(shared_base, "reports", build_prior_auth_project))


def test_json_reports_of_n0_and_n2_are_equal_apart_from_timing(runs: LazyRuns) -> None:
    one, two = runs.get(0).report, runs.get(2).report
    assert strip_timing(one) == strip_timing(two)
    # and the timing keys are there in both
    for report in (one, two):
        assert report["session"]["started_at"] and report["session"]["completed_at"]


@WORKERS
def test_json_report_scores(runs: LazyRuns, workers: int) -> None:
    result = runs.get(workers)
    assert result.code == 1  # some criteria failed, no gate asked
    report = result.report
    assert report["schema"] == "pytest-verial/report/v3"
    tasks = task_runs(report)
    assert list(tasks) == list(PRIOR_AUTH_SCORES)  # collection order, files in order
    for task_id, (score, verdict) in PRIOR_AUTH_SCORES.items():
        assert tasks[task_id]["score"] == pytest.approx(score), task_id
        assert tasks[task_id]["verdict"] == verdict, task_id
        assert tasks[task_id]["status"] == "completed"
    assert tasks["pa.verial.yaml::pa-lumbar-mri[john-smith]"]["axes"] == {
        "correctness": {"score": 0.5, "weight": 2.0},
        "safety": {"score": 0.0, "weight": 2.0},
    }
    assert tasks["pa.verial.yaml::referral-cardiology"]["axes"] == {
        "__default__": {"score": 1.0, "weight": 1.0},
        "efficiency": {"score": 1.0, "weight": 0.5},
    }
    # one benchmark run per benchmark file, each the mean of its own tasks
    elig, pa = report["benchmark_runs"]
    assert [elig["benchmark"]["ref"], pa["benchmark"]["ref"]] == ["eligibility", "prior-auth@3"]
    assert (elig["score"], elig["verdict"], elig["strict_success"]) == (1.0, "pass", 1.0)
    pa_scores = [s for t, (s, _) in PRIOR_AUTH_SCORES.items() if t.startswith("pa.")]
    assert pa["score"] == pytest.approx(sum(pa_scores) / 5)
    assert (pa["verdict"], pa["status"]) == ("partial", "completed")
    assert pa["strict_success"] == pytest.approx(2 / 5)
    assert pa["counts"]["verdicts"] == {"pass": 2, "partial": 2, "fail": 1}
    assert report["session"]["counts"]["verdicts"] == {"pass": 3, "partial": 2, "fail": 1}
    assert report["session"]["status"] == "completed"
    crits = criterion_runs(report)
    error = crits["pa.verial.yaml::schedule-follow-up::appointment-booked"]
    assert (error["status"], error["score"]) == ("error", 0.0)
    assert "appointments.json" in error["details"]
    fax = crits["pa.verial.yaml::schedule-follow-up::fax-sent"]
    assert fax["details"] == "unsupported assertion: fax-received"
    john = crits["pa.verial.yaml::pa-lumbar-mri[john-smith]::pa-submitted"]
    assert john["evidence"]["assertionResults"][0]["actual"] == "draft"
    assert john["outcome"] == "failed"
    assert report["session"]["counts"]["criteria_error"] == 1


@WORKERS
def test_json_report_validates_against_its_schema(runs: LazyRuns, workers: int) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = report_schema()  # generated from the result types
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(runs.get(workers).report), key=lambda e: e.path)
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


@WORKERS
def test_json_report_is_written_atomically(runs: LazyRuns, workers: int) -> None:
    result = runs.get(workers)
    json.loads(result.report_path.read_text(encoding="utf-8"))  # complete JSON
    leftovers = [p.name for p in result.report_path.parent.glob(".report-*.tmp")]
    assert leftovers == []


def _xsd() -> object:
    xmlschema = pytest.importorskip("xmlschema")
    if not JUNIT_XSD.is_file():
        pytest.skip(f"JUnit XSD not found at {JUNIT_XSD} (../shared/data/ beside the repo)")
    return xmlschema.XMLSchema(str(JUNIT_XSD))


@WORKERS
def test_verial_junit_validates_against_the_junit_xsd(runs: LazyRuns, workers: int) -> None:
    schema = _xsd()
    errors = list(schema.iter_errors(str(runs.get(workers).junit)))  # type: ignore[attr-defined]
    assert not errors, "\n".join(str(e.reason) + " at " + str(e.path) for e in errors[:5])


@WORKERS
def test_pytest_junitxml_validates_against_the_junit_xsd(runs: LazyRuns, workers: int) -> None:
    schema = _xsd()
    errors = list(schema.iter_errors(str(runs.get(workers).pytest_junit)))  # type: ignore[attr-defined]
    assert not errors, "\n".join(str(e.reason) + " at " + str(e.path) for e in errors[:5])


def _props(element: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in element.iter("property")}


@WORKERS
def test_verial_junit_has_one_suite_per_task_run(runs: LazyRuns, workers: int) -> None:
    root = ET.parse(runs.get(workers).junit).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == list(PRIOR_AUTH_SCORES)
    john = suites["pa.verial.yaml::pa-lumbar-mri[john-smith]"]
    props = {p.get("name"): p.get("value") for p in john.find("properties") or []}
    assert (props["score"], props["verdict"]) == ("0.25", "partial")
    assert props["axis.safety.score"] == "0.0"
    cases = [c.get("name") for c in john.iter("testcase")]
    assert cases == ["pa-submitted", "asks-member-id", "no-secret"]
    assert john.get("failures") == "3" and john.get("tests") == "3"
    schedule = suites["pa.verial.yaml::schedule-follow-up"]
    failure = next(
        c for c in schedule.iter("testcase") if c.get("name") == "appointment-booked"
    ).find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert "appointments.json" in (failure.get("message") or "")


@WORKERS
def test_pytest_junitxml_carries_score_axis_and_weight(runs: LazyRuns, workers: int) -> None:
    """xunit2 allows properties on the suite only: one per criterion field, by node id."""
    root = ET.parse(runs.get(workers).pytest_junit).getroot()
    suite = next(root.iter("testsuite"))
    props = {p.get("name", ""): p.get("value", "") for p in suite.find("properties") or []}
    maria = "pa.verial.yaml::pa-lumbar-mri[maria-chen]::pa-submitted"
    assert {k.rsplit("::", 1)[1]: v for k, v in props.items() if k.startswith(maria + "::")} == {
        "verial_score": "1.0",
        "verial_weight": "2.0",
        "verial_axis": "correctness",
        "verial_status": "passed",
    }
    john = "pa.verial.yaml::pa-lumbar-mri[john-smith]::pa-submitted"
    assert props[f"{john}::verial_score"] == "0.5"
    assert len(list(root.iter("testcase"))) == 13  # 12 criteria and the no-criteria item
    assert all(c.find("properties") is None for c in root.iter("testcase"))


@WORKERS
def test_terminal_summary(runs: LazyRuns, workers: int) -> None:
    output = runs.get(workers).output
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "verial summary" in line)
    table = "\n".join(lines[start:])
    import re

    def row(task: str, score: str, verdict: str) -> None:
        assert re.search(rf"^{re.escape(task)}\s+{score}\s+{verdict}\b", table, re.M), table

    row("pa-lumbar-mri[maria-chen]", "1.000", "pass")
    row("pa-lumbar-mri[john-smith]", "0.250", "partial")
    row("schedule-follow-up", "0.333", "partial")
    row("empty-task", "0.000", "fail")
    row("elig-check", "1.000", "pass")
    assert re.search(r"correctness 0\.50 \(w2\)\s+safety 0\.00 \(w2\)", table), table
    # a table per benchmark run, each with its own run line
    assert re.search(
        r"^benchmark run eligibility on sandbox \(eligibility.verial.json\)\n.*\n"
        r"elig-check .*\nrun score 1\.000, verdict pass, strict success 100%, status completed",
        table,
        re.M,
    ), table
    assert re.search(
        r"^run score 0\.517, verdict partial, strict success 40%, status completed\n"
        r"  5 of 5 task runs scored \(2 pass, 2 partial, 1 fail\)",
        table,
        re.M,
    ), table
    # failing criteria show expected / actual rows
    assert re.search(r"status\s+'submitted-quokka'\s+'draft'\s+FAIL", output), output
    assert re.search(r"cpt\s+'72148-quokka'\s+'72148-quokka'\s+ok", output)
    assert "unsupported assertion: fax-received" in output
    assert "Traceback" not in output
