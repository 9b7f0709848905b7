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
from typing import Any

import pytest
from core_support import Project, portal_criterion, run_subprocess

from pytest_verial import EVIDENCE_MODELS, CriterionRun

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._engine import evidence_json as _engine_evidence
from pytest_verial._record import CriterionRecord

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
