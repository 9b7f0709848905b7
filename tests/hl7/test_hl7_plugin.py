"""End to end through pytest: benchmark file + run directory -> items -> JSON report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parent / "corpus"
X12 = Path(__file__).parent.parent / "x12" / "corpus"

BENCHMARK = """
benchmark: interop-e2e
version: 1
tasks:
  - id: hl7-order
    criteria:
      - id: orm-cpt
        assertion:
          assert: hl7-structural
          correlate_by: {trigger_event: O01}
          fields: [{path: OBR.4.1, expected: "72148"}, {path: "DG1[2].3.1", expected: M51.26}]
      - id: siu-time
        assertion:
          assert: hl7-structural
          correlate_by: {"MSH.9.1": SIU}
          fields: [{path: SCH.11.4, expected: "20240322140000"}]
  - id: hl7-broken
    criteria:
      - id: reads-broken-file
        assertion:
          assert: hl7-structural
          correlate_by: {trigger_event: A04}
  - id: hl7-live
    criteria:
      - id: from-capture-file
        assertion:
          assert: hl7-structural
          correlate_by: {control_id: LIVE1}
          fields: [{path: PID.5.1, expected: CHEN}]
  - id: x12-elig
    criteria:
      - id: active
        assertion:
          assert: x12-response
          transaction: "271"
          correlate_by: {member_id: W123456789}
          fields: [{path: "EB[EB01=B].EB07", expected: 30}]
      - id: strict-envelope
        assertion:
          assert: x12-response
          transaction: "271"
          envelope: strict
"""


def report(pytester: pytest.Pytester, run: Path, *args: str) -> dict[str, Any]:
    out = pytester.path / "report.json"
    result = pytester.runpytest(
        "--verial-run",
        str(run),
        "--verial-report",
        str(out),
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:schemathesis",
        *args,
    )
    assert result.ret in (0, 1), result.stdout.str()
    data = json.loads(out.read_text())
    return {
        c["criterion_id"]: c
        for t in [t for r in data["benchmark_runs"] for t in r["task_runs"]]
        for c in t["criterion_runs"]
    }


def make_run(pytester: pytest.Pytester) -> Path:
    pytester.makefile(".verial.yaml", interop=BENCHMARK)
    run = pytester.path / "run"
    hl7_dir = run / "hl7-order" / "hl7_outbound"
    hl7_dir.mkdir(parents=True)
    framed = b"".join(
        b"\x0b" + (CORPUS / "valid" / n).read_bytes() + b"\x1c\r"
        for n in ("orm_o01.hl7", "siu_s12.hl7")
    )
    (hl7_dir / "out.hl7").write_bytes(framed)
    broken = run / "hl7-broken" / "hl7_outbound"
    broken.mkdir(parents=True)
    shutil.copy(CORPUS / "malformed" / "missing_control_id.hl7", broken / "bad.hl7")
    live = (CORPUS / "valid" / "adt_a08.hl7").read_text().replace("ADT20240316004410", "LIVE1")
    (run / "capture").mkdir()
    (run / "capture" / "events.jsonl").write_text(
        json.dumps({"type": "hl7_outbound", "payload": live, "created_at": "2024-03-16T14:05Z"})
        + "\n"
    )
    (run / "run.yaml").write_text("sources:\n  hl7: {events: capture/events.jsonl}\n")
    x12 = run / "x12-elig" / "x12"
    x12.mkdir(parents=True)
    shutil.copy(X12 / "malformed" / "se_count_wrong.x12", x12 / "271.x12")
    return run


def test_items_scores_and_errors(pytester: pytest.Pytester) -> None:
    run = make_run(pytester)
    # live events file for every task: the snapshot tasks need their own run without it
    (run / "run.yaml").unlink()
    (run / "hl7-live").mkdir(exist_ok=True)  # no events here; issue 9: a missing folder errs
    runs = report(pytester, run)
    assert runs["orm-cpt"]["status"] == "passed"
    assert runs["orm-cpt"]["evidence"]["message"]["control_id"] == "VO-ORM-000412"
    assert runs["siu-time"]["status"] == "passed"
    broken = runs["reads-broken-file"]
    assert broken["status"] == "error" and broken["score"] == 0
    assert "bad.hl7" in broken["details"] and "MSH-10" in broken["details"]
    assert runs["active"]["status"] == "passed"
    assert runs["active"]["evidence"]["envelope_problems"] == [
        "segment 31 (SE): SE01 says 28 segments, counted 29"
    ]
    assert runs["strict-envelope"]["status"] == "error"
    assert "SE01 says 28" in runs["strict-envelope"]["details"]
    assert runs["from-capture-file"]["status"] == "failed"  # no events here


def test_live_events_file_from_run_yaml(pytester: pytest.Pytester) -> None:
    run = make_run(pytester)
    runs = report(pytester, run, "-k", "hl7-live")
    assert runs["from-capture-file"]["status"] == "passed"
    assert runs["from-capture-file"]["evidence"]["message"]["created_at"] == "2024-03-16T14:05Z"


def test_missing_live_events_file_is_an_error(pytester: pytest.Pytester) -> None:
    run = make_run(pytester)
    (run / "capture" / "events.jsonl").unlink()
    runs = report(pytester, run, "-k", "hl7-live")
    assert runs["from-capture-file"]["status"] == "error"
    assert "sources.hl7.events" in runs["from-capture-file"]["details"]


def test_scored_run_keeps_field_evidence_out_of_the_terminal(pytester: pytest.Pytester) -> None:
    run = make_run(pytester)
    (run / "run.yaml").unlink()
    result = pytester.runpytest(
        "--verial-run",
        str(run),
        "--verial-scored",
        "-k",
        "broken",
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:schemathesis",
    )
    assert "MSH-10" not in result.stdout.str()
    plain = pytester.runpytest(
        "--verial-run",
        str(run),
        "-k",
        "broken",
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:schemathesis",
    )
    assert "MSH-10" in plain.stdout.str()
