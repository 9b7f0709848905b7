"""End to end through pytest: FHIR criteria in a benchmark file, scored from a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from medplum_support import TOKEN, MedplumServer

BENCHMARK = """
benchmark: fhir-e2e
version: 1
tasks:
  - id: book
    criteria:
      - id: verial-example
        assertion:
          assert: fhir-resource-state
          resource_type: Appointment
          search: {patient: Patient/john-smith, status: booked}
          fields: [{path: participant.0.actor.display, expected: Dr. Rivera}]
      - id: portal-row
        assertion:
          assert: portal-state-match
          correlate_by: {resource: prior_auth_requests, key: request_id, value: PA-1}
          assertions: [{path: status, expected: submitted}]
"""

APPOINTMENT = {
    "resourceType": "Appointment",
    "id": "a1",
    "status": "booked",
    "participant": [
        {"actor": {"reference": "Practitioner/rivera", "display": "Dr. Rivera"}},
        {"actor": {"reference": "Patient/john-smith", "display": "John Smith"}},
    ],
}


def _run_dir(root: Path, fhir_files: dict[str, str], run_yaml: str | None = None) -> Path:
    run = root / "run"
    sandbox = run / "book"
    (sandbox / "portal").mkdir(parents=True)
    (sandbox / "portal" / "prior_auth_requests.json").write_text(
        json.dumps([{"request_id": "PA-1", "status": "submitted"}]), encoding="utf-8"
    )
    if fhir_files:
        (sandbox / "fhir").mkdir()
        for name, text in fhir_files.items():
            (sandbox / "fhir" / name).write_text(text, encoding="utf-8")
    if run_yaml:
        (run / "run.yaml").write_text(run_yaml, encoding="utf-8")
    return run


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / "report.json").read_text())
    return {
        c["criterion_id"]: c
        for t in [t for r in data["benchmark_runs"] for t in r["task_runs"]]
        for c in t["criterion_runs"]
    }


def test_snapshot_criterion_passes(pytester: pytest.Pytester) -> None:
    pytester.makefile(".verial.yaml", fhir=BENCHMARK)
    run = _run_dir(pytester.path, {"appointments.ndjson": json.dumps(APPOINTMENT) + "\n"})
    result = pytester.runpytest("--verial-run", str(run), "--verial-report", "report.json")
    result.assert_outcomes(passed=2)
    crit = _report(pytester)["verial-example"]
    assert crit["evidence"]["resource"] == {"type": "Appointment", "id": "a1", "version": None}
    assert crit["evidence"]["query"] == "Appointment?patient=Patient/john-smith&status=booked"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a.json": '{"resourceType": "Appointment", '}, "a.json:1: invalid JSON"),
        (
            {"b.json": json.dumps({"resourceType": "Bundle", "entry": [{"search": {}}]})},
            "b.json: Bundle entry 0 has no resource",
        ),
        (
            {"c.json": json.dumps({**APPOINTMENT, "resourceType": "Appointmnet"})},
            "c.json: unknown resourceType 'Appointmnet'",
        ),
    ],
)
def test_bad_fhir_file_is_a_criterion_error_and_others_still_score(
    pytester: pytest.Pytester, files: dict[str, str], message: str
) -> None:
    pytester.makefile(".verial.yaml", fhir=BENCHMARK)
    run = _run_dir(pytester.path, files)
    result = pytester.runpytest("--verial-run", str(run), "--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*{message}*"])
    assert "Traceback" not in result.stdout.str()
    crits = _report(pytester)
    assert crits["verial-example"]["status"] == "error" and crits["verial-example"]["score"] == 0
    assert crits["portal-row"]["passed"] is True


def test_unknown_search_parameter_and_invalid_fhirpath_are_criterion_errors(
    pytester: pytest.Pytester,
) -> None:
    bench = BENCHMARK.replace(
        "{patient: Patient/john-smith, status: booked}",
        "{patient: Patient/john-smith, stauts: booked}",
    )
    bench += """
      - id: bad-path
        assertion:
          assert: fhir-resource-state
          resource_type: Appointment
          fields: [{path: "participant.where(", expected: 1}]
"""
    pytester.makefile(".verial.yaml", fhir=bench)
    run = _run_dir(pytester.path, {"a.json": json.dumps(APPOINTMENT)})
    result = pytester.runpytest("--verial-run", str(run))
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*unknown search parameter 'stauts' for Appointment; did you mean status*",
            "*invalid FHIRPath 'participant.where('*",
        ]
    )


def test_live_server_from_run_yaml_one_request_per_distinct_search(
    pytester: pytest.Pytester, medplum: MedplumServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 criteria over 5 distinct searches send 5 requests, whatever the criteria check."""
    monkeypatch.setenv("E2E_FHIR_TOKEN", TOKEN)
    searches = [
        "{patient: Patient/john-smith, status: booked}",
        "{status: booked}",
        "{status: proposed}",
        "{practitioner: Practitioner/rivera}",
        "{status: cancelled}",
    ]
    criteria = "\n".join(
        f"""      - id: c{i}
        assertion:
          assert: fhir-resource-state
          resource_type: Appointment
          search: {searches[i % 5]}
          fields: [{{path: status, expected: booked}}]"""
        for i in range(50)
    )
    pytester.makefile(
        ".verial.yaml",
        fhir=f"""
benchmark: fhir-live
version: 1
tasks:
  - id: book
    criteria:
{criteria}
""",
    )
    run = _run_dir(
        pytester.path,
        {},
        run_yaml=f"""
sources:
  fhir: {{base_url: "{medplum.base_url}", token_env: E2E_FHIR_TOKEN}}
""",
    )
    medplum.reset_log()
    result = pytester.runpytest("--verial-run", str(run), "--verial-report", "report.json")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 50
    assert outcomes.get("passed", 0) >= 20  # the booked searches
    assert len(medplum.requests()) == 5
    assert TOKEN not in (pytester.path / "report.json").read_text()
    assert TOKEN not in result.stdout.str()


def test_unreachable_live_server_is_a_criterion_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".verial.yaml", fhir=BENCHMARK)
    run = _run_dir(
        pytester.path,
        {},
        run_yaml="""
sources:
  fhir: {base_url: "http://127.0.0.1:9/fhir", retries: 0, timeout: 2}
""",
    )
    result = pytester.runpytest("--verial-run", str(run))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*FHIR server unreachable: GET http://127.0.0.1:9/fhir/Appointment*"]
    )


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("500", "*HTTP 500: database is down*"),
        ("html", "*answered text/html*not FHIR JSON*"),
        ("slow", "*did not answer GET http://127.0.0.1:*/slow/Appointment* within 0.5 s*"),
    ],
)
def test_live_server_faults_are_criterion_errors(
    pytester: pytest.Pytester, fault: str, message: str
) -> None:
    from stub_server import stub_server

    pytester.makefile(".verial.yaml", fhir=BENCHMARK)
    with stub_server(slow_seconds=1.5) as stub:
        run = _run_dir(
            pytester.path,
            {},
            run_yaml=f"""
sources:
  fhir: {{base_url: "{stub.origin}/{fault}", retries: 1, backoff: 0.01, timeout: 0.5}}
""",
        )
        result = pytester.runpytest("--verial-run", str(run), "--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([message])
    crits = _report(pytester)
    assert crits["verial-example"]["status"] == "error"
    assert crits["portal-row"]["passed"] is True
