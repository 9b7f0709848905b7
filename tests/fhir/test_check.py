"""The ``fhir-resource-state`` check on a snapshot: targets, fields, match, count, baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import VERIAL_EXAMPLE, run
from pydantic import ValidationError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError, SourceError
from pytest_verial._models import Benchmark

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.checks._fhir import FhirResourceState

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._fhir import SnapshotSource

RIVERA = {"reference": "Practitioner/rivera", "display": "Dr. Rivera"}
JOHN = {"reference": "Patient/john-smith", "display": "John Smith"}


def _write(directory: Path, name: str, data: Any) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    (directory / name).write_text(text, encoding="utf-8")


def _appointment(aid: str, status: str, doctor: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "Appointment",
        "id": aid,
        "status": status,
        "participant": [
            {"actor": doctor, "status": "accepted"},
            {"actor": JOHN, "status": "accepted"},
        ],
        **extra,
    }


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    fhir = tmp_path / "fhir"
    _write(
        fhir,
        "appointments.json",
        {
            "resourceType": "Bundle",
            "type": "collection",
            "entry": [
                {"resource": _appointment("a1", "booked", RIVERA, meta={"versionId": "3"})},
                {
                    "resource": _appointment(
                        "a2", "booked", {"reference": "Practitioner/lee", "display": "Dr. Lee"}
                    )
                },
                {"resource": _appointment("a3", "cancelled", RIVERA)},
            ],
        },
    )
    _write(
        fhir,
        "meds.ndjson",
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "resourceType": "MedicationRequest",
                    "id": "m1",
                    "status": "active",
                    "intent": "order",
                    "subject": {"reference": "Patient/john-smith"},
                    "medicationCodeableConcept": {
                        "coding": [
                            {
                                "system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                                "code": "860975",
                            }
                        ]
                    },
                    "dosageInstruction": [
                        {
                            "text": "500 mg twice daily",
                            "doseAndRate": [{"doseQuantity": {"value": 500, "unit": "mg"}}],
                        }
                    ],
                },
                {
                    "resourceType": "MedicationRequest",
                    "id": "m0",
                    "status": "stopped",
                    "intent": "order",
                    "subject": {"reference": "Patient/john-smith"},
                    "medicationCodeableConcept": {"coding": [{"code": "314076"}]},
                },
            ]
        )
        + "\n",
    )
    _write(
        tmp_path / "fhir-baseline",
        "seed.json",
        {
            "resourceType": "Bundle",
            "type": "collection",
            "entry": [
                {
                    "resource": _appointment(
                        "a2", "booked", {"reference": "Practitioner/lee", "display": "Dr. Lee"}
                    )
                },
                {
                    "resource": {
                        "resourceType": "MedicationRequest",
                        "id": "m0",
                        "status": "active",
                        "intent": "order",
                        "subject": {"reference": "Patient/john-smith"},
                        "medicationCodeableConcept": {"coding": [{"code": "314076"}]},
                    }
                },
            ],
        },
    )
    return tmp_path


def source(path: Path) -> SnapshotSource:
    return SnapshotSource(path / "fhir", path / "fhir-baseline")


def test_verial_example_unchanged(sandbox: Path) -> None:
    outcome = run(source(sandbox), VERIAL_EXAMPLE)
    assert outcome.score == 1.0
    assert outcome.evidence == {
        "fieldResults": [
            {
                "path": "participant.0.actor.display",
                "expected": "Dr. Rivera",
                "actual": "Dr. Rivera",
                "passed": True,
            }
        ],
        "resource": {"type": "Appointment", "id": "a1", "version": "3"},
        "query": "Appointment?patient=Patient/john-smith&status=booked",
        "total": 2,
    }


def test_no_target_scores_zero(sandbox: Path) -> None:
    outcome = run(source(sandbox), {**VERIAL_EXAMPLE, "search": {"status": "noshow"}})
    assert outcome.score == 0.0
    assert outcome.evidence["resource"] is None and outcome.evidence["total"] == 0
    assert "no resource matched" in outcome.details


def test_partial_score_is_passed_over_all(sandbox: Path) -> None:
    outcome = run(
        source(sandbox),
        {
            **VERIAL_EXAMPLE,
            "fields": [
                {"path": "participant.0.actor.display", "expected": "Dr. Rivera"},
                {"path": "status", "expected": "arrived"},
                {"path": "participant.1.actor.reference", "expected": "Patient/john-smith"},
                {"path": "participant.5.actor", "op": "absent"},
            ],
        },
    )
    assert outcome.score == 0.75
    assert [r["passed"] for r in outcome.evidence["fieldResults"]] == [True, False, True, True]  # type: ignore[index,union-attr]


def test_fhirpath_paths_and_ops(sandbox: Path) -> None:
    outcome = run(
        source(sandbox),
        {
            **VERIAL_EXAMPLE,
            "fields": [
                {
                    "path": "participant.actor.where(reference.startsWith('Practitioner')).display",
                    "expected": "Dr. Rivera",
                },
                {"path": "participant.actor.display", "expected": "John Smith", "op": "contains"},
                {"path": "participant.count()", "expected": 2},
                {"path": "participant.0.actor.display", "expected": "^Dr\\. ", "op": "regex"},
                {
                    "path": "participant.status",
                    "syntax": "fhirpath",
                    "expected": ["accepted", "accepted"],
                },
            ],
        },
    )
    assert outcome.score == 1.0, outcome.evidence


def test_fhirpath_choice_types_and_numbers(sandbox: Path) -> None:
    outcome = run(
        source(sandbox),
        {
            "resource_type": "MedicationRequest",
            "search": {"status": "active"},
            "fields": [
                {"path": "medication.coding.code", "expected": "860975"},  # medication[x]
                {"path": "dosageInstruction.doseAndRate.dose.value", "expected": 500},
                {
                    "path": "dosageInstruction.0.doseAndRate.0.doseQuantity.value",
                    "op": "gte",
                    "expected": 250,
                },
            ],
        },
    )
    assert outcome.score == 1.0, outcome.evidence


def test_invalid_fhirpath_is_a_check_error(sandbox: Path) -> None:
    with pytest.raises(CheckError, match=r"invalid FHIRPath 'participant\.where\(': column"):
        run(
            source(sandbox),
            {**VERIAL_EXAMPLE, "fields": [{"path": "participant.where(", "expected": 1}]},
        )


@pytest.mark.parametrize(
    ("match", "fields", "score", "target"),
    [
        ("first", [{"path": "participant.0.actor.display", "expected": "Dr. Lee"}], 0.0, "a1"),
        ("any", [{"path": "participant.0.actor.display", "expected": "Dr. Lee"}], 1.0, "a2"),
        ("all", [{"path": "participant.0.actor.display", "expected": "Dr. Lee"}], 0.5, "a1"),
        ("all", [{"path": "status", "expected": "booked"}], 1.0, "a1"),
        ("none", [{"path": "participant.0.actor.display", "expected": "Dr. Lee"}], 0.0, "a2"),
        ("none", [{"path": "participant.0.actor.display", "expected": "Dr. Who"}], 1.0, None),
    ],
)
def test_match_modes(
    sandbox: Path, match: str, fields: list[dict[str, Any]], score: float, target: str | None
) -> None:
    outcome = run(source(sandbox), {**VERIAL_EXAMPLE, "match": match, "fields": fields})
    assert outcome.score == score
    resource = outcome.evidence["resource"]
    assert (resource["id"] if resource else None) == target  # type: ignore[index]


def test_none_with_no_results_passes(sandbox: Path) -> None:
    outcome = run(
        source(sandbox),
        {"resource_type": "MedicationRequest", "match": "none", "search": {"code": "1049621"}},
    )
    assert outcome.score == 1.0


@pytest.mark.parametrize(
    ("count", "score"),
    [
        (1, 1.0),
        (2, 0.5),
        ({"op": "gte", "expected": 1}, 1.0),
        ({"op": "lt", "expected": 1}, 0.5),
    ],
)
def test_count(sandbox: Path, count: Any, score: float) -> None:
    outcome = run(
        source(sandbox),
        {
            "resource_type": "MedicationRequest",
            "search": {"status": "active", "patient": "john-smith"},
            "count": count,
            "fields": [{"path": "intent", "expected": "order"}],
        },
    )
    assert outcome.score == score
    assert outcome.evidence["count_result"]["actual"] == 1  # type: ignore[index,call-overload]


def test_count_zero_scores_without_a_target(sandbox: Path) -> None:
    outcome = run(
        source(sandbox),
        {"resource_type": "MedicationRequest", "search": {"code": "1049621"}, "count": 0},
    )
    assert outcome.score == 1.0 and outcome.evidence["total"] == 0


def test_changed_since_baseline(sandbox: Path) -> None:
    """a2 is unchanged from the seed; a1 is new; m0 was changed (stopped)."""
    outcome = run(
        source(sandbox),
        {**VERIAL_EXAMPLE, "changed_since_baseline": True, "match": "all", "fields": []},
    )
    assert outcome.evidence["total"] == 1 and outcome.evidence["resource"]["id"] == "a1"  # type: ignore[index]
    changed = run(
        source(sandbox),
        {"resource_type": "MedicationRequest", "changed_since_baseline": True, "count": 2},
    )
    assert changed.score == 1.0


def test_validation_errors_in_evidence(sandbox: Path) -> None:
    bad = _appointment("bad", "booked", RIVERA, minutesDuration="thirty")
    _write(sandbox / "fhir", "bad.json", bad)
    outcome = run(
        source(sandbox), {**VERIAL_EXAMPLE, "search": {"_id": "bad"}, "validation": "R4B"}
    )
    assert outcome.score == 1.0  # validation informs, it does not score
    errors = outcome.evidence["validation_errors"]
    assert errors and any("minutesDuration" in e for e in errors)  # type: ignore[union-attr]
    clean = run(source(sandbox), {**VERIAL_EXAMPLE, "validation": "R5"})
    assert clean.evidence["validation_errors"] == []


def test_validation_from_run_settings(sandbox: Path) -> None:
    snapshot = SnapshotSource(sandbox / "fhir", None, {"validation": "R4B"})
    assert run(snapshot, VERIAL_EXAMPLE).evidence["validation_errors"] == []
    with pytest.raises(CheckError, match="must be R4B or R5, not 'R4'"):
        run(SnapshotSource(sandbox / "fhir", None, {"validation": "R4"}), VERIAL_EXAMPLE)


def test_validation_chosen_per_benchmark(sandbox: Path) -> None:
    """A benchmark's fhir_validation applies to every FHIR criterion that sets none."""
    bad = _appointment("bad", "booked", RIVERA, minutesDuration="thirty")
    _write(sandbox / "fhir", "bad.json", bad)
    assertion = {**VERIAL_EXAMPLE, "search": {"_id": "bad"}}
    plain = SnapshotSource(sandbox / "fhir", None, {})
    assert "validation_errors" not in run(plain, assertion).evidence
    benchmark = Benchmark(benchmark="pa", fhir_validation="R4B")
    errors = run(plain, assertion, benchmark).evidence["validation_errors"]
    assert errors and any("minutesDuration" in e for e in errors)  # type: ignore[union-attr]
    with pytest.raises(ValidationError):
        Benchmark(benchmark="pa", fhir_validation="R4")


def test_unknown_search_parameter(sandbox: Path) -> None:
    with pytest.raises(CheckError, match="unknown search parameter 'doctor' for Appointment"):
        run(source(sandbox), {**VERIAL_EXAMPLE, "search": {"doctor": "Practitioner/rivera"}})


def test_model_rejects_bad_fields() -> None:
    with pytest.raises(ValidationError, match="match"):
        FhirResourceState.model_validate({**VERIAL_EXAMPLE, "match": "most"})
    with pytest.raises(ValidationError, match="Extra inputs"):
        FhirResourceState.model_validate({**VERIAL_EXAMPLE, "serach": {}})


# --- bad snapshot files -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.json", '{"resourceType": "Patient", "id": ', r"broken\.json:1: invalid JSON"),
        (
            "bundle.json",
            {
                "resourceType": "Bundle",
                "entry": [
                    {"resource": {"resourceType": "Patient", "id": "x"}},
                    {"fullUrl": "urn:uuid:2"},
                ],
            },
            r"bundle\.json: Bundle entry 1 has no resource",
        ),
        (
            "wrong.json",
            {"resourceType": "Apointment", "id": "x"},
            r"wrong\.json: unknown resourceType 'Apointment'",
        ),
        (
            "untyped.json",
            {"id": "x", "status": "booked"},
            r"untyped\.json: resource has no resourceType",
        ),
        (
            "rows.ndjson",
            '{"resourceType": "Patient", "id": "1"}\n\n{"resourceType": Patient}\n',
            r"rows\.ndjson:3: invalid JSON",
        ),
        ("list.json", [1, 2], r"list\.json: expected a FHIR resource object, found list"),
        ("bad-id.json", {"resourceType": "Patient", "id": 7}, r"Patient\.id must be a string"),
    ],
)
def test_bad_snapshot_files(tmp_path: Path, name: str, content: Any, message: str) -> None:
    _write(tmp_path / "fhir", name, content)
    snapshot = source(tmp_path)
    for _ in range(2):  # the error is kept: every criterion reading the snapshot gets it
        with pytest.raises(SourceError, match=message):
            run(snapshot, VERIAL_EXAMPLE)


def test_missing_fhir_directory_is_an_empty_source(tmp_path: Path) -> None:
    outcome = run(source(tmp_path), VERIAL_EXAMPLE)
    assert outcome.score == 0.0 and outcome.evidence["total"] == 0


def test_large_snapshot_path_loads_the_same_and_restores_gc(sandbox: Path) -> None:
    import gc

    small = run(source(sandbox), VERIAL_EXAMPLE)
    # the same resources in over 8 MB of files: loaded with the collector held off
    # (BENCHMARKS.md, "large loads"); an empty Bundle padded with JSON whitespace
    empty = json.dumps({"resourceType": "Bundle", "type": "collection", "entry": []})
    _write(sandbox / "fhir", "padding.json", empty + " " * 9_000_000)
    assert sum(p.stat().st_size for p in (sandbox / "fhir").iterdir()) > 9_000_000
    large = run(source(sandbox), VERIAL_EXAMPLE)
    assert large.evidence == small.evidence
    assert gc.isenabled()
