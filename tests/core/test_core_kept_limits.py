"""A sandbox index the service kept (issue 33: FHIR snapshots and HL7 message lists kept by their
files' identity) is held to the read limits of the request that uses it, as a fresh read is: the
same sandbox scores the same whether its index was kept or read again (issue 31's limits)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_verial import verify_task

# private: keeping indexes is the service's switch, with no public face
from pytest_verial._sandbox_io.kept import keep_indexes

KIB = 1024


@pytest.fixture
def kept() -> Iterator[None]:
    keep_indexes(True)
    try:
        yield
    finally:
        keep_indexes(False)


def _sandbox(folder: Path) -> dict[str, object]:
    """A FHIR snapshot and an HL7 file of 40 KiB each: either fits 64 KiB, both do not."""
    (folder / "fhir").mkdir(parents=True)
    patient = {"resourceType": "Patient", "id": "p1", "name": [{"family": "X" * 40 * KIB}]}
    (folder / "fhir" / "export.ndjson").write_text(json.dumps(patient) + "\n")
    (folder / "hl7_outbound").mkdir()
    message = "MSH|^~\\&|A|B|C|D|20260101||ADT^A01|1|P|2.5\rPID|1||1||X^" + "Y" * 40 * KIB
    (folder / "hl7_outbound" / "adt.hl7").write_text(message + "\r")
    return {
        "id": "t",
        "criteria": [
            {
                "id": "fhir",
                "assertion": {
                    "assert": "fhir-resource-state",
                    "resource_type": "Patient",
                    "match": "any",
                },
            },
            {
                "id": "hl7",
                "assertion": {
                    "assert": "hl7-structural",
                    "fields": [{"path": "PID.5.1", "expected": "X"}],
                },
            },
        ],
    }


def _statuses(task: dict[str, object], folder: Path, config: dict[str, str]) -> dict[str, str]:
    run = verify_task(task, folder, config)
    return {c["criterion_id"]: c["status"] for c in run.criterion_runs}


def test_a_kept_snapshot_counts_against_the_sandbox_limit_as_a_fresh_read(
    tmp_path: Path, kept: None
) -> None:
    folder = tmp_path / "run" / "t"
    task = _sandbox(folder)
    limit = {"max_sandbox_size": "64KiB"}
    first = _statuses(task, folder, limit)
    assert first == {"fhir": "passed", "hl7": "error"}  # the HL7 file would pass 64 KiB
    assert _statuses(task, folder, limit) == first  # the snapshot kept: still counted


def test_a_kept_snapshot_is_held_to_a_smaller_per_file_limit_of_a_later_request(
    tmp_path: Path, kept: None
) -> None:
    folder = tmp_path / "run" / "t"
    task = _sandbox(folder)
    assert _statuses(task, folder, {})["fhir"] == "passed"  # read under the default limits
    run = verify_task(task, folder, {"max_file_size": "32KiB"})
    fhir = run.criterion_runs[0]
    assert fhir["status"] == "error"
    assert "fhir/export.ndjson" in fhir["details"] and "per-file limit" in fhir["details"]
